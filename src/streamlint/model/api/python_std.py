"""Python's builtins, standard library and containers: what their calls and methods do to values."""

from __future__ import annotations

from streamlint.model.api.facts import Arg

# Calls that hand back an argument unchanged (`typing.cast(List[T], xs)`): qualified name -> that argument.
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
# Builtins that look at an object's type or attributes, never at its data: no device work.
TYPE_QUERIES = frozenset({
    "builtins.isinstance", "builtins.issubclass", "builtins.hasattr", "builtins.callable", "builtins.type",
    "builtins.id",
})
# Calls that bind a function to arguments for a later call (`functools.partial(f, model)`): nothing runs now.
DEFERRED_CALLS = frozenset({"functools.partial"})
# Calls that pair the items of their iterables, position by position (`for s, buf in zip(streams, bufs)`).
PAIRING_CALLS = frozenset({"builtins.zip"})
# qualified name -> the iterable whose items it pairs with a number (`for i, x in enumerate(xs)`).
NUMBERING_CALLS: dict[str, Arg] = {
    "builtins.enumerate": Arg(0, "iterable"),
}

# qualified name -> the iterable an iterator is made over (`it = iter(loader)`): iterating it, or `next(it)`, gives
# the iterable's items.
ITERATOR_CALLS: dict[str, Arg] = {
    "builtins.iter": Arg(0, "object"),
    # progress bars that hand out the items of what they wrap, one per pass (`for batch in tqdm(loader)`)
    **{name: Arg(0, "iterable") for name in ("tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.std.tqdm", "tqdm.notebook.tqdm",
                                             "tqdm.rich.tqdm", "tqdm.autonotebook.tqdm")},
    "rich.progress.track": Arg(0, "sequence"),
}
# qualified name -> (the iterator whose next item it returns, the default it returns when there is none).
NEXT_CALLS: dict[str, tuple[Arg, Arg]] = {
    "builtins.next": (Arg(0, "iterator"), Arg(1, "default")),
}

# qualified name -> the iterable whose items it lists in a new container (`list(t.split(n))`), unread.
LISTING_CALLS: dict[str, Arg] = {
    "builtins.list": Arg(0, "iterable"),
    "builtins.tuple": Arg(0, "iterable"),
}

# qualified name -> the iterable whose items it adds with `+` (`sum(losses)`): on tensors, operations where they live
# and a tensor there, never a read (items the host has are the host's arithmetic, a host read).
# Builtins that iterate what they are given and test each item's truth (`all(done)`): over a device tensor, each
# element is a 0-d tensor whose `bool()` the host reads, one wait for the stream per element read. The value: the
# tensor method that reads the same answer in one copy.
ELEMENTWISE_TRUTH: dict[str, str] = {
    "builtins.all": "all",
    "builtins.any": "any",
}

FOLDING_CALLS: dict[str, Arg] = {
    "builtins.sum": Arg(0, "iterable"),
}

# Methods that only Python strings (and bytes) have: no tensor or array has one, so a value they are called on is
# text on the host, whatever an opaque call was taken to return (a tokenizer's `batch_decode` of CUDA ids).
STRING_ONLY_METHODS = frozenset({
    "startswith", "endswith", "strip", "lstrip", "rstrip", "splitlines", "lower", "upper", "casefold", "isdigit",
    "isalpha", "isalnum", "isnumeric", "isdecimal", "isspace", "isidentifier", "zfill", "ljust", "rjust",
    "removeprefix", "removesuffix", "capitalize", "title", "swapcase", "expandtabs", "format_map",
})
# Of those, the ones that return a list of strings.
STRING_LISTING_METHODS = frozenset({"splitlines"})
# A tokenizer's methods that turn token ids into text on the host (Hugging Face's convert tensors with `.tolist()`
# first): the host reads what it is given, and the result is Python text, not GPU work. `decode` is also an
# autoencoder's (a VAE's GPU work): it is a tokenizer's only where the object showed it is one.
TEXT_MAKING_METHODS = frozenset({"decode", "batch_decode", "convert_ids_to_tokens"})
# Of those, the ones that return a list of strings.
TEXT_LISTING_METHODS = frozenset({"batch_decode", "convert_ids_to_tokens"})
# Methods only a tokenizer has (Hugging Face's tokenizer API): a value they are called on is a tokenizer.
TOKENIZER_ONLY_METHODS = frozenset({
    "batch_decode", "convert_ids_to_tokens", "convert_tokens_to_ids", "apply_chat_template", "batch_encode_plus",
    "encode_plus", "get_vocab", "add_special_tokens", "save_vocabulary",
})

