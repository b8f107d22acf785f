"""The per-file time bound: a file that takes too long gets one SL000 and the run goes on."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time

import pytest

from conftest import SL501_SNIPPET, write
from streamlint import deadline
from streamlint.engine import lint as engine
from streamlint.config import DEFAULT_TIMEOUT, ConfigError, Settings, SettingsResolver
from streamlint.engine.lint import lint_text
from streamlint.engine.run import lint_paths

S = Settings.default()
TIMEOUT_MESSAGE = "analysis timed out after {} s; raise `timeout` in [tool.streamlint] or pass --timeout"

# Enough statements for the walk to look at its clock many times.
LONG_PROGRAM = SL501_SNIPPET + "".join(
    f"y{i} = torch.ones(4, device='cuda') + {i}\n" for i in range(2000)
)


def with_timeout(seconds: float) -> Settings:
    return dataclasses.replace(S, timeout=seconds)


def test_default_bound_is_thirty_seconds():
    assert S.timeout == DEFAULT_TIMEOUT == 30.0


@pytest.mark.slow
def test_walk_stops_at_its_deadline():
    [diag] = lint_text(LONG_PROGRAM, "slow.py", with_timeout(1e-6))
    assert (diag.code, diag.row, diag.column) == ("SL000", 1, 1)
    assert diag.message == TIMEOUT_MESSAGE.format("1e-06")
    # The same text within its bound (the next file, in the same thread) is analysed normally.
    assert [d.code for d in lint_text(LONG_PROGRAM, "slow.py", S)] == ["SL501"]


@pytest.mark.slow
def test_a_checker_stuck_outside_the_walk_is_abandoned(monkeypatch):
    # time.sleep stands for native code (the parser) that never looks at the deadline.
    def stuck(source, filename, rules):
        time.sleep(3)
        return []

    monkeypatch.setattr(engine, "load_checker", lambda: (stuck, SyntaxError))
    start = time.monotonic()
    [diag] = lint_text("import torch\n", "stuck.py", with_timeout(0.2))
    elapsed = time.monotonic() - start
    assert diag.code == "SL000" and diag.message == TIMEOUT_MESSAGE.format("0.2")
    assert elapsed < 1.5  # the bound plus its grace (0.2 s), not the 3 s the checker wanted


def test_deadline_is_per_block_and_restored():
    with deadline.bounded(1e-9):
        with deadline.bounded(None):
            for _ in range(deadline.CHECK_EVERY * 2):
                deadline.tick()  # no bound here
        with pytest.raises(deadline.AnalysisTimeout):
            for _ in range(deadline.CHECK_EVERY):
                deadline.tick()
    for _ in range(deadline.CHECK_EVERY * 2):
        deadline.tick()  # outside any block: never raises


def test_timeout_in_config_and_on_the_command_line(tmp_path):
    config = write(tmp_path / "pyproject.toml", "[tool.streamlint]\ntimeout = 2.5\n")
    assert SettingsResolver().for_path(tmp_path).timeout == 2.5
    assert SettingsResolver(timeout=7).for_path(tmp_path).timeout == 7
    assert SettingsResolver(explicit_config=config, timeout=7).for_path(tmp_path).timeout == 7
    for bad in ("0", "-1", '"30"', "true", "nan", "inf"):
        write(tmp_path / "pyproject.toml", f"[tool.streamlint]\ntimeout = {bad}\n")
        with pytest.raises(ConfigError, match="timeout: expected a positive number of seconds"):
            SettingsResolver().for_path(tmp_path)


@pytest.mark.slow
def test_timed_out_file_does_not_stop_the_run(tmp_path):
    # The config's bound reaches the engine; another directory keeps the default.
    write(tmp_path / "a" / "pyproject.toml", "[tool.streamlint]\ntimeout = 0.000001\n")
    write(tmp_path / "a" / "slow.py", LONG_PROGRAM)
    write(tmp_path / "b" / "quick.py", SL501_SNIPPET)
    results = lint_paths([tmp_path], jobs=1)
    assert [[d.code for d in r.diagnostics] for r in results] == [["SL000"], ["SL501"]]
    assert "timed out" in results[0].diagnostics[0].message


def run_cli(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "streamlint", *args],
        cwd=cwd, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.slow
def test_cli_timeout_flag(tmp_path):
    write(tmp_path / "slow.py", LONG_PROGRAM)
    done = run_cli("--timeout", "0.000001", "slow.py", cwd=tmp_path)
    assert done.returncode == 1
    assert f"slow.py:1:1: SL000 {TIMEOUT_MESSAGE.format('1e-06')}" in done.stdout
    done = run_cli("--timeout", "soon", "slow.py", cwd=tmp_path)
    assert done.returncode == 2
    assert "invalid value for --timeout: expected a positive number of seconds, got 'soon'" in done.stderr


# ---- long files stay linear (each of these was quadratic, minutes at this size) ----


@pytest.mark.slow
def test_a_long_module_of_gpu_statements_is_analysed_quickly():
    # SL101 scanned the body once per default-stream operation, and rebinding a name in
    # the module's second (hazard) walk scanned every name: ~70 s here before.
    text = SL501_SNIPPET + "".join(f"y{i} = torch.ones(4, device='cuda') + {i}\n" for i in range(3000))
    start = time.monotonic()
    assert [d.code for d in lint_text(text, "long.py", with_timeout(60))] == ["SL501"]
    assert time.monotonic() - start < 15


def test_fix_builders_of_one_file_share_one_parent_map():
    from streamlint.checker import analyze
    from streamlint.fixes.edits import FixBuilder

    analysis = analyze(SL501_SNIPPET)
    node = analysis.module.body[1]
    first, second = FixBuilder(analysis), FixBuilder(analysis)
    assert first.parent(node) is analysis.module
    assert second.parent(node) is analysis.module
    assert second._parents is first._parents is analysis.parents
