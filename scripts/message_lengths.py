"""How long the findings' messages are, over every fixture: the figures for keeping
messages short (the fix idiom belongs in `help`, the full format's `help:` line).

    python scripts/message_lengths.py
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import expected_output  # noqa: E402  (found through the path set just above)


def main() -> int:
    files = expected_output.fixture_files()
    by_code: dict[str, list[int]] = defaultdict(list)
    for path in files:
        for diag in expected_output.lint_fixture(path):
            by_code[diag.code].append(len(diag.message))
    lengths = sorted(n for ns in by_code.values() for n in ns)
    if not lengths:
        print("no findings")
        return 1
    p90 = lengths[min(len(lengths) - 1, int(0.9 * len(lengths)))]
    print(f"{len(lengths)} findings in {len(files)} fixture files")
    print(f"message length: min {lengths[0]}, median {statistics.median(lengths):.0f}, "
          f"mean {statistics.mean(lengths):.0f}, p90 {p90}, max {lengths[-1]}")  # fmt: skip
    print(f"over 120 characters: {sum(n > 120 for n in lengths)}, over 200: {sum(n > 200 for n in lengths)}")
    for code in sorted(by_code):
        ns = by_code[code]
        print(f"  {code}: {len(ns):3d} findings, median {statistics.median(ns):4.0f}, max {max(ns)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
