"""Abstract values: what a name or path holds as far as the code gives evidence; the rest stays UNKNOWN."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import Optional

from streamlint.model.api import torch_api
from streamlint.model.domain.paths import MERGED, Index, Path, Root, RootKind
from streamlint.model.domain.streams import StreamRef


class ValueKind(Enum):
    UNKNOWN = "unknown"
    BUFFER = "buffer"  # a tensor or array: memory that streams and the host access
    STREAM = "stream"
    EVENT = "event"
    DEVICE = "device"  # a device designator ("cuda", torch.device("cuda:0"))
    HOST_NUMBER = "host_number"  # a Python scalar or string already on the host
    MODULE = "module"  # an nn.Module or another callable object whose calls run GPU work
    NONE = "none"
    CONTAINER = "container"  # a list, tuple or dict; `element` is what its items hold
    CALLABLE = "callable"  # a function, lambda or partial (`target`: its qualname)
    NAMESPACE = "namespace"  # a framework module or accelerator object (`target`: the dotted name it stands for)
    OBJECT = "object"  # an instance of a project class (`target`: the class's qualified name)
    GRAPH = "graph"  # a CUDA graph: captured work that each launch runs again
    STREAM_CONTEXT = "stream_context"  # `torch.cuda.stream(s)`: entering it makes `stream` current


class HostBuilt(Enum):
    """Whether a BUFFER was built on the host from Python values on some path to here."""

    EVERY_PASS = "every pass"
    FIRST_PASS = "first pass"  # before a loop only: the body carries device memory on
    # made once and kept by an object (its class state), which no method writes on the host: every upload of it
    # copies the same values again
    KEPT = "kept"


def _join_built(a: Optional[HostBuilt], b: Optional[HostBuilt]) -> Optional[HostBuilt]:
    """A may-fact: built on either path stays; first-pass only where every built side is."""
    sides = {x for x in (a, b) if x is not None}
    return None if not sides else HostBuilt.FIRST_PASS if sides == {HostBuilt.FIRST_PASS} else HostBuilt.EVERY_PASS


class Memory(Enum):
    UNKNOWN = "unknown"
    DEVICE = "device"
    PINNED = "pinned"  # page-locked host memory
    PAGEABLE = "pageable"  # ordinary host memory


@dataclass(frozen=True)
class AbsValue:
    kind: ValueKind = ValueKind.UNKNOWN
    framework: str = ""
    memory: Memory = Memory.UNKNOWN
    identity: Optional[Path] = None  # the memory or object this value is (aliases share it)
    stream: Optional[StreamRef] = None  # a STREAM's identity; an EVENT's stream once recorded
    may_be_none: bool = False
    element: Optional["AbsValue"] = None  # a container's items
    target: str = ""  # a CALLABLE's or NAMESPACE's qualified name
    members: frozenset[Path] = frozenset()  # a CONTAINER's items' memory (what it keeps alive)
    loader_batch: bool = False  # a BUFFER a data loader yields (its memory is the loader's choice)
    rank: int = -1  # a BUFFER's number of dimensions, when how it was made shows them (-1: not told)
    # A BUFFER built on the host from Python values on some path to here (a may-fact)
    built: "HostBuilt" = field(default=None, metadata={"omit_default": True})
    # A tuple's items, one per position, where the text shows them (`a, b = t`, `t[0]` read them)
    positions: tuple = field(default=(), metadata={"omit_default": True})
    # A dict written out with string keys: the key of each item in `positions` (for `**kwargs`)
    keys: tuple = field(default=(), metadata={"omit_default": True})
    # The memory it is on each path, where the join cannot name one: a may-set of BUFFERs (D-20)
    either: tuple = field(default=(), metadata={"omit_default": True})

    def join(self, other: "AbsValue") -> "AbsValue":
        if self == other:
            return self
        if self.kind is other.kind is ValueKind.CONTAINER and NO_ITEMS in (self.target, other.target):
            return other if self.target == NO_ITEMS else self  # an empty display, or the items put in it since
        if OPTION in (self.target, other.target) and {self.kind, other.kind} <= {ValueKind.UNKNOWN, ValueKind.HOST_NUMBER}:
            # an argument kept as an option, or a constant set in its place: configuration
            return self if self.target == OPTION else other
        if ValueKind.NONE in (self.kind, other.kind) and self.kind is not other.kind:
            # this value on one path, None on the other
            return (other if self.kind is ValueKind.NONE else self).join_none()
        joined = AbsValue(*(_JOINS[f.name](self, other) if f.name in _JOINS
                            else _same(getattr(self, f.name), getattr(other, f.name), f.default) for f in _FIELDS))
        return _with_either(_learned_on_one_path(joined, self, other), self, other)

    def mapped(self, path, stream=None) -> "AbsValue":
        """Each path in it mapped by `path` (to None: not named there), and its stream by `stream`."""
        if self.identity is None and self.element is None and not (self.members or self.positions or self.either) \
                and (stream is None or self.stream is None):
            return self
        return replace(self, identity=path(self.identity) if self.identity is not None else None,
                       stream=stream(self.stream) if stream is not None and self.stream is not None else self.stream,
                       element=self.element.mapped(path, stream) if self.element is not None else None,
                       members=frozenset(m for m in map(path, self.members) if m is not None),
                       positions=tuple(p.mapped(path, stream) for p in self.positions),
                       either=tuple(v for v in (e.mapped(path, stream) for e in self.either) if v.identity is not None))

    def join_carried(self, carried: "AbsValue") -> "AbsValue":
        """At a loop's head: this value or what the body `carried` round (memory it allocated: what the name holds)."""
        if self.kind is ValueKind.HOST_NUMBER and carried.on_device:
            return carried  # a Python number the body makes a GPU tensor (`cum += p[i]`): one from the second pass on
        joined = self.join(carried)
        if joined.host_built and not carried.host_built and carried.on_device:
            joined = replace(joined, built=HostBuilt.FIRST_PASS)  # built on the host before the loop only
        if joined.identity is None and carried.identity is not None and carried.identity.root.age:
            return replace(joined, identity=carried.identity)
        return joined

    def join_none(self) -> "AbsValue":
        """This value on one path, None on another (`x if c else None`)."""
        return replace(self, may_be_none=True)

    @property
    def items(self) -> Optional["AbsValue"]:
        """What iterating it gives: a container's items; a tensor's rows (views of its memory)."""
        if self.element is not None or self.kind is not ValueKind.BUFFER:
            return self.element
        identity = self.identity.element(Index.any_()) if self.identity is not None else None
        return AbsValue(ValueKind.BUFFER, self.framework, self.memory, identity, self.stream)

    def iterated(self) -> "AbsValue":
        """What a loop over it binds: its items; a kept or told sequence's item slot; not a bare parameter's."""
        if self.items is not None:
            return self.items
        if self.identity is None or self.identity.root.kind not in (RootKind.SELF, RootKind.PARAM):
            return UNKNOWN
        held = self.identity.root.kind is RootKind.SELF or bool(self.identity.steps) or self.target == SEQUENCE
        return AbsValue(identity=self.identity.element(Index.any_())) if self.kind is ValueKind.UNKNOWN and held else UNKNOWN

    @property
    def alternatives(self) -> tuple["AbsValue", ...]:
        """The memory it may be, one value per path that told it: its may-set (D-20), or itself."""
        if self.either:
            return self.either
        return (self,) if self.kind is ValueKind.BUFFER and self.identity is not None else ()

    @property
    def is_buffer(self) -> bool:
        return self.kind is ValueKind.BUFFER

    @property
    def host_built(self) -> bool:
        return self.built is not None

    @property
    def built_first(self) -> bool:
        return self.built is HostBuilt.FIRST_PASS

    @property
    def on_device(self) -> bool:
        return self.kind is ValueKind.BUFFER and self.memory is Memory.DEVICE


