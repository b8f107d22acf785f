"""Parse a PyTorch profiler (Kineto) Chrome trace into typed events, and trim one for storage.

What Kineto records over CUPTI, whichever library issued the work (PyTorch, CuPy, Numba):
- GPU work (`cat` kernel / gpu_memcpy / gpu_memset) with `args.stream` (a CUPTI stream id,
  not a handle: see streams.py), `args.correlation` and, for copies, `args.bytes`; the
  memcpy name carries the direction and host memory kind, `Memcpy HtoD (Pageable -> Device)`;
- host API calls (cuda_runtime / cuda_driver) with their host duration and correlation id;
- with `enable_cuda_sync_events=True`, synchronization records (cuda_sync);
- `record_function` ranges (user_annotation) on the host thread that opened them.

Times are microseconds as in the trace. Nothing here needs torch.
"""

from __future__ import annotations

import gzip
import json
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from streamlint.runtime.labels import REP_PREFIX

GPU_CATEGORIES = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
API_CATEGORIES = {"cuda_runtime": "runtime", "cuda_driver": "driver"}
SYNC_CATEGORY = "cuda_sync"
RANGE_CATEGORY = "user_annotation"
KEPT_CATEGORIES = set(GPU_CATEGORIES) | set(API_CATEGORIES) | {SYNC_CATEGORY, RANGE_CATEGORY}
KEPT_ARGS = ("stream", "correlation", "bytes", "device", "cuda_sync_kind", "event",
             "wait_on_stream", "wait_on_cuda_event_record_corr_id")  # fmt: skip
MAX_NAME = 160

_MEMCPY = re.compile(r"Memcpy\s+(\w+)\s*\((\w+)\s*->\s*(\w+)\)")

# Host API calls by what they do; the first pattern that matches a name wins.
API_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("sync", re.compile(r"Synchronize")),
    ("wait", re.compile(r"StreamWaitEvent|StreamWaitValue")),
    ("copy", re.compile(r"Memcpy")),
    ("memset", re.compile(r"Memset")),
    ("launch", re.compile(r"LaunchKernel|cuLaunch|LaunchCooperative")),
    ("create", re.compile(r"StreamCreate|EventCreate")),
    ("destroy", re.compile(r"StreamDestroy|EventDestroy")),
    ("alloc", re.compile(r"Malloc|MemAlloc|HostAlloc|HostRegister|Free|MemHostAlloc")),
    ("record", re.compile(r"EventRecord")),
    ("query", re.compile(r"Query")),
)
# Calls during which the host is held up waiting for the device (or the driver's staging).
BLOCKING_KINDS = frozenset({"sync", "copy", "memset", "alloc"})
# Synchronization records in which the host waits (a stream waiting on an event does not).
HOST_SYNC_KINDS = frozenset({"Stream Sync", "Event Sync", "Context Sync"})


@lru_cache(maxsize=4096)  # a trace repeats a few dozen API names thousands of times
def api_kind(name: str) -> str:
    for kind, pattern in API_KINDS:
        if pattern.search(name):
            return kind
    return "other"


@dataclass(frozen=True)
class GpuOp:
    kind: str  # kernel | memcpy | memset
    name: str
    stream: int
    start: float
    end: float
    correlation: int
    bytes: int = 0
    direction: str = ""  # HtoD | DtoH | DtoD | HtoH | PtoP
    host_memory: str = ""  # Pageable | Pinned (the host side of a host/device copy)

    @property
    def dur(self) -> float:
        return self.end - self.start

    @property
    def is_copy(self) -> bool:
        return self.kind == "memcpy"


