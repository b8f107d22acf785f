"""A verdict per finding of a script (`streamlint verify script.py`), each with its rule
family's own measure:

| family          | measure                                          | confirmed when                                   |
|-----------------|--------------------------------------------------|--------------------------------------------------|
| serialization   | device barrier (SL101): overlap lost between      | above noise in the steady state                  |
|                 | streams; host stall: host time in the call       |                                                  |
| pageable        | pageable bytes, host held inside those copies    | pageable copies that held the host               |
| pin-on-the-fly  | host time pinning per execution                  | a host allocation (pinning) on each execution    |
| overhead        | extra copies / creations / syncs per execution   | at least one per execution                       |
| hazard          | unordered access pairs of *this* finding; did    | a provoked run printed another result than the   |
|                 | the program's output change when provoked        | control run, or its accesses ran unordered       |

Verdicts: "confirmed"; "not observed" with why (the line never ran; N runs and the
unsafe order never occurred, ordered on the device or masked by a host wait; below
noise); "not measurable" with what is missing (no trace, the statement could not be
instrumented, it encloses the whole program).

Costs are steady-state figures (steady.py): the first executions of a statement (lazy
loading, JIT, allocator growth) are left out and counted.
"""

from __future__ import annotations

from statistics import median

from streamlint.runtime.evidence import Evidence
from streamlint.runtime.labels import parse_label
from streamlint.runtime.steady import warmup_count
from streamlint.runtime.trace import Range
from streamlint.runtime.verdicts import DEVICE_BARRIER, SERIALIZATION_MEASURE, family

CONFIRMED, NOT_OBSERVED, NOT_MEASURABLE = "confirmed", "not observed", "not measurable"
NOISE_MS = 0.05  # per execution: below this a stall or bubble is launch jitter
NOISE_SHARE = 0.005  # and below this share of the run's GPU span it is noise for the run
SYNC_SHARE = 0.5
MB = 1 << 20
OVERHEAD = {"SL102": ("copies", "copies"), "SL501": ("creates", "stream/event creations"),
            "SL502": ("syncs", "host synchronizations"), "SL503": ("syncs", "host synchronizations")}  # fmt: skip
# Implicit reads synchronize inside the copy call: counted by what the trace shows of either.
SYNC_READS = frozenset({"SL502", "SL503"})


def _v(verdict: str, why: str, measure: str, **figures) -> dict:
    return {"verdict": verdict, "why": why, "measure": measure, "figures": figures}


def enclosed_labels(ev: Evidence, label: str, all_labels: list[str]) -> list[str]:
    """Other findings' statements that run inside this one's executions: a finding at a
    call site (`print(main())`) encloses the program's own findings."""
    mine = ev.occurrences(label)
    out = []
    for other in all_labels:
        if other == label or other.startswith(label + ":ref:"):
            continue
        if any(r.start <= o.start and o.end <= r.end for o in ev.occurrences(other) for r in mine):
            out.append(other)
    return out


def tail_ranges(ev: Evidence, label: str, inner: list[str]) -> list[Range]:
    """The part of each execution after the enclosed statements last ran: what the
    enclosing statement does itself (the `print` of `print(main())`)."""
    out = []
    inner_ranges = [o for lab in inner for o in ev.occurrences(lab)]
    for r in ev.occurrences(label):
        ends = [o.end for o in inner_ranges if r.start <= o.start and o.end <= r.end]
        out.append(Range(r.name, max(ends) if ends else r.start, r.end, r.tid))
    return out


def steady_cost(ev: Evidence, label: str, ranges: list[Range] | None = None) -> tuple[dict, int, int]:
    """(cost over the steady-state executions, executions in all, warm-up left out).

    A statement that ran once has no steady state: its one execution is charged from its
    first GPU launch on, and the time before it (a JIT compile, module loading, first-call
    set-up: paid once per process) is reported apart as `first_call_ms`."""
    ranges = ev.occurrences(label) if ranges is None else ranges
    if len(ranges) == 1:
        trimmed, before = after_first_launch(ev, ranges[0])
        cost = ev.finding_cost(label, [trimmed])
        cost["first_call_ms"] = before
        cost["host_ms_total"] = ranges[0].dur / 1e3
        return cost, 1, 0
    each = [ev.finding_cost(label, [r]) for r in ranges]
    durations = [c["host_ms"] + c["gpu_idle_ms"] for c in each]
    skip = warmup_count(durations)
    return ev.finding_cost(label, ranges[skip:]), len(ranges), skip


