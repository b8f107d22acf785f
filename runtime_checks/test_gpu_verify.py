"""On a CUDA GPU: `streamlint verify` over every runtime pair, and over the example script.

Marked `gpu` (skipped without PyTorch and a GPU). Outputs go to a temporary directory, or
to $STREAMLINT_VERIFY_OUT (reports/ and records/ for pairs, script_reports/ and
script_records/ for the script: the committed report and test data are made this way,
with $STREAMLINT_VERIFY_COMMIT naming the commit).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
from pathlib import Path

import pytest

from .rc_data import CODES, FIXTURES, HERE
from streamlint.runtime import verify

pytestmark = pytest.mark.gpu


def out_dir(tmp_path: Path) -> Path:
    return Path(os.environ.get("STREAMLINT_VERIFY_OUT") or tmp_path)


def run(argv: list[str]) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="streamlint")
    verify.add_verify_parser(parser.add_subparsers(dest="command"))
    commit = os.environ.get("STREAMLINT_VERIFY_COMMIT")
    if commit:
        argv = argv[:1] + ["--commit", commit] + argv[1:]
    out = io.StringIO()
    code = verify.run_verify(parser.parse_args(argv), out, io.StringIO())
    return code, out.getvalue()


def test_verify_confirms_every_pair(tmp_path):
    base = out_dir(tmp_path)
    code, text = run(["verify", "--report", str(base / "reports"), "--records", str(base / "records"),
                      "--trials", "10", str(FIXTURES)])  # fmt: skip
    report = json.loads((base / "reports" / "report.json").read_text())
    verdicts = {p["code"]: p["verdict"] for p in report["pairs"]}
    assert set(verdicts) == set(CODES), text
    assert report["machine"]["gpu"] and report["git_commit"]
    not_confirmed = {c: p["reason"] for p in report["pairs"] if (c := p["code"]) and p["verdict"] != "confirmed"}
    assert not not_confirmed, text
    assert code == 0
    hazard = [p for p in report["pairs"] if p["family"] == "hazard"]
    assert all(p["comparison"]["good_consistent"] for p in hazard)


def test_verify_script_measures_each_finding(tmp_path):
    base = out_dir(tmp_path)
    script = HERE / "examples" / "train_loop.py"
    code, text = run(["verify", "--report", str(base / "script_reports"), "--records", str(base / "script_records"),
                      str(script), "--", "--steps", "24"])  # fmt: skip
    assert code == 0, text
    report = json.loads((base / "script_reports" / "report.json").read_text())
    findings = {f["code"]: f for f in report["script"]["findings"]}
    assert set(findings) == {"SL301", "SL502", "SL103"}
    assert findings["SL301"]["cost"]["pageable_bytes"] > 0
    assert findings["SL301"]["cost"]["host_blocked_ms"] > 0
    assert findings["SL103"]["occurrences"] == 24
    assert findings["SL103"]["cost"]["syncs"] >= findings["SL103"]["cost"]["occurrences"] >= 20
    assert findings["SL301"]["verdict"] == findings["SL502"]["verdict"] == "confirmed", text
    # `.item()` has already waited each step: the synchronize after it holds the host for nothing
    assert findings["SL103"]["verdict"] == "not observed", text
    assert (base / "script_reports" / "script.png").exists()
    assert (base / "script_reports" / "script.stdout.txt").read_text().startswith("24 steps")


def _sl401(tmp_path, example: str, *extra: str) -> dict:
    code, text = run(["verify", "--select", "SL401", "--report", str(tmp_path / example), *extra,
                      str(HERE / "examples" / f"{example}.py")])  # fmt: skip
    assert code == 0, text
    report = json.loads((tmp_path / example / "report.json").read_text())
    return next(f for f in report["script"]["findings"] if f["code"] == "SL401")


def test_a_missing_wait_is_confirmed_provoked_and_its_correction_is_not(tmp_path):
    bad = _sl401(tmp_path, "race_missing_wait")
    assert bad["verdict"] == "confirmed" and bad["provoked"]["differing"] == bad["provoked"]["runs"]
    fixed = _sl401(tmp_path, "race_fixed")
    assert fixed["verdict"] == "not observed" and fixed["provoked"]["differing"] == 0
    masked = _sl401(tmp_path, "race_masked")
    assert masked["verdict"] == "not observed" and masked["why"].startswith("masked")


@pytest.mark.skipif(importlib.util.find_spec("cupti") is None, reason="cupti-python is not installed")
def test_the_cupti_tracer_verifies_a_numba_program(tmp_path):
    found = _sl401(tmp_path, "numba_race", "--tracer", "cupti")
    assert found["verdict"] == "confirmed"



@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba-cuda is not installed")
def test_a_numba_race_that_runs_once_is_provoked_and_its_correction_is_ordered_on_the_device(tmp_path):
    bad = _sl401(tmp_path, "numba_race_once")
    assert bad["verdict"] == "confirmed" and bad["provoked"]["differing"] == bad["provoked"]["runs"]
    fixed = _sl401(tmp_path, "numba_race_once_fixed")
    assert fixed["verdict"] == "not observed" and fixed["why"].startswith("ordered on the device")


@pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="CuPy is not installed")
def test_a_cupy_race_that_runs_once_is_provoked(tmp_path):
    assert _sl401(tmp_path, "cupy_race_once")["verdict"] == "confirmed"
    assert _sl401(tmp_path, "cupy_race_once_fixed")["verdict"] == "not observed"
