"""Every rule's pair gives the same verdict under both tracers: the records of one run
under the PyTorch profiler (data/pairs) and one under CUPTI (data/pairs_cupti), each
read by its own parser into the one evidence interface and judged by the same code."""

from __future__ import annotations

import json

import pytest

from .rc_data import CODES, PAIRS, PAIRS_CUPTI
from streamlint.runtime import report
from streamlint.runtime.trace import load


def test_the_records_are_one_run_under_each_tracer():
    torch_run = json.loads((PAIRS / "run.json").read_text())
    cupti_run = json.loads((PAIRS_CUPTI / "run.json").read_text())
    assert torch_run["machine"]["tracer"] == "torch" and cupti_run["machine"]["tracer"] == "cupti"
    assert torch_run["git_commit"] == cupti_run["git_commit"]
    # a pair re-run later (its fixture changed) was re-run under both tracers, at one commit
    assert torch_run.get("rerun", {}).keys() == cupti_run.get("rerun", {}).keys()
    for code, later in torch_run.get("rerun", {}).items():
        assert later["git_commit"] == cupti_run["rerun"][code]["git_commit"]
        assert later["machine"]["tracer"] == "torch" and cupti_run["rerun"][code]["machine"]["tracer"] == "cupti"


@pytest.mark.slow
@pytest.mark.parametrize("code", CODES)
def test_same_verdict_under_both_tracers(code):
    by_torch = report.analyse_pair(PAIRS / code)
    by_cupti = report.analyse_pair(PAIRS_CUPTI / code)
    assert by_torch["verdict"] == by_cupti["verdict"] == "confirmed", (by_torch["key"], by_cupti["key"])


@pytest.mark.slow  # parses the raw CUPTI records of three pairs
@pytest.mark.parametrize("code", ["SL501", "SL502", "SL503"])
def test_cupti_counts_only_the_traced_calls_executions(code):
    # The CUPTI capture of this record also kept the ranges of the untraced calls before
    # tracing (2 warm-up, 1 trial, 5 timed): 11 calls' executions of the flagged
    # statement where the trace holds 3 calls' work. Parsing keeps the traced ones.
    torch_trace = load(PAIRS / code / "bad.trace.json.gz")
    cupti_trace = load(PAIRS_CUPTI / code / "bad.trace.json.gz")
    label = next(r.name for r in torch_trace.ranges if r.name.startswith(code + ":"))
    assert len(cupti_trace.ranges_named(label)) == len(torch_trace.ranges_named(label))
    first = min(r.start for r in cupti_trace.ranges_named("streamlint::rep::", prefix=True))
    assert all(r.end >= first for r in cupti_trace.ranges)