def after_first_launch(ev: Evidence, r: Range) -> tuple[Range, float]:
    """The execution from the first GPU work it issued (a launch, copy or memset call),
    and the ms before that; unchanged when it issued none."""
    issued = [ev.trace.issue_time(o) for o in ev.ops_in(r) if r.start <= ev.trace.issue_time(o) <= r.end]
    if not issued:
        return r, 0.0
    first = min(issued)
    return Range(r.name, first, r.end, r.tid), (first - r.start) / 1e3


def _per(x: float, n: int) -> float:
    return x / n if n else 0.0


def judge_cost(code: str, cost: dict, run_span_ms: float) -> dict:
    """Verdict from a statement's steady-state cost (every family but hazards)."""
    fam = family(code)
    n = cost["occurrences"]
    if fam == "serialization":
        return judge_serialization(code, cost, run_span_ms)
    if fam == "pageable":
        pageable, held, gpu = cost["pageable_bytes"], cost["host_blocked_ms"], cost["pageable_gpu_ms"]
        measure = (f"{pageable / MB:.1f} MB from/to pageable memory ({_per(pageable, n) / MB:.1f} MB per execution); "
                   f"host held {held:.2f} ms in them (GPU copy time {gpu:.2f} ms)")  # fmt: skip
        if pageable <= 0:
            return _v(NOT_OBSERVED, "no copy from or to pageable memory was issued here", measure)
        if gpu > 0 and held < SYNC_SHARE * gpu:
            return _v(NOT_OBSERVED, "the pageable copies did not hold the host (they were small or staged)",
                      measure, pageable_bytes=pageable)  # fmt: skip
        return _v(CONFIRMED, "the 'asynchronous' pageable copies held the host for their transfer", measure,
                  pageable_bytes=pageable, held_ms=held)  # fmt: skip
    if fam == "pin-on-the-fly":
        allocs = cost["host_allocs"]
        measure = f"{_per(cost['host_ms'], n):.3f} ms of host time per execution, {allocs} host allocations"
        if _per(allocs, n) < 0.9:
            return _v(NOT_OBSERVED, "no host allocation (pinning) on each execution", measure)
        return _v(CONFIRMED, f"pins memory on every execution ({_per(cost['host_ms'], n):.3f} ms each)", measure,
                  host_ms_each=_per(cost["host_ms"], n))  # fmt: skip
    if fam == "overhead":
        key, noun = OVERHEAD[code]
        count = cost[key] if code not in SYNC_READS else max(cost["syncs"], cost["sync_reads"])
        per = _per(count, n)
        measure = (f"{per:.1f} {noun} per execution ({count} in {n}); host blocked {cost['host_blocked_ms']:.2f} ms, "
                   f"GPU idle {cost['gpu_idle_ms']:.2f} ms around them")  # fmt: skip
        if per < 0.9:
            return _v(NOT_OBSERVED, f"fewer than one of those {noun} per execution", measure, per_execution=per)
        return _v(CONFIRMED, f"{per:.1f} {noun} per execution", measure, per_execution=per)
    return _v(NOT_MEASURABLE, f"no runtime check for {code}", "")


def _below_noise(total_ms: float, n: int, run_span_ms: float) -> bool:
    return _per(total_ms, n) < NOISE_MS or total_ms < NOISE_SHARE * run_span_ms


def judge_serialization(code: str, cost: dict, run_span_ms: float) -> dict:
    """A device barrier by the overlap it cost between streams, a host stall by the host
    time in the call (verdicts.SERIALIZATION_MEASURE): one measure per rule, read off the
    trace the same way whichever tracer recorded it."""
    n = cost["occurrences"]
    idle = cost["gpu_idle_ms"]
    if SERIALIZATION_MEASURE.get(code) == DEVICE_BARRIER:
        lost, ops = cost.get("barrier_lost_ms", 0.0), cost.get("barrier_ops", 0)
        measure = (f"overlap lost between streams {_per(lost, n):.3f} ms per execution ({lost:.2f} ms over {n}; "
                   f"{ops} ops on the legacy default stream)")  # fmt: skip
        if not ops:
            return _v(NOT_OBSERVED, "no work was queued on the legacy default stream here", measure, lost_ms=lost)
        if _below_noise(lost, n, run_span_ms):
            return _v(NOT_OBSERVED, f"below noise: the default-stream work here held other streams back "
                      f"{_per(lost, n):.3f} ms per execution", measure, lost_ms=lost)  # fmt: skip
        return _v(CONFIRMED, f"the default-stream work here held back other streams' work: {lost:.2f} ms of "
                  "overlap lost between streams", measure, lost_ms=lost)  # fmt: skip
    stall = cost["host_blocked_ms"]
    measure = (f"host held {_per(stall, n):.3f} ms per execution in the call ({stall:.2f} ms over {n}); "
               f"GPU idle {_per(idle, n):.3f} ms around it")  # fmt: skip
    if _below_noise(stall, n, run_span_ms):
        return _v(NOT_OBSERVED, f"below noise: the host was held {_per(stall, n):.3f} ms per execution in the call "
                  f"({stall:.2f} ms in all)", measure, stall_ms=stall, idle_ms=idle)  # fmt: skip
    return _v(CONFIRMED, f"the host was held {stall:.2f} ms in the call ({_per(stall, n):.3f} ms per execution)",
              measure, stall_ms=stall, idle_ms=idle)  # fmt: skip


