"""Bad input: each broken file gets exactly one SL000 and the run goes on."""

from __future__ import annotations

import os
import sys

import pytest

from conftest import SL501_SNIPPET, needs_fork, write
from streamlint import isolation, nesting
from streamlint.engine import run as engine_run
from streamlint.config import Settings
from streamlint.engine.lint import lint_text
from streamlint.engine.run import lint_file, lint_paths

S = Settings.default()


def only(result) -> tuple[str, int, int, str]:
    assert len(result.diagnostics) == 1, result.diagnostics
    d = result.diagnostics[0]
    return d.code, d.row, d.column, d.message


def test_non_utf8_file(tmp_path):
    # No GPU word at all: decoding is checked before the prefilter.
    path = write(tmp_path / "latin.py", b"x = 1\ny = '\xe9t\xe9'\n")
    assert only(lint_file(path, S)) == (
        "SL000", 2, 6, "file is not valid UTF-8 (byte 0xe9 at offset 11)"
    )


def test_nul_bytes(tmp_path):
    path = write(tmp_path / "blob.py", b"import torch\nab\x00cd\n")
    result = lint_file(path, S)
    assert only(result) == ("SL000", 2, 3, "file is not text (contains NUL bytes)")
    assert result.analysed is False


def test_unreadable_file(tmp_path, monkeypatch):
    path = write(tmp_path / "secret.py", "import torch\n")

    def deny(_path):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(engine_run, "read_bytes", deny)
    assert only(lint_file(path, S)) == ("SL000", 1, 1, "cannot read file: Permission denied")


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True, reason="root reads all")
def test_unreadable_file_for_real(tmp_path):
    path = write(tmp_path / "secret.py", "import torch\n")
    path.chmod(0)
    assert only(lint_file(path, S))[3] == "cannot read file: Permission denied"


def test_vanished_file(tmp_path):
    from streamlint.discovery import discover

    path = write(tmp_path / "gone.py", "import torch\n")
    files = discover([tmp_path]).files
    path.unlink()
    [result] = engine_run.lint_files(files, jobs=1)
    assert only(result) == ("SL000", 1, 1, "cannot read file: No such file or directory")


def test_directory_or_fifo_named_like_a_file(tmp_path):
    (tmp_path / "pkg.py").mkdir()
    assert only(lint_file(tmp_path / "pkg.py", S))[0] == "SL000"
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.py")
        # Must not block on the FIFO.
        assert only(lint_file(tmp_path / "pipe.py", S))[3] == "cannot read file: not a regular file"


@pytest.mark.usefixtures("fake_engine")
def test_internal_error_becomes_sl000(tmp_path):
    path = write(tmp_path / "boom.py", "import torch.cuda\ncrash!\n")
    assert only(lint_file(path, S)) == ("SL000", 1, 1, "internal error: ValueError: fake crash")


@pytest.mark.usefixtures("fake_engine")
def test_source_error_keeps_its_position(tmp_path):
    path = write(tmp_path / "bad.py", "import torch.cuda\n  syntax_error!\n")
    assert only(lint_file(path, S)) == ("SL000", 2, 3, "SyntaxError: fake")


@pytest.mark.usefixtures("fake_engine")
def test_run_goes_on_after_bad_files(tmp_path):
    write(tmp_path / "a_bad.py", b"\xff\xfe")
    write(tmp_path / "b_binary.py", b"\x00\x01")
    write(tmp_path / "c_crash.py", "import torch.cuda\ncrash!\n")
    write(tmp_path / "d_good.py", "import torch.cuda\nhit(SL101)\n")
    results = lint_paths([tmp_path], jobs=1)
    assert [(os.path.basename(r.path), [d.code for d in r.diagnostics]) for r in results] == [
        ("a_bad.py", ["SL000"]),
        ("b_binary.py", ["SL000"]),
        ("c_crash.py", ["SL000"]),
        ("d_good.py", ["SL101"]),
    ]


@pytest.mark.usefixtures("fake_engine")
def test_checked_files_are_never_written(tmp_path):
    paths = [
        write(tmp_path / "a.py", "import torch.cuda\nhit(SL101)\n"),
        write(tmp_path / "b.py", b"\xff"),
        write(tmp_path / "c.py", "import torch.cuda\nsyntax_error!\n"),
    ]
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in paths]
    lint_paths([tmp_path], jobs=1)
    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in paths] == before


def test_prefilter_skips_files_without_gpu_words(tmp_path):
    path = write(tmp_path / "plain.py", "def f(:\n")  # not even valid Python
    result = lint_file(path, S)
    assert result.analysed is False and result.diagnostics == [] and result.lines == 1


