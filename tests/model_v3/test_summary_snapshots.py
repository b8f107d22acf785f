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


@pytest.mark.parametrize("path", summary_output.fixture_files(), ids=_name)
def test_summary_snapshot_is_current(path: Path) -> None:
    diff = summary_output.stale(path)
    assert diff is None, f"out of date; run python scripts/update_expected.py\n{diff}"


def test_no_summary_without_its_fixture() -> None:
    assert summary_output.orphans() == []
