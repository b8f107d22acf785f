"""Verdicts per rule family, from the evidence of a bad/good pair.

Each judge takes the two variants' summaries (evidence.summarize, medians over the
traced repetitions), the trial comparison (compare.py) and the hazard trace check
(hazards.py), and returns {"verdict": confirmed | not confirmed, "reason": why, "key":
the one-line figure for tables}. A variant that crashed or hung gives "error" before
any judge runs.

- serialization (SL101, SL103, SL104, SL201, SL202): confirmed when the fix is measurably faster
  (span ratio >= FASTER) and the bad variant either lost cross-stream overlap the fix has
  or stalled the host in CUDA calls (before its last op was issued) for a time the fix
  removes (>= STALL_SHARE of the bad span).
- pageable (SL301, SL302): confirmed when the bad variant copies pageable bytes, the fix
  copies none, and the bad "asynchronous" copies held the host for at least
  SYNC_SHARE of their GPU time (they were synchronous) or overlapped no kernel. (The fix
  may keep a small pageable read-out: at most FIX_PAGEABLE_SHARE of the bad's bytes.)
- pin-on-the-fly (SL303): host-bound, so decided on the untraced wall clock (the tracer's
  own overhead on hundreds of small calls would blur it): confirmed when the bad
  variant's median call is at least FASTER times the fix's and a bad call is slower than
  a call of the fix in at least SUPERIORITY of all (bad, fix) pairs of timed calls (the
  common-language effect size: robust to a shared machine's slow outliers, unlike
  requiring the two ranges not to overlap); the spread is recorded.
- hazards (SL401-SL404): confirmed when the fix agrees with itself in every trial and the
  bad result differs in at least one trial or the trace shows the racing accesses in
  the unsafe order.
- overhead (SL102, SL501, SL502): confirmed when the bad variant pays at least one extra
  copy / stream or event creation / synchronization per iteration of the flagged
  statement; their time and the fix's speed-up are reported.
"""

from __future__ import annotations

from typing import Callable

FAMILY = {
    "SL101": "serialization",
    "SL103": "serialization",
    "SL104": "serialization",
    "SL201": "serialization",
    "SL202": "serialization",
    "SL301": "pageable",
    "SL302": "pageable",
    "SL303": "pin-on-the-fly",
    "SL401": "hazard",
    "SL402": "hazard",
    "SL403": "hazard",
    "SL404": "hazard",
    "SL102": "overhead",
    "SL501": "overhead",
    "SL502": "overhead",
    "SL503": "overhead",
}
# What a serialization finding costs, by what the rule says happens: a device barrier
# (work on the legacy default stream waits for, and holds back, every other stream) is
# measured by the overlap lost between streams; a host stall (a synchronize, a blocking
# copy) by the host time spent inside the call.
DEVICE_BARRIER, HOST_STALL = "device barrier", "host stall"
SERIALIZATION_MEASURE = {"SL101": DEVICE_BARRIER, "SL103": HOST_STALL, "SL104": DEVICE_BARRIER, "SL201": HOST_STALL, "SL202": HOST_STALL}
FASTER = 1.05
STALL_SHARE = 0.10
OVERLAP_LOSS = 0.05
SYNC_SHARE = 0.5
SUPERIORITY = 0.8  # SL303: share of (bad, fix) call pairs in which the bad call is slower
FIX_PAGEABLE_SHARE = 0.1  # a small pageable read-out at the end is not what the rule is about
CONFIRMED, NOT_CONFIRMED, ERROR = "confirmed", "not confirmed", "error"
MB = 1 << 20


def family(code: str) -> str:
    return FAMILY.get(code, "unknown")


def speedup(bad: dict, good: dict) -> float:
    b, g = bad["median"].get("span_ms", 0.0), good["median"].get("span_ms", 0.0)
    return b / g if g else 0.0


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _verdict(ok: bool, reason: str, key: str) -> dict:
    return {"verdict": CONFIRMED if ok else NOT_CONFIRMED, "reason": reason, "key": key}


def judge_serialization(code: str, bad: dict, good: dict, **_) -> dict:
    b, g = bad["median"], good["median"]
    sp = speedup(bad, good)
    lost = g.get("cross_stream_fraction", 0.0) - b.get("cross_stream_fraction", 0.0)
    stall_removed = b.get("stall_ms", 0.0) - g.get("stall_ms", 0.0)
    overlap_lost = lost >= OVERLAP_LOSS
    stalled = stall_removed >= STALL_SHARE * b.get("span_ms", 0.0)
    key = (
        f"cross-stream overlap {_pct(b.get('cross_stream_fraction', 0.0))} -> "
        f"{_pct(g.get('cross_stream_fraction', 0.0))} of GPU busy time; host stalled "
        f"{b.get('stall_ms', 0.0):.2f} -> {g.get('stall_ms', 0.0):.2f} ms; "
        f"{b.get('span_ms', 0.0):.2f} -> {g.get('span_ms', 0.0):.2f} ms ({sp:.2f}x)"
    )
    if sp < FASTER:
        return _verdict(False, f"the fix is not measurably faster ({sp:.2f}x < {FASTER}x)", key)
    if not (overlap_lost or stalled):
        return _verdict(False, "neither lost overlap nor a host stall that the fix removes", key)
    why = []
    if overlap_lost:
        why.append(f"the bad variant lost {_pct(lost)} of cross-stream overlap")
    if stalled:
        why.append(f"the host stalled {stall_removed:.2f} ms more in CUDA calls")
    return _verdict(True, "; ".join(why) + f"; the fix is {sp:.2f}x faster", key)


