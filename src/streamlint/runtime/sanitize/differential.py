"""The differential check: the static analysis and the sanitizer on the same program.

For each program the static SL4 findings (`streamlint check --format json`, code and row)
are set beside the sanitizer's races from the program's event log (code and the program
lines in both stacks). Per code:

    agree            both report it (rows: static row, race rows)
    static miss      a race executed that the static analysis did not report
    candidate false  the static analysis reports it, the executed path had no such race
      alarm          (a finding on a path that did not run is not judged here)
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .checker import Finding

HAZARD_CODES = ("SL401", "SL402", "SL403", "SL404")


def static_findings(paths: Sequence[str], cwd: Path) -> dict[str, list[tuple[str, int]]]:
    """(code, row) of the static analysis's SL4 findings, per file (one `check` run)."""
    done = subprocess.run([sys.executable, "-m", "streamlint", "check", "--format", "json", "--select", "SL4",
                           "--exit-zero", "-q", *paths], cwd=cwd, capture_output=True, text=True)  # fmt: skip
    if done.returncode != 0 or not done.stdout.strip():
        raise RuntimeError(f"streamlint check failed: {done.stderr[-500:]}")
    found: dict[str, set] = {p: set() for p in paths}
    for f in json.loads(done.stdout):
        if f["code"] in HAZARD_CODES and f["filename"] in found:
            found[f["filename"]].add((f["code"], f["location"]["row"]))
    return {p: sorted(v) for p, v in found.items()}


def race_rows(finding: Finding, filename: str) -> list[int]:
    """The rows of `filename` in both stacks of a race (and its free, for SL404)."""
    rows = []
    for frame in finding.current.stack + finding.earlier.stack + finding.freed_at:
        where = frame.split(" in ")[0]
        file, _, line = where.rpartition(":")
        if file.endswith(filename) and line.isdigit():
            rows.append(int(line))
    return sorted(set(rows))


@dataclass
class Row:
    program: str
    static: list[tuple[str, int]]
    races: list[tuple[str, list[int]]]
    verdicts: dict[str, str] = field(default_factory=dict)


def compare(program: str, static: Sequence[tuple[str, int]], races: Sequence[Finding], filename: str) -> Row:
    row = Row(program, list(static), [(f.code, race_rows(f, filename)) for f in races])
    static_codes = {c for c, _ in static}
    race_codes = {c for c, _ in row.races}
    for code in sorted(static_codes | race_codes):
        if code in static_codes and code in race_codes:
            row.verdicts[code] = "agree"
        elif code in race_codes:
            row.verdicts[code] = "static miss"
        else:
            row.verdicts[code] = "candidate false alarm"
    return row


def markdown(rows: Sequence[Row]) -> str:
    lines = ["| program | static SL4 (code:row) | sanitizer races (code xcount: rows in the stacks) | verdict |",
             "| --- | --- | --- | --- |"]  # fmt: skip
    for r in rows:
        static = ", ".join(f"{c}:{n}" for c, n in r.static) or "none"
        grouped: dict[str, tuple[int, set]] = {}
        for code, lines_of_race in r.races:
            count, seen = grouped.get(code, (0, set()))
            grouped[code] = (count + 1, seen | set(lines_of_race))
        races = ", ".join(f"{c} x{n}: {'/'.join(map(str, sorted(rows))) or '?'}"
                          for c, (n, rows) in sorted(grouped.items())) or "none"
        verdict = ", ".join(f"{c} {v}" for c, v in r.verdicts.items()) or "agree: both silent"
        lines.append(f"| {r.program} | {static} | {races} | {verdict} |")
    return "\n".join(lines) + "\n"


def build(logs: Path, cwd: Path) -> list[Row]:
    """Rows for every recorded log named in `logs/expected.json` (its `program`)."""
    from . import log
    from .checker import check

    expected = json.loads((logs / "expected.json").read_text())
    static = static_findings([e["program"] for e in expected.values()], cwd)
    rows = []
    for name, entry in sorted(expected.items()):
        path = logs / f"{name}.jsonl"
        races = check(log.read(path if path.exists() else logs / f"{name}.jsonl.gz"))
        rows.append(compare(entry["program"], static[entry["program"]], races, entry["program"]))
    return rows


if __name__ == "__main__":  # python -m streamlint.runtime.sanitize.differential LOGS_DIR > table.md
    sys.stdout.write(markdown(build(Path(sys.argv[1]), Path.cwd())))