_DEVICE_OR_UNTOLD = (ValueKind.DEVICE, ValueKind.UNKNOWN)


def _same(a, b, default):
    return a if a == b else default


# How a field joins, where not the same value on both paths or else its default (not told).
_JOINS = {
    "identity": lambda a, b: _join_identity(a.identity, b.identity),
    "stream": lambda a, b: a.stream.joined(b.stream) if a.stream and b.stream else _same(a.stream, b.stream, None),
    "may_be_none": lambda a, b: a.may_be_none or b.may_be_none,
    "element": lambda a, b: a.element.join(b.element) if a.element is not None and b.element is not None else None,
    "target": lambda a, b: _join_targets(a, b),
    "members": lambda a, b: a.members | b.members,
    "built": lambda a, b: _join_built(a.built, b.built),
    "positions": lambda a, b: tuple(x.join(y) for x, y in zip(a.positions, b.positions))
    if a.keys == b.keys and len(a.positions) == len(b.positions) else (),
    "either": lambda a, b: (),  # (`_with_either`'s)
}
_FIELDS = fields(AbsValue)


def _learned_on_one_path(joined: AbsValue, a: AbsValue, b: AbsValue) -> AbsValue:
    """Evidence one path gave of where memory lives holds on both: it is fixed when made (D-11)."""
    same = a.identity is not None and a.identity == b.identity
    for one, other in ((a, b), (b, a)):  # (no two of the three cases hold of the two orders)
        if one.kind is ValueKind.DEVICE and one.memory is Memory.DEVICE and other.kind in _DEVICE_OR_UNTOLD:
            # a device that is CUDA on one path: the code's GPU path, where the analysed program runs (D-2);
            # a path that told nothing (the caller's argument) claims nothing against it (D-20, D-33)
            return replace(joined, kind=ValueKind.DEVICE, memory=Memory.DEVICE, framework=one.framework or other.framework)
        if one.is_buffer and one.host_built and one.memory in (Memory.PAGEABLE, Memory.PINNED) and other.on_device:
            # a CUDA tensor, or on some path a scalar built on the host: the GPU path, kept as `host_built`
            return replace(joined, kind=ValueKind.BUFFER, memory=Memory.DEVICE, framework=other.framework)
        if one.on_device and other.kind is ValueKind.CONTAINER and other.element is not None and other.element.on_device:
            # what a call on CUDA tensors returned (tensors made there, in whatever structure) on one path, a container
            # of CUDA tensors on the other: the tensors it holds are device memory on both
            return replace(joined, kind=ValueKind.BUFFER, memory=Memory.DEVICE, framework=one.framework)
        untold = other.kind is ValueKind.UNKNOWN or (other.kind is ValueKind.BUFFER and other.memory is Memory.UNKNOWN)
        if same and one.kind is ValueKind.BUFFER and one.memory is not Memory.UNKNOWN and untold:
            return replace(joined, kind=ValueKind.BUFFER, memory=one.memory, framework=one.framework or other.framework)
    return joined


