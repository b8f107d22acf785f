"""Map CUPTI stream ids to the streams of the program.

Kineto's `args.stream` is CUPTI's stream id, not the `cudaStream_t` handle the program
holds. The harness issues a one-element marker kernel on every stream the program
creates (and on the legacy default stream), inside a `record_function` range named
`streamlint::stream::<label>::<handle>`; the marker's GPU op carries the CUPTI id, so the
range name maps id -> label and handle. Marker ops are bookkeeping, not the program's
work: `program_ops` leaves them out.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamlint.runtime.trace import GpuOp, Trace

MARKER_PREFIX = "streamlint::stream::"
LEGACY_LABEL = "legacy default stream"


@dataclass(frozen=True)
class StreamInfo:
    cupti_id: int
    label: str
    handle: int | None  # None: no marker seen for this stream

    @property
    def is_legacy_default(self) -> bool:
        return self.handle == 0


def marker_name(label: str, handle: int) -> str:
    return f"{MARKER_PREFIX}{label}::{handle:#x}"


def parse_marker(name: str) -> tuple[str, int] | None:
    if not name.startswith(MARKER_PREFIX):
        return None
    body = name[len(MARKER_PREFIX) :]
    label, sep, handle = body.rpartition("::")
    if not sep:
        return None
    try:
        return label, int(handle, 16)
    except ValueError:
        return None


def marker_ops(trace: Trace) -> set[int]:
    """Correlation ids of the marker ops."""
    out: set[int] = set()
    for r in trace.ranges_named(MARKER_PREFIX, prefix=True):
        out.update(op.correlation for op in trace.ops_issued_in(r))
    return out


def stream_map(trace: Trace) -> dict[int, StreamInfo]:
    """CUPTI stream id -> what the program calls it, for every stream with GPU work."""
    found: dict[int, StreamInfo] = {}
    for r in trace.ranges_named(MARKER_PREFIX, prefix=True):
        parsed = parse_marker(r.name)
        if parsed is None:
            continue
        label, handle = parsed
        for op in trace.ops_issued_in(r):
            # The first marker of a stream names it (a stream is marked once per trace).
            found.setdefault(op.stream, StreamInfo(op.stream, label, handle))
    for op in trace.gpu:
        if op.stream not in found:
            found[op.stream] = StreamInfo(op.stream, f"stream {op.stream}", None)
    return found


def program_ops(trace: Trace) -> list[GpuOp]:
    """GPU ops of the program: every op but the stream markers."""
    markers = marker_ops(trace)
    return [op for op in trace.gpu if op.correlation not in markers]


def lane_order(streams: dict[int, StreamInfo], used: set[int]) -> list[StreamInfo]:
    """Streams with program work, legacy default first, then by id."""
    infos = [streams[s] for s in used if s in streams]
    return sorted(infos, key=lambda i: (not i.is_legacy_default, i.cupti_id))
