"""The short fuzz run (the long one is benchmarks/fuzz.py): random programs keep every
property in benchmarks/fuzz_programs.py, and those properties do catch broken output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import fuzz_programs as fp  # noqa: E402
from streamlint.diagnostics import Diagnostic  # noqa: E402

pytestmark = pytest.mark.slow  # the fuzzer: many generated programs per test

# Fixed examples (derandomize) so that CI is repeatable; the long run explores.
SHORT = settings(
    max_examples=40, derandomize=True, database=None, deadline=None,
    suppress_health_check=list(HealthCheck),  # slow generation on a slow CI is no failure
)  # fmt: skip


@SHORT
@given(st.deferred(fp.fixture_programs))
def test_mutated_fixtures_keep_every_property(text):
    report = fp.check_program(text)
    assert report.problems == [], report.kind


@settings(SHORT, max_examples=40)
@given(st.deferred(fp.grammar_programs))  # built when drawn: not at collection
def test_grammar_programs_keep_every_property(text):
    report = fp.check_program(text)
    assert report.problems == [], report.kind


@SHORT
@given(st.deferred(fp.byte_programs))
def test_hostile_bytes_keep_every_property(data):
    report = fp.check_bytes(data)
    assert report.problems == [], report.kind


FIX_BEFORE = sorted((ROOT / "fixtures").glob("*/fixes/*_before.py"))


@pytest.mark.parametrize("path", FIX_BEFORE[:6], ids=lambda p: p.parent.parent.name + "/" + p.stem)
def test_fix_properties_run_on_programs_with_fixes(path):
    # The random programs above get fixes only now and then: these always do.
    report = fp.check_program(path.read_text(encoding="utf-8"))
    assert report.problems == [] and report.fixed


@settings(SHORT, max_examples=10)
@given(st.deferred(lambda: st.sampled_from([t for _, t in fp.fixture_sources()])).flatmap(fp.mutate))
def test_mutations_are_valid_python(text):
    module = cst.parse_module(text)  # never raises: every mutation is a tree edit
    assert module.code == text


def test_the_outline_walk_finds_the_blocks_and_names_libcsts_visitors_find():
    # mutate() takes both from one walk over the statements (fuzz_programs._outline): the same
    # nodes in the same order as the visitors, a duplicated statement's block listed twice.
    texts = [t for _, t in fp.fixture_sources()[::60]]
    texts.append("x = 1\nif a:\n    y = 2\n    def f():\n        z: int = 3\n        (w) = v = 4\nelse:\n    pass\n")
    for text in texts:
        module = cst.parse_module(text)
        blocks, names = fp._outline(module)
        assert [id(b) for b in blocks] == [id(b) for b in fp._blocks(module)]
        assert [id(n) for n in names] == [id(n) for n in fp._assigned_names(module)]
    shared = cst.parse_module("for i in r:\n    a = i\n").body[0]
    module = cst.Module(body=[shared, shared])
    assert [id(b) for b in fp._outline(module)[0]] == [id(b) for b in fp._blocks(module)]
    assert len(fp._outline(module)[0]) == 3


def test_wrapping_keeps_statements_comments_and_odd_whitespace():
    body = list(cst.parse_module("a = 1  # one\n\x0c\nb = 2\n\tc = 3\n".replace("\tc", "c")).body)
    names = dict.fromkeys("stxyekn", "s")
    wrapped = fp._wrap(body, template=fp.WRAPPERS[0], names=names, start=0, end=2)
    code = cst.Module(body=wrapped).code
    assert code.startswith("with torch.cuda.stream(s):\n    a = 1  # one\n")
    assert "\x0c" in code and code.endswith("c = 3\n")
    cst.parse_module(code)


# ---- the properties catch what they claim to ----


def fake(diagnostics_for):
    """A lint_text that returns diagnostics_for(text, call number)."""
    calls = []

    def lint_text(text, filename, settings, **kwargs):
        calls.append(text)
        return diagnostics_for(text, len(calls))

    return lint_text


def diag(row=1, column=1, code="SL101", end_row=None, end_column=None, message="m"):
    end_row = row if end_row is None else end_row
    end_column = column + 1 if end_column is None else end_column
    return Diagnostic(fp.FILENAME, row, column, code, message, end_row, end_column, row)


PROGRAM = "import torch\nx = torch.ones(4, device='cuda')\n"


@pytest.mark.parametrize(
    "behaviour, kind",
    [
        (lambda text, n: 1 / 0, "crash"),
        (lambda text, n: [diag(code="SL000", message="internal error: KeyError: 'x'")], "crash"),
        (lambda text, n: [diag(code="SL000", message="analysis timed out after 20 s; ...")], "timeout"),
        (lambda text, n: [diag(code="SL000", message="SyntaxError: made up")], "unexpected-sl000"),
        (lambda text, n: [diag(code="SL999")], "malformed"),
        (lambda text, n: [diag(row=3)], "malformed"),
        (lambda text, n: [diag(row=2, column=40)], "malformed"),
        (lambda text, n: [diag(row=2, end_row=1)], "malformed"),
        (lambda text, n: [diag(row=2), diag(row=1)], "malformed"),
        (lambda text, n: [diag(row=n % 2 + 1)], "nondeterministic"),
        (lambda text, n: [diag(row=2 if "\r" in text else 1)], "nondeterministic"),
    ],
    ids=["raises", "internal-error", "timeout", "sl000", "unknown-code", "row-past-end",
         "column-past-end", "end-before-start", "unsorted", "flaky", "crlf"],
)  # fmt: skip
def test_properties_catch_broken_output(monkeypatch, behaviour, kind):
    monkeypatch.setattr(fp, "lint_text", fake(behaviour))
    report = fp.check_program(PROGRAM, fixes=False)
    assert report.kind == kind and report.problems


def test_fix_properties_catch_broken_fixes(monkeypatch):
    from streamlint.fixes.apply import FixOutcome

    before = FIX_BEFORE[0].read_text(encoding="utf-8")
    monkeypatch.setattr(fp, "fix_source", lambda text, *a, **k: FixOutcome(text + "def (:\n", []))
    assert fp.check_program(before).kind == "fix-reparse"
    monkeypatch.setattr(fp, "fix_source", lambda text, *a, **k: FixOutcome(text.replace("\r\n", "\n") + "#\n", []))
    assert fp.check_program(before).kind == "fix-crlf"


def test_the_long_run_script_runs(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fuzz.py"), "-n", "10", "--jobs", "1", "--batch", "5",
         "--out", str(tmp_path / "failures"), "--json", str(tmp_path / "summary.json")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "programs                         10  (fixtures 7, grammar 2, bytes 1;" in done.stdout
    assert "0 failing programs" in done.stdout
    assert '"crashes": 0' in (tmp_path / "summary.json").read_text()


def test_byte_properties_catch_broken_output(monkeypatch):
    from streamlint.engine.lint import FileResult

    def lint_bytes(diagnostics):
        return lambda data, filename, settings: FileResult(filename, diagnostics, True, 1)

    monkeypatch.setattr(fp, "lint_bytes", lint_bytes([diag(code="SL000", message="x"), diag()]))
    assert fp.check_bytes(b"import torch\n").kind == "malformed"
    monkeypatch.setattr(fp, "lint_bytes", lint_bytes([diag(code="SL000", message="internal error: boom")]))
    assert fp.check_bytes(b"import torch\n").kind == "crash"