def judge_pageable(code: str, bad: dict, good: dict, **_) -> dict:
    b, g = bad["median"], good["median"]
    sp = speedup(bad, good)
    pageable = b.get("pageable_bytes", 0)
    held = b.get("pageable_call_ms", 0.0)
    gpu = b.get("pageable_gpu_ms", 0.0)
    synchronous = gpu > 0 and held >= SYNC_SHARE * gpu
    no_overlap = gpu > 0 and b.get("pageable_kernel_overlap_ms", 0.0) <= 0.05 * gpu
    key = (
        f"{pageable / MB:.0f} MB pageable in {int(b.get('pageable_copies', 0))} copies; host blocked "
        f"{held:.2f} ms inside them (GPU copy time {gpu:.2f} ms); fix: "
        f"{g.get('pageable_bytes', 0) / MB:.0f} MB pageable, host {g.get('copy_call_ms', 0.0):.2f} ms in copies; "
        f"{sp:.2f}x"
    )
    if pageable <= 0:
        return _verdict(False, "the bad variant copied no pageable memory", key)
    if g.get("pageable_bytes", 0) > FIX_PAGEABLE_SHARE * pageable:
        return _verdict(False, "the fix still copies most of that pageable memory", key)
    if not (synchronous or no_overlap):
        return _verdict(False, "the pageable copies neither held the host nor lost overlap", key)
    why = []
    if synchronous:
        why.append(f"the 'asynchronous' pageable copies held the host {held:.2f} ms of their {gpu:.2f} ms")
    if no_overlap:
        why.append("they overlapped no kernel")
    if sp < 1.0:
        why.append(f"but the fix as a whole was slower here ({sp:.2f}x): the pinning it adds costs more "
                   "than the overlap it wins")  # fmt: skip
    return _verdict(True, "; ".join(why), key)


def wall_spread(walls: list[float]) -> dict:
    """Median and range of the untraced wall-clock calls (ms)."""
    if not walls:
        return {}
    ordered = sorted(walls)
    mid = len(ordered) // 2
    med = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return {"n": len(walls), "median": med, "min": ordered[0], "max": ordered[-1]}


def slower_share(bad: list[float], good: list[float]) -> float:
    """Share of (bad, good) pairs of calls in which the bad one took longer (ties half)."""
    if not bad or not good:
        return 0.0
    wins = sum(1.0 if b > g else 0.5 if b == g else 0.0 for b in bad for g in good)
    return wins / (len(bad) * len(good))


def judge_pin_on_the_fly(code: str, bad: dict, good: dict, findings: dict | None = None,
                         walls: dict | None = None, **_) -> dict:  # fmt: skip
    cost = _main_finding(code, findings or {})
    each = cost.get("host_ms_each", 0.0) if cost else 0.0
    n = round((cost.get("occurrences", 0) if cost else 0) / max(len(bad.get("reps", [])), 1))
    b, g = wall_spread((walls or {}).get("bad", [])), wall_spread((walls or {}).get("good", []))
    if not b or not g:  # no wall clock recorded: the traced spans
        sp = speedup(bad, good)
        key = (f"pin_memory().to() {each:.2f} ms of host time per batch ({n} batches per call); "
               f"{bad['median'].get('span_ms', 0.0):.2f} -> {good['median'].get('span_ms', 0.0):.2f} ms ({sp:.2f}x)")  # fmt: skip
        if sp < FASTER:
            return _verdict(False, f"pinning on the fly was not slower than the plain copy ({sp:.2f}x)", key)
        return _verdict(True, f"pinning on the fly made the loop {sp:.2f}x slower than the plain copy", key)
    sp = b["median"] / g["median"] if g["median"] else 0.0
    key = (f"pin_memory().to() {each:.2f} ms of host time per batch ({n} batches per call); wall clock "
           f"{b['median']:.2f} ms [{b['min']:.2f}-{b['max']:.2f}] -> {g['median']:.2f} ms "
           f"[{g['min']:.2f}-{g['max']:.2f}] over {b['n']} untraced calls each ({sp:.2f}x)")  # fmt: skip
    if sp < FASTER:
        return _verdict(False, f"pinning on the fly was not slower than the plain copy ({sp:.2f}x)", key)
    share = slower_share(walls["bad"], walls["good"])
    key += f"; a bad call slower than a fix call in {100 * share:.0f}% of pairs"
    if share < SUPERIORITY:
        return _verdict(False, f"a bad call was slower than a call of the fix in only {100 * share:.0f}% of pairs "
                        f"(< {100 * SUPERIORITY:.0f}%): the difference is within the spread", key)  # fmt: skip
    return _verdict(True, f"pinning on the fly made the loop {sp:.2f}x slower than the plain copy (a bad call "
                    f"slower than a call of the fix in {100 * share:.0f}% of pairs of untraced calls)", key)  # fmt: skip


