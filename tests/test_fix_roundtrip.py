"""Every fix of every fixture, round trip: applied alone, it removes its finding and adds
none anywhere in the file; all of a file's fixes together reach a fixed point in one
run, with none refused, and the result parses. And `--fix --unsafe-fixes` over a copy
of fixtures/ leaves no finding that was not there before, whatever the selection."""

from __future__ import annotations

import ast
import shutil
from collections import Counter
from pathlib import Path

import pytest
from expected_output import FIXTURES, fixture_files, lint_fixture

from streamlint.engine.lint import has_fix, lint_every, lint_fix
from streamlint.fixes import apply, verify
from streamlint.fixes.verify import Linted
from streamlint.rules import all_rules
from streamlint.settings import Settings

pytestmark = pytest.mark.slow  # every fixture linted once per fix: several seconds

FILES = fixture_files()
CODES = sorted(r.code for r in all_rules())


def _fixes(path: Path, codes=None) -> list:
    return [d for d in lint_fixture(path)
            if d.fix is not None and (codes is None or d.code in codes)]


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(FIXTURES).as_posix() for p in FILES])
def test_each_fix_alone_and_all_together(path: Path):
    if not _fixes(path):
        return
    text = path.read_text(encoding="utf-8")
    before = lint_every(text, str(path), Settings())
    for diag in before.shown:
        if diag.fix is None:
            continue
        chosen, edits = apply.choose([diag], unsafe=True)
        new = apply.apply_edits(text, edits)
        after = lint_every(new, str(path), Settings())
        assert verify.problem(text, new, before, chosen, edits, after) is None
        fixed = Counter(d.code for d in before.every)
        fixed.subtract([diag.code])
        grown = {c: n for c, n in Counter(d.code for d in after.every).items() if n > fixed[c]}
        assert not grown, f"the fix for {diag.code} at {diag.row}:{diag.column} adds {grown}"
    outcome = lint_fix(text, str(path), Settings(), unsafe=True, linted=before)
    assert outcome.refused == [] and outcome.error is None
    assert not has_fix(outcome.remaining, unsafe=True), "no fixed point in one run"
    ast.parse(outcome.source)


@pytest.mark.parametrize("selection", ["ALL", *CODES])
def test_fix_on_a_copy_of_the_fixtures_adds_no_finding(selection: str, tmp_path: Path):
    """As `check --fix --unsafe-fixes --select <selection>` on a copy: each fixed file and
    the files of its package are linted again with every rule."""
    codes = None if selection == "ALL" else {selection}
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, copy, ignore=shutil.ignore_patterns("*.expected"))
    targets = [p for p in FILES if _fixes(p, codes)]
    settings = Settings(select=(selection,))
    for path in targets:
        target = copy / path.relative_to(FIXTURES)
        outcome = lint_fix(path.read_text(encoding="utf-8"), str(target), settings, unsafe=True)
        assert outcome.refused == [], outcome.refused
        target.write_text(outcome.source, encoding="utf-8")
    for path in _with_package(targets):
        target = copy / path.relative_to(FIXTURES)
        after = lint_every(target.read_text(encoding="utf-8"), str(target), Settings())
        assert not _added(lint_fixture(path), after), f"{path.relative_to(FIXTURES)} under --select {selection}"


def _with_package(paths: list[Path]) -> list[Path]:
    """The files, and the other modules of each one's package (a fix in one module can
    change what its importers see); the flat fixture folders hold independent files."""
    out = dict.fromkeys(paths)
    for path in paths:
        if path.parent.parent != FIXTURES:
            out.update(dict.fromkeys(sorted(path.parent.rglob("*.py"))))
    return list(out)


def _added(before, after: Linted) -> dict:
    """Rules that find more in the file after than before (as the issue counted: a
    fix may change a finding's wording, as a stream made in `__init__` is named
    `self._s`, but no rule may find more)."""
    was = Counter(d.code for d in before)
    return {code: n for code, n in Counter(d.code for d in after.every).items() if n > was[code]}
