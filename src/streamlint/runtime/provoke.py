"""Provoking races on purpose (`--provoke`, on by default for SL4xx in script mode).

A missing wait often does no harm in one run: the producer happens to finish before the
consumer reads. To decide whether it *can* bite, the instrumented program queues a spin
kernel (spin.py) on the producing stream just before the flagged producer, so that the
producer finishes late: a consumer that is not really ordered after it then reads too
early every time (a wrong result, and an unordered access in the trace), while a program
that is ordered (a wait the linter did not see, a host synchronization in between)
stays correct. The *control* runs put the delay on the consumer's side instead, which
hides the race: their result is what the program computes when the race does not bite.

Per rule, where the delay goes (the finding's message names the streams):

| rule  | provoked run                                    | control run                               |
|-------|-------------------------------------------------|-------------------------------------------|
| SL401 | before the producer (ref line), producer stream | before the consumer, consumer stream      |
| SL402 | before the copy (ref line), its stream          | host waits before the overwrite           |
| SL403 | before the copy (ref line), its stream          | host waits before the read                |
| SL404 | before the use, the stream that uses it         | before the use, the allocating stream     |

(The allocating stream of "allocated on the current stream (line 12)" is the stream
current when line 12 ran: the harness remembers it there.)

The harness evaluates a stream's name in the frame of the statement it delays; a
stream named "the current stream" (or one whose name cannot be evaluated there) is the
library's current stream at that moment.

First-call costs: the spin is queued when the statement starts, before its own work is
prepared. A statement that runs once pays its JIT compile and module loading there (a
Numba kernel: tens of ms), and the consumer pays its own before it is queued; a fixed
SPIN_MS is used up by them and the consumer is then queued after the producer has
finished: ordered by the host, the race not provoked. So each execution's delay is
sized from the plain run (`sized_delays`): the time from that execution of the delayed
statement to the consumer's first launch, times MARGIN, plus SPIN_MS.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass

from streamlint.runtime.labels import Label, parse_label

SPIN_MS = 50.0  # longer than any launch gap of a step, short enough for many steps
MARGIN = 1.5  # times the plain run's gap: compile times vary from run to run
MAX_SPIN_MS = 3000.0
SPIN_PREFIX = "streamlint::spin::"
PRODUCER, CONSUMER = "producer", "consumer"

_WRITTEN_ON = re.compile(r"written on `([^`]+)`")
_READ_ON = re.compile(r"read on `([^`]+)`")
_ALLOCATED_ON = re.compile(r"allocated on `([^`]+)`")
_USED_ON = re.compile(r"used on `([^`]+)`")
_LINE_REF = re.compile(r"\blines? (\d+)\b")


@dataclass(frozen=True)
class Delay:
    at: str  # the range label before whose statement the delay happens
    # (ms: a number, or one per execution of `at`, the last repeated; runner/harness)
    stream: str | None  # expression naming the stream to spin on; None: the current stream
    host: bool = False  # the host sleeps instead (the consumer is host code)
    stream_at: str | None = None  # with no stream: take the one current at this statement instead

    def to_dict(self) -> dict:
        return asdict(self)


def _expr(pattern: re.Pattern[str], message: str) -> str | None:
    m = pattern.search(message)
    if not m:
        return None
    text = m.group(1)
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    return text


def ref_label(code: str, row: int, message: str) -> str | None:
    """The label of the statement the message refers to (the producer / the copy)."""
    refs = sorted({int(x) for x in _LINE_REF.findall(message)} - {row})
    return str(Label(code, row, refs[0])) if refs else None


def plan(code: str, row: int, message: str) -> tuple[Delay, Delay] | None:
    """(provoked, control) delays for a hazard finding; None for other rules."""
    flagged = str(Label(code, row))
    ref = ref_label(code, row, message) or flagged
    if code == "SL401":
        return (Delay(ref, _expr(_WRITTEN_ON, message)), Delay(flagged, _expr(_READ_ON, message)))
    if code in ("SL402", "SL403"):
        return Delay(ref, None), Delay(flagged, None, host=True)
    if code == "SL404":
        # "allocated on the current stream (line 12)": current *there*, not at the use
        allocating = _expr(_ALLOCATED_ON, message)
        control = Delay(flagged, allocating, stream_at=None if allocating else ref)
        return Delay(flagged, _expr(_USED_ON, message)), control
    return None


def spin_name(handle: int) -> str:
    return f"{SPIN_PREFIX}{handle:#x}"


def is_spin(name: str) -> bool:
    return name.startswith(SPIN_PREFIX)


def finding_of(label: str) -> str | None:
    parsed = parse_label(label)
    return str(parsed.finding) if parsed is not None else None


def compare_outputs(provoked: list[str | None], control: list[str | None], plain: str | None = None) -> dict:
    """Did the provoked runs print something else than the control runs? Outputs are
    the scripts' stdout; None where a run failed.

    Only a deterministic program's output is evidence: the unprovoked runs (the control
    runs, and the plain run when there is only one control) must print the same thing,
    else the comparison is dropped (`deterministic` False, `why` says so): an unseeded
    training loop prints another loss every run, race or not."""
    controls = [c for c in control if c is not None]
    usable = [p for p in provoked if p is not None]
    out = {"comparable": False, "runs": len(usable), "differing": 0, "deterministic": None, "why": ""}
    if not controls or not usable:
        out["why"] = "no control run or no provoked run finished"
        return out
    reference = controls[0]
    unprovoked = controls if len(controls) > 1 else controls + ([plain] if plain is not None else [])
    if len(unprovoked) < 2:
        out["why"] = "one unprovoked run only: whether the program prints the same thing every run is unknown"
    elif len({u.strip() for u in unprovoked}) > 1:
        out["deterministic"] = False
        out["why"] = (f"the {len(unprovoked)} control runs printed different output: the program is not "
                      "deterministic, so a changed output is no evidence of the race" if len(controls) > 1 else
                      "the plain run and the control run printed different output (the program is not "
                      "deterministic, or its plain run raced), so a changed output is no evidence of the race")  # fmt: skip
        return out
    else:
        out["deterministic"] = True
    if not reference.strip():
        out["why"] = "the program printed nothing to compare"
        return out
    out["comparable"] = True
    out["differing"] = sum(1 for p in usable if p.strip() != reference.strip())
    return out


def launch_gaps(ev, at: str, consumer: str) -> list[float]:
    """Per execution of the delayed statement `at` in the plain run (`ev`: its
    evidence.Evidence): ms from its start to the consumer's first GPU launch (the first op
    issued inside the next execution of the `consumer` statement; its start if it issued
    none). What a delay queued at `at` must outlast for the consumer to be queued while
    the producer still waits."""
    starts = [r.start for r in ev.occurrences(at)]
    consumers = ev.occurrences(consumer)
    gaps = []
    for start in starts:
        after = [r for r in consumers if r.start >= start]
        if not after:
            break
        ops = ev.ops_in(after[0])
        first = min((ev.trace.issue_time(o) for o in ops), default=after[0].start)
        gaps.append(max(0.0, (first - start) / 1e3))
    return gaps


def sized_delays(gaps: list[float]) -> list[float]:
    """Delay per execution: MARGIN times the plain run's gap, plus SPIN_MS (capped)."""
    return [round(min(MAX_SPIN_MS, SPIN_MS + MARGIN * g), 3) for g in gaps] or [SPIN_MS]


def delay_for(ms, execution: int) -> float:
    """The delay of the `execution`-th (0-based) run of the delayed statement."""
    if isinstance(ms, (int, float)):
        return float(ms)
    if not ms:
        return SPIN_MS
    return float(ms[min(execution, len(ms) - 1)])