def judge_hazard(label: str, base: dict | None, provoked: dict | None, shared_with: list[str]) -> dict:
    """A hazard finding from its race check in the plain run (`base`), and from the
    provoked runs (`provoked`: {"runs", "differing", "comparable", "checks": [...],
    "control_checks": [...]})."""
    base = base or {}
    if base.get("pairs", 0) == 0 and not (provoked and any(c.get("pairs") for c in provoked.get("checks", []))):
        return _v(NOT_OBSERVED, "the line never ran (or its accesses left no GPU work)", "no access to check")
    checks = (provoked or {}).get("checks", [])
    unordered_runs = sum(1 for c in checks if c.get("misordered"))
    runs = (provoked or {}).get("runs", 0)
    differing = (provoked or {}).get("differing", 0)
    comparable = (provoked or {}).get("comparable", False)
    pairs = max([base.get("pairs", 0)] + [c.get("pairs", 0) for c in checks])
    worst = max([base.get("max_lead_ms", 0.0)] + [c.get("max_lead_ms", 0.0) for c in checks])
    parts = [f"{base.get('misordered', 0)} of {base.get('pairs', 0)} access pairs unordered in the plain run"]
    if provoked:
        why_not = (provoked or {}).get("why") or "not comparable"
        parts.append(f"provoked: unordered in {unordered_runs} of {runs} runs"
                     + (f", output changed in {differing} of {runs}" if comparable
                        else f", output not compared ({why_not})"))  # fmt: skip
    measure = "; ".join(parts)
    figures = dict(pairs=pairs, misordered=base.get("misordered", 0), provoked_runs=runs,
                   provoked_unordered=unordered_runs, provoked_differing=differing, max_lead_ms=worst)  # fmt: skip
    # SL404's trace shows only that the allocating stream ran ahead of the use; whether
    # the block was reused meanwhile shows in the output alone
    own_order = (unordered_runs > 0 or base.get("misordered", 0) > 0) and not label.startswith("SL404:")
    if own_order:
        how = []
        if unordered_runs:
            how.append(f"provoked, its accesses ran unordered in {unordered_runs} of {runs} runs "
                       f"(by up to {worst:.2f} ms)")  # fmt: skip
        if base.get("misordered"):
            how.append(f"unprovoked, {base['misordered']} of {base['pairs']} pairs ran unordered")
        if comparable and differing:
            how.append(f"the output changed in {differing} of {runs} provoked runs")
        return _v(CONFIRMED, "; ".join(how), measure, **figures)
    if comparable and differing:
        if shared_with:
            own = ("nothing shows this finding's block reused" if label.startswith("SL404:")
                   else "this finding's own accesses stayed ordered")  # fmt: skip
            return _v(NOT_OBSERVED, f"the provoked runs' output changed, but the delay also holds back "
                      f"{', '.join(shared_with)}, whose race changes it; {own}", measure, **figures)  # fmt: skip
        return _v(CONFIRMED, f"provoked, the output changed in {differing} of {runs} runs", measure, **figures)
    if label.startswith("SL404:") and provoked and not comparable:
        return _v(NOT_MEASURABLE, f"only the output can show the block reused, and it was not compared: "
                  f"{provoked.get('why') or 'no output'}", measure, **figures)  # fmt: skip
    return _v(NOT_OBSERVED, ordered_reason(label, base, checks, runs), measure,
              masked=base.get("masked", 0) + sum(c.get("masked", 0) for c in checks), **figures)  # fmt: skip