# Calls that make a plain object whose attributes are their keyword arguments (`SimpleNamespace(mask=m)`.mask is m).
ATTRIBUTE_BAGS = frozenset({"types.SimpleNamespace", "argparse.Namespace"})

# Command-line parsers: `add_argument("--device", default="cuda")` gives the namespace `parse_args()` returns that
# attribute (`args.device`), its default the value the program runs with unless told otherwise (a default is evidence).
OPTION_PARSERS = frozenset({"argparse.ArgumentParser", "configargparse.ArgumentParser", "configargparse.ArgParser"})
OPTION_ADDERS = frozenset({"add_argument"})
OPTION_GROUPS = frozenset({"add_argument_group", "add_mutually_exclusive_group"})  # options land on the parser
OPTION_PARSES = {"parse_args": False, "parse_known_args": True}  # -> whether it returns (namespace, the rest)
FLAG_ACTIONS = {"store_true": False, "store_false": True}  # an option without a default: its implied one

# Containers made empty by a call (a queue's arguments are its size): a thread puts items in, another takes them out.
EMPTY_CONTAINERS = frozenset({
    "queue.Queue", "queue.LifoQueue", "queue.PriorityQueue", "queue.SimpleQueue", "asyncio.Queue",
})
# qualified name -> how many of its leading positional arguments are no items (a `defaultdict`'s factory): called
# with no more than those, a container with no items yet, as `{}` (`loss_dict = OrderedDict()`, then filled).
EMPTY_WHEN_NO_ITEMS: dict[str, int] = {
    "collections.OrderedDict": 0, "collections.defaultdict": 1, "collections.deque": 0,
    "builtins.dict": 0, "builtins.list": 0, "builtins.set": 0,
}

# A mapping's views: "items" gives (key, value) pairs, "values" the values.
MAPPING_VIEWS = frozenset({"items", "values"})

# Methods that hand back a Python list of host values whatever the receiver (`t.tolist()`).
LISTING_METHODS = frozenset({"tolist"})

# Decorators that make a method a property: reading the attribute runs it (`model.device`).
PROPERTY_DECORATORS = frozenset({"property", "builtins.property", "functools.cached_property"})

# Decorators that memoize a function: its syncs are not its callers' per-call work.
MEMOIZING_DECORATORS = frozenset({"functools.cache", "functools.lru_cache", "functools.cached_property"})

# Calls that run a function on a thread of its own (by the call's last name -> where the function is: position,
# keyword): a new thread's current stream is its framework's default stream, not the caller's.
# Calls that start a thread running `target(*args, **kwargs)`: where each is given (position, keyword).
THREAD_TARGETS: dict[str, tuple[tuple[int, str], tuple[int, str]]] = {
    "threading.Thread": ((1, "target"), (3, "args")),
}
# Methods that run `fn(*rest)` on a thread of a pool, whatever the receiver (`executor.submit(fn, a, b)`, as
# `THREAD_STARTS` names them): where the function is given, and the position its arguments start at.
THREAD_TARGET_METHODS: dict[str, tuple[tuple[int, str], int]] = {"submit": ((0, "fn"), 1)}
THREAD_STARTS: dict[str, tuple[int, str]] = {
    "Thread": (1, "target"), "start_new_thread": (0, "function"), "submit": (0, "fn"),
}