def _with_either(joined: AbsValue, a: AbsValue, b: AbsValue) -> AbsValue:
    """Paths that joined different memory: the may-set of the memory each path told (D-20)."""
    if joined.identity is not None or joined.kind is ValueKind.CONTAINER:
        return joined
    either: dict = {}
    for value in a.alternatives + b.alternatives:
        either[value.identity] = either[value.identity].join(value) if value.identity in either else value
    if not either or len(either) > MAX_EITHER:
        return joined
    return replace(joined, either=tuple(sorted(either.values(), key=lambda v: repr(v.identity))))


# The most memories a value may be one of (D-20; past it: not told).
MAX_EITHER = 4


def _join_identity(a: Optional[Path], b: Optional[Path]) -> Optional[Path]:
    """The same memory on both paths, or one site's allocations of different iterations (the earlier's)."""
    if a == b or a is None or b is None:
        return a if a == b else None
    if a.same_site(b):
        return a if a.root.age else b
    steps = _join_views(a.steps, b.steps)
    if steps is None:
        return None
    if a.root == b.root:
        return Path(a.root, steps)
    if a.root.kind is b.root.kind is RootKind.FRESH and a.root.age == b.root.age == 0:
        # memory allocated on either of two paths: one allocation, named by both sites
        return Path(Root.fresh(_merged(a.root.site, b.root.site)), steps)
    return None


def _join_views(a: tuple, b: tuple) -> Optional[tuple]:
    """The same steps, but for views taken at different sites: a view taken at either."""
    if len(a) != len(b):
        return None
    joined = []
    for mine, theirs in zip(a, b):
        if mine == theirs:
            joined.append(mine)
        elif isinstance(mine, Index) and isinstance(theirs, Index) and mine.taken_at and theirs.taken_at:
            joined.append(Index.view(_merged(mine.taken_at, theirs.taken_at)))
        else:
            return None
    return tuple(joined)


def _merged(a: str, b: str) -> str:
    return MERGED.join(sorted(set(a.split(MERGED)) | set(b.split(MERGED))))


# The most functions a callable value may be one of (past it: not told).
MAX_TARGETS = 4


