"""Programs that run their racing kernels once (numba_race_once.py, cupy_race_once.py and
their corrections), recorded on one H200 under both tracers: the race is provoked despite
first-call compiles and module loads, the correction is not observed for its own, true
reason, the verdict is the same whichever tracer recorded it, and the line's first-call
set-up is reported apart from its cost."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from streamlint.runtime import cupti_events
from streamlint.runtime.report import build
from streamlint.runtime.runner import lint
from streamlint.runtime.trace import read_json, trim, write_json

from .rc_data import EXAMPLES, SCRIPTS, finding, script_records, script_report

SCRIPT_PATHS = Path(__file__).parent / "examples"


@pytest.mark.parametrize("tracer", ["cupti", "torch"])
def test_the_numba_race_run_once_is_provoked_and_its_fix_is_ordered_on_the_device(tracer):
    bug = finding("numba_race_once", "SL401:43", tracer)
    assert bug["verdict"] == "confirmed"
    p = bug["provoked"]
    assert p["comparable"] and p["deterministic"] and p["differing"] == p["runs"] == 3
    # the kernels were compiled and loaded before the spin, so the spin held the producer
    fix = finding("numba_race_once_fixed", "SL401:46", tracer)
    assert fix["verdict"] == "not observed" and fix["why"].startswith("ordered on the device")
    assert fix["provoked"]["differing"] == 0


@pytest.mark.parametrize("tracer", ["cupti", "torch"])
def test_the_cupy_race_run_once_is_provoked_and_its_fix_is_ordered_by_the_host(tracer):
    assert finding("cupy_race_once", "SL401:26", tracer)["verdict"] == "confirmed"
    fix = finding("cupy_race_once_fixed", "SL401:29", tracer)
    # the consumer's own kernel load waited for the producer: the trace says so, and
    # does not claim a wait it cannot see
    assert fix["verdict"] == "not observed" and fix["why"].startswith("ordered by the host")
    assert "a wait streamlint did not see" not in fix["why"]
    assert "its launch waited inside it" in fix["why"]  # the statement began in time; its launch did not


def _kind(why: str) -> str:
    """The kind of a reason: its first clause, figures left out."""
    return re.sub(r"\d+(\.\d+)?", "N", re.split(r"[:,;(]", why)[0]).strip()


@pytest.mark.slow  # every committed record parsed twice: a check of the data, run by the full suite
@pytest.mark.parametrize("name", EXAMPLES)
def test_one_verdict_whatever_the_tracer(name):
    """Every committed example, recorded under both tracers: each finding gets the same
    verdict, for the same kind of reason."""
    cupti = {f["label"]: f for f in script_report(name, "cupti")["script"]["findings"]}
    torch = {f["label"]: f for f in script_report(name, "torch")["script"]["findings"]}
    # A record made before a change of the static analysis may hold findings the program
    # no longer has: compare on the findings the program has now, and both records must
    # hold every one of them.
    now = {f"{d.code}:{d.row}" for d in lint(SCRIPT_PATHS / f"{name}.py")[1]}
    assert now and now <= cupti.keys() and now <= torch.keys(), (sorted(now), sorted(cupti), sorted(torch))
    for label in sorted(now):
        why = (label, cupti[label]["why"], torch[label]["why"])
        assert cupti[label]["verdict"] == torch[label]["verdict"], why
        assert _kind(cupti[label]["why"]) == _kind(torch[label]["why"]), why
    assert script_report(name, "cupti")["machine"]["tracer"] == "cupti"
    assert script_report(name, "torch")["machine"]["tracer"] == "torch"


@pytest.mark.slow  # every committed record parsed twice: a check of the data, run by the full suite
@pytest.mark.parametrize("name", EXAMPLES)
def test_the_raw_cupti_records_give_the_same_verdicts(name, tmp_path):
    """Every record with raw CUPTI activity records, through the CUPTI parser
    (cupti_events) instead of the trace the tracer wrote: the same verdicts."""
    copy = tmp_path / name
    shutil.copytree(script_records(name, "cupti"), copy)
    raw = read_json(copy / "script" / "cupti_records.json.gz")
    rebuilt = cupti_events.to_chrome(raw["records"], [tuple(r) for r in raw["ranges"]])
    write_json(trim(rebuilt), copy / "script" / "trace.json.gz")
    again = {f["label"]: (f["verdict"], f["why"]) for f in build(copy)["script"]["findings"]}
    written = {f["label"]: (f["verdict"], f["why"]) for f in script_report(name, "cupti")["script"]["findings"]}
    assert again == written and written


def test_a_line_that_ran_once_has_its_compile_time_apart_from_its_cost():
    bug = finding("numba_race_once", "SL401:43")
    cost = bug["cost"]
    assert bug["occurrences"] == 1 and cost["first_call_ms"] > 10.0  # the consumer kernel's JIT compile
    assert cost["host_ms"] < 1.0 < cost["host_ms_total"]
    assert bug["measured"].startswith("ran once:")


def test_no_steady_state_picture_when_no_line_ran_twice():
    s = script_report("numba_race_once")["script"]
    assert s["timeline"] is None and s["timeline_full"]


def test_the_delay_is_sized_from_the_plain_run_s_gap_to_the_consumer_s_launch():
    from streamlint.runtime.evidence import Evidence
    from streamlint.runtime.provoke import SPIN_MS, launch_gaps, sized_delays
    from streamlint.runtime.trace import load

    plain = Evidence(load(SCRIPTS / "numba_race_once" / "script" / "trace.json.gz"))
    gaps = launch_gaps(plain, "SL401:43:ref:42", "SL401:43")
    # the producer's and the consumer's first-call JIT compiles lie between them
    assert len(gaps) == 1 and gaps[0] > 20.0
    assert sized_delays(gaps)[0] > gaps[0] + SPIN_MS
    recorded = script_report("numba_race_once")["script"]["findings"][0]["provoked"]
    assert recorded["sized_ms"] and recorded["sized_ms"][0] > SPIN_MS
