"""Race ordering in the trace (SL401-SL404) and the ideal pipeline bound."""

from __future__ import annotations

import pytest

from .rc_data import evidence_of
from streamlint.runtime import hazards
from streamlint.runtime.pipeline import ideal_bound, pipeline_report, stages


@pytest.mark.parametrize("code", ["SL401", "SL403", "SL404"])
def test_bad_hazard_traces_show_the_unsafe_order(code):
    result = hazards.check(evidence_of(code, "bad"), code)
    assert result["pairs"] >= 3
    assert result["misordered"] >= 1
    assert result["max_lead_ms"] > 0
    # the picture's racing pair is an unordered one
    worst = result["worst"]
    assert worst["first"]["end"] > worst["second"]["start"]


def test_sl402_the_host_overwrites_the_staging_buffer_under_a_queued_copy():
    # the model's work per frame outlasts the host's refill and launches, so every frame
    # after a call's first is refilled while the previous frame's copy is still queued
    # (10 of 12 frames, 3 traced calls); each call's first frame follows the previous
    # call's read-back: ordered by the host
    result = hazards.check(evidence_of("SL402", "bad"), "SL402")
    assert result["pairs"] == 35 and result["misordered"] == 30 and result["max_lead_ms"] > 5
    assert result["host_ordered"] == 5 and result["worst"] is not None
    assert result["worst"]["second"]["name"] == "host access"


def test_sl401_consumer_starts_before_the_producer_ends_in_every_call():
    result = hazards.check(evidence_of("SL401", "bad"), "SL401")
    assert result["misordered"] == result["pairs"] == 3


def test_a_trace_without_the_flagged_statement_shows_nothing():
    # the good variant has no flagged range: nothing to check, nothing claimed
    result = hazards.check(evidence_of("SL401", "good"), "SL401")
    assert result["pairs"] == 0 and result["misordered"] == 0


def test_non_hazard_codes_have_no_check():
    assert hazards.check(evidence_of("SL301", "bad"), "SL301") is None


def test_seed_002_arithmetic():
    # GPU-FACTS: 256 MB in four chunks; stage times 4.86, 13.39, 4.87 ms for the whole data
    bound = ideal_bound(4.86 / 4, 13.39 / 4, 4.87 / 4, 4)
    assert bound == pytest.approx(15.8, abs=0.05)
    assert ideal_bound(1.0, 1.0, 1.0, 1) == 3.0
    assert ideal_bound(1.0, 2.0, 1.0, 0) == 0.0


@pytest.mark.parametrize("code", ["SL101", "SL103", "SL202", "SL301"])
def test_pipeline_fixtures_are_recognised_and_bounded(code):
    report = pipeline_report(evidence_of(code, "good"), evidence_of(code, "bad"))
    assert report is not None and report["chunks"] == 8
    assert report["ideal_ms"] <= report["sequential_ms"]
    # nothing beats the bound by more than measurement noise; the serialized bad variant
    # is further from it than the fix
    assert report["good_efficiency"] < 1.1
    assert report["bad_efficiency"] < report["good_efficiency"]


def test_non_pipelines_are_not_bounded():
    assert stages(evidence_of("SL502", "good")) is None
    assert stages(evidence_of("SL401", "good")) is None


def test_a_pair_whose_traced_accesses_never_raced_says_how_they_were_ordered():
    from pathlib import Path

    from streamlint.runtime.report import analyse_pair

    from .rc_data import PAIRS

    from streamlint.runtime import verdicts

    # the recorded SL402 raced in the traced calls; with none unordered (the old pair's
    # record: 0 of 35, the host refilling after each copy had ended) the key says how the
    # traced accesses were ordered instead of leaving "0 unordered" unexplained
    entry = analyse_pair(Path(PAIRS) / "SL402")
    assert "30 of 35 accesses unordered by up to" in entry["key"]
    ordered = {"pairs": 35, "misordered": 0, "host_ordered": 35, "min_host_gap_ms": 2.14}
    key = verdicts.judge("SL402", entry["bad"], entry["good"], comparison=entry["comparison"], hazard=ordered)["key"]
    assert "0 of 35 accesses unordered (35 ordered by the host, the later access issued 2.14 ms or more" in key
