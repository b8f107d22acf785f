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
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass

from streamlint.runtime.labels import Label, parse_label

SPIN_MS = 50.0  # longer than any launch gap of a step, short enough for many steps
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


def compare_outputs(provoked: list[str | None], control: list[str | None]) -> dict:
    """Did the provoked runs print something else than the control runs? Outputs are
    the scripts' stdout; None where a run failed."""
    reference = next((c for c in control if c is not None), None)
    usable = [p for p in provoked if p is not None]
    if reference is None or not usable:
        return {"comparable": False, "runs": len(usable), "differing": 0}
    differing = sum(1 for p in usable if p.strip() != reference.strip())
    return {"comparable": bool(reference.strip()), "runs": len(usable), "differing": differing}
