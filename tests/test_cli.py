"""The command line: sub-commands, options, exit codes, stdin, and `python -m streamlint`."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from conftest import SL102_SNIPPET, SL501_SNIPPET, write
from streamlint import __version__
from streamlint.engine import run as engine
from streamlint import rules as registry
from streamlint.cli import main

FAKE = "import torch.cuda\nhit(SL101)\nhit(SL502)\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A working directory with a clean file and a file with two fake findings."""
    write(tmp_path / "clean.py", "import torch\nx = 1\n")
    write(tmp_path / "pkg" / "bad.py", FAKE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---- exit codes and text output (fake checker: no model needed) ----


@pytest.mark.usefixtures("fake_engine")
class TestCheck:
    def test_findings_exit_1_with_text_lines(self, project, capsys):
        code, out, _ = run(capsys, "check", "--output-format", "concise", ".")
        assert code == 1
        assert out.splitlines() == [
            "pkg/bad.py:2:1: SL101 fake SL101",
            "pkg/bad.py:3:1: SL502 fake SL502",
            "Found 2 errors.",
        ]

    def test_bare_paths_mean_check(self, project, capsys):
        assert run(capsys, "pkg")[:2] == run(capsys, "check", "pkg")[:2]
        # No path at all checks the working directory.
        assert run(capsys)[0] == 1

    def test_clean_exit_0(self, project, capsys):
        code, out, _ = run(capsys, "clean.py")
        assert (code, out) == (0, "All checks passed!\n")

    def test_exit_zero(self, project, capsys):
        code, out, _ = run(capsys, "--exit-zero", ".")
        assert code == 0 and "Found 2 errors." in out

    def test_sl000_counts_as_a_finding(self, project, capsys):
        write(project / "broken.py", b"\xff\xfe")
        code, out, _ = run(capsys, "broken.py", "--select", "SL5")
        assert code == 1 and "broken.py:1:1: SL000 file is not valid UTF-8" in out

    @pytest.mark.parametrize(
        "flags, expected",
        [
            (["--select", "SL1"], ["SL101"]),
            (["--select", "SL5"], ["SL502"]),
            (["--select", "SL101", "--select", "SL502"], ["SL101", "SL502"]),
            (["--select", "SL101,SL502"], ["SL101", "SL502"]),
            (["--ignore", "SL5"], ["SL101"]),
            (["--select", "SL", "--ignore", "SL1"], ["SL502"]),
            (["--select", "SL2", "--extend-select", "SL101"], ["SL101"]),
            (["--select", "ALL", "--ignore", "SL101,SL502"], []),
        ],
    )
    def test_selection_flags(self, project, capsys, flags, expected):
        code, out, _ = run(capsys, "pkg", "-q", "--output-format", "concise", *flags)
        assert [line.split()[1] for line in out.splitlines()] == expected
        assert code == (1 if expected else 0)

    def test_quiet_prints_findings_only(self, project, capsys):
        code, out, _ = run(capsys, "-q", "clean.py")
        assert (code, out) == (0, "")

    def test_statistics(self, project, capsys):
        code, out, _ = run(capsys, "--statistics", ".")
        assert code == 1
        assert out.splitlines() == [
            "1\tSL101\tfake-sl101",
            "1\tSL502\tfake-sl502",
            "Found 2 errors.",
        ]

    def test_show_source(self, project, capsys):
        code, out, _ = run(capsys, "--show-source", "--output-format", "concise", "--select", "SL101", "pkg/bad.py")
        assert code == 1
        assert out.splitlines()[:4] == [
            "pkg/bad.py:2:1: SL101 fake SL101",
            "  |",
            "2 | hit(SL101)",
            "  | ^^^^^^^^^^",
        ]

    @pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
    def test_other_formats(self, project, capsys, fmt):
        code, out, _ = run(capsys, "--format", fmt, ".")
        assert code == 1
        if fmt == "json":
            assert [d["code"] for d in json.loads(out)] == ["SL101", "SL502"]
        elif fmt == "sarif":
            assert len(json.loads(out)["runs"][0]["results"]) == 2
        else:
            assert out.startswith("::error title=streamlint (SL101),file=pkg/bad.py,line=2,col=1,")

    def test_no_cache_and_force_exclude_are_accepted(self, project, capsys):
        write(project / "build" / "gen.py", FAKE)
        assert run(capsys, "--no-cache", "build/gen.py")[0] == 1  # named: checked
        code, out, _ = run(capsys, "--force-exclude", "build/gen.py")
        assert code == 0 and out == "All checks passed!\n"

    def test_config_option(self, project, capsys):
        cfg = write(project / "lint.toml", 'select = ["SL5"]\n')
        code, out, _ = run(capsys, "-q", "--output-format", "concise", "--config", str(cfg), "pkg")
        assert code == 1 and [line.split()[1] for line in out.splitlines()] == ["SL502"]

    def test_stdin(self, project, capsys, monkeypatch):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(FAKE.encode())))
        code, out, _ = run(capsys, "-", "--stdin-filename", "pkg/from_stdin.py", "-q", "--output-format", "concise")
        assert code == 1
        assert out.splitlines() == [
            "pkg/from_stdin.py:2:1: SL101 fake SL101",
            "pkg/from_stdin.py:3:1: SL502 fake SL502",
        ]

    def test_stdin_uses_the_config_of_its_name(self, project, capsys, monkeypatch):
        config = '[tool.streamlint.per-file-ignores]\n"gen/*.py" = ["SL1"]\n'
        write(project / "pyproject.toml", config)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(FAKE.encode())))
        code, out, _ = run(capsys, "--stdin-filename", "gen/x.py", "-q", "--output-format", "concise")
        assert code == 1 and out == "gen/x.py:3:1: SL502 fake SL502\n"

    def test_stdin_without_a_name(self, project, capsys, monkeypatch):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"import torch\n")))
        assert run(capsys, "-") == (0, "All checks passed!\n", "")

    def test_no_python_files_warns(self, tmp_path, capsys):
        write(tmp_path / "notes.txt", "")
        code, out, err = run(capsys, str(tmp_path))
        assert code == 0 and "no Python files found" in err


