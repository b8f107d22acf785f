"""Each fixture's `.summary` snapshot (tests/summary_output.py) matches what the model says now."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import summary_output  # noqa: E402  (tests/ is on the path just above)

pytestmark = pytest.mark.slow


def _name(path: Path) -> str:
    return path.relative_to(summary_output.FIXTURES).as_posix()


def walked_more_than_once(analyze_file):
    """`analyze_file`, and the walks it made more than once per function and context (a list
    filled by each call): test_guard_rails.py's rule, checked on the analysis this test makes
    anyway rather than on a second one of every fixture."""
    from streamlint.model.transfer import interpret

    twice: list[dict] = []

    def counted(module, path=""):
        interpret.WALKS.clear()
        model = analyze_file(module, path)
        twice.append({key: n for key, n in interpret.WALKS.items() if n > 1})
        return model

    return counted, twice


@pytest.mark.parametrize("path", summary_output.fixture_files(), ids=_name)
def test_summary_snapshot_is_current(path: Path, monkeypatch) -> None:
    counted, twice = walked_more_than_once(summary_output.analyze_file)
    monkeypatch.setattr(summary_output, "analyze_file", counted)
    diff = summary_output.stale(path)
    assert diff is None, f"out of date; run python scripts/update_expected.py\n{diff}"
    # Each function walked once per context (issue 27's guard rail; the fixtures under fixes/,
    # which have no snapshot, are checked in test_guard_rails.py).
    assert all(not walks for walks in twice), twice


def test_no_summary_without_its_fixture() -> None:
    assert summary_output.orphans() == []