def _join_targets(a: AbsValue, b: AbsValue) -> str:
    """One target on both paths; else either of two callables, or of two functions of one framework module bound to
    one name (the version idiom, D-13), at most MAX_TARGETS."""
    if a.target == b.target:
        return a.target
    if MASK in (a.target, b.target):
        return ""  # booleans on one path only: not told
    merged = _merged(a.target, b.target)
    names = merged.split(MERGED)
    if len(names) > MAX_TARGETS:
        return ""
    if a.kind is b.kind is ValueKind.OBJECT and a.target and b.target and not any(
            t.startswith("(") for t in (a.target, b.target)):
        return merged  # an object of one of a few project classes (made on either side of a test)
    if a.kind is b.kind is ValueKind.NAMESPACE:
        if torch_api.CUDA_MODULE in names and set(names) <= torch_api.ACCELERATOR_MODULES:
            return torch_api.CUDA_MODULE  # (one accelerator's module on each path: the CUDA one runs, D-2)
        parents = {n.rpartition(".")[0] for n in names}
        return merged if len(parents) == 1 and parents.pop() and not any(n.endswith("()") for n in names) else ""
    if not (a.kind is b.kind is ValueKind.CALLABLE and a.target and b.target and a.identity == b.identity):
        return ""
    if any(t.startswith((".", "kernel:")) for t in (a.target, b.target)):
        return ""  # a method looked up by name, a kernel: one only
    return merged
UNKNOWN = AbsValue()
# The target of a container display with no items yet: joined with it after items were put, those items.
NO_ITEMS = "(no items)"
# The target of what an attribute holds when the class stores an argument there and nothing else: an
# option, fixed for the object's life (a test of it is configuration).
OPTION = "(option)"
# The target of what a method leaves at `self.<attr>` when it stored items there without knowing what
# the attribute holds: only those items (`class_state.join_stores`).
ITEMS_ONLY = "(items only)"
# The target of a parameter its annotation tells is a sequence: the caller's collection, not an iterator.
SEQUENCE = "(sequence)"
# The target of a parameter its annotation tells is a callable whose result is no tensor (`Callable[[Tensor], Loader]`).
RETURNS_NO_TENSOR = "(returns no tensor)"
# The target of a BUFFER whose items are booleans, as how it was made shows (a comparison, `.bool()`): it indexes as a
# mask, whose count of True items sizes the result.
MASK = "(booleans)"
# The target of an `or` / `and` of arguments as given: kept on `self`, an option too.
OF_ARGUMENTS = "(of arguments)"
# The target of a host truth value that holds every N steps (`step % freq == 0`), also as a helper returns it: a test of
# it runs its side now and then.
PERIODIC = "(every N)"
# The target of a value of unknown kind that a method only tokenizers have was called on: a tokenizer (its `decode`
# is the host's).
TOKENIZER = "(tokenizer)"
# The target of a BUFFER a factory made in the host's pageable memory (`torch.zeros(n)`, `torch.randn(...)`, no
# `device=`): its values are the host's own making, so an upload of it is of host-built data.
HOST_MADE = "(made on the host)"
# The target of a Python list of indices a sampler yields (`BatchSampler`'s batches): indexing a tensor with it is
# advanced indexing by a list the host holds (a tuple would be one index per dimension).
INDEX_LIST = "(a list of indices)"
NONE = AbsValue(ValueKind.NONE)
# The target of a parameter's written default where a call leaves the argument out (`stream=None`): a fact of that call,
# not one every caller agrees on when another passes a value (`solver._joined`).
LEFT_OUT = "(left out)"
# What `del self.attr` leaves at the attribute: nothing a later call can read (it would raise), so the class's other
# methods' stores there stand alone (`class_state.join_stores`).
UNBOUND = AbsValue(target="(unbound)")
# What a calling context holds for a parameter the call passes without telling anything of it: the caller's value,
# not the parameter's default (a default is evidence only where a call leaves the argument out).
PASSED_UNTOLD = AbsValue(target="(passed, untold)")


def buffer(identity: Path, memory: Memory, framework: str = "") -> AbsValue:
    return AbsValue(ValueKind.BUFFER, framework, memory, identity)


def stream_value(ref: StreamRef) -> AbsValue:
    return AbsValue(ValueKind.STREAM, ref.framework, Memory.UNKNOWN, None, ref)


# Truth known in the analysed world (a program whose streams run has a GPU).
# The target of a container whose items are one allocation each (`[cp.empty(n) for _ in range(2)]`).
PER_ITEM = "(an allocation per item)"
TRUE = AbsValue(ValueKind.HOST_NUMBER, target="True")
FALSE = AbsValue(ValueKind.HOST_NUMBER, target="False")


def truth(value: AbsValue) -> Optional[bool]:
    """True or False when the value is known to be one, else None."""
    if value.kind is not ValueKind.HOST_NUMBER or value.target not in (TRUE.target, FALSE.target):
        return None
    return value.target == TRUE.target
