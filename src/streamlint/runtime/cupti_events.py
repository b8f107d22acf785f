"""CUPTI activity records -> the Chrome trace that trace.py reads (the one evidence
interface: the verdicts never know which tracer ran).

The CUPTI tracer (capture_cupti.py) turns each activity record into a plain dict as it
arrives (`kind` plus the fields below; times in CUPTI nanoseconds) and keeps the
`record_function`-style ranges it opened itself (name, start, end, thread id, also in
CUPTI nanoseconds). This module builds the events Kineto would have exported from them:

    kernel          -> cat "kernel"      args.stream, args.correlation
    memcpy          -> cat "gpu_memcpy"  name "Memcpy HtoD (Pageable -> Device)", args.bytes
    memset          -> cat "gpu_memset"
    runtime/driver  -> cat "cuda_runtime" / "cuda_driver" (every call: Numba's synchronous
                       cuMemcpyHtoD is then a recorded, host-blocking call)
    synchronization -> cat "cuda_sync"   args.cuda_sync_kind "Stream Sync", ...
    range           -> cat "user_annotation"

Nothing here needs CUPTI, so recorded records can be parsed (and tested) anywhere.
"""

from __future__ import annotations

from typing import Iterable

NS_PER_US = 1000.0

# CUPTI's enum names (ActivityMemcpyKind, ActivityMemoryKind, ActivitySynchronizationType)
# as Kineto spells them in its event names.
COPY_KINDS = {"HTOD": "HtoD", "DTOH": "DtoH", "DTOD": "DtoD", "HTOH": "HtoH", "PTOP": "PtoP",
              "HTOA": "HtoA", "ATOH": "AtoH", "ATOA": "AtoA", "ATOD": "AtoD", "DTOA": "DtoA"}  # fmt: skip
MEMORY_KINDS = {"PAGEABLE": "Pageable", "PINNED": "Pinned", "DEVICE": "Device", "ARRAY": "Array",
                "MANAGED": "Managed", "DEVICE_STATIC": "Device", "MANAGED_STATIC": "Managed"}  # fmt: skip
SYNC_KINDS = {"STREAM_SYNCHRONIZE": "Stream Sync", "EVENT_SYNCHRONIZE": "Event Sync",
              "CONTEXT_SYNCHRONIZE": "Context Sync", "STREAM_WAIT_EVENT": "Stream Wait Event"}  # fmt: skip


def memcpy_name(copy_kind: str, src_kind: str, dst_kind: str) -> str:
    """'Memcpy HtoD (Pageable -> Device)', as Kineto names a copy."""
    direction = COPY_KINDS.get(copy_kind, copy_kind.title())
    src = MEMORY_KINDS.get(src_kind, src_kind.title())
    dst = MEMORY_KINDS.get(dst_kind, dst_kind.title())
    return f"Memcpy {direction} ({src} -> {dst})"


def _x(cat: str, name: str, start_ns: float, end_ns: float, pid: int, tid: int, args: dict) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "ts": start_ns / NS_PER_US,
            "dur": max(0.0, (end_ns - start_ns) / NS_PER_US), "pid": pid, "tid": tid, "args": args}  # fmt: skip


def event_of(record: dict) -> dict | None:
    """One Chrome trace event for one activity record (None for kinds not used)."""
    kind = record.get("kind")
    start, end = record.get("start", 0), record.get("end", 0)
    corr = record.get("correlation_id", 0)
    stream = record.get("stream_id", -1)
    device = record.get("device_id", 0)
    if kind == "kernel":
        return _x("kernel", record.get("name", "kernel"), start, end, device, stream,
                  {"stream": stream, "correlation": corr, "device": device})  # fmt: skip
    if kind == "memcpy":
        name = memcpy_name(record.get("copy_kind", ""), record.get("src_kind", ""), record.get("dst_kind", ""))
        return _x("gpu_memcpy", name, start, end, device, stream,
                  {"stream": stream, "correlation": corr, "bytes": record.get("bytes", 0), "device": device})  # fmt: skip
    if kind == "memset":
        return _x("gpu_memset", "Memset (Device)", start, end, device, stream,
                  {"stream": stream, "correlation": corr, "bytes": record.get("bytes", 0), "device": device})  # fmt: skip
    if kind in ("runtime", "driver"):
        cat = "cuda_runtime" if kind == "runtime" else "cuda_driver"
        return _x(cat, record.get("name", f"cbid {record.get('cbid')}"), start, end, record.get("process_id", 0),
                  record.get("thread_id", 0), {"correlation": corr})  # fmt: skip
    if kind == "synchronization":
        sync = SYNC_KINDS.get(record.get("type", ""), record.get("type", "Unknown"))
        args = {"correlation": corr, "cuda_sync_kind": sync}
        if stream not in (-1, None) and sync != "Context Sync":
            args["stream"] = stream
        return _x("cuda_sync", sync, start, end, 0, record.get("thread_id", 0), args)
    return None


def range_event(name: str, start_ns: float, end_ns: float, tid: int, pid: int = 0) -> dict:
    return _x("user_annotation", name, start_ns, end_ns, pid, tid, {})


def to_chrome(records: Iterable[dict], ranges: Iterable[tuple[str, float, float, int]]) -> dict:
    """The Chrome trace of a CUPTI capture: activity records and the tracer's ranges."""
    events = [ev for ev in (event_of(r) for r in records) if ev is not None]
    events += [range_event(name, start, end, tid) for name, start, end, tid in ranges]
    events.sort(key=lambda ev: ev["ts"])
    return {"traceEvents": events, "streamlint": {"tracer": "cupti"}}
