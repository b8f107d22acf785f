"""The record the analysis produces: GPU operations per function, in program order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Tuple

import libcst as cst

from streamlint.model.api.op_kinds import COPIES, DEVICE_WORK, HOST_SYNCS, OpKind  # noqa: F401  (re-exported for the v2 modules)
from streamlint.model.values import UNKNOWN, Stream, Value

if TYPE_CHECKING:
    from streamlint.model.hazards import Access, Hazard




@dataclass(frozen=True)
class HelperRef:
    """The op was found inside a same-module function called here."""

    name: str
    node: cst.CSTNode = field(compare=False)  # the helper's own operation node
    api: str = ""
    home: object = field(default=None, compare=False)  # the FileAnalysis holding `node` (another module)


@dataclass(eq=False)
class GpuOp:
    kind: OpKind
    api: str  # what was called, as the user spelled it: "cp.asnumpy", "t.to"
    node: cst.CSTNode  # the call (positions come from here)
    framework: str
    index: int  # program order within the function
    stream: Optional[Stream] = None  # where the work is queued; None for host-only ops
    host_blocking: Optional[bool] = False  # None: depends on what we cannot see
    is_async_api: bool = False  # an "async" form that can overlap given pinned memory
    sync_api: bool = False  # a synchronous copy API that has a stream-ordered async form
    host_buffer: Value = UNKNOWN  # host side of a copy
    receiver: Value = UNKNOWN  # the object a method was called on
    result: Value = UNKNOWN
    non_blocking: Optional[bool] = None  # torch's non_blocking= / CuPy's not blocking=
    pinned_out: bool = False  # D2H into a known pinned destination
    target: Optional[Stream] = None  # synchronized / waited-on stream
    loops: Tuple[int, ...] = ()  # enclosing loops, outermost first (ids into FunctionRecord.loops)
    in_forward: bool = False
    in_comprehension: bool = False
    comprehension: int = 0  # the innermost comprehension it is in (id of its `for`), 0 outside
    conditional: bool = False  # under an `if` inside its innermost loop (not every iteration)
    rare: bool = False  # under a rare test (a flag, every N steps, one-off) that is no option switch
    helper: Optional[HelperRef] = None
    reads: Tuple[Value, ...] = ()
    writes: Tuple[Value, ...] = ()
    accesses: Tuple["Access", ...] = ()  # buffers read and written, for the ordering check
    event: Optional[Value] = None  # the event recorded, waited on or synchronized
    # The tests of a parameter against None it runs under, (name, runs when None): a
    # caller's argument decides which side runs (`if stream is None:` in a helper).
    when_none: Tuple[Tuple[str, bool], ...] = ()
    # The class options whose tests it runs under (switches.option_sides): (attribute, the
    # value on its side, None when the test does not tell), its helpers' own tests included
    options: Tuple[Tuple[str, Optional[bool]], ...] = ()

    @property
    def hot(self) -> bool:
        """A hot path: a loop body or an nn.Module's forward."""
        return bool(self.loops) or self.in_forward

    @property
    def on_explicit_stream(self) -> bool:
        return self.stream is not None and self.stream.explicit

    @property
    def is_stream_work(self) -> bool:
        return self.kind in DEVICE_WORK and self.on_explicit_stream

    def describe_stream(self) -> str:
        return self.stream.label if self.stream else "no stream"


@dataclass
class LoopInfo:
    node: cst.CSTNode
    parent: Optional[int]
    comprehension: bool = False
    timed: bool = False  # reads a host timer: a benchmark harness
    marks: set = field(default_factory=set)  # what its body calls, by kind (walk_common.LOOP_*)


@dataclass
class FunctionRecord:
    """One analysed body: a function, a method, or the module top level."""

    name: str
    node: cst.CSTNode
    kind: str  # "module" | "function" | "method"
    class_name: Optional[str] = None
    is_forward: bool = False
    ops: list[GpuOp] = field(default_factory=list)
    loops: dict[int, LoopInfo] = field(default_factory=dict)
    enters_stream: bool = False  # creates, enters or makes current an explicit stream
    passes_stream: bool = False  # queues work on a stream it received
    kept_sites: set[int] = field(default_factory=set)  # streams/events stored into containers
    hazards: list["Hazard"] = field(default_factory=list)  # from the hazard walk (SL401-SL404)
    measures: bool = False  # reads a host timer or an event's elapsed time: a measurement helper
    probe_calls: set[int] = field(default_factory=set)  # ids of its calls of measurement helpers
    # A helper that a hot function (`forward`, an optimizer's `step`) of this file calls on
    # every call, directly or through other such helpers: that function's name.
    hot_via: str = ""

    @property
    def is_stream_region(self) -> bool:
        return self.enters_stream or self.passes_stream
