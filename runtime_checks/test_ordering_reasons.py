"""A hazard verdict's reason comes from how the two accesses were ordered in the trace:
on the device (the consumer queued while the producer ran, held back until it ended),
by the host (queued only after the producer had ended), masked by a host wait, or below
noise. The cases are built as the tracers' events; the recorded runs are in
test_script_verdicts.py."""

from __future__ import annotations

from streamlint.runtime import hazards
from streamlint.runtime import script_verdicts as sv
from streamlint.runtime.evidence import Evidence
from streamlint.runtime.trace import parse

PRODUCER, CONSUMER = "SL401:9:ref:8", "SL401:9"


def _x(cat, name, ts, dur, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": tid, "args": args}


def _trace(producer: tuple[float, float], consumer: tuple[float, float], consumer_queued: float,
           sync: tuple[float, float] | None = None) -> Evidence:  # fmt: skip
    """A producer kernel on stream 13 queued at t=10 us, a consumer on 14 queued at
    `consumer_queued`, each inside its statement's range; times in microseconds."""
    events = [
        _x("user_annotation", PRODUCER, 9.0, 3.0),
        _x("cuda_runtime", "cudaLaunchKernel", 10.0, 1.0, correlation=1),
        _x("kernel", "produce", producer[0], producer[1] - producer[0], tid=13, stream=13, correlation=1),
        _x("user_annotation", CONSUMER, consumer_queued - 1.0, 3.0),
        _x("cuda_runtime", "cudaLaunchKernel", consumer_queued, 1.0, correlation=2),
        _x("kernel", "consume", consumer[0], consumer[1] - consumer[0], tid=14, stream=14, correlation=2),
    ]
    if sync:
        events.append(_x("cuda_runtime", "cudaStreamSynchronize", sync[0], sync[1] - sync[0], correlation=3))
    return Evidence(parse({"traceEvents": events}))


def _reason(check: dict) -> str:
    return sv.judge_hazard(CONSUMER, check, {"runs": 3, "checks": [check] * 3}, [])["why"]


def test_queued_while_the_producer_ran_and_held_back_is_ordered_on_the_device():
    check = hazards.check_finding(_trace((20.0, 5000.0), (5003.0, 5010.0), consumer_queued=100.0), CONSUMER)
    assert (check["misordered"], check["device_ordered"], check["host_ordered"]) == (0, 1, 0)
    assert abs(check["max_wait_ms"] - 4.9) < 0.01
    assert _reason(check).startswith("ordered on the device")


def test_queued_after_the_producer_ended_is_ordered_by_the_host_not_by_a_wait():
    # the consumer's first-call compile held the host past the producer's end
    check = hazards.check_finding(_trace((20.0, 5000.0), (30003.0, 30010.0), consumer_queued=30000.0), CONSUMER)
    assert (check["device_ordered"], check["host_ordered"]) == (0, 1)
    assert abs(check["min_host_gap_ms"] - 25.0) < 0.01
    reason = _reason(check)
    assert reason.startswith("ordered by the host") and "25.00 ms after" in reason
    assert "a wait streamlint did not see" not in reason  # the bug and its fix never share words


def test_a_host_wait_between_them_masks_the_missing_wait():
    ev = _trace((20.0, 5000.0), (6003.0, 6010.0), consumer_queued=6000.0, sync=(200.0, 5001.0))
    check = hazards.check_finding(ev, CONSUMER)
    assert check["masked"] == 1 and _reason(check).startswith("masked")


def test_an_overlap_within_the_timestamps_resolution_is_below_noise():
    check = hazards.check_finding(_trace((20.0, 5000.0), (4999.5, 5010.0), consumer_queued=100.0), CONSUMER)
    assert check["misordered"] == 0 and check["below_noise"] == 1
    assert _reason(check).startswith("below noise")


def test_a_consumer_that_starts_while_the_producer_runs_is_a_race():
    check = hazards.check_finding(_trace((20.0, 5000.0), (150.0, 160.0), consumer_queued=100.0), CONSUMER)
    assert check["misordered"] == 1 and check["worst"] is not None
    assert sv.judge_hazard(CONSUMER, check, {"runs": 3, "checks": [check] * 3}, [])["verdict"] == "confirmed"


def test_a_line_that_never_launched_says_so():
    empty = Evidence(parse({"traceEvents": [_x("user_annotation", "other", 0.0, 1.0)]}))
    check = hazards.check_finding(empty, CONSUMER)
    assert check["pairs"] == 0 and check.get("never_ran")
    assert sv.judge_hazard(CONSUMER, check, None, [])["why"].startswith("the line never ran")
