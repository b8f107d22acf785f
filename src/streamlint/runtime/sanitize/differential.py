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


def static_findings(path: Path, cwd: Path) -> list[tuple[str, int]]:
    """(code, row) of the static analysis's SL4 findings on one file."""
    done = subprocess.run([sys.executable, "-m", "streamlint", "check", "--format", "json", "--select", "SL4",
                           "--exit-zero", "-q", str(path)], cwd=cwd, capture_output=True, text=True)  # fmt: skip
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise RuntimeError(f"streamlint check {path} failed: {done.stderr[-500:]}")
    return sorted({(f["code"], f["location"]["row"]) for f in json.loads(done.stdout) if f["code"] in HAZARD_CODES})


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
    lines = ["| program | static SL4 (code:row) | sanitizer races (code: rows in both stacks) | verdict |",
             "| --- | --- | --- | --- |"]  # fmt: skip
    for r in rows:
        static = ", ".join(f"{c}:{n}" for c, n in r.static) or "none"
        races = ", ".join(f"{c}: {'/'.join(map(str, rows)) or '?'}" for c, rows in r.races) or "none"
        verdict = ", ".join(f"{c} {v}" for c, v in r.verdicts.items()) or "agree: both silent"
        lines.append(f"| {r.program} | {static} | {races} | {verdict} |")
    return "\n".join(lines) + "\n"