# ---- end to end with the real parser and rules (they need the stream model) ----


def test_syntax_error_reports_parser_position(tmp_path):
    path = write(tmp_path / "syn.py", "import torch.cuda\nx = (1,\ny = 2\n")
    code, row, column, message = only(lint_file(path, S))
    assert code == "SL000" and message.startswith("SyntaxError")
    assert row >= 2 and column >= 1


def test_bom_file_is_fine(tmp_path):
    path = write(tmp_path / "bom.py", b"\xef\xbb\xbf" + SL501_SNIPPET.encode())
    assert [(d.code, d.row, d.column) for d in lint_file(path, S).diagnostics] == [("SL501", 3, 9)]


def test_crlf_file_is_fine(tmp_path):
    path = write(tmp_path / "crlf.py", SL501_SNIPPET.replace("\n", "\r\n").encode())
    assert [(d.code, d.row, d.column) for d in lint_file(path, S).diagnostics] == [("SL501", 3, 9)]


def test_deeply_nested_brackets_are_sl000_not_a_crash():
    # libcst's native parser segfaults on this; CPython refuses more than 200 levels.
    text = "import torch\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    [diag] = lint_text(text, "deep.py", S)
    assert (diag.code, diag.row, diag.column) == ("SL000", 2, 205)
    assert diag.message == "SyntaxError: too many nested parentheses"
    calls = "import torch\nx = " + "f(" * 3000 + "1" + ")" * 3000 + "\n"
    assert [d.message for d in lint_text(calls, "deep.py", S)] == [diag.message]


def test_long_operator_chain_is_sl000_not_a_crash():
    text = "import torch\ny = 1\nx = " + "-" * 8000 + "1\n"
    [diag] = lint_text(text, "deep.py", S)
    assert (diag.code, diag.row) == ("SL000", 3)
    assert "too deeply nested" in diag.message
    text = "import torch\nx = " + " + ".join(["1"] * 7000) + "\n"
    assert "too deeply nested" in lint_text(text, "deep.py", S)[0].message
    # Brackets inside the chain do not hide it.
    text = "import torch\nx = " + " + ".join(["f(x, y)"] * 7000) + "\n"
    assert "too deeply nested" in lint_text(text, "deep.py", S)[0].message
    text = "import torch\nx = a" + "()" * 7000 + "\n"
    assert "too deeply nested" in lint_text(text, "deep.py", S)[0].message


def test_big_flat_data_table_is_not_refereed(monkeypatch):
    def refuse(_text):
        raise AssertionError("CPython's parser should not be needed here")

    monkeypatch.setattr(nesting.ast, "parse", refuse)
    rows = ",\n".join(["(1, 2.0, 'abc', None, [3, 4])"] * 50000)
    assert nesting.nesting_problem("import torch\nx = [" + rows + "]\n") is None


def test_moderate_nesting_is_analysed_normally():
    text = SL501_SNIPPET + "y = " + "(" * 150 + "1" + ")" * 150 + "\n"
    assert [d.code for d in lint_text(text, "ok.py", S)] == ["SL501"]


def test_brackets_in_strings_and_comments_do_not_count():
    triple = "'" * 3
    text = (
        'import torch\ns = "' + "(" * 300 + '"\n# ' + "[" * 300 + "\n"
        + "t = " + triple + "\n" + "{" * 300 + "\n" + triple + "\n"
        + "u = " + "f'{1}' + " * 300 + "'x'\n"
    )  # fmt: skip
    assert nesting.nesting_problem(text) is None


def test_large_stack_call_propagates_results_and_errors():
    assert isolation.call_with_large_stack(sum, [1, 2]) == 3
    with pytest.raises(KeyError):
        isolation.call_with_large_stack({}.__getitem__, "k")
    limit = sys.getrecursionlimit()
    lint_text(SL501_SNIPPET, "t.py", S)
    assert sys.getrecursionlimit() == limit


@needs_fork
@pytest.mark.usefixtures("fake_engine")
def test_a_dying_worker_costs_only_its_file(tmp_path):
    for i in range(12):
        write(tmp_path / f"f{i:02}.py", "import torch.cuda\nhit(SL101)\n")
    write(tmp_path / "f05.py", "import torch.cuda\ndie!\n")
    results = lint_paths([tmp_path], jobs=2)
    assert len(results) == 12
    by_name = {os.path.basename(r.path): r for r in results}
    assert only(by_name["f05.py"])[3].startswith("internal error: the checker crashed")
    others = [r for name, r in by_name.items() if name != "f05.py"]
    assert all([d.code for d in r.diagnostics] == ["SL101"] for r in others)
