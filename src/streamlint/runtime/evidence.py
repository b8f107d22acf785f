"""What a trace shows: per repetition of a run, and per flagged statement.

All durations are returned in milliseconds, bytes as integers.

- `rep_metrics`: the GPU span of one call of `run()` (first op issued in it starting to
  last op ending), busy time per class, copy/kernel overlap, cross-stream overlap (time
  with two or more streams busy, after merging each stream's ops), GPU idle time, host
  time blocked in CUDA calls (`blocked_ms`) and the part of it spent before the last GPU
  op was issued (`stall_ms`: the host was stuck instead of queuing work; the final wait
  for results is not a stall), pageable and pinned bytes, and counts of copies, syncs and
  stream/event creations.
- `finding_cost`: per flagged statement (a `record_function` range per execution): how
  often it ran, host time in it, host time blocked in CUDA calls, pageable bytes and GPU
  time of the work it issued, syncs, and the GPU idle time from the statement's start
  until the next work the host issued after it began to run ("lost overlap": the GPU
  had nothing to do because the host was held up here).

The measures the verdicts read are defined here, once, on the parsed trace, whichever
tracer wrote it (cupti_events.py makes CUPTI's records the same events as Kineto's):

- a device barrier's: `barrier_lost_ms`, the overlap lost between streams: how long
  other streams' ready work was held back by the statement's legacy-default-stream
  work, plus how long that work, ready, waited for other streams (`barrier_lost`);
- a host stall's: `host_blocked_ms`, host time inside the blocking calls;
- a race's: unordered access pairs (hazards.py).
"""

from __future__ import annotations

from bisect import bisect_left
from statistics import median
from typing import Iterable, Sequence

from streamlint.runtime import intervals as iv
from streamlint.runtime.labels import REP_PREFIX, parse_label
from streamlint.runtime.provoke import SPIN_PREFIX
from streamlint.runtime.streams import marker_ops, stream_map
from streamlint.runtime.trace import BLOCKING_KINDS, GpuOp, Range, Trace

MS = 1e-3  # trace times are microseconds
# After a statement returns, the host needs a moment to queue the next work; idle beyond
# that is the host busy elsewhere (a JIT compile, data loading), not this statement's.
REFILL_US = 100.0
BARRIER_TOL_US = 20.0  # a held-back op starts this soon after the barrier's end (the device's launch latency)


def reps(trace: Trace) -> list[Range]:
    """The repetition ranges; a trace without any is one repetition from end to end."""
    found = trace.ranges_named(REP_PREFIX, prefix=True)
    if found:
        return found
    if not trace.gpu and not trace.api:
        return []
    lo = min([o.start for o in trace.gpu] + [c.start for c in trace.api])
    hi = max([o.end for o in trace.gpu] + [c.end for c in trace.api])
    tid = trace.api[0].tid if trace.api else 0
    return [Range(f"{REP_PREFIX}0", lo, hi, tid)]


def spin_ops(trace: Trace) -> set[int]:
    """Correlation ids of the provoking spin kernels (provoke.py): not the program's work."""
    out: set[int] = set()
    for r in trace.ranges_named(SPIN_PREFIX, prefix=True):
        out.update(op.correlation for op in trace.ops_issued_in(r))
    return out


def uncalled_blocking(trace: Trace, ops: Iterable[GpuOp]) -> list[tuple[float, float]]:
    """Copies from or to pageable memory whose issuing call the tracer did not record
    (Numba's driver-level `cuMemcpyHtoD` under the PyTorch profiler): the host is held
    for their whole transfer, so their GPU time is host time blocked."""
    return [(o.start, o.end) for o in ops if o.host_memory == "Pageable" and trace.launch_of(o) is None]


