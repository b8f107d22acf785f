"""JSON output with ruff's field names, so tools that read ruff's JSON read ours.

`cell` is the notebook cell (ruff's numbering) whose rows `location` counts, or null.
`help` (not in ruff's JSON, where only the fix has a title) is the finding's short
advice, the `help:` line of the full format, or null."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Sequence, TextIO

from streamlint.diagnostics import Diagnostic
from streamlint.output.options import Options
from streamlint.selection import SOURCE_ERROR_NAME


def to_dict(diag: Diagnostic) -> dict[str, Any]:
    return {
        "cell": diag.cell,
        "code": diag.code,
        "message": diag.message,
        "help": diag.help,
        "filename": diag.filename,
        "location": {"row": diag.row, "column": diag.column},
        "end_location": {"row": diag.end_row, "column": diag.end_column},
        "fix": fix_dict(diag),
        "url": diag.url,
        "noqa_row": diag.noqa_row,
    }


def fix_dict(diag: Diagnostic) -> dict[str, Any] | None:
    """ruff's shape: applicability, message and edits with 1-based locations."""
    if diag.fix is None:
        return None
    return {
        "applicability": diag.fix.applicability.value,
        "message": diag.fix.message,
        "edits": [
            {
                "content": e.content,
                "location": {"row": e.row, "column": e.column},
                "end_location": {"row": e.end_row, "column": e.end_column},
            }
            for e in diag.fix.edits
        ],
    }


def write(diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    json.dump([to_dict(d) for d in diagnostics], out, indent=2, ensure_ascii=False)
    out.write("\n")


def write_statistics(diagnostics: Sequence[Diagnostic], out: TextIO, *, unsafe_fixes: bool = False) -> None:
    """ruff's shape: `fixable` is true when every finding of the rule can be fixed,
    `fixable_count` how many can (with --unsafe-fixes, unsafe fixes count)."""
    counts = Counter(d.code for d in diagnostics)
    fixables = Counter(d.code for d in diagnostics if d.fix is not None and d.fix.applies(unsafe_fixes))
    names = {d.code: d.name for d in diagnostics}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    data = [
        {"code": code, "name": names[code] or SOURCE_ERROR_NAME, "count": count,
         "fixable": fixables[code] == count, "fixable_count": fixables[code]}
        for code, count in rows
    ]  # fmt: skip
    json.dump(data, out, indent=2)
    out.write("\n")


def render(diagnostics: Sequence[Diagnostic], out: TextIO, options: Options) -> None:
    write(diagnostics, out)
