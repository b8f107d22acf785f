"""Hostile files and trees, with the real checker: each bad file gets one clear SL000 (or
is skipped with a warning), the rest of the run is unaffected, exit codes stay meaningful.

test_bad_input.py has the single-file basics (NUL bytes, non-UTF-8, unreadable, vanished,
FIFOs, deep nesting); this file adds what a real tree can throw at a whole run.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SL501_SNIPPET, write
from streamlint import source
from streamlint.engine import run as engine
from streamlint.config import Settings
from streamlint.engine.run import lint_bytes, lint_paths

S = Settings.default()
SL501_ROW = 3  # the snippet's finding, 3:9

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


def codes_and_rows(result) -> list[tuple[str, int]]:
    return [(d.code, d.row) for d in result.diagnostics]


def python_row_of(text: str, needle: str) -> int:
    """The row CPython gives the assignment whose source contains `needle`."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Assign) and needle in (ast.get_source_segment(text, node) or ""):
            return node.lineno
    raise AssertionError(needle)


# ---- line endings ----


@pytest.mark.parametrize(
    "ends",
    [["\r\n"] * 5, ["\r"] * 5, ["\n", "\r\n", "\r", "\r\n", "\n"], ["\r\n", "\n", "\n", "\r\n", "\n"]],
    ids=["crlf", "lone-cr", "mixed", "crlf-and-lf"],
)
def test_line_endings_give_python_rows_and_honour_noqa(ends):
    text = "".join(line + end for line, end in zip(SL501_SNIPPET.splitlines(), ends))
    assert python_row_of(text, "torch.cuda.Stream()") == SL501_ROW
    result = lint_bytes(text.encode(), "endings.py", S)
    assert codes_and_rows(result) == [("SL501", SL501_ROW)]
    assert result.lines == 5
    # The suppression comment is found on the same row as the finding.
    quiet = text.replace("torch.cuda.Stream()", "torch.cuda.Stream()  # noqa: SL501")
    assert lint_bytes(quiet.encode(), "endings.py", S).diagnostics == []


def test_bom_with_crlf_and_a_bom_only_file():
    data = b"\xef\xbb\xbf" + SL501_SNIPPET.replace("\n", "\r\n").encode()
    assert codes_and_rows(lint_bytes(data, "bom.py", S)) == [("SL501", SL501_ROW)]
    empty = lint_bytes(b"\xef\xbb\xbf", "bom_only.py", S)
    assert (empty.diagnostics, empty.lines) == ([], 0)


def test_form_feed_and_line_separator_do_not_shift_rows():
    # str.splitlines() breaks at these; Python's tokenizer does not.
    text = "x = 1  # \x0c form feed\ny = '\u2028'\n" + SL501_SNIPPET
    result = lint_bytes(text.encode(), "ff.py", S)
    assert codes_and_rows(result) == [("SL501", SL501_ROW + 2)]
    assert source.split_lines(text)[SL501_ROW + 1].strip() == "s = torch.cuda.Stream()"


# ---- binary and badly encoded files ----


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "file is not text (contains NUL bytes)"),
        ("import torch\n".encode("utf-16"), "file is not text (contains NUL bytes)"),
        (b"\x1f\x8b\x08\x08\xde\xad\xbe\xef", "file is not valid UTF-8 (byte 0x8b at offset 1)"),
        # A PEP 263 cookie is not followed: like ruff, streamlint reads UTF-8 only.
        ("# -*- coding: latin-1 -*-\nimport torch  # caf\xe9\n".encode("latin-1"),
         "file is not valid UTF-8 (byte 0xe9 at offset 45)"),
    ],
    ids=["png", "utf-16", "gzip", "latin-1-cookie"],
)  # fmt: skip
def test_binary_and_foreign_encodings_are_one_sl000(data, message):
    result = lint_bytes(data, "blob.py", S)
    assert [(d.code, d.message) for d in result.diagnostics] == [("SL000", message)]
    assert result.analysed is False


# ---- syntax errors get CPython's message and position ----


@pytest.mark.parametrize(
    "text, row, kind",
    [
        ("import torch.cuda\nfor i in x:\n    a = 1\n\tb = 2\n", 4, "TabError"),
        ("import torch.cuda\nx = '''never closed\n", 2, "SyntaxError"),
        ("import torch.cuda\nx = 1\x0b\n", 2, "SyntaxError"),
        ("import torch.cuda\nif x:\npass\n", 3, "IndentationError"),
    ],
    ids=["tabs", "unterminated", "control-char", "indent"],
)
def test_syntax_errors_point_where_python_does(text, row, kind):
    [diag] = lint_bytes(text.encode(), "bad.py", S).diagnostics
    assert (diag.code, diag.row) == ("SL000", row)
    assert diag.message.startswith(f"{kind}: ")


# ---- size ----


