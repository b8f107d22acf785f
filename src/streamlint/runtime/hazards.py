"""Trace evidence for the hazard rules (SL401-SL404): did the racing accesses really
overlap on the timeline?

The flagged statement's range (`SL401:48`) holds the racing access; the statements its
message refers to (`SL401:48:ref:47`) hold the other side. Without a reference range the
check falls back to the nearest candidate on another stream. Kernels do not record
addresses, so the trace shows ordering, not which bytes were touched: the result
comparison over repeated trials is the primary evidence, this is the second.

Each check returns {"pairs": accesses checked, "misordered": how many ran in the
unsafe order, "max_lead_ms": by how much at worst, "what": a sentence, "worst": the two
accesses of the first unordered pair (for the picture; of a host access, the one furthest
ahead of its copy), "masked": how many pairs were ordered only
because the host waited for the earlier access in between (a synchronization that hides
the missing wait)}, and how each ordered pair was ordered, which is what a verdict's
reason is made of:

- "device_ordered": the later access was queued while the earlier one still ran (or
  waited) and started only after it ended: something on the device ordered them (a
  wait); "max_wait_ms" is the longest the device held it back;
- "host_ordered": the later access was queued only after the earlier one had ended:
  the host ordered them (a synchronization, or just slow host work such as a first-call
  compile); "min_host_gap_ms" is the shortest such gap;
  ("held_in_statement": of those, the ones whose statement began before the earlier
  access ended, its launch held inside it, as a kernel's first load holds it);
- "below_noise": pairs whose overlap is within the trace's timing resolution
  (NOISE_US), counted neither way.

`check` pools a pair's one finding; `check_finding` checks one finding of a script (its
own ranges only).
"""

from __future__ import annotations

from typing import Callable

from streamlint.runtime.evidence import MS, Evidence
from streamlint.runtime.labels import parse_label
from streamlint.runtime.trace import GpuOp, Range

NOISE_US = 2.0  # overlaps this small are timestamp resolution, not a race


def _split(ev: Evidence, code: str, finding: str | None = None,
           window: tuple[float, float] | None = None) -> tuple[list[Range], list[Range]]:  # fmt: skip
    """The flagged statement's ranges and those of the statements it refers to: of every
    finding of the rule, or of one finding (`SL401:22`); inside a window if given."""
    flagged: list[Range] = []
    refs: list[Range] = []
    for r in ev.trace.ranges:
        if window is not None and not (window[0] <= r.start <= window[1]):
            continue
        label = parse_label(r.name)
        if label is None or label.code != code:
            continue
        if finding is not None and str(label.finding) != finding:
            continue
        (refs if label.ref is not None else flagged).append(r)
    return flagged, refs


def _access(ev: Evidence, op: GpuOp) -> dict:
    return {"stream": op.stream, "start": op.start, "end": op.end, "name": op.name[:80],
            "issued": ev.trace.issue_time(op)}  # fmt: skip


def _host_waited(ev: Evidence, earlier: GpuOp, later_issue: float) -> bool:
    """Did the host wait, between issuing `earlier` and issuing the later access, until
    `earlier` had finished (a sync, or a blocking read-back, ending after it)?"""
    lo = ev.trace.issue_time(earlier)
    for c in ev.trace.calls_in((lo, later_issue)):
        if c.kind in ("sync", "copy") and c.end >= earlier.end and c.start <= later_issue:
            return True
    return any(s.end >= earlier.end for s in ev.trace.host_syncs_in((lo, later_issue)))


def _ops(ev: Evidence, ranges: list[Range]) -> list[GpuOp]:
    seen: dict[int, GpuOp] = {}
    for r in ranges:
        for op in ev.ops_in(r):
            seen[id(op)] = op
    return sorted(seen.values(), key=ev.trace.issue_time)


def _result(pairs: int, leads: list[float], what: str, worst: tuple | None = None, masked: int = 0,
            queued: list[float] | None = None) -> dict:  # fmt: skip
    """`leads`: per pair, how long the earlier access still ran when the later started
    (> 0: unordered); `queued`: per pair, when the later access was queued relative to
    the earlier one's end (< 0: while it still ran)."""
    bad = [x for x in leads if x > NOISE_US]
    ordered = [q for x, q in zip(leads, queued) if x <= 0] if queued is not None else []
    device = [-q for q in ordered if q < 0]
    host = [q for q in ordered if q >= 0]
    return {
        "pairs": pairs,
        "misordered": len(bad),
        "max_lead_ms": max(bad) * MS if bad else 0.0,
        "what": what,
        "worst": worst if bad else None,
        "masked": masked,
        "device_ordered": len(device),
        "max_wait_ms": max(device) * MS if device else 0.0,
        "host_ordered": len(host),
        "min_host_gap_ms": min(host) * MS if host else 0.0,
        "below_noise": sum(1 for x in leads if 0 < x <= NOISE_US),
    }


def _earlier_on_other_stream(ev: Evidence, op: GpuOp, pool: list[GpuOp]) -> GpuOp | None:
    issued = ev.trace.issue_time(op)
    before = [p for p in pool if p.stream != op.stream and ev.trace.issue_time(p) < issued]
    return max(before, key=ev.trace.issue_time) if before else None