def judge_hazard(code: str, bad: dict, good: dict, comparison: dict | None = None,
                 hazard: dict | None = None, **_) -> dict:  # fmt: skip
    comparison = comparison or {}
    hazard = hazard or {}
    n = comparison.get("trials", 0)
    k = comparison.get("differing_trials", 0)
    worst = comparison.get("wrong_fraction_max", 0.0)
    misordered = hazard.get("misordered", 0)
    key = (
        f"{_pct(worst)} of values wrong (worst trial), {k} of {n} trials differ; "
        f"trace: {misordered} of {hazard.get('pairs', 0)} accesses unordered"
        + (f" by up to {hazard.get('max_lead_ms', 0.0):.2f} ms" if misordered else _ordering(hazard))
    )
    if not comparison.get("good_consistent", False):
        return _verdict(False, "the fix's own trials disagree, so the comparison proves nothing", key)
    if k == 0 and misordered == 0:
        return _verdict(False, f"every one of {n} trials matched the fix and the trace shows no unsafe order", key)
    why = []
    if k:
        why.append(f"the result differed in {k} of {n} trials (up to {_pct(worst)} of values)")
    if misordered:
        why.append(f"{hazard.get('what', 'the trace shows the race')} ({misordered} times)")
    return _verdict(True, "; ".join(why), key)


def _ordering(hazard: dict) -> str:
    """How the traced accesses were ordered when none raced (hazards.py)."""
    parts = []
    if hazard.get("host_ordered"):
        parts.append(f"{hazard['host_ordered']} ordered by the host, the later access issued "
                     f"{hazard.get('min_host_gap_ms', 0.0):.2f} ms or more after the earlier ended")  # fmt: skip
    if hazard.get("device_ordered"):
        parts.append(f"{hazard['device_ordered']} ordered on the device")
    return f" ({'; '.join(parts)})" if parts else ""


OVERHEAD_COUNTS = {
    "SL102": ("copies", "copy_ms", "copies"),
    "SL501": ("creates", "create_ms", "stream/event creations"),
    "SL502": ("syncs", "sync_ms", "synchronizations"),
    "SL503": ("syncs", "sync_ms", "synchronizations"),
}


def judge_overhead(code: str, bad: dict, good: dict, findings: dict | None = None, **_) -> dict:
    count_key, time_key, noun = OVERHEAD_COUNTS[code]
    b, g = bad["median"], good["median"]
    cost = _main_finding(code, findings or {})
    runs = max(len(bad.get("reps", [])), 1)
    iterations = max(round((cost.get("occurrences", 0) if cost else 0) / runs), 1)
    extra = (b.get(count_key, 0) - g.get(count_key, 0)) / iterations
    extra_ms = b.get(time_key, 0.0) - g.get(time_key, 0.0)
    sp = speedup(bad, good)
    key = (
        f"{extra:.1f} extra {noun} per iteration ({int(b.get(count_key, 0))} vs {int(g.get(count_key, 0))} "
        f"over {iterations} iterations), {extra_ms:.2f} ms in them; "
        f"{b.get('span_ms', 0.0):.2f} -> {g.get('span_ms', 0.0):.2f} ms ({sp:.2f}x)"
    )
    if extra < 0.9:
        return _verdict(False, f"no extra {noun} per iteration in the trace", key)
    pace = (f"the fix is {sp:.2f}x faster" if sp >= FASTER else
            f"but the fix as a whole was not faster here ({sp:.2f}x): the {noun} it removes cost less than "
            "what it does instead")  # fmt: skip
    return _verdict(True, f"{extra:.1f} extra {noun} per iteration costing {extra_ms:.2f} ms; {pace}", key)


def _main_finding(code: str, findings: dict) -> dict | None:
    """The cost record of the pair's own finding (the most executed one if several)."""
    own = [c for label, c in findings.items() if label.startswith(code + ":") and ":ref:" not in label]
    return max(own, key=lambda c: c.get("occurrences", 0)) if own else None


JUDGES: dict[str, Callable[..., dict]] = {
    "serialization": judge_serialization,
    "pageable": judge_pageable,
    "pin-on-the-fly": judge_pin_on_the_fly,
    "hazard": judge_hazard,
    "overhead": judge_overhead,
}


def judge(code: str, bad: dict, good: dict, **evidence) -> dict:
    fn = JUDGES.get(family(code))
    if fn is None:
        return {"verdict": NOT_CONFIRMED, "reason": f"no runtime check for {code}", "key": ""}
    out = fn(code, bad, good, **evidence)
    out["family"] = family(code)
    out["speedup"] = speedup(bad, good)
    walls = evidence.get("walls") or {}
    if family(code) in ("pin-on-the-fly",) and walls.get("bad") and walls.get("good"):
        out["wall"] = {v: wall_spread(walls[v]) for v in ("bad", "good")}
    return out
