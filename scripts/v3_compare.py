"""Compare the v3 model's cross-stream hazards with the pinned SL401-SL404 findings of the
fixtures (the `.expected` snapshots of the old model): how many pinned findings the new
model places on the same line, and how many hazards it reports where none is pinned.

    python scripts/v3_compare.py [-v] [FIXTURE_DIR ...]

A development measure while the new model is built beside the old one, not a test.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from streamlint.model.file_model import analyze_file

ROOT = Path(__file__).resolve().parent.parent
FINDING = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+):\d+: (?P<code>SL40[1-4])\b", re.M)


def pinned_lines(fixture: Path) -> set[tuple[int, str]]:
    expected = fixture.with_suffix(".expected")
    if not expected.exists():
        return set()
    return {(int(m["line"]), m["code"]) for m in FINDING.finditer(expected.read_text())}


def model_lines(fixture: Path) -> set[int]:
    source = fixture.read_text()
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return set()
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    result = analyze_file(module, str(fixture))
    lines = set()
    for hazard in result.hazards:
        node = result.node_of(hazard.site)
        if node is not None and node in positions:
            lines.add(positions[node].start.line)
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", default=[str(ROOT / "fixtures" / f"SL40{i}") for i in range(1, 5)])
    parser.add_argument("-v", action="store_true", help="list each fixture's misses and extras")
    args = parser.parse_args(argv)
    totals: Counter = Counter()
    for directory in args.dirs:
        # (packages too: a directory's modules at any depth)
        for fixture in sorted(p for p in Path(directory).resolve().rglob("*.py") if "fixes" not in p.parts):
            pinned = pinned_lines(fixture)
            try:
                found = model_lines(fixture)
            except Exception as err:  # a development measure: count and go on
                totals["crashed"] += 1
                print(f"{fixture}: crashed: {type(err).__name__}: {err}", file=sys.stderr)
                continue
            hit = {line for line, _ in pinned if line in found}
            extra = found - {line for line, _ in pinned}
            totals["pinned"] += len(pinned)
            totals["hit"] += len(hit)
            totals["extra"] += len(extra)
            totals["files"] += 1
            if args.v and (len(hit) < len(pinned) or extra):
                missed = sorted(line for line, _ in pinned if line not in found)
                print(f"{fixture.relative_to(ROOT)}: missed {missed} extra {sorted(extra)}")
    print(f"{totals['files']} fixtures: {totals['hit']}/{totals['pinned']} pinned SL401-SL404 lines found; "
          f"{totals['extra']} lines with a hazard where none is pinned; {totals['crashed']} crashed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