@pytest.mark.slow
def test_a_200000_line_file():
    # Mostly blank lines and comments (to keep the test quick) with a statement every
    # hundred lines and a finding on the very last rows.
    block = "".join("\n" if i % 2 else "# filler\n" for i in range(99)) + "y = torch.ones(4)\n"
    text = block * 1999 + "\n" * (200000 - 1999 * 100 - 5) + SL501_SNIPPET
    assert text.count("\n") == 200000
    # The test is about size, not speed: the default 30 s bound is the product's, and a
    # loaded machine can miss it; its own bound only ends a hung test.
    result = lint_bytes(text.encode(), "big.py", dataclasses.replace(S, timeout=3600))
    assert result.lines == 200000
    assert codes_and_rows(result) == [("SL501", 200000 - 5 + SL501_ROW)]


# ---- trees ----


@needs_symlinks
def test_symlink_loops_and_dangling_links(tmp_path):
    write(tmp_path / "pkg" / "good.py", SL501_SNIPPET)
    os.symlink("..", tmp_path / "pkg" / "up")  # a directory loop
    os.symlink("self.py", tmp_path / "pkg" / "self.py")  # a file that links to itself
    os.symlink("missing.py", tmp_path / "pkg" / "dangling.py")
    results = {Path(r.path).name: r for r in lint_paths([tmp_path], jobs=1)}
    assert sorted(results) == ["dangling.py", "good.py", "self.py"]  # each file once
    assert codes_and_rows(results["good.py"]) == [("SL501", SL501_ROW)]
    for name in ("self.py", "dangling.py"):
        [diag] = results[name].diagnostics
        assert diag.code == "SL000" and diag.message.startswith("cannot read file: ")


def test_file_deleted_while_the_run_goes_on(tmp_path, monkeypatch):
    for name in ("a.py", "b.py", "c.py"):
        write(tmp_path / name, SL501_SNIPPET)
    read = engine.read_bytes

    def read_then_delete_b(path):
        data = read(path)
        if Path(path).name == "a.py":
            (tmp_path / "b.py").unlink()  # gone after discovery, before its turn
        return data

    monkeypatch.setattr(engine, "read_bytes", read_then_delete_b)
    results = [(Path(r.path).name, r.diagnostics) for r in lint_paths([tmp_path], jobs=1)]
    assert [(name, [d.code for d in diags]) for name, diags in results] == [
        ("a.py", ["SL501"]), ("b.py", ["SL000"]), ("c.py", ["SL501"]),
    ]  # fmt: skip
    assert results[1][1][0].message == "cannot read file: No such file or directory"


# ---- the whole run, end to end ----


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "streamlint", *args],
        cwd=cwd, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_a_hostile_tree_end_to_end(tmp_path):
    write(tmp_path / "good.py", SL501_SNIPPET)
    write(tmp_path / "binary.py", b"\x7fELF\x02\x01\x01\x00\x00\x00")
    write(tmp_path / "latin1.py", b"import torch\nx = '\xe9'\n")
    write(tmp_path / "syntax.py", "import torch.cuda\nx = (1,\n")
    write(tmp_path / "nested.py", "import torch.cuda\nx = " + "[" * 3000 + "]" * 3000 + "\n")
    write(tmp_path / "cr.py", SL501_SNIPPET.replace("\n", "\r"))
    if hasattr(os, "symlink"):
        os.symlink(".", tmp_path / "loop")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.py")
    done = run_cli(".", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    findings = [m.groups() for m in re.finditer(r"^([^:\n]+):\d+:\d+: (SL\d{3}) ", done.stdout, re.M)]
    assert f"Found {len(findings)} errors." in done.stdout
    by_file: dict[str, list[str]] = {}
    for name, code in findings:
        by_file.setdefault(name, []).append(code)
    expected = {
        "good.py": ["SL501"], "cr.py": ["SL501"], "binary.py": ["SL000"],
        "latin1.py": ["SL000"], "syntax.py": ["SL000"], "nested.py": ["SL000"],
    }  # fmt: skip
    if hasattr(os, "mkfifo"):
        expected["fifo.py"] = ["SL000"]
    assert by_file == expected
    # Findings only: exit 1. Nothing but bad files: still 1 (SL000 is a finding).
    assert run_cli("binary.py", "syntax.py", cwd=tmp_path).returncode == 1
    assert run_cli("--exit-zero", ".", cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_deeply_nested_imported_module_does_not_crash_the_run(tmp_path):
    # The checked file is fine; the helper it imports would overflow libcst's native
    # stack (a segfault that took the whole process down). Run in a subprocess so a
    # regression cannot take pytest with it.
    write(tmp_path / "helper.py", "import torch\ndef f(s):\n    return " + "(" * 60000 + "1" + ")" * 60000 + "\n")
    write(tmp_path / "main.py", "from helper import f\n" + SL501_SNIPPET + "        f(s)\n")
    done = run_cli("main.py", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (1, "")
    assert done.stdout.splitlines()[0].startswith(f"main.py:{SL501_ROW + 1}:9: SL501 ")