# Decorators that make a generator function a context manager: what it yields is what `with ... as x` binds.
CONTEXT_MANAGER_DECORATORS = frozenset({"contextlib.contextmanager", "contextlib.asynccontextmanager"})
# Bases of enumerations: their members are constants (configuration to compare), not objects with state.
ENUMERATION_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})

# Methods of Python's containers and queues that keep what they are given (as items): no device work.
KEEPING_METHODS = frozenset({
    "append", "extend", "insert", "add", "update", "setdefault", "appendleft", "extendleft", "put", "put_nowait",
    "__setitem__",
})

# Of those, the ones that put one item in, at this position (`xs.insert(i, t)`).
ADDING_METHODS = {"append": 0, "appendleft": 0, "add": 0, "put": 0, "put_nowait": 0, "insert": 1}

# Methods of Python's containers and queues that hand back one of their items (`d.pop(k)`, `d.get(k)`).
ITEM_METHODS = frozenset({"pop", "get", "popleft", "popitem", "get_nowait", "__getitem__"})
# Of those, the ones given a default for a missing item (`config.get("device", "cuda:0")`): the item, or that default.
DEFAULTED_ITEMS: dict[str, Arg] = {"get": Arg(1, "default"), "pop": Arg(1, "default"), "setdefault": Arg(1, "default")}
# Of those, the ones that take the item out: the caller's reference is the last one.
TAKING_METHODS = frozenset({"pop", "popleft", "popitem", "get_nowait"})

# Calls that read a host timer, an elapsed time or memory statistics: the code measures (a sync next
# to one is part of the measurement).
HOST_TIMERS = frozenset({
    "time.perf_counter", "time.perf_counter_ns", "time.time", "time.time_ns", "time.monotonic", "time.monotonic_ns",
    "time.process_time", "timeit.default_timer", "numba.cuda.event_elapsed_time", "cupy.cuda.get_elapsed_time",
    "torch.cuda.memory_allocated", "torch.cuda.memory_reserved", "torch.cuda.max_memory_allocated",
    "torch.cuda.max_memory_reserved", "torch.cuda.memory_stats", "torch.cuda.mem_get_info",
    "cupy.cuda.runtime.memGetInfo",
})

# The exceptions of a missing module or name: a `try:` catching only these is the optional-dependency
# idiom; the analysed program runs where its framework is, so the handler is the path it does not take.
IMPORT_FAILURES = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError"})

# Calls of Python's library that make a plain object or container the model follows (not a framework's).
PYTHON_OBJECT_MAKERS = EMPTY_CONTAINERS | frozenset(EMPTY_WHEN_NO_ITEMS) | ATTRIBUTE_BAGS | OPTION_PARSERS

# Libraries that draw figures on the host: a loop that draws on every pass is bound by the drawing (milliseconds a
# figure), not by a read of GPU data for it. Qualified-name prefixes.
DRAWING_MODULES = ("matplotlib.", "seaborn.", "plotly.", "bokeh.")

# Calls that read or write a file (an image, an array, a checkpoint, a record): a loop that does one on every pass
# is bound by the host's file I/O (milliseconds a file), not by a read of GPU data for it. Qualified names, and
# qualified-name prefixes of I/O modules.
FILE_IO_CALLS = frozenset({
    "open", "cv2.imread", "cv2.imwrite", "PIL.Image.open", "numpy.load", "numpy.save", "numpy.savez",
    "numpy.savez_compressed", "numpy.savetxt", "numpy.loadtxt", "numpy.fromfile", "torch.load", "torch.save",
    "pickle.load", "pickle.dump", "json.load", "json.dump", "torchvision.utils.save_image",
    "torchvision.io.read_image", "torchvision.io.write_png", "torchvision.io.write_jpeg", "trimesh.load", "h5py.File",
})
FILE_IO_MODULES = ("imageio.", "skimage.io.", "open3d.io.", "tifffile.", "soundfile.", "plyfile.")
