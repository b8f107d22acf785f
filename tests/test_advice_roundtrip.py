"""Advice is code the user pastes where it says: for every finding of every positive fixture whose help
gives code and a place ("`s.wait_stream(t)` before line 12", "... after the `with` block that ends at
line 20", "... in `helper()` before line 9 of helpers.py", "`x.record_stream(s)` here"), the code pasted
there makes that finding go away and creates none (a finding may move to the pasted line: the same
problem placed at the new wait). Like the fixes' round trip, but for the help text."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Optional

import libcst as cst
import pytest
from expected_output import FIXTURES, lint_fixture, rel
from libcst.metadata import MetadataWrapper, PositionProvider

from streamlint.config import Settings
from streamlint.diagnostics import Diagnostic
from streamlint.engine.lint import lint_text
from streamlint.rules import all_rules

# The places a help names, each with what it inserts and where.
_PLACES = [
    (re.compile(r"^`([^`]+)` in `[^`]+\(\)` before line (\d+)(?: of (\S+\.py))?$"), "in"),
    (re.compile(r"^`([^`]+)`(?: \(or an event recorded after (?:the|that) copy\))? before line (\d+)$"), "before"),
    (re.compile(r"^`([^`]+)` after line (\d+)$"), "after"),
    (re.compile(r"^`([^`]+)` after the `with` block that ends at line (\d+)$"), "after_with"),
    (re.compile(r"^`([^`]+)` here(?: \(or `[^`]+` before the release\))?$"), "here"),
]
# A help that gives code and says where it goes, in any words: one of the places above must read it.
_PLACED_CODE = re.compile(r"^`[^`]+`.* (before|after) (line|the `with`)|^`[^`]+` here")


def _positive_fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.py")
                  if not p.name.startswith("negative") and "negative" not in p.parent.name)


@pytest.mark.parametrize("path", _positive_fixtures(), ids=rel)
def test_pasted_advice_removes_its_finding_and_adds_none(path: Path, tmp_path: Path) -> None:
    findings = lint_fixture(path)
    text = path.read_text(encoding="utf-8")
    for finding in findings:
        place = _place(finding)
        if place is None:
            placed = finding.help and _PLACED_CODE.match(finding.help)
            assert not placed, f"advice in a form no place reads: {finding.help}"
            continue
        code, line, where, other = place
        checked, checked_text = path, text
        if other is not None:  # the code goes into another module of the package
            copy = tmp_path / path.parent.name
            shutil.copytree(path.parent, copy)
            sibling = copy / other
            sibling.write_text(_pasted(sibling.read_text(encoding="utf-8"), code, line, where)[0], encoding="utf-8")
            checked, shift = copy / path.name, (10**9, 0)
        else:
            checked_text, shift = _pasted(text, code, line, where)
        after = lint_text(checked_text, str(checked), Settings.default(), rules=all_rules())
        where_said = f"{rel(path)}:{finding.row} {finding.code}, help {finding.help!r}"
        if other is None:  # every name the pasted code uses exists where it goes
            assert _undefined(checked_text) <= _undefined(text), f"the advice names what is not there: {where_said}"
        assert not any(a.code == "SL000" for a in after), f"the pasted advice does not parse: {where_said}"
        assert _key(finding, shift) not in {_key(a) for a in after}, f"the finding stays: {where_said}"
        before, now = Counter(f.code for f in findings), Counter(a.code for a in after)
        before[finding.code] -= 1
        kept = {_key(f, shift) for f in findings}
        created = [a for a in after if _key(a) not in kept and now[a.code] > before[a.code]]
        assert not created, f"the pasted advice creates {[(a.row, a.code, a.message) for a in created]}: {where_said}"


def _undefined(text: str) -> int:
    """How many uses of undefined names ruff finds in the text (F821)."""
    found = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F821",
                            "--output-format", "concise", "--stdin-filename", "pasted.py", "-"],
                           input=text, capture_output=True, text=True)
    return sum(1 for line in found.stdout.splitlines() if " F821 " in line)


def _place(finding: Diagnostic) -> Optional[tuple[str, int, str, Optional[str]]]:
    """(code, line, "before" or "after" or "after_with", the other module's file or None)."""
    for pattern, form in _PLACES:
        match = pattern.match(finding.help or "")
        if match is None:
            continue
        if form == "here":
            return match.group(1), finding.row, "before", None
        if form == "in":
            return match.group(1), int(match.group(2)), "before", match.group(3)
        return match.group(1), int(match.group(2)), form, None
    return None


def _pasted(text: str, code: str, line: int, where: str) -> tuple[str, tuple[int, int]]:
    """The text with `code` on a line of its own before (or after) the statement at `line` (for
    "after_with", the `with` statement that ends there), at its indentation; and (the row it went in
    after, the rows it added)."""
    positions = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True).resolve(PositionProvider)
    if where == "after_with":
        spans = [(r.start.line, r.end.line) for n, r in positions.items()
                 if isinstance(n, cst.With) and r.end.line == line]
    else:  # the innermost statement line holding `line` (a compound statement by its header only)
        spans = [(r.start.line, r.end.line) for n, r in positions.items()
                 if isinstance(n, cst.SimpleStatementLine) and r.start.line <= line <= r.end.line]
        spans += [(r.start.line, r.end.line) for n, r in positions.items()
                  if isinstance(n, cst.BaseCompoundStatement) and r.start.line == line]
    assert spans, f"no statement at line {line}"
    first, last = min(spans, key=lambda s: s[0]) if where == "after_with" else max(spans, key=lambda s: s[0])
    lines = text.splitlines(keepends=True)
    indent = re.match(r"[ \t]*", lines[first - 1]).group(0)  # type: ignore[union-attr]
    at = first - 1 if where == "before" else last
    return "".join(lines[:at] + [indent + code + "\n"] + lines[at:]), (at, 1)


def _key(finding: Diagnostic, shift: tuple[int, int] = (10**9, 0)) -> tuple:
    """A finding as the same problem after a paste: its code, its row moved by the added lines, its
    message with the line numbers it cites left out."""
    at, added = shift
    return finding.code, finding.row + added if finding.row > at else finding.row, re.sub(r"\d+", "#", finding.message)