def ordered_reason(label: str, base: dict, checks: list[dict], runs: int) -> str:
    """Why the unsafe order never occurred, from how the accesses were ordered
    (hazards.py): in the provoked runs when there are any (they are the test), else in
    the plain run. A bug whose race the delay could not provoke (the consumer was queued
    after the producer had ended) and its fix (queued before, held back on the device)
    get different words."""
    code = label.split(":")[0]
    pool = checks if checks else [base]
    where = f"in {runs} provoked run{'s' if runs != 1 else ''}" if checks else "in the plain run"
    masked = base.get("masked", 0) + sum(c.get("masked", 0) for c in checks)
    device = sum(c.get("device_ordered", 0) for c in pool)
    host = sum(c.get("host_ordered", 0) for c in pool)
    noise = sum(c.get("below_noise", 0) for c in pool)
    wait = max((c.get("max_wait_ms", 0.0) for c in pool), default=0.0)
    gaps = [c.get("min_host_gap_ms", 0.0) for c in pool if c.get("host_ordered")]
    if masked:
        return (f"masked: {where} the host waited for the producer before the consumer was queued (a "
                "synchronization between them), so the unsafe order cannot occur here; the missing wait bites "
                "if that synchronization goes")  # fmt: skip
    if host and host >= device:
        gap = min(gaps) if gaps else 0.0
        if code in HOST_SIDE:
            return f"{where} {HOST_SIDE[code]} ({gap:.2f} ms after, at the least): ordered by the host"
        inside = sum(c.get("held_in_statement", 0) for c in pool)
        held = (f"; in {inside} of them its statement began before the producer finished and its launch waited "
                "inside it (as a kernel's first load waits for the device)" if inside else "")  # fmt: skip
        return (f"ordered by the host: {where} the consumer was queued only after the producer had finished "
                f"({gap:.2f} ms after, at the least){held}, so the delay did not provoke the race and nothing "
                "shows whether a wait orders them")  # fmt: skip
    if device:
        return (f"ordered on the device: {where} the consumer was queued while the producer still ran and "
                f"was held back until it finished (up to {wait:.2f} ms): a wait streamlint did not see")  # fmt: skip
    if noise:
        return (f"below noise: {where} the accesses overlapped by at most {NOISE_US_TEXT}, the trace's timing "
                "resolution")  # fmt: skip
    runs_text = f"in {runs + 1} runs" + (f" ({runs} provoked)" if runs else "")
    return f"{runs_text} {NEVER.get(code, NEVER['SL401'])}"


HOST_SIDE = {
    "SL402": "the host overwrote the buffer only after the copy from it had finished",
    "SL403": "the host read the buffer only after the copy into it had finished",
}
NOISE_US_TEXT = "a few microseconds"
NEVER = {
    "SL401": "the consumer never started before the producer finished",
    "SL402": "the host never overwrote the buffer before the copy from it had finished",
    "SL403": "the host never read the buffer before the copy into it had finished",
    "SL404": "the output never changed: the block was not reused while the other stream still used it",
}


def statement_row(label: str) -> int | None:
    """The line of the statement a label wraps (the referred-to line for a ref label)."""
    p = parse_label(label)
    if p is None:
        return None
    return p.ref if p.ref is not None else p.row


def hazard_sharing(label: str, delay_at: str | None, labels: list[str]) -> list[str]:
    """Other hazard findings with a statement on the line the delay holds back: a
    changed output may be theirs (the delay before line 20 also delays SL401's producer
    when line 20 is it)."""
    row = statement_row(delay_at) if delay_at else None
    if row is None:
        return []
    out = set()
    for other in labels:
        p = parse_label(other)
        if p is None or str(p.finding) == label or family(p.code) != "hazard":
            continue
        if statement_row(other) == row:
            out.add(f"{p.code} at line {p.row}")
    return sorted(out)


def run_span(ev: Evidence) -> float:
    spans = [m.get("span_ms", 0.0) for m in ev.all_reps()]
    return median(spans) if spans else 0.0


def steady_start(ev: Evidence, labels: list[str]) -> float | None:
    """Where the steady state of the run begins: the earliest first-kept execution over
    the flagged statements (for the picture's zoom)."""
    starts = []
    for label in labels:
        ranges = ev.occurrences(label)
        if len(ranges) < 2:
            continue
        each = [ev.finding_cost(label, [r]) for r in ranges]
        skip = warmup_count([c["host_ms"] + c["gpu_idle_ms"] for c in each])
        if skip < len(ranges):
            starts.append(ranges[skip].start)
    return min(starts) if starts else None

