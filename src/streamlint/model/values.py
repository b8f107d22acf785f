"""Abstract values the flow analysis tracks for names, attributes and expressions.

Every value is immutable and hashable. `UNKNOWN` is the honest answer whenever the
text does not say what something is; rules stay silent on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Optional, Tuple, Union

import libcst as cst


class Mem(Enum):
    DEVICE = "device"
    PINNED = "pinned host"
    PAGEABLE = "pageable host"
    MAPPED = "mapped host"  # zero-copy, device-accessible


class StreamKind(Enum):
    EXPLICIT = "explicit"  # a user stream (created, or received as a parameter)
    LEGACY = "legacy"  # the legacy default stream (handle 0)
    PER_THREAD = "per-thread"  # cudaStreamPerThread
    AMBIENT = "ambient"  # whatever was current when the function was entered


@dataclass(frozen=True)
class Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = Unknown()


@dataclass(frozen=True)
class Stream:
    framework: str
    kind: StreamKind
    blocking: Optional[bool]  # None: cannot tell from the text
    label: str = field(compare=False)  # how the source names it, for messages
    site: int = 0  # identity: the creating node, or the parameter
    # Drawn from a collection by a changing index (`streams[i % 2]`): one of several streams.
    one_of: bool = field(default=False, compare=False)
    # Named by a local the walk could not follow: maybe any stream (ordering unsure).
    uncertain: bool = field(default=False, compare=False)
    # `self.stream` of a method replayed at `buf.fill()`: its label is the caller's spelling
    # (`buf.stream`), its identity still the class's attribute.
    keyed_as: str = field(default="", compare=False)

    @property
    def explicit(self) -> bool:
        return self.kind is StreamKind.EXPLICIT

    @property
    def is_default(self) -> bool:
        return self.kind in (StreamKind.LEGACY, StreamKind.AMBIENT)


def legacy_stream(framework: str) -> Stream:
    return Stream(framework, StreamKind.LEGACY, None, "the legacy default stream", site=-1)


# The current stream at entry, tracked apart from the legacy default stream (PyTorch-only
# code, where the caller's current stream may be a side stream or a capture stream).
OWN_AMBIENT_SITE = -4


def ambient_stream(framework: str, own_key: bool = False) -> Stream:
    return Stream(framework, StreamKind.AMBIENT, None, "the current stream", site=OWN_AMBIENT_SITE if own_key else -2)


@dataclass(frozen=True)
class Event:
    framework: str
    label: str = field(compare=False)
    site: int = 0
    recorded_on: Optional[Stream] = None


@dataclass(frozen=True)
class Buffer:
    """An array, tensor or raw pointer whose memory kind is known."""

    framework: str  # numpy | cupy | torch | numba | raw
    mem: Mem
    site: int = 0
    label: str = field(default="", compare=False)
    bound_stream: Optional[Stream] = None  # Numba device arrays bound to a stream
    loader_site: int = 0  # batches of a DataLoader: the loader's site
    pinned_by: int = 0  # site of the .pin_memory() call that made it, if any
    maybe_scalar: bool = field(default=False, compare=False)  # `a[i]` of a NumPy array: maybe a scalar
    ndim: Optional[int] = field(default=None, compare=False)  # when the creating call shows the shape
    # A parameter whose kind the code's evidence tells (annotation, usage, default):
    # its accesses stay keyed by the parameter's name, so call sites map them to arguments.
    param: str = ""
    opaque: bool = field(default=False, compare=False)  # made by a call we cannot see
    # Taken as GPU data only because a helper walked under a side stream is given it unseen
    assumed: bool = field(default=False, compare=False)
    literal: bool = field(default=False, compare=False)  # `torch.tensor(0.0)`: built from Python values in the code
    region: str = field(default="", compare=False)  # the part a view names (`buf[:, a:b]`), for the ordering check
    # Known to be device memory only under a type test of the code (`isinstance(x, cupy.ndarray)`,
    # `get_array_module(x) is not numpy`): the other side of the test is host memory.
    narrowed: bool = field(default=False, compare=False)

    def with_label(self, label: str) -> "Buffer":
        return replace(self, label=label) if label and not self.label else self


@dataclass(frozen=True)
class Device:
    cuda: bool
    # `x.device` of a tensor that is a CUDA tensor on some paths only (`HostOrDevice`):
    # CUDA on those paths, the code's GPU path; kept to tell `x.to(x.device)` (no copy).
    of: Optional["HostOrDevice"] = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class Loader:
    pin_memory: Optional[bool]
    site: int
    label: str = field(default="", compare=False)


@dataclass(frozen=True)
class TorchModule:
    """An nn.Module instance: calling it on CUDA tensors yields CUDA tensors."""

    site: int = 0


@dataclass(frozen=True)
class QualRef:
    """A reference to an imported module, class or function by qualified name."""

    qualname: str


@dataclass(frozen=True)
class Const:
    value: object


@dataclass(frozen=True)
class Kernel:
    framework: str  # numba | cupy
    label: str
    node: Optional[cst.CSTNode] = field(default=None, compare=False, hash=False)
    site: int = 0
    # Positional arguments before this one configure the launch, they are not kernel
    # arguments (`raw_kernel(grid, block, args)`: 2).
    args_from: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Launch:
    """`kernel[grid, block, stream]`: a configured Numba kernel, not yet called."""

    kernel: Kernel
    stream: Optional["Value"]  # None: no stream in the config (legacy default stream)


@dataclass(frozen=True)
class Seq:
    """A list/tuple whose elements we may know individually (`items`) or only by kind."""

    items: Optional[Tuple["Value", ...]] = None
    element: "Value" = UNKNOWN

    def item(self, index: Optional[int]) -> "Value":
        if self.items is not None and index is not None and -len(self.items) <= index < len(self.items):
            return self.items[index]
        return self.element

    def stored(self, value: "Value") -> "Seq":
        """The list after `slots[i] = value` at an index the walk does not follow: its
        elements are what they were or `value` (None placeholders give way to it)."""
        element = self.element
        for item in self.items or ():
            element = join(element, item)
        if isinstance(value, Buffer) and value.site:
            # One of several tensors (`outs[i - 1] = torch.empty_like(x)` in a loop): each
            # slot its own memory, known by the list's name and the index (ordering.slot).
            value = replace(value, site=0)
        joined = join(element, value) if element is not UNKNOWN or self.items else UNKNOWN
        return Seq(element=joined)

    def appended(self, value: "Value") -> "Seq":
        """The list after `.append(value)` (its length no longer known)."""
        return Seq(element=value if self.items == () else join(self.element, value))

    def holds_buffers(self) -> bool:
        items = self.items if self.items else (self.element,)
        return all(isinstance(i, Buffer) for i in items)


@dataclass(frozen=True)
class DictOf:
    """A dict whose values we know by kind (`{"tokens": t.cuda(), ...}`, a helper that
    fills `out[key] = flat.narrow(...)`); its keys are not tracked."""

    value: "Value" = UNKNOWN
    empty: bool = False  # `{}` not filled yet: the first value stored gives the kind
    # Keyword arguments for a call's `**kwargs`: the keys the code spells and their values
    # (`dict(non_blocking=True)`, `{"non_blocking": True}`, `{}`), given on every path that
    # built it; None when some key is not a constant.
    keys: Optional[tuple[tuple[str, "Value"], ...]] = None
    # Built under `isinstance(x, torch.Tensor)` (`dict(non_blocking=True) if isinstance(x,
    # torch.Tensor) else {}`): the name tested and the keys its tensor side gives. A tensor
    # method called on `x` sees those (on the other side `x` is no tensor).
    tensor_side: Optional[tuple[str, tuple[tuple[str, "Value"], ...]]] = None

    def stored(self, value: "Value") -> "Value":
        """The dict after `d[k] = value`."""
        joined = value if self.empty else join(self.value, value)
        return DictOf(joined) if joined is not UNKNOWN else UNKNOWN

    def keywords_for(self, receiver: str) -> tuple[tuple[str, "Value"], ...]:
        """The keyword arguments `**self` gives a method called on `receiver`."""
        if self.tensor_side is not None and self.tensor_side[0] == receiver:
            return self.tensor_side[1]
        return self.keys or ()


def common_keys(a: Optional[tuple], b: Optional[tuple]) -> Optional[tuple]:
    """The keyword arguments two paths both give, with the same value (a key one path
    gives and the other does not is given only on some paths: left out)."""
    if a is None or b is None:
        return None
    return tuple(item for item in a if item in b)


@dataclass(frozen=True)
class LocalFunction:
    """A function or method defined in the checked file."""

    name: str
    node: cst.CSTNode = field(compare=False, hash=False)
    site: int = 0
    owner: Optional[str] = None  # class name for methods
    home: object = field(default=None, compare=False, hash=False)  # analyzer of another module


@dataclass(frozen=True)
class Instance:
    """An instance of a class of the checked project (its `self.` attributes are known):
    of this file, or of another module (`home`: that module's analyzer)."""

    cls: str
    home: object = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class StreamContext:
    """The value of `torch.cuda.stream(s)`: entering it makes `s` current."""

    stream: "Value"
    framework: str


@dataclass(frozen=True)
class Graph:
    """A captured CUDA graph: the work recorded while its stream was capturing, which
    runs, reading and writing the same buffers, each time the graph is launched."""

    ops: tuple = field(compare=False, default=())
    site: int = 0


@dataclass(frozen=True)
class HostOrDevice:
    """A PyTorch tensor that is a CUDA tensor on some paths and a tensor the code builds
    on the host from Python values on others: `norm if grads else torch.tensor(0.0)`, or
    a `torch.tensor(0.0)` accumulator that a loop replaces with CUDA results (the loop
    may run zero times). Most of the walk sees it as UNKNOWN (`plain`); only a copy to a
    CUDA device (an upload on the host path) and `.device` (CUDA on the device path) read
    it, as a join of devices takes the CUDA path to be the code's GPU path."""

    device: Buffer
    host: Buffer


Value = Union[
    Unknown, Stream, Event, Buffer, Device, Loader, TorchModule, QualRef, Const, Kernel,
    Launch, Seq, DictOf, LocalFunction, Instance, StreamContext, Graph, HostOrDevice,
]


def plain(value: Value) -> Value:
    """The value as the walk's general rules see it: a tensor that is CUDA on some paths
    only is UNKNOWN there."""
    return UNKNOWN if isinstance(value, HostOrDevice) else value


def _sides(value: Value) -> Optional[Tuple[Optional[Buffer], Optional[Buffer]]]:
    """(CUDA tensor, host-built tensor) a value may be, for `HostOrDevice` joins."""
    if isinstance(value, HostOrDevice):
        return value.device, value.host
    if isinstance(value, Buffer) and value.framework == "torch":
        if value.mem is Mem.DEVICE:
            return value, None
        if value.mem is Mem.PAGEABLE and value.literal:
            return None, value
    return None


def _join_sides(a: Value, b: Value) -> Value:
    x, y = _sides(a), _sides(b)
    if x is None or y is None:
        return UNKNOWN
    parts = []
    for p, q in zip(x, y):
        part = p if q is None else q if p is None else join(p, q)
        if part is not None and not isinstance(part, Buffer):
            return UNKNOWN
        parts.append(part)
    device, host = parts
    if device is None or host is None:
        return UNKNOWN
    return HostOrDevice(device, host)


def join(a: Value, b: Value) -> Value:
    """What a name holds after two paths meet: the same value, or UNKNOWN.

    `None` on one path and a buffer on the other (`self.next = None` when a loader
    runs out) is the buffer: every use that matters happens on the buffer's path."""
    if a == b:
        return a
    for x, y in ((a, b), (b, a)):
        if isinstance(x, (Buffer, StreamContext, Stream, Event, DictOf, Kernel, Seq)) and isinstance(y, Const) and y.value is None:
            # (`ctx = torch.cuda.stream(s) if overlap else nullcontext()`: the stream's path;
            # `if self.kernel is None: self.kernel = cupy.ElementwiseKernel(...)`: compiled once)
            return x
    if isinstance(a, Buffer) and isinstance(b, Buffer) and a.framework == b.framework and a.mem == b.mem:
        return replace(a, site=a.site if a.site == b.site else 0, bound_stream=None if a.bound_stream != b.bound_stream else a.bound_stream)
    if isinstance(a, Stream) and isinstance(b, Stream) and a.framework == b.framework and a.kind == b.kind:
        return replace(a, blocking=a.blocking if a.blocking == b.blocking else None)
    for x, y in ((a, b), (b, a)):
        # `s = side if overlap else current_stream()`: on the current stream's path nothing
        # can race the current stream, so the side stream's path is the one to follow.
        if isinstance(x, Stream) and isinstance(y, Stream) and x.framework == y.framework and x.explicit \
                and y.is_default:
            return x
    if isinstance(a, Seq) and isinstance(b, Seq) and a.items is not None and b.items is not None \
            and len(a.items) == len(b.items) and a.items:
        # `return (None, None)` on one path and `return (out, event)` on the other: item by item.
        items = tuple(join(x, y) for x, y in zip(a.items, b.items))
        if all(item is UNKNOWN for item in items):
            return UNKNOWN
        element = items[0]
        for item in items[1:]:
            element = join(element, item)
        return Seq(items=items, element=element)
    if isinstance(a, Seq) and isinstance(b, Seq) and not (a.items and b.items):
        # (a list of slots, before and after one is filled)
        inner = join(a.element, b.element)
        return Seq(element=inner) if inner is not UNKNOWN else UNKNOWN
    if isinstance(a, Seq) and isinstance(b, Seq) and a.holds_buffers() and b.holds_buffers():
        # Lists of buffers filled differently on two paths (`if overlap: bufs.append(b1)`).
        element = join(a.element, b.element)
        return Seq(element=element) if element is not UNKNOWN else UNKNOWN
    if isinstance(a, DictOf) and isinstance(b, DictOf):
        keys = common_keys(a.keys, b.keys)
        if a.empty or b.empty:
            return replace(b if a.empty else a, keys=keys, tensor_side=None)
        inner = join(a.value, b.value)
        if inner is UNKNOWN and keys is not None:
            return DictOf(keys=keys)
        return DictOf(inner, keys=keys) if inner is not UNKNOWN else UNKNOWN
    if isinstance(a, Event) and isinstance(b, Event) and a.framework == b.framework:
        return Event(a.framework, a.label, site=0)  # one of several events: identity unknown
    for x, y in ((a, b), (b, a)):
        # `device = "cuda"` if CUDA is available, else `"cpu"` (or what the caller named):
        # a device that is CUDA on one path is the code's GPU path.
        if _names_device(x, cuda=True) and (_names_device(y, cuda=False) or y is UNKNOWN):
            return x
    return UNKNOWN


def join_returns(a: Value, b: Value) -> Value:
    """What a function returns over its `return`s: `join`, except that a device array the
    code narrowed by a type test (or a buffer specification holding one, `(buf, MPI.FLOAT)`)
    against a value it does not know (on the test's host side, the argument as it came) is
    the device array: only its side can race with a stream."""
    if a != b:
        for x, y in ((a, b), (b, a)):
            if _holds_narrowed(x) and _host_side(y):
                return x
    return join(a, b)


def _host_side(value: Value) -> bool:
    """What a type test's host side returns: the argument as it came, host memory, or a
    buffer specification of either (`[array, MPI.FLOAT]`)."""
    if isinstance(value, Seq) and value.items:
        value = value.items[0]
    return value is UNKNOWN or is_host(value)


def _holds_narrowed(value: Value) -> bool:
    if isinstance(value, Seq) and value.items:
        value = value.items[0]
    return isinstance(value, Buffer) and value.narrowed and value.mem is Mem.DEVICE


def join_paths(a: Value, b: Value) -> Value:
    """What a name (or an if-expression) holds where two paths meet: `join`, and where
    that loses a PyTorch tensor that is CUDA on one path and built on the host on the
    other, a `HostOrDevice`. Only names and if-expressions keep it (containers, returns
    and attributes hold `plain` values)."""
    joined = join(a, b)
    return _join_sides(a, b) if joined is UNKNOWN else joined


def _names_device(value: Value, cuda: bool) -> bool:
    if isinstance(value, Device):
        return value.cuda is cuda
    if isinstance(value, Const) and isinstance(value.value, str):
        return (value.value.split(":")[0] == "cuda") if cuda else value.value == "cpu"
    return False


def is_device(value: Value) -> bool:
    return isinstance(value, Buffer) and value.mem is Mem.DEVICE


def is_host(value: Value) -> bool:
    return isinstance(value, Buffer) and value.mem in (Mem.PINNED, Mem.PAGEABLE)
