"""The `.summary` snapshot beside each fixture: what the v3 model writes down for every
function of the file (its summaries, under each calling context), as `streamlint explain FILE`
prints it. Intermediate values as the test surface: a change in what a function is understood
to do shows as a reviewed diff. Regenerated with the `.expected` files by
`python scripts/update_expected.py`; shared by that script and tests/model_v3/test_summary_snapshots.py.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import libcst as cst

from streamlint.commands.explain_text import explain_module
from streamlint.model.file_model import analyze_file

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SUFFIX = ".summary"


def fixture_files() -> list[Path]:
    """The fixtures the model reads (the fix pairs' copies under `fixes/` are outputs, not inputs)."""
    return sorted(p for p in FIXTURES.rglob("*.py") if p.is_file() and "fixes" not in p.parts)


def summary_path(fixture: Path) -> Path:
    return fixture.with_suffix(SUFFIX)


def render(path: Path) -> str:
    rel = path.relative_to(ROOT).as_posix()
    header = f"# `streamlint explain {rel}`; regenerate with `python scripts/update_expected.py`.\n\n"
    try:
        module = cst.parse_module(path.read_text(encoding="utf-8"))
    except cst.ParserSyntaxError:
        return header + "Not parsed.\n"
    return header + (explain_module(analyze_file(module, rel)) or "No functions.\n")


def stale(path: Path) -> str | None:
    actual = render(path)
    target = summary_path(path)
    expected = target.read_text(encoding="utf-8") if target.is_file() else ""
    if actual == expected:
        return None
    rel = target.relative_to(ROOT).as_posix()
    return "".join(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                        f"{rel} (committed)", f"{rel} (actual)"))


def orphans() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob(f"*{SUFFIX}") if not p.with_suffix(".py").is_file())


def update() -> tuple[list[Path], list[Path]]:
    written = []
    for path in fixture_files():
        if stale(path) is not None:
            summary_path(path).write_text(render(path), encoding="utf-8", newline="\n")
            written.append(summary_path(path))
    removed = orphans()
    for path in removed:
        path.unlink()
    return written, removed