class Evidence:
    """A parsed trace with the marker ops (and provoking spins) set aside."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.spins = spin_ops(trace)
        self.markers = marker_ops(trace) | self.spins
        self.ops = [op for op in trace.gpu if op.correlation not in self.markers]
        self._reps = reps(trace)
        by_issue = sorted(self.ops, key=trace.issue_time)
        self._issue_times = [trace.issue_time(o) for o in by_issue]
        # suffix minimum of start times: the first op to run among those issued after t
        self._next_start = [float("inf")] * (len(by_issue) + 1)
        for i in range(len(by_issue) - 1, -1, -1):
            self._next_start[i] = min(by_issue[i].start, self._next_start[i + 1])
        self.busy = iv.Busy((o.start, o.end) for o in self.ops)
        self.legacy = {sid for sid, info in stream_map(trace).items() if info.is_legacy_default}
        self._by_start = sorted(self.ops, key=lambda o: o.start)
        self._starts = [o.start for o in self._by_start]
        self._longest = max((o.dur for o in self.ops), default=0.0)

    def ops_in(self, window: Range, until: float | None = None) -> list[GpuOp]:
        found = self.trace.ops_issued_in(window, until=until)
        return sorted((op for op in found if op.correlation not in self.markers), key=lambda o: o.start)

    def rep_ops(self, rep: Range) -> list[GpuOp]:
        """The ops of one repetition; ops without a recorded call (Numba's copies) count
        until the next repetition starts."""
        later = [r.start for r in self._reps if r.start > rep.start]
        return self.ops_in(rep, until=min(later) if later else float("inf"))

    def syncs_in(self, window: Range) -> tuple[int, list[tuple[float, float]]]:
        """Host synchronizations in the window: (how many, their intervals), counting an
        API call and its synchronization record once."""
        calls = [c for c in self.trace.calls_in(window) if c.kind == "sync"]
        records = self.trace.host_syncs_in(window)
        ids = {c.correlation for c in calls} | {r.correlation for r in records}
        ids.discard(0)
        unnamed = sum(1 for c in calls if not c.correlation) + sum(1 for r in records if not r.correlation)
        spans = [(c.start, c.end) for c in calls] + [(r.start, r.end) for r in records]
        return len(ids) + unnamed, spans

    # -- per repetition -------------------------------------------------------------
    def rep_metrics(self, rep: Range) -> dict:
        ops = self.rep_ops(rep)
        calls = self.trace.calls_in(rep)
        out: dict = {"ops": len(ops)}
        if not ops:
            out.update(span_ms=0.0, gpu_busy_ms=0.0)
            return out
        first = min(op.start for op in ops)
        last = max(op.end for op in ops)
        kernels = [(o.start, o.end) for o in ops if o.kind == "kernel"]
        copies = [(o.start, o.end) for o in ops if o.kind == "memcpy"]
        per_stream: dict[int, list] = {}
        for o in ops:
            per_stream.setdefault(o.stream, []).append((o.start, o.end))
        busy = iv.total((o.start, o.end) for o in ops)
        last_issue = max(self.trace.issue_time(o) for o in ops)
        n_syncs, sync_spans = self.syncs_in(rep)
        blocking = ([(c.start, c.end) for c in calls if c.kind in BLOCKING_KINDS] + sync_spans
                    + uncalled_blocking(self.trace, ops))  # fmt: skip
        creates = [c for c in calls if c.kind == "create"]
        destroys = [c for c in calls if c.kind == "destroy"]
        out.update(
            span_ms=(last - first) * MS,
            gpu_busy_ms=busy * MS,
            gpu_idle_ms=(last - first - busy) * MS,
            kernel_ms=iv.total(kernels) * MS,
            copy_ms=iv.total(copies) * MS,
            copy_kernel_overlap_ms=iv.overlap(copies, kernels) * MS,
            cross_stream_ms=iv.at_least(per_stream, 2) * MS,
            streams=len(per_stream),
            blocked_ms=iv.total(blocking) * MS,
            stall_ms=iv.total(iv.clip(blocking, rep.start, last_issue)) * MS,
            host_ms=rep.dur * MS,
            kernels=len(kernels),
            copies=len(copies),
            h2d=sum(1 for o in ops if o.direction == "HtoD"),
            d2h=sum(1 for o in ops if o.direction == "DtoH"),
            copy_bytes=sum(o.bytes for o in ops if o.is_copy),
            pageable_bytes=sum(o.bytes for o in ops if o.host_memory == "Pageable"),
            pinned_bytes=sum(o.bytes for o in ops if o.host_memory == "Pinned"),
            pageable_copies=sum(1 for o in ops if o.host_memory == "Pageable"),
            syncs=n_syncs,
            sync_ms=iv.total(sync_spans) * MS,
            creates=len(creates),
            create_ms=sum(c.dur for c in creates) * MS,
            destroys=len(destroys),
            destroy_ms=sum(c.dur for c in destroys) * MS,
        )
        out["cross_stream_fraction"] = out["cross_stream_ms"] / out["gpu_busy_ms"] if busy else 0.0
        # Host time inside the API calls that issued host/device copies, and those copies'
        # GPU time: an "asynchronous" copy that holds the host for its whole transfer is
        # synchronous in practice.
        copy_calls = [self.trace.launch_of(o) for o in ops if o.host_memory]
        out["copy_call_ms"] = sum(c.dur for c in copy_calls if c is not None) * MS
        out["host_copy_gpu_ms"] = sum(o.dur for o in ops if o.host_memory) * MS
        pageable = [(o.start, o.end) for o in ops if o.host_memory == "Pageable"]
        out["pageable_kernel_overlap_ms"] = iv.overlap(pageable, kernels) * MS
        pageable_calls = [self.trace.launch_of(o) for o in ops if o.host_memory == "Pageable"]
        out["pageable_call_ms"] = sum(c.dur for c in pageable_calls if c is not None) * MS
        out["pageable_gpu_ms"] = iv.total(pageable) * MS
        return out

    def all_reps(self) -> list[dict]:
        return [self.rep_metrics(r) for r in self._reps]

    # -- per flagged statement --------------------------------------------------------
    def labels(self) -> list[str]:
        return sorted({r.name for r in self.trace.ranges if parse_label(r.name) is not None})

    def finding_cost(self, label: str, ranges: Sequence[Range] | None = None) -> dict:
        """The cost of a flagged statement over its executions (or the given ones)."""
        ranges = self.trace.ranges_named(label) if ranges is None else ranges
        host = blocked = gpu = idle = 0.0
        pageable = pinned = copies = syncs = ops_n = creates = allocs = d2h_reads = 0
        pageable_gpu = barrier = 0.0
        for r in ranges:
            host += r.dur
            calls = self.trace.calls_in(r)
            n_syncs, sync_spans = self.syncs_in(r)
            ops = self.ops_in(r)
            blocked += iv.total([(c.start, c.end) for c in calls if c.kind in BLOCKING_KINDS] + sync_spans
                                + uncalled_blocking(self.trace, ops))  # fmt: skip
            syncs += n_syncs
            creates += sum(1 for c in calls if c.kind == "create")
            allocs += sum(1 for c in calls if c.kind == "alloc" and "Host" in c.name)
            # a synchronous read-back (cudaMemcpy, not ...Async) waits like a sync
            d2h_reads += sum(1 for o in ops if o.direction == "DtoH" and (c := self.trace.launch_of(o)) is not None
                             and "Async" not in c.name)  # fmt: skip
            pageable_gpu += sum(o.dur for o in ops if o.host_memory == "Pageable")
            ops_n += len(ops)
            gpu += sum(o.dur for o in ops)
            copies += sum(1 for o in ops if o.is_copy)
            pageable += sum(o.bytes for o in ops if o.host_memory == "Pageable")
            pinned += sum(o.bytes for o in ops if o.host_memory == "Pinned")
            idle += self._idle_around(r)
            barrier += self.barrier_lost(r)
        n = len(ranges)
        return {
            "label": label,
            "occurrences": n,
            "host_ms": host * MS,
            "host_blocked_ms": blocked * MS,
            "gpu_ms": gpu * MS,
            "ops": ops_n,
            "copies": copies,
            "pageable_bytes": pageable,
            "pinned_bytes": pinned,
            "syncs": syncs,
            "gpu_idle_ms": idle * MS,
            "host_ms_each": (host / n * MS) if n else 0.0,
            "creates": creates,
            "host_allocs": allocs,
            "sync_reads": d2h_reads,
            "pageable_gpu_ms": pageable_gpu * MS,
            "barrier_lost_ms": barrier * MS,
            "barrier_ops": sum(1 for r in ranges for o in self.ops_in(r) if o.stream in self.legacy),
        }

    def barrier_lost(self, r: Range) -> float:
        """Overlap lost between streams to the legacy-default-stream work issued in `r`
        (microseconds). For each such op: the other streams' work queued before it ended
        that started just after it (held back by it), counted from when that work was
        ready (queued, its own stream free), the longest such wait; plus the time the op
        itself, ready, waited while other streams ran (at most its own duration: it could
        have run beside them)."""
        lost = 0.0
        issue = self.trace.issue_time
        for op in self.ops_in(r):
            if op.stream not in self.legacy:
                continue
            near = self._started_in(op.end, op.end + BARRIER_TOL_US)
            held = [p for p in near if p.stream != op.stream and issue(p) < op.end]
            # each held-back op could have run from when it was ready (queued, its own
            # stream free) until it started: the overlap the barrier cost
            lost += max([0.0] + [p.start - self._ready(p) for p in held])
            ready = self._ready(op)
            if op.start > ready:
                earlier = self._started_in(ready - self._longest, op.start)
                others = [(o.start, o.end) for o in earlier if o.stream != op.stream]
                lost += min(op.dur, iv.total(iv.clip(others, ready, op.start)))
        return lost

    def _ready(self, op: GpuOp) -> float:
        """When `op` could have started: queued, and the work before it on its stream done."""
        ends = [o.end for o in self._started_in(op.start - self._longest, op.start)
                if o.stream == op.stream and o is not op and o.end <= op.start]  # fmt: skip
        return max([self.trace.issue_time(op)] + ends)

    def _started_in(self, lo: float, hi: float) -> list[GpuOp]:
        i, j = bisect_left(self._starts, lo), bisect_left(self._starts, hi + 1e-9)
        return self._by_start[i:j]

    def occurrences(self, label: str) -> list[Range]:
        return self.trace.ranges_named(label)

    def _idle_around(self, r: Range) -> float:
        """GPU idle time from the statement's start until the first op issued after its
        end starts running (the drain-and-refill bubble the statement caused), counted
        at most REFILL_US past the statement's end."""
        nxt = self._next_start[bisect_left(self._issue_times, r.end)]
        if nxt == float("inf") or nxt <= r.start:
            return 0.0
        return self.busy.idle_between(r.start, min(nxt, r.end + REFILL_US))

    def finding_costs(self) -> dict[str, dict]:
        return {label: self.finding_cost(label) for label in self.labels()}


def median_metrics(rows: Sequence[dict]) -> dict:
    """Per key, the median over repetitions (numbers only)."""
    keys = sorted({k for row in rows for k, v in row.items() if isinstance(v, (int, float))})
    return {k: median(row.get(k, 0) for row in rows) for k in keys}


def median_rep_index(rows: Sequence[dict]) -> int:
    """The repetition whose span is the median (for pictures)."""
    if not rows:
        return 0
    order = sorted(range(len(rows)), key=lambda i: rows[i].get("span_ms", 0.0))
    return order[len(order) // 2]


def summarize(trace: Trace) -> dict:
    ev = Evidence(trace)
    rows = ev.all_reps()
    return {
        "reps": rows,
        "median": median_metrics(rows),
        "median_rep": median_rep_index(rows),
        "findings": ev.finding_costs(),
    }


def values(rows: Iterable[dict], key: str) -> list[float]:
    return [row[key] for row in rows if key in row]
