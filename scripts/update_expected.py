"""Regenerate the fixtures' expected-output files (`fixtures/**/X.expected`).

    python scripts/update_expected.py          # rewrite what changed, delete orphans
    python scripts/update_expected.py --check  # exit 1 and list what is out of date

Run it after changing a rule, a message, a fix or the full output format, then review
`git diff fixtures/` as you would a code change. How a file is rendered lives in
tests/expected_output.py, shared with the test that compares.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import expected_output  # noqa: E402  (found through the path set just above)
import summary_output  # noqa: E402  (the model's `.summary` snapshots, regenerated with the `.expected` ones)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if out of date")
    parser.add_argument("--summaries", action="store_true", help="only the model's `.summary` snapshots")
    args = parser.parse_args(argv)
    if args.check:
        bad = [p for p in expected_output.fixture_files() if expected_output.stale(p) is not None]
        bad += expected_output.orphans()
        bad += [p for p in summary_output.fixture_files() if summary_output.stale(p) is not None]
        bad += summary_output.orphans()
        for path in bad:
            print(f"out of date: {expected_output.rel(path)}")
        return 1 if bad else 0
    written, removed = ([], []) if args.summaries else expected_output.update()
    summaries, gone = summary_output.update()
    written, removed = written + summaries, removed + gone
    for path in written:
        print(f"wrote {expected_output.rel(path)}")
    for path in removed:
        print(f"removed {expected_output.rel(path)} (its fixture is gone)")
    print(f"{len(written)} written, {len(removed)} removed, "
          f"{len(expected_output.fixture_files())} fixtures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