# ---- usage and internal errors: exit 2 ----


@pytest.mark.parametrize(
    "argv",
    [
        ["--bogus-flag", "."],
        ["--format", "xml", "."],
        ["check", "--select"],
        ["rule"],
        ["rule", "SL101", "--all"],
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    code = main(argv)
    assert code == 2
    assert "usage:" in capsys.readouterr().err


def test_internal_crash_is_a_clear_message_and_exit_2(project, capsys, monkeypatch):
    def explode(*_args, **_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "lint_files", explode)
    code, _, err = run(capsys, ".")
    assert code == 2
    assert "streamlint: internal error: RuntimeError: boom" in err
    assert "Traceback" not in err


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"streamlint {__version__}"


def test_help_exits_0(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "check" in out and "rule" in out


# ---- streamlint rule (real registry) ----


def test_rule_prints_docs(capsys):
    code, out, _ = run(capsys, "rule", "SL101")
    rule = registry.rule_by_code("SL101")
    assert code == 0
    assert out.startswith(f"# {rule.name} (SL101)")
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert heading in out


def test_rule_all_lists_every_rule(capsys):
    code, out, _ = run(capsys, "rule", "--all")
    lines = out.splitlines()
    assert code == 0
    assert len(lines) == 1 + len(registry.all_rules()) >= 10
    assert lines[0].split()[:2] == ["SL000", "source-error"]
    for line, rule in zip(lines[1:], registry.all_rules()):
        assert line.split()[:2] == [rule.code, rule.name] and line.endswith(rule.summary)
    data = json.loads(run(capsys, "rule", "--all", "--format", "json")[1])
    assert [d["code"] for d in data] == ["SL000", *(r.code for r in registry.all_rules())]


def test_unknown_rule_exits_2(capsys):
    code, _, err = run(capsys, "rule", "SL999")
    assert code == 2 and "unknown rule 'SL999'" in err


# ---- end to end with the real rules (needs the stream model) ----


def test_real_findings_text_and_json(tmp_path, monkeypatch, capsys):
    write(tmp_path / "loop.py", SL501_SNIPPET)
    write(tmp_path / "kern.py", SL102_SNIPPET)
    write(tmp_path / "plain.py", "print('hello')\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, ".")
    assert code == 1
    assert "loop.py:3:9: SL501 " in out and "kern.py:10:5: SL102 " in out
    data = json.loads(run(capsys, "--format", "json", "loop.py")[1])
    assert [(d["code"], d["location"], d["noqa_row"]) for d in data] == [
        ("SL501", {"row": 3, "column": 9}, 3)
    ]
    assert run(capsys, "--ignore", "SL5", "loop.py")[0] == 0


@pytest.mark.slow
def test_python_dash_m_streamlint(tmp_path):
    write(tmp_path / "loop.py", SL501_SNIPPET)
    write(tmp_path / "ok.py", "x = 1\n")
    found = subprocess.run(
        [sys.executable, "-m", "streamlint", "check", "--format", "json", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert found.returncode == 1, found.stderr
    assert [d["code"] for d in json.loads(found.stdout)] == ["SL501"]
    clean = subprocess.run(
        [sys.executable, "-m", "streamlint", "ok.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert (clean.returncode, clean.stdout) == (0, "All checks passed!\n")
    usage = subprocess.run(
        [sys.executable, "-m", "streamlint", "--select", "NOPE", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert usage.returncode == 2 and "unknown rule selector 'NOPE'" in usage.stderr
