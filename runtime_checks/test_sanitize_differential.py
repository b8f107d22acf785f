"""The differential check: static SL4 findings beside the sanitizer's executed races."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamlint.runtime.sanitize.checker import Finding
from streamlint.runtime.sanitize.differential import build, compare, markdown, race_rows
from streamlint.runtime.sanitize.memory import Access

DATA = Path(__file__).parent / "data" / "sanitize"
ROOT = Path(__file__).resolve().parents[1]


def race(code: str, now: str, before: str) -> Finding:
    def access(frame: str) -> Access:
        return Access(1, 7, True, 0, "k", (frame,), 0, 8)

    return Finding(code, access(now), access(before), 0, 8)


def test_verdicts_per_code():
    races = [race("SL401", "p.py:10 in run", "p.py:9 in run"), race("SL402", "p.py:12 in run", "q.py:3 in f")]
    row = compare("p.py", [("SL401", 10), ("SL404", 20)], races, "p.py")
    assert row.verdicts == {"SL401": "agree", "SL402": "static miss", "SL404": "candidate false alarm"}
    assert race_rows(races[1], "p.py") == [12]
    assert "SL402 static miss" in markdown([row])
    assert compare("q.py", [], [], "q.py").verdicts == {}


@pytest.mark.slow
def test_committed_table_is_what_the_code_builds():
    # The static column follows the static analysis: when it changes on purpose, regenerate with
    # PYTHONPATH=src python -m streamlint.runtime.sanitize.differential runtime_checks/data/sanitize/logs \
    #     > runtime_checks/data/sanitize/differential.md   (and update the README's summary)
    table = markdown(build(DATA / "logs", ROOT))
    assert table == (DATA / "differential.md").read_text(), "differential.md is stale: regenerate it (see above)"
