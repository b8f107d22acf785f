"""Effects: what a function does to streams, events and buffers, in program order, streams as the caller's symbols."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Optional

from streamlint.model.domain.paths import Path
from streamlint.model.domain.streams import StreamRef
from streamlint.model.domain.values import HostBuilt, Memory


class EffectKind(Enum):
    ACCESS = "access"  # `path` read or written by work on `stream` (the host: domain.order.HOST)
    WAIT_STREAM = "wait_stream"  # `stream` waits for `other`
    RECORD_EVENT = "record_event"  # event `path` recorded on `stream`
    WAIT_EVENT = "wait_event"  # `stream` waits for event `path`
    SYNC = "sync"  # the host waits for `stream`, else for event `path`, else (or for one not told) for every stream
    RECORD_STREAM = "record_stream"  # the allocator is told `path` is used on `stream`
    RELEASE = "release"  # `path`, allocated on `stream`, goes back to the allocator
    SET_CURRENT = "set_current"  # `framework`'s current stream becomes `stream` and stays so
    OPERATION = "operation"  # an API operation the rules ask about (copies, launches, implicit syncs)
    BEGIN_CAPTURE = "begin_capture"  # work queued on `stream` is recorded into a graph, not run
    END_CAPTURE = "end_capture"  # the capture on `stream` ends: its work is the graph at `path`
    LAUNCH_GRAPH = "launch_graph"  # the graph at `path` runs its recorded work on `stream`
    # the ring counter at `path` moves on by one; `write`: it is set to a value not told (D-25)
    COUNTER = "counter"
    PIN = "pin"  # the host memory at `path` is page-locked in place from now on (`cudaHostRegister`)


@dataclass(frozen=True)
class HostArray:
    """A host array a kernel launch is given: Numba copies it in before the launch and back after it."""

    position: int  # the positional argument
    memory: Optional[Path] = None  # its memory, where told (two launches given one array move it twice)


@dataclass(frozen=True)
class Operation:
    """What the rules about single operations need: which API, how it blocks, what memory."""

    api: str  # the qualified API name from the fact tables ("torch.Tensor.to", "cupy.asnumpy")
    op: str  # the fact table's operation kind (api.facts OpKind value)
    host_blocking: Optional[bool]  # None: depends on what the code does not show
    host_memory: Memory = Memory.UNKNOWN  # the host side of a copy
    in_loop: bool = False  # inside a loop of the function that performs it
    value_site: str = ""  # the site that made the value a host read reads, when known
    host_inputs: bool = False  # a kernel whose every input is a number the host already has
    conditional: bool = False  # runs only now and then (a rare test, an `except`, after an early return)
    async_form: bool = False  # an asynchronous API form: overlaps other work only given pinned host memory
    non_blocking: Optional[bool] = None  # the call as written lets the host go on (non_blocking=, a stream given)
    host_at: str = ""  # where the host side is in the call: "self", "return", or "<pos>/<keyword>"
    host_loader_batch: bool = False  # the host side is a batch a data loader yielded
    host_arrays: tuple[HostArray, ...] = ()  # a kernel launch's positional arguments that are host arrays
    sync_form: bool = False  # a synchronous copy API, used so, whose stream-ordered form exists
    # the host side is a tensor built from Python values where it is used (`[a, b]`): on every pass of its loop, or on
    # its first pass only (the body carries what the later passes use)
    host_built: Optional[HostBuilt] = field(default=None, metadata={"omit_default": True})

    @property
    def into_given(self) -> bool:
        """The host side is a buffer the call is given as an argument (`x.get(out=buf)`), not one it returns."""
        return self.host_at not in ("", "return", "self")


@dataclass(frozen=True)
class Effect:
    kind: EffectKind
    site: str  # "qualname#ordinal" of the call that does it
    path: Optional[Path] = None
    stream: Optional[StreamRef] = None
    other: Optional[StreamRef] = None
    write: bool = False
    framework: str = ""
    # It runs only while what this path holds is not yet device memory (moving a module again does nothing)
    guard: Optional[Path] = None
    operation: Optional[Operation] = None
    chain: tuple[str, ...] = ()  # call sites inside the function it came through (provenance)
    host_memory: bool = False  # an ACCESS to host memory (the host side of a copy, the host's own)
    # The sides of the tests it runs under ("<test>:1" the body, "<test>:0" the other): never pair
    branch: tuple[str, ...] = ()
    # The side streams the call handed the callee, which queued this on its caller's current stream
    handed: tuple[StreamRef, ...] = ()
    # A sync that happens only where a value of a device not told is CUDA memory (`t.cpu()` of a parameter):
    # it orders on the may clock only, so no finding relies on its absence nor on its presence
    may: bool = field(default=False, metadata={"omit_default": True})
    # An operation that ran in a loop below the call that shows it (a callee's, or deeper): the call's loop runs
    # that loop on every pass
    inner_loop: bool = field(default=False, metadata={"omit_default": True})
