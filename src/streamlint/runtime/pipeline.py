"""The ideal overlapped time of a copy/compute/copy-back pipeline (seed 002's
arithmetic): the first chunk's full path, then one slowest stage per further chunk.

    bound = (h2d + compute + d2h) + (chunks - 1) * max(h2d, compute, d2h)

Stage times are measured per chunk: the median host-to-device and device-to-host copy,
and the kernel time of a repetition divided by the number of chunks. A repetition is a
pipeline when it copies in and out the same number of chunks (at least two), runs
kernels, and spreads its work over at least two streams.
"""

from __future__ import annotations

from statistics import median

from streamlint.runtime import intervals as iv
from streamlint.runtime.evidence import MS, Evidence, reps


def ideal_bound(h2d_ms: float, compute_ms: float, d2h_ms: float, chunks: int) -> float:
    if chunks <= 0:
        return 0.0
    return (h2d_ms + compute_ms + d2h_ms) + (chunks - 1) * max(h2d_ms, compute_ms, d2h_ms)


def stages(ev: Evidence) -> dict | None:
    """Per-chunk stage times of the median repetition, or None if it is no pipeline."""
    rows = []
    for rep in reps(ev.trace):
        ops = ev.rep_ops(rep)
        h2d = [o.dur for o in ops if o.direction == "HtoD"]
        d2h = [o.dur for o in ops if o.direction == "DtoH"]
        kernels = [(o.start, o.end) for o in ops if o.kind == "kernel"]
        streams = {o.stream for o in ops}
        if len(h2d) < 2 or len(h2d) != len(d2h) or not kernels or len(streams) < 2:
            return None
        span = (max(o.end for o in ops) - min(o.start for o in ops)) * MS
        rows.append({
            "chunks": len(h2d),
            "h2d_ms": median(h2d) * MS,
            "d2h_ms": median(d2h) * MS,
            "compute_ms": sum(o.dur for o in ops if o.kind == "kernel") * MS / len(h2d),
            "kernel_busy_ms": iv.total(kernels) * MS,
            "span_ms": span,
        })  # fmt: skip
    if not rows:
        return None
    rows.sort(key=lambda r: r["span_ms"])
    return rows[len(rows) // 2]


def pipeline_report(good: Evidence, bad: Evidence | None = None) -> dict | None:
    """Stage times (from the good variant), the bound, and how close each variant gets."""
    st = stages(good)
    if st is None:
        return None
    bound = ideal_bound(st["h2d_ms"], st["compute_ms"], st["d2h_ms"], st["chunks"])
    out = {
        "chunks": st["chunks"],
        "h2d_ms": st["h2d_ms"],
        "compute_ms": st["compute_ms"],
        "d2h_ms": st["d2h_ms"],
        "ideal_ms": bound,
        "sequential_ms": st["chunks"] * (st["h2d_ms"] + st["compute_ms"] + st["d2h_ms"]),
        "good_ms": st["span_ms"],
        "good_efficiency": bound / st["span_ms"] if st["span_ms"] else 0.0,
    }
    if bad is not None:
        spans = [bad.rep_metrics(r)["span_ms"] for r in reps(bad.trace)]
        if spans:
            b = median(spans)
            out["bad_ms"] = b
            out["bad_efficiency"] = bound / b if b else 0.0
    return out
