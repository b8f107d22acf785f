"""`streamlint verify` as a command: no GPU or no PyTorch means a clear message and exit
2; reports can be rebuilt from records without a GPU; scripts take their arguments."""

from __future__ import annotations

import argparse
import importlib.util
import io
import shutil
import sys
import types
from pathlib import Path

import pytest

from .rc_data import CODES, FIXTURES, PAIRS
from streamlint.runtime import verify


def parse(argv):
    parser = argparse.ArgumentParser(prog="streamlint")
    verify.add_verify_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = verify.run_verify(parse(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_without_pytorch_it_says_so_and_exits_2(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    code, out, err = run(["verify", str(FIXTURES)])
    assert code == 2 and out == ""
    assert "PyTorch is not installed" in err and "streamlint[runtime]" in err


def test_without_a_gpu_it_says_so_and_exits_2(monkeypatch):
    fake = types.ModuleType("torch")
    fake.cuda = types.SimpleNamespace(is_available=lambda: False)
    monkeypatch.setitem(sys.modules, "torch", fake)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "torch" else real(name, *a))  # fmt: skip
    code, _, err = run(["verify", str(FIXTURES / "SL301")])
    assert code == 2 and "no CUDA GPU is available" in err


def test_a_script_without_a_gpu_exits_2_too(monkeypatch, tmp_path):
    monkeypatch.setattr(verify, "runtime_problem", lambda tracer=None: "no CUDA GPU is available")
    script = tmp_path / "s.py"
    script.write_text("import torch\n")
    code, _, err = run(["verify", str(script), "--", "--steps", "3"])
    assert code == 2 and "no CUDA GPU" in err


def test_no_pairs_is_a_usage_error(tmp_path):
    code, _, err = run(["verify", str(tmp_path)])
    assert code == 2 and "no runtime fixture pair" in err


@pytest.mark.slow
def test_report_from_records_needs_no_gpu(tmp_path, monkeypatch):
    monkeypatch.setattr(verify, "runtime_problem", lambda tracer=None: "must not be asked")
    records = tmp_path / "records"
    records.mkdir()
    shutil.copy(PAIRS / "run.json", records / "run.json")
    shutil.copytree(PAIRS / "SL403", records / "SL403")
    code, out, _ = run(["verify", "--from-records", str(records), "--report", str(tmp_path / "rep")])
    assert out.splitlines()[0].startswith("SL403  confirmed")
    assert code == 0
    assert (tmp_path / "rep" / "report.html").exists() and (tmp_path / "rep" / "SL403.png").exists()


@pytest.mark.slow
def test_summary_exit_code_follows_the_verdicts():
    code, out, _ = run(["verify", "--from-records", str(PAIRS)])
    lines = [l for l in out.splitlines() if l[:2] == "SL"]
    assert len(lines) == len(CODES)  # one line per recorded pair
    assert code == (0 if all("  confirmed" in l for l in lines) else 1)


def test_missing_records_exit_2(tmp_path):
    code, _, err = run(["verify", "--from-records", str(tmp_path)])
    assert code == 2 and "holds no records" in err


def test_script_arguments_follow_the_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    args = parse(["verify", "--report", "r", str(script), "--", "--steps", "24", "-x"])
    fixtures, found, rest = verify.split_targets(args.paths)
    assert found == script and rest == ["--steps", "24", "-x"] and fixtures == []
    # a fixture variant is a pair, not a script
    fixtures, found, _ = verify.split_targets([str(FIXTURES / "SL101" / "runtime" / "bad.py")])
    assert found is None and fixtures == [FIXTURES / "SL101" / "runtime" / "bad.py"]


def test_params_are_python_literals():
    assert verify.parse_params(["n_chunks=4", "scale=0.5", "name=abc"]) == {"n_chunks": 4, "scale": 0.5, "name": "abc"}
    with pytest.raises(ValueError):
        verify.parse_params(["4"])


def test_a_mistyped_script_path_is_named_as_such(tmp_path):
    code, _, err = run(["verify", str(tmp_path / "trian.py")])
    assert code == 2 and "no such script" in err and "fixture" not in err


def test_the_recorded_commit_is_streamlint_s_own(tmp_path):
    from streamlint.runtime import runner

    commit = runner.streamlint_commit()
    # run from a checkout of streamlint: its HEAD; the enclosing repository of a script is not asked
    assert commit is None or len(commit) == 40
    assert commit == runner.git_commit(Path(runner.streamlint.__file__).resolve().parent) or commit is None