@dataclass(frozen=True)
class ApiCall:
    name: str
    kind: str
    start: float
    end: float
    correlation: int
    tid: int
    domain: str  # runtime | driver

    @property
    def dur(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class SyncRecord:
    kind: str  # e.g. "Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event"
    stream: int | None
    start: float
    end: float
    correlation: int

    @property
    def dur(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Range:
    name: str
    start: float
    end: float
    tid: int

    @property
    def dur(self) -> float:
        return self.end - self.start


@dataclass
class Trace:
    gpu: list[GpuOp] = field(default_factory=list)
    api: list[ApiCall] = field(default_factory=list)
    syncs: list[SyncRecord] = field(default_factory=list)
    ranges: list[Range] = field(default_factory=list)

    @cached_property
    def _calls_by_correlation(self) -> dict[int, ApiCall]:
        out: dict[int, ApiCall] = {}
        for call in self.api:
            if call.correlation:
                out.setdefault(call.correlation, call)
        return out

    def launch_of(self, op: GpuOp | SyncRecord) -> ApiCall | None:
        """The host API call that issued this GPU op (same correlation id)."""
        return self._calls_by_correlation.get(op.correlation)

    def issue_time(self, op: GpuOp) -> float:
        """When the host issued the op (its API call's start), else the op's own start."""
        call = self.launch_of(op)
        return call.start if call is not None else op.start

    @cached_property
    def _ranges_by_tid(self) -> dict[int, tuple[list[float], list[Range]]]:
        by_tid: dict[int, list[Range]] = {}
        for r in self.ranges:
            by_tid.setdefault(r.tid, []).append(r)
        return {
            tid: ([r.start for r in rs], rs)
            for tid, rs in ((t, sorted(v, key=lambda r: (r.start, -r.end))) for t, v in by_tid.items())
        }

    def enclosing_ranges(self, time: float, tid: int | None = None) -> list[Range]:
        """Ranges open at `time` (on thread `tid`, or any thread), outermost first."""
        out: list[Range] = []
        tids = [tid] if tid is not None else list(self._ranges_by_tid)
        for t in tids:
            starts, rs = self._ranges_by_tid.get(t, ([], []))
            for r in rs[: bisect_right(starts, time)]:
                if r.start <= time <= r.end:
                    out.append(r)
        return sorted(out, key=lambda r: (r.start, -r.end))

    def ranges_named(self, name: str, prefix: bool = False) -> list[Range]:
        if prefix:
            return sorted((r for r in self.ranges if r.name.startswith(name)), key=lambda r: r.start)
        return sorted((r for r in self.ranges if r.name == name), key=lambda r: r.start)

    @cached_property
    def _api_starts(self) -> list[float]:
        return [c.start for c in self.api]

    @cached_property
    def _issued(self) -> tuple[list[float], list[tuple[int, GpuOp]], list[float], list[GpuOp]]:
        """Ops with a recorded call sorted by issue time (with the call's thread), and
        ops without one sorted by start."""
        with_call = sorted(((c.start, c.tid, op) for op in self.gpu if (c := self.launch_of(op)) is not None),
                           key=lambda x: x[0])  # fmt: skip
        without = sorted((op for op in self.gpu if self.launch_of(op) is None), key=lambda o: o.start)
        return ([x[0] for x in with_call], [(x[1], x[2]) for x in with_call],
                [o.start for o in without], without)  # fmt: skip

    @cached_property
    def _sync_starts(self) -> list[float]:
        return [s.start for s in self.syncs]

    def calls_in(self, window: Range | tuple[float, float], tid: int | None = None) -> list[ApiCall]:
        lo, hi = _bounds(window)
        if tid is None and isinstance(window, Range):
            tid = window.tid
        i, j = bisect_left(self._api_starts, lo), bisect_right(self._api_starts, hi)
        return [c for c in self.api[i:j] if tid is None or c.tid == tid]

    def ops_issued_in(self, window: Range | tuple[float, float], tid: int | None = None,
                      until: float | None = None) -> list[GpuOp]:  # fmt: skip
        """GPU ops whose issuing API call started inside the window (on its thread).

        Kineto records only some driver calls (kernel launches, not Numba's cuMemcpy*),
        so an op without a recorded call belongs to the window when it *starts* inside
        it, or before `until` (a later bound for asynchronous work)."""
        lo, hi = _bounds(window)
        if tid is None and isinstance(window, Range):
            tid = window.tid
        late = hi if until is None else max(hi, until)
        issue, called, starts, uncalled = self._issued
        i, j = bisect_left(issue, lo), bisect_right(issue, hi)
        out = [op for t, op in called[i:j] if tid is None or t == tid]
        k, m = bisect_left(starts, lo), bisect_right(starts, late)
        out.extend(uncalled[k:m])
        return out

    def host_syncs_in(self, window: Range | tuple[float, float]) -> list[SyncRecord]:
        """Synchronization records in which the host waited, starting inside the window
        (Numba's driver-level syncs appear only as these)."""
        lo, hi = _bounds(window)
        i, j = bisect_left(self._sync_starts, lo), bisect_right(self._sync_starts, hi)
        return [s for s in self.syncs[i:j] if s.kind in HOST_SYNC_KINDS]


def _bounds(window: Range | tuple[float, float]) -> tuple[float, float]:
    if isinstance(window, Range):
        return window.start, window.end
    return window


def parse_memcpy_name(name: str) -> tuple[str, str]:
    """('HtoD', 'Pageable') from 'Memcpy HtoD (Pageable -> Device)'; ('', '') if unknown."""
    m = _MEMCPY.search(name)
    if not m:
        return "", ""
    direction, src, dst = m.groups()
    host = ""
    for side in (src, dst):
        if side in ("Pageable", "Pinned"):
            host = side
    return direction, host


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def events_of(data: dict | list) -> list[dict]:
    if isinstance(data, dict):
        return list(data.get("traceEvents", []))
    return list(data)


def parse(data: dict | list) -> Trace:
    """Typed events from a Chrome trace (a Kineto export or a trimmed one)."""
    trace = Trace()
    for ev in events_of(data):
        if ev.get("ph") != "X":
            continue
        cat = ev.get("cat", "")
        try:
            start = float(ev["ts"])
            end = start + float(ev.get("dur", 0.0))
        except (KeyError, TypeError, ValueError):
            continue
        name = str(ev.get("name", ""))
        args = ev.get("args") or {}
        if cat in GPU_CATEGORIES:
            kind = GPU_CATEGORIES[cat]
            stream = _int(args.get("stream", ev.get("tid")), -1)
            direction, host = parse_memcpy_name(name) if kind == "memcpy" else ("", "")
            trace.gpu.append(GpuOp(kind, name, stream, start, end, _int(args.get("correlation")),
                                   _int(args.get("bytes")), direction, host))  # fmt: skip
        elif cat in API_CATEGORIES:
            trace.api.append(ApiCall(name, api_kind(name), start, end, _int(args.get("correlation")),
                                     _int(ev.get("tid")), API_CATEGORIES[cat]))  # fmt: skip
        elif cat == SYNC_CATEGORY:
            stream = args.get("stream")
            kind = str(args.get("cuda_sync_kind") or name)
            trace.syncs.append(SyncRecord(kind, _int(stream, -1) if stream is not None else None,
                                          start, end, _int(args.get("correlation"))))  # fmt: skip
        elif cat == RANGE_CATEGORY:
            trace.ranges.append(Range(name, start, end, _int(ev.get("tid"))))
    trace.gpu.sort(key=lambda o: (o.start, o.end))
    trace.api.sort(key=lambda c: c.start)
    trace.syncs.sort(key=lambda s: s.start)
    trace.ranges = traced_ranges(sorted(trace.ranges, key=lambda r: r.start))
    return trace


def traced_ranges(ranges: list[Range]) -> list[Range]:
    """A fixture's trace covers its traced repetitions (`streamlint::rep::<k>`); ranges
    that ended before the first of them belong to the untraced calls before it (warm-up,
    trials, timed calls). The PyTorch profiler never records those; a CUPTI capture
    made before its ranges were limited to the tracing window did, and they counted as
    executions of the flagged statements (SL502's 100 syncs "over 367 iterations")."""
    reps = [r for r in ranges if r.name.startswith(REP_PREFIX)]
    if not reps:
        return ranges
    first = min(r.start for r in reps)
    return [r for r in ranges if r.end >= first]


def load(path: str | Path) -> Trace:
    return parse(read_json(path))


def read_json(path: str | Path) -> Any:
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def trim(data: dict | list) -> dict:
    """The events the runtime module reads, with only the fields it reads, times rebased
    to the first kept event and rounded to nanoseconds: a trace small enough to commit."""
    kept = []
    for ev in events_of(data):
        if ev.get("ph") != "X" or ev.get("cat") not in KEPT_CATEGORIES:
            continue
        args = ev.get("args") or {}
        slim = {
            "ph": "X",
            "cat": ev["cat"],
            "name": str(ev.get("name", ""))[:MAX_NAME],
            "ts": float(ev.get("ts", 0.0)),
            "dur": float(ev.get("dur", 0.0)),
            "pid": ev.get("pid", 0),
            "tid": ev.get("tid", 0),
        }
        small = {k: args[k] for k in KEPT_ARGS if k in args}
        if small:
            slim["args"] = small
        kept.append(slim)
    base = min((ev["ts"] for ev in kept), default=0.0)
    for ev in kept:
        ev["ts"] = round(ev["ts"] - base, 3)
        ev["dur"] = round(ev["dur"], 3)
    kept.sort(key=lambda ev: ev["ts"])
    return {"traceEvents": kept, "streamlint": {"trimmed": True}}


def write_json(data: Any, path: str | Path) -> None:
    path = Path(path)
    text = json.dumps(data, separators=(",", ":"))
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
