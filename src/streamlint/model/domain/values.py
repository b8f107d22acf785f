"""Abstract values: what a name or an access path holds, as far as the code gives evidence.

Every component is independent and joins pointwise; a component the code says nothing
about stays UNKNOWN, and unknown never produces a finding.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Optional

from streamlint.model.domain.paths import Path
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

    def join(self, other: "AbsValue") -> "AbsValue":
        if self == other:
            return self
        return AbsValue(
            self.kind if self.kind is other.kind else ValueKind.UNKNOWN,
            self.framework if self.framework == other.framework else "",
            self.memory if self.memory is other.memory else Memory.UNKNOWN,
            _join_identity(self.identity, other.identity),
            self.stream if self.stream == other.stream else None,
            self.may_be_none or other.may_be_none,
            _join_optional(self.element, other.element),
            self.target if self.target == other.target else "",
            self.members | other.members,
            self.loader_batch and other.loader_batch,
        )

    def join_none(self) -> "AbsValue":
        """This value on one path, None on another (`x if c else None`)."""
        return replace(self, may_be_none=True)

    @property
    def is_buffer(self) -> bool:
        return self.kind is ValueKind.BUFFER

    @property
    def on_device(self) -> bool:
        return self.kind is ValueKind.BUFFER and self.memory is Memory.DEVICE


def _join_identity(a: Optional[Path], b: Optional[Path]) -> Optional[Path]:
    """The same memory on both paths, or the allocations of one site of different iterations
    (named as the earlier iteration's: a container filled in a loop holds them all)."""
    if a == b or a is None or b is None:
        return a if a == b else None
    if a.steps == b.steps and a.root.site and a.root.site == b.root.site:
        return a if a.root.age else b
    return None


def _join_optional(a: Optional[AbsValue], b: Optional[AbsValue]) -> Optional[AbsValue]:
    if a is None or b is None:
        return None
    return a.join(b)


UNKNOWN = AbsValue()
NONE = AbsValue(ValueKind.NONE)


def buffer(identity: Path, memory: Memory, framework: str = "") -> AbsValue:
    return AbsValue(ValueKind.BUFFER, framework, memory, identity)


def stream_value(ref: StreamRef) -> AbsValue:
    return AbsValue(ValueKind.STREAM, ref.framework, Memory.UNKNOWN, None, ref)


# Truth known in the analysed world (a program whose streams run has a GPU).
TRUE = AbsValue(ValueKind.HOST_NUMBER, target="True")
FALSE = AbsValue(ValueKind.HOST_NUMBER, target="False")


def truth(value: AbsValue) -> Optional[bool]:
    if value == TRUE:
        return True
    return False if value == FALSE else None
