"""Trace evidence for the hazard rules (SL401-SL404): did the racing accesses really
overlap on the timeline?

The flagged statement's range (`SL401:48`) holds the racing access; the statements its
message refers to (`SL401:48:ref:47`) hold the other side. Without a reference range the
check falls back to the nearest candidate on another stream. Kernels do not record
addresses, so the trace shows ordering, not which bytes were touched: the result
comparison over repeated trials is the primary evidence, this is the second.

Each check returns {"pairs": accesses checked, "misordered": how many ran in the
unsafe order, "max_lead_ms": by how much at worst, "what": a sentence}.
"""

from __future__ import annotations

from typing import Callable

from streamlint.runtime.evidence import MS, Evidence
from streamlint.runtime.labels import parse_label
from streamlint.runtime.trace import GpuOp, Range


def _split(ev: Evidence, code: str) -> tuple[list[Range], list[Range]]:
    flagged: list[Range] = []
    refs: list[Range] = []
    for r in ev.trace.ranges:
        label = parse_label(r.name)
        if label is None or label.code != code:
            continue
        (refs if label.ref is not None else flagged).append(r)
    return flagged, refs


def _ops(ev: Evidence, ranges: list[Range]) -> list[GpuOp]:
    seen: dict[int, GpuOp] = {}
    for r in ranges:
        for op in ev.ops_in(r):
            seen[id(op)] = op
    return sorted(seen.values(), key=ev.trace.issue_time)


def _result(pairs: int, leads: list[float], what: str) -> dict:
    bad = [x for x in leads if x > 0]
    return {
        "pairs": pairs,
        "misordered": len(bad),
        "max_lead_ms": max(bad) * MS if bad else 0.0,
        "what": what,
    }


def _earlier_on_other_stream(ev: Evidence, op: GpuOp, pool: list[GpuOp]) -> GpuOp | None:
    issued = ev.trace.issue_time(op)
    before = [p for p in pool if p.stream != op.stream and ev.trace.issue_time(p) < issued]
    return max(before, key=ev.trace.issue_time) if before else None


def _device_race(ev: Evidence, flagged: list[Range], refs: list[Range], what: str) -> dict:
    """The flagged op starts before an earlier-issued op on another stream ends."""
    pool = _ops(ev, refs) or ev.ops
    leads = []
    for op in _ops(ev, flagged):
        other = _earlier_on_other_stream(ev, op, pool)
        if other is not None:
            leads.append(other.end - op.start)
    return _result(len(leads), leads, what)


def _host_race(ev: Evidence, flagged: list[Range], refs: list[Range], direction: str, what: str) -> dict:
    """The host statement starts before the copy issued before it has finished."""
    pool = _ops(ev, refs) or [op for op in ev.ops if op.direction == direction]
    leads = []
    for r in flagged:
        before = [op for op in pool if ev.trace.issue_time(op) < r.start]
        if before:
            copy = max(before, key=ev.trace.issue_time)
            leads.append(copy.end - r.start)
    return _result(len(leads), leads, what)


def check_sl401(ev: Evidence, flagged: list[Range], refs: list[Range]) -> dict:
    return _device_race(ev, flagged, refs, "the consumer started before the producer on another stream finished")


def check_sl402(ev: Evidence, flagged: list[Range], refs: list[Range]) -> dict:
    if _ops(ev, flagged):
        return _device_race(ev, flagged, refs, "the overwrite started before the other stream's access finished")
    return _host_race(ev, flagged, refs, "HtoD", "the host overwrote the buffer before the copy from it had finished")


def check_sl403(ev: Evidence, flagged: list[Range], refs: list[Range]) -> dict:
    return _host_race(ev, flagged, refs, "DtoH", "the host read the buffer before the copy into it had finished")


def check_sl404(ev: Evidence, flagged: list[Range], refs: list[Range]) -> dict:
    """Work issued after the use, on another stream, started before the use finished:
    the allocating stream moved on (and may have reused the block) while it ran."""
    leads = []
    for op in _ops(ev, flagged):
        issued = ev.trace.issue_time(op)
        after = [p for p in ev.ops if p.stream != op.stream and ev.trace.issue_time(p) > issued]
        if after:
            first = min(after, key=lambda p: p.start)
            leads.append(op.end - first.start)
    return _result(len(leads), leads, "work on another stream issued after the use ran before the use finished")


CHECKS: dict[str, Callable[[Evidence, list[Range], list[Range]], dict]] = {
    "SL401": check_sl401,
    "SL402": check_sl402,
    "SL403": check_sl403,
    "SL404": check_sl404,
}


def check(ev: Evidence, code: str) -> dict | None:
    fn = CHECKS.get(code)
    if fn is None:
        return None
    flagged, refs = _split(ev, code)
    if not flagged:
        return {"pairs": 0, "misordered": 0, "max_lead_ms": 0.0, "what": "the flagged statement never ran"}
    return fn(ev, flagged, refs)
