"""Each fixture's full output equals its committed `X.expected` file (see
tests/expected_output.py); regenerate with `python scripts/update_expected.py`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from expected_output import (
    FIXTURES,
    REGENERATE,
    expected_path,
    fixture_files,
    lint_fixture,
    orphans,
    rel,
    render,
    stale,
)

FILES = fixture_files()


def test_fixtures_are_found() -> None:
    assert len(FILES) > 100, f"expected the fixture tree under {FIXTURES}"


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(FIXTURES).as_posix() for p in FILES])
def test_output_matches_expected(path: Path) -> None:
    if not expected_path(path).is_file():
        pytest.fail(f"{rel(path)} has no {rel(expected_path(path))}; run `{REGENERATE}`", pytrace=False)
    diff = stale(path)
    if diff is not None:
        pytest.fail(
            f"the output for {rel(path)} changed; if that is intended, run `{REGENERATE}` "
            f"and review the diff:\n{diff}",
            pytrace=False,
        )


def test_no_expected_file_without_its_fixture() -> None:
    assert not orphans(), f"delete them or run `{REGENERATE}`: {[rel(p) for p in orphans()]}"


def test_one_changed_word_in_a_message_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # The point of the snapshots: rewording any message must fail a test.
    path = next(p for p in FILES if lint_fixture(p) and expected_path(p).is_file())
    original = lint_fixture(path)
    first = original[0]
    reworded = dataclasses.replace(first, message=first.message.replace(" ", " very ", 1))
    monkeypatch.setattr("expected_output.lint_fixture", lambda _: (reworded, *original[1:]))
    assert render(path) != expected_path(path).read_text(encoding="utf-8")
    diff = stale(path)
    assert diff is not None and "very" in diff


def test_snapshots_show_every_part_of_a_finding() -> None:
    # Some committed snapshot shows each part: help, a safe and an unsafe fix diff.
    texts = [expected_path(p).read_text(encoding="utf-8") for p in FILES if expected_path(p).is_file()]
    for part in ("= help: ", "Safe fix: ", "Unsafe fix: ", "@@ -", "^^^", "No findings."):
        assert any(part in t for t in texts), f"no snapshot shows {part!r}"
