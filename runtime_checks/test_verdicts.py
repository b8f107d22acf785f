"""Verdict logic per family, on the evidence of the committed traces; and that the
committed report says what its data says."""

from __future__ import annotations

import copy
import json

import pytest

from .rc_data import CODES, PAIRS, REPORTS, summary_of
from streamlint.runtime import report, verdicts


@pytest.fixture(scope="module")
def pairs():
    return {entry["code"]: entry for entry in (report.analyse_pair(PAIRS / c) for c in CODES)}


def test_every_rule_has_a_family_and_a_judge():
    for code in CODES:
        assert verdicts.family(code) in verdicts.JUDGES


@pytest.mark.slow
@pytest.mark.parametrize("code", CODES)
def test_committed_report_matches_its_data(code, pairs):
    committed = {p["code"]: p for p in json.loads((REPORTS / "report.json").read_text())["pairs"]}
    assert committed[code]["verdict"] == pairs[code]["verdict"]
    assert committed[code]["key"] == pairs[code]["key"]


@pytest.mark.parametrize("code", ["SL101", "SL103", "SL201", "SL202"])
def test_serialization_needs_the_fix_to_be_faster(code):
    bad, good = summary_of(code, "bad"), summary_of(code, "good")
    assert verdicts.judge(code, bad, good)["verdict"] == "confirmed"
    # the same evidence with the variants swapped: the "fix" is slower, not confirmed
    swapped = verdicts.judge(code, good, bad)
    assert swapped["verdict"] == "not confirmed" and "not measurably faster" in swapped["reason"]


def test_serialization_without_lost_overlap_or_stall_is_not_confirmed():
    bad, good = copy.deepcopy(summary_of("SL101", "bad")), summary_of("SL101", "good")
    bad["median"]["cross_stream_fraction"] = good["median"]["cross_stream_fraction"]
    bad["median"]["stall_ms"] = good["median"]["stall_ms"]
    out = verdicts.judge("SL101", bad, good)
    assert out["verdict"] == "not confirmed" and "neither" in out["reason"]


def test_pageable_verdicts():
    bad, good = summary_of("SL301", "bad"), summary_of("SL301", "good")
    assert verdicts.judge("SL301", bad, good)["verdict"] == "confirmed"
    # pinned both ways: nothing pageable to blame
    assert verdicts.judge("SL301", good, good)["verdict"] == "not confirmed"
    # a fix that still copies all of it pageable
    assert "still copies" in verdicts.judge("SL301", bad, bad)["reason"]


def test_hazard_verdict_needs_a_consistent_fix():
    bad, good = summary_of("SL401", "bad"), summary_of("SL401", "good")
    race = {"pairs": 3, "misordered": 3, "max_lead_ms": 3.0, "what": "x"}
    clean = {"pairs": 3, "misordered": 0, "max_lead_ms": 0.0, "what": "x"}
    wrong = {"trials": 10, "differing_trials": 4, "wrong_fraction_max": 0.098, "good_consistent": True}
    same = {"trials": 10, "differing_trials": 0, "wrong_fraction_max": 0.0, "good_consistent": True}
    flaky_fix = dict(wrong, good_consistent=False)
    assert verdicts.judge("SL401", bad, good, comparison=wrong, hazard=clean)["verdict"] == "confirmed"
    assert verdicts.judge("SL401", bad, good, comparison=same, hazard=race)["verdict"] == "confirmed"
    assert verdicts.judge("SL401", bad, good, comparison=same, hazard=clean)["verdict"] == "not confirmed"
    assert verdicts.judge("SL401", bad, good, comparison=flaky_fix, hazard=race)["verdict"] == "not confirmed"
    assert "9.8% of values wrong" in verdicts.judge("SL401", bad, good, comparison=wrong, hazard=clean)["key"]


@pytest.mark.parametrize("code", ["SL102", "SL501", "SL502"])
def test_overhead_counts_extra_work_per_iteration(code):
    bad, good = summary_of(code, "bad"), summary_of(code, "good")
    out = verdicts.judge(code, bad, good, findings=bad["findings"])
    assert out["verdict"] == "confirmed"
    assert verdicts.judge(code, good, good, findings=bad["findings"])["verdict"] == "not confirmed"


def test_errors_are_reported_with_the_stderr_tail(tmp_path):
    pair = tmp_path / "SL999"
    pair.mkdir()
    (pair / "pair.json").write_text(json.dumps({
        "code": "SL999", "findings": {"bad": [], "good": []},
        "bad": {"status": "error", "error": "timed out after 5 s", "stderr_tail": "Traceback: boom"},
        "good": {"status": "ok"},
    }))  # fmt: skip
    entry = report.analyse_pair(pair)
    assert entry["verdict"] == "error"
    assert "timed out after 5 s" in entry["reason"] and "boom" in entry["reason"]
    assert "good.py left no trace" in entry["reason"]


@pytest.mark.slow  # reads two committed traces
def test_pin_on_the_fly_is_judged_on_the_wall_clock_with_its_spread():
    bad, good = summary_of("SL303", "bad"), summary_of("SL303", "good")
    apart = {"bad": [52.0, 51.4, 51.9, 52.8, 52.4], "good": [43.7, 43.6, 43.7, 43.1, 43.7]}
    out = verdicts.judge("SL303", bad, good, walls=apart)
    assert out["verdict"] == "confirmed" and out["wall"]["bad"]["min"] == 51.4 and "[51.40-52.80]" in out["key"]
    assert "100% of pairs" in out["key"]
    # one slow outlier of the fix does not undo a clear difference...
    outlier = {"bad": [52.0, 51.4, 51.9, 52.8, 52.4], "good": [43.7, 43.6, 43.7, 43.1, 60.0]}
    assert verdicts.judge("SL303", bad, good, walls=outlier)["verdict"] == "confirmed"
    # ...but calls that mostly interleave do, whatever the medians say
    mixed = {"bad": [48.0, 44.0, 52.0, 43.0, 47.0], "good": [45.0, 43.5, 44.5, 46.5, 42.0]}  # 1.06x, 72%
    out = verdicts.judge("SL303", bad, good, walls=mixed)
    assert out["verdict"] == "not confirmed" and "within the spread" in out["reason"]


def test_an_overhead_confirmed_with_a_slower_fix_says_so():
    from streamlint.runtime.verdicts import judge

    bad = {"median": {"syncs": 40, "sync_ms": 2.0, "span_ms": 43.3}, "reps": [{}]}
    good = {"median": {"syncs": 0, "sync_ms": 0.0, "span_ms": 65.6}, "reps": [{}]}
    findings = {"SL502:12": {"occurrences": 40}}
    out = judge("SL502", bad, good, findings=findings)
    assert out["verdict"] == "confirmed" and "not faster here (0.66x)" in out["reason"]
    assert "0.66x faster" not in out["reason"]
