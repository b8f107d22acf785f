"""The shape of one API fact (the tables, one module per framework, are pure data): for a call or
method, the kind of operation, its stream, whether the host waits, what it returns (API-FACTS.md)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Optional

from streamlint.model.api.op_kinds import OpKind


@dataclass(frozen=True)
class Arg:
    """Where an argument is found: by position, by keyword, or both."""

    pos: Optional[int] = None
    kw: Optional[str] = None


class Stream(Enum):
    """Which stream an operation is queued on."""

    NONE = "none"  # host-only or allocation-only
    CURRENT = "current"  # the framework's current stream (CuPy, PyTorch)
    LEGACY = "legacy"  # always the legacy default stream
    ARG = "arg"  # the stream argument; absent/0/None means the legacy default stream
    ARG_OR_CURRENT = "arg_or_current"
    ARG_OR_BOUND = "arg_or_bound"  # Numba: argument, else the array's bound stream, else legacy
    SELF = "self"  # a method of a stream object
    # PyTorch's invariant: the current stream for device memory (or memory used under a stream the code
    # chose), the host's own work for host memory
    DATA = "data"


class Block(Enum):
    """Whether the host waits."""

    ALWAYS = "always"
    NEVER = "never"
    UNLESS_STREAM = "unless_stream"  # Numba/cuda-python: synchronous API without a stream
    FLAG = "flag"  # decided by `flag` (CuPy blocking=, torch non_blocking=)


@dataclass(frozen=True)
class Fact:
    kind: Optional[OpKind]  # None: the call only produces a value, it queues nothing
    framework: str
    stream: Stream = Stream.NONE
    stream_arg: Optional[Arg] = None
    blocking: Block = Block.NEVER
    # Block.FLAG (and flag results): the keyword, its default and the value that blocks
    flag: Optional[Arg] = None
    flag_default: bool = True
    flag_blocks_when: bool = True
    # What the call returns: transfer/fact_calls.result_of's vocabulary
    result: str = "unknown"
    host: Optional[Arg] = None  # host-side buffer of a copy
    # (destination, source) of a copy that is given both ends (`cuMemcpyDtoDAsync(dst, src, n, s)`)
    ends: Optional[tuple[Arg, Arg]] = None
    out: Optional[Arg] = None  # destination buffer of a D2H copy into an existing array
    direction: Optional[Arg] = None  # cudaMemcpyKind argument
    returns_tuple: bool = False  # cuda-python: (err, value)
    # Stream creation: how blocking is decided: "yes", "no", "not:<kw>", "flags:<pos>"
    creates_blocking: Optional[str] = None
    # A synchronous API whose stream-ordered async form exists (SL202).
    sync_api: bool = False
    # An "async" API: overlaps only with pinned host memory (SL301).
    async_api: bool = False
    target: Optional[Arg] = None  # stream/event argument of syncs and waits
    # Buffers it reads and writes beyond what its kind implies (effect models): `reads_from` on, every
    # positional argument (`args_written`: written too); `self_*`: the receiver's own memory
    reads: tuple[Arg, ...] = ()
    writes: tuple[Arg, ...] = ()
    reads_from: Optional[int] = None
    args_written: bool = False
    self_reads: bool = False
    self_writes: bool = False
    # reads and writes the memory the receiver keeps (addresses bound to it), never the receiver itself
    self_kept: bool = False


# Frameworks whose caching allocators reuse freed memory on the stream it was made on at once, unless
# told of other streams (`record_stream`).
STREAM_ORDERED_ALLOCATORS = frozenset({"torch"})
# Frameworks whose work without a stream goes to the legacy default stream (CuPy's until code sets one).
LEGACY_BY_DEFAULT = frozenset({"cupy", "numba", "cuda-python"})
# Raw memory pointers (CuPy's MemoryPointer): `ptr + offset` is the same allocation, no kernel.
POINTER_FRAMEWORKS = frozenset({"raw"})
