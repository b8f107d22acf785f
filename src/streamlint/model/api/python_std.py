"""Python standard-library calls that hand back one of their arguments unchanged, so the
value (a list of device results, a stream) keeps what the walk knows of it:
`typing.cast(List[T], [None] * n)` is the list."""

from __future__ import annotations

from streamlint.model.api.facts import Arg

# qualified name -> the argument returned as it is.
IDENTITY_CALLS: dict[str, Arg] = {
    "typing.cast": Arg(1, "val"),
    "typing_extensions.cast": Arg(1, "val"),
}

# Calls that store a value at an attribute the text names, as `holder.name = value` does:
# qualified name -> (holder, name, value). The method form `super().__setattr__("x", v)` (a class
# whose own `__setattr__` forwards elsewhere stores on itself so) is `object.__setattr__(self, ...)`.
ATTRIBUTE_SETTERS: dict[str, tuple[Arg, Arg, Arg]] = {
    name: (Arg(0), Arg(1), Arg(2)) for name in ("builtins.setattr", "builtins.object.__setattr__")
}

# Builtins that look at an object's type or attributes, never at its data (`isinstance(loss,
# torch.Tensor)`): no device work, whatever they are given (not a callable run on CUDA tensors).
TYPE_QUERIES = frozenset({
    "builtins.isinstance", "builtins.issubclass", "builtins.hasattr", "builtins.callable", "builtins.type", "builtins.id",
})
# qualified name -> the iterable whose items it pairs with a number (`for i, x in enumerate(xs)`).
NUMBERING_CALLS: dict[str, Arg] = {
    "builtins.enumerate": Arg(0, "iterable"),
}

# qualified name -> the iterable whose items it lists (`list(t.split(n))`, `tuple(xs)`): a new
# container of the same items, none of them read on the host.
LISTING_CALLS: dict[str, Arg] = {
    "builtins.list": Arg(0, "iterable"),
    "builtins.tuple": Arg(0, "iterable"),
}

# A mapping's views: "items" gives (key, value) pairs, "values" the values (a data loader's
# dict batch, `for k, v in batch.items()`).
MAPPING_VIEWS = frozenset({"items", "values"})

# Methods that hand back a Python list of host values whatever the receiver (`t.tolist()`,
# `a.tolist()`): an index list, for one.
LISTING_METHODS = frozenset({"tolist"})

# Decorators that memoize a function: its body runs once per distinct argument tuple (or
# once per object), not on every call, so its syncs are not its callers' per-call work.
MEMOIZING_DECORATORS = frozenset({"functools.cache", "functools.lru_cache", "functools.cached_property"})

# Methods of Python's containers and queues that keep what they are given: no device work,
# the arguments stay held by the receiver (its items).
KEEPING_METHODS = frozenset({
    "append", "extend", "insert", "add", "update", "setdefault", "appendleft", "extendleft",
    "put", "put_nowait", "__setitem__",
})

# Of those, the ones that put one item in, at this position (`xs.append(t)`, `xs.insert(i, t)`):
# the container's items are then that item too.
ADDING_METHODS = {"append": 0, "appendleft": 0, "add": 0, "put": 0, "put_nowait": 0, "insert": 1}

# Methods of Python's containers and queues that hand back one of their items (`d.pop(k)`,
# `d.get(k)`, `q.popleft()`): what the container's weak slot holds (`Path`: one slot for the
# items stored under keys the text does not tell).
ITEM_METHODS = frozenset({"pop", "get", "popleft", "popitem", "get_nowait", "__getitem__"})
# Of those, the ones that take the item out: the container no longer holds it, the caller's
# reference is the last one (what `get` or `d[k]` hands out the container still holds).
TAKING_METHODS = frozenset({"pop", "popleft", "popitem", "get_nowait"})

# Calls that read a host timer, an elapsed time or the allocator's memory statistics: the code
# measures (a sync next to a call of a function that does is part of the measurement).
HOST_TIMERS = frozenset({
    "time.perf_counter", "time.perf_counter_ns", "time.time", "time.time_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "timeit.default_timer",
    "numba.cuda.event_elapsed_time", "cupy.cuda.get_elapsed_time",
    "torch.cuda.memory_allocated", "torch.cuda.memory_reserved", "torch.cuda.max_memory_allocated",
    "torch.cuda.max_memory_reserved", "torch.cuda.memory_stats", "torch.cuda.mem_get_info",
    "cupy.cuda.runtime.memGetInfo",
})

# The exceptions of a missing module or name: a `try:` that catches only these is the
# optional-dependency idiom (`try: import cupy as cp / except ImportError: cp = None`); the
# analysed program runs where its framework is, so the handler is the path it does not take.
IMPORT_FAILURES = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})