def _device_race(ev: Evidence, flagged: list[Range], refs: list[Range], what: str) -> dict:
    """The flagged op starts before an earlier-issued op on another stream ends."""
    pool = _ops(ev, refs) or ev.ops
    leads, queued = [], []
    worst, masked, held = None, 0, 0
    for op in _ops(ev, flagged):
        other = _earlier_on_other_stream(ev, op, pool)
        if other is not None:
            lead = other.end - op.start
            issued = ev.trace.issue_time(op)
            if issued >= other.end and any(r.start < other.end <= issued <= r.end for r in flagged):
                held += 1  # the statement began in time; its launch waited inside it
            if lead > NOISE_US and (worst is None or op.start < worst[2].start):
                worst = (lead, other, op)  # the first unordered pair: the clearest picture
            elif lead <= 0 and _host_waited(ev, other, ev.trace.issue_time(op)):
                masked += 1
            leads.append(lead)
            queued.append(ev.trace.issue_time(op) - other.end)
    pair = {"first": _access(ev, worst[1]), "second": _access(ev, worst[2])} if worst else None
    return dict(_result(len(leads), leads, what, pair, masked, queued), held_in_statement=held)


def _host_race(ev: Evidence, flagged: list[Range], refs: list[Range], direction: str, what: str) -> dict:
    """The host statement starts before the copy issued before it has finished."""
    pool = _ops(ev, refs) or [op for op in ev.ops if op.direction == direction]
    leads, queued = [], []
    worst, masked = None, 0
    for r in flagged:
        before = [op for op in pool if ev.trace.issue_time(op) < r.start]
        if before:
            copy = max(before, key=ev.trace.issue_time)
            lead = copy.end - r.start
            # the host access that ran furthest ahead of its copy: a host overwrite or read
            # can start microseconds before its copy ends, a near-tie that shows nothing
            if lead > NOISE_US and (worst is None or lead > worst[0]):
                worst = (lead, copy, r)
            elif lead <= 0 and _host_waited(ev, copy, r.start):
                masked += 1
            leads.append(lead)
            queued.append(-lead)  # the host statement itself is the later access
    pair = None
    if worst:
        host = {"stream": None, "start": worst[2].start, "end": worst[2].end, "name": "host access", "issued": worst[2].start}
        pair = {"first": _access(ev, worst[1]), "second": host}
    return _result(len(leads), leads, what, pair, masked, queued)


def check_sl401(ev: Evidence, flagged: list[Range], refs: list[Range]) -> dict:
    return _device_race(ev, flagged, refs, "the consumer started before the producer on another stream finished")


def check_sl402(ev: Evidence, flagged: list[Range], refs: list[Range]) -> dict:
    if _ops(ev, flagged):
        return _device_race(ev, flagged, refs, "the overwrite started before the other stream's access finished")
    return _host_race(ev, flagged, refs, "HtoD", "the host overwrote the buffer before the copy from it had finished")


def check_sl403(ev: Evidence, flagged: list[Range], refs: list[Range]) -> dict:
    return _host_race(ev, flagged, refs, "DtoH", "the host read the buffer before the copy into it had finished")


def check_sl404(ev: Evidence, flagged: list[Range], refs: list[Range]) -> dict:
    """Work issued after the use on the allocating stream (the stream of the allocation
    the message refers to; any other stream if it is unknown) started before the use
    finished: that stream moved on (and may have reused the block) while it ran."""
    allocating = {op.stream for op in _ops(ev, refs)}
    leads = []
    worst = None
    for op in _ops(ev, flagged):
        issued = ev.trace.issue_time(op)
        after = [p for p in ev.ops if p.stream != op.stream and ev.trace.issue_time(p) > issued
                 and (not allocating or p.stream in allocating)]  # fmt: skip
        if after:
            first = min(after, key=lambda p: p.start)
            lead = op.end - first.start
            if lead > NOISE_US and (worst is None or first.start < worst[2].start):
                worst = (lead, op, first)
            leads.append(lead)
    pair = {"first": _access(ev, worst[1]), "second": _access(ev, worst[2])} if worst else None
    return _result(len(leads), leads, "work on the allocating stream issued after the use ran before the use finished",
                   pair)  # fmt: skip


CHECKS: dict[str, Callable[[Evidence, list[Range], list[Range]], dict]] = {
    "SL401": check_sl401,
    "SL402": check_sl402,
    "SL403": check_sl403,
    "SL404": check_sl404,
}


def check_finding(ev: Evidence, label: str) -> dict | None:
    """The check for one finding (`SL401:22`): its own statements, not the rule's others."""
    parsed = parse_label(label)
    if parsed is None:
        return None
    return check(ev, parsed.code, str(parsed.finding))


def check(ev: Evidence, code: str, finding: str | None = None,
          window: tuple[float, float] | None = None) -> dict | None:  # fmt: skip
    fn = CHECKS.get(code)
    if fn is None:
        return None
    flagged, refs = _split(ev, code, finding, window)
    if not flagged:
        return dict(_result(0, [], "the flagged statement never ran"), never_ran=True)
    return fn(ev, flagged, refs)
