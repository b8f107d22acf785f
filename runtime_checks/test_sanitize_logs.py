"""The sanitizer's verdicts rebuilt on the CPU from event logs recorded on an H200
(runtime_checks/data/sanitize/record_logs.py): every SL4 runtime pair (PyTorch and
Numba), the CuPy and Numba programs in data/sanitize/programs, and the runtime examples.
A bad variant must show its race, a good one nothing."""

from __future__ import annotations

import io
import json
from argparse import Namespace
from pathlib import Path

import pytest

from streamlint.runtime.sanitize import log
from streamlint.runtime.sanitize.checker import check
from streamlint.runtime.sanitize.run import run_sanitize

LOGS = Path(__file__).parent / "data" / "sanitize" / "logs"
EXPECTED = json.loads((LOGS / "expected.json").read_text())


def log_path(name: str) -> Path:
    plain = LOGS / f"{name}.jsonl"
    return plain if plain.exists() else LOGS / f"{name}.jsonl.gz"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_log_gives_the_expected_races(name):
    findings = check(log.read(log_path(name)))
    assert sorted({f.code for f in findings}) == EXPECTED[name]["codes"]
    for f in findings:  # both sides carry the program's frames
        assert f.current.stack and f.earlier.stack


def test_every_bad_variant_races_and_every_good_one_is_clean():
    bad = {n: e for n, e in EXPECTED.items() if n.endswith("_bad")}
    assert bad, "no recorded pairs"
    for name, expected in bad.items():
        code = name.split("_")[-2]
        assert code in expected["codes"], name
        assert EXPECTED[name[: -len("bad")] + "good"]["codes"] == [], name


def test_recorded_logs_are_small():
    for path in LOGS.glob("*.jsonl*"):
        assert path.stat().st_size < 16_000, path.name
    assert sorted(p.name.split(".")[0] for p in LOGS.glob("*.jsonl*")) == sorted(EXPECTED)


def test_verify_sanitize_replays_a_log():
    name = "pair_SL404_bad"
    out, err = io.StringIO(), io.StringIO()
    code = run_sanitize(Namespace(paths=[str(log_path(name))], param=[], sanitize_log=None), out, err)
    assert code == 1
    text = out.getvalue()
    assert "SL404" in text and "unordered earlier access" in text and "freed at" in text
    # Both stacks and the free point at the fixture's lines: the read (21), the free (22), the reuse (24).
    assert all(f"fixtures/SL404/runtime/bad.py:{n} in run" in text for n in (21, 22, 24))


def test_verify_sanitize_on_a_good_variant_log_exits_clean():
    out = io.StringIO()
    code = run_sanitize(Namespace(paths=[str(log_path("cupy_SL404_good"))], param=[], sanitize_log=None), out, out)
    assert code == 0 and "no race on the executed path" in out.getvalue()


def test_streamlint_verify_sanitize_command_line(capsys):
    from streamlint.cli import main

    assert main(["verify", "--sanitize", str(log_path("pair_SL401_bad"))]) == 1
    assert "SL401" in capsys.readouterr().out
    assert main(["verify", "--sanitize", str(log_path("pair_SL401_good"))]) == 0


def test_a_loop_racing_the_same_way_is_reported_once_with_its_count():
    out = io.StringIO()
    args = Namespace(paths=[str(log_path("example_numba_race"))], param=[], sanitize_log=None)
    assert run_sanitize(args, out, out) == 1
    text = out.getvalue()
    assert text.count("SL401 read after") == 1 and "(and 5 more at the same lines: a loop)" in text
    assert "6 race(s): 6 SL401" in text


ROOT = Path(__file__).resolve().parents[1]


def _source(frame: str) -> str:
    """The source line a recorded frame ("fixtures/SL402/runtime/bad.py:17 in run") names."""
    where = frame.rsplit(" in ", 1)[0]
    path, line = where.rsplit(":", 1)
    return (ROOT / path).read_text().splitlines()[int(line) - 1].strip()


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.startswith("pair_")))
def test_pair_logs_were_recorded_from_the_committed_fixtures(name):
    """Every frame of a pair's log names a line of the fixture as committed: code inside
    its run(), not a blank, a comment or the docstring (a log of an earlier design of the
    pair would point elsewhere)."""
    program = EXPECTED[name]["program"]
    lines = (ROOT / program).read_text().splitlines()
    body = next(i for i, text in enumerate(lines) if text.startswith("def run(")) + 2
    frames = {frame for event in log.read(log_path(name)) for frame in event.stack if frame.startswith(program)}
    assert frames
    for frame in frames:
        n = int(frame.rsplit(" in ", 1)[0].rsplit(":", 1)[1])
        assert body <= n <= len(lines) and _source(frame) and not _source(frame).startswith("#"), frame


def test_the_sl402_log_races_the_refill_against_the_queued_copy():
    (finding,) = {f.code: f for f in check(log.read(log_path("pair_SL402_bad")))}.values()
    assert finding.code == "SL402"
    sides = {_source(finding.current.stack[0]), _source(finding.earlier.stack[0])}
    assert sides == {"staging.copy_(frames[k])", "received[k].copy_(staging, non_blocking=True)"}
