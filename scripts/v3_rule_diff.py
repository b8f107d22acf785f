"""Compare the rules' full output (message, help, fix) with the pinned `.expected` snapshots,
restricted to some codes: per fixture, the pinned findings the rules no longer produce (split
into those v3 places no hazard on: a model gap, and those it does: a rule's loss), the findings
whose text differs (wording or fix), and the extra ones.

    python scripts/v3_rule_diff.py [--codes SL401,SL402] [-q] [FIXTURE_DIR_OR_FILE ...]

A development measure while the rules move to the v3 model, not a test.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "scripts"))

from streamlint.config import Settings  # noqa: E402
from streamlint.engine.lint import lint_text  # noqa: E402
from streamlint.output import full  # noqa: E402
from streamlint.rules import all_rules  # noqa: E402  (the staged v3 rules)
from streamlint.source import split_lines  # noqa: E402

HEAD = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+):(?P<col>\d+): (?P<code>SL\d{3})\b")


def blocks(text: str, codes: set[str]) -> dict[tuple[int, str], list[str]]:
    """(line, code) -> the rendered findings there (one text per finding)."""
    found: dict[tuple[int, str], list[str]] = {}
    current: list[str] = []
    key = None

    def flush() -> None:
        if key is not None and key[1] in codes:
            found.setdefault(key, []).append("\n".join(current).rstrip() + "\n")

    for line in text.splitlines():
        m = HEAD.match(line)
        if m:
            flush()
            key, current = (int(m["line"]), m["code"]), [line]
        elif key is not None:
            current.append(line)
    flush()
    return found


def produced(fixture: Path, codes: set[str]) -> str:
    text = fixture.read_text(encoding="utf-8")
    rules = [r for r in all_rules() if r.code in codes]
    name = fixture.relative_to(ROOT).as_posix()
    lines = split_lines(text)
    out = []
    for diag in lint_text(text, str(fixture), Settings.default(), rules=rules):
        out.append("\n" + full.render_finding(dataclasses.replace(diag, filename=name), lines))
    return "".join(out).replace(str(ROOT) + "/", "")


def hazard_lines(fixture: Path) -> set[tuple[int, str]]:
    """(line, code) of each problem v3 reports in the fixture (its hazard readings)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from streamlint.model.file_model import analyze_file
    from streamlint.model.readings.hazards import readings
    from streamlint.rules._hazard_words import KIND_CODES

    try:
        module = cst.parse_module(fixture.read_text(encoding="utf-8"))
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        model = analyze_file(module, str(fixture))
    except Exception:  # a development measure
        return set()
    return {(positions[r.node].start.line, KIND_CODES[r.kind]) for r in readings(model) if r.node in positions}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "fixtures")])
    parser.add_argument("--codes", default="SL401,SL402,SL403,SL404")
    parser.add_argument("-q", action="store_true", help="totals and one line per fixture, no diffs")
    args = parser.parse_args(argv)
    codes = set(args.codes.split(","))
    fixtures: list[Path] = []
    for given in args.paths:
        p = Path(given).resolve()
        fixtures.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    totals: Counter = Counter()
    for fixture in fixtures:
        expected = fixture.with_suffix(".expected")
        pinned_text = expected.read_text(encoding="utf-8") if expected.exists() else ""
        pinned = blocks(pinned_text, codes)
        try:
            got = blocks(produced(fixture, codes), codes)
        except Exception as err:  # a development measure: count and go on
            totals["crashed"] += 1
            print(f"{fixture.relative_to(ROOT)}: crashed: {type(err).__name__}: {err}")
            continue
        if not pinned and not got:
            continue
        lines = hazard_lines(fixture) if set(pinned) - set(got) else set()
        report = []
        for key in sorted(set(pinned) | set(got)):
            want, have = pinned.get(key, []), got.get(key, [])
            totals["pinned"] += len(want)
            if not have:
                gap = key not in lines
                totals["missing (model gap)" if gap else "missing (rule)"] += len(want)
                why = "model gap" if gap else "v3 has this code's hazard on the line: rule"
                report.append(f"  {key[1]} line {key[0]}: missing ({why})")
                continue
            if not want:
                totals["extra"] += len(have)
                report.append(f"  {key[1]} line {key[0]}: extra")
                if not args.q:
                    report.extend("    " + t for t in "".join(have).splitlines())
                continue
            if want == have:
                totals["same"] += len(want)
                continue
            totals["differs"] += max(len(want), len(have))
            report.append(f"  {key[1]} line {key[0]}: differs")
            if not args.q:
                diff = difflib.unified_diff("".join(want).splitlines(), "".join(have).splitlines(), "pinned",
                                            "produced", lineterm="", n=0)
                report.extend("    " + t for t in diff)
        if report:
            print(f"{fixture.relative_to(ROOT)}:")
            print("\n".join(report))
    print(f"codes {','.join(sorted(codes))}: {totals['pinned']} pinned findings; {totals['same']} the same; "
          f"{totals['differs']} differ; {totals['missing (model gap)']} missing (model gap); "
          f"{totals['missing (rule)']} missing (v3 has that hazard: the rule drops it); {totals['extra']} extra; "
          f"{totals['crashed']} crashed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
