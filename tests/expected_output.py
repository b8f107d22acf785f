"""Expected-output snapshots of the fixtures: what `streamlint check --format full`
prints for each, pinned in a file beside it (ruff's insta snapshots, pylint's
functional `.txt` files, TorchFix's `.txt` files).

Every fixture `fixtures/**/X.py` has `X.expected`: each finding's location, code, full
message, source line with carets, help and fix diff (safe or unsafe). The test
(`tests/test_expected_output.py`) fails with a diff when the output changes, so a
changed word in a message is a reviewed change. After changing the analysis or a
message, regenerate them all and review the diff:

    python scripts/update_expected.py          # rewrite every X.expected
    python scripts/update_expected.py --check  # only say which are out of date

This module is shared by that script and the tests, so both render the same way.
"""

from __future__ import annotations

import dataclasses
import difflib
import io
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from streamlint.config import Settings
from streamlint.diagnostics import Diagnostic
from streamlint.engine.lint import lint_text
from streamlint.source import split_lines as source_lines
from streamlint.output import full
from streamlint.rules import all_rules

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SUFFIX = ".expected"
REGENERATE = "python scripts/update_expected.py"


def fixture_files() -> list[Path]:
    """Every Python fixture, the runtime and fix pairs included."""
    return sorted(p for p in FIXTURES.rglob("*.py") if p.is_file())


def expected_path(fixture: Path) -> Path:
    return fixture.with_suffix(SUFFIX)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


_LINTED: dict[Path, tuple[Diagnostic, ...]] = {}


def lint_fixture(path: Path) -> tuple[Diagnostic, ...]:
    """The fixture's findings with every rule enabled, as a user sees them (selection,
    suppression and SL900 included). Cached: the `# expect:` test and the snapshot
    test read the same run; the first call lints every fixture, on every core
    (one at a time under pytest-xdist, whose workers hold the other cores)."""
    if not _LINTED and not os.environ.get("PYTEST_XDIST_WORKER"):
        # (under pytest-xdist the other cores run other tests: each worker lints the
        # fixtures of its own tests only)
        files = fixture_files()
        workers = min(len(files), os.cpu_count() or 1)
        if workers > 1:
            with ProcessPoolExecutor(workers) as pool:
                _LINTED.update(zip(files, pool.map(_lint_one, files, chunksize=8)))
    if path not in _LINTED:
        _LINTED[path] = _lint_one(path)
    return _LINTED[path]


def _lint_one(path: Path) -> tuple[Diagnostic, ...]:
    text = path.read_text(encoding="utf-8")
    # The real path, so that imports of sibling modules (fixtures/crossmodule) resolve.
    return tuple(lint_text(text, str(path), Settings.default(), rules=all_rules()))


def render(path: Path) -> str:
    """The expected-output text of one fixture."""
    text = path.read_text(encoding="utf-8")
    lines = source_lines(text)
    name = rel(path)
    out = io.StringIO()
    out.write(f"# `streamlint check --format full {name}`; regenerate with `{REGENERATE}`.\n")
    diagnostics = lint_fixture(path)
    if not diagnostics:
        out.write("\nNo findings.\n")
    for diag in diagnostics:
        shown = dataclasses.replace(diag, filename=name)
        out.write("\n" + full.render_finding(shown, lines))
    # No absolute path of this checkout may leak into a committed file.
    return out.getvalue().replace(str(ROOT) + "/", "")


def stale(path: Path) -> str | None:
    """A readable diff (expected -> actual) when the fixture's snapshot is out of date;
    None when it matches."""
    actual = render(path)
    target = expected_path(path)
    expected = target.read_text(encoding="utf-8") if target.is_file() else ""
    if actual == expected:
        return None
    diff = difflib.unified_diff(
        expected.splitlines(keepends=True), actual.splitlines(keepends=True),
        f"{rel(target)} (committed)", f"{rel(target)} (actual)",
    )  # fmt: skip
    return "".join(diff)


def orphans() -> list[Path]:
    """Snapshot files whose fixture is gone."""
    return sorted(p for p in FIXTURES.rglob(f"*{SUFFIX}") if not p.with_suffix(".py").is_file())


def update() -> tuple[list[Path], list[Path]]:
    """Rewrite every out-of-date snapshot and delete orphans; returns (written, removed)."""
    written = []
    for path in fixture_files():
        if stale(path) is not None:
            expected_path(path).write_text(render(path), encoding="utf-8", newline="\n")
            written.append(expected_path(path))
    removed = orphans()
    for path in removed:
        path.unlink()
    return written, removed
