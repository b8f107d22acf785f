"""The flagged source line with a caret underline, as ruff draws it (shared by
`--show-source` in the text format and by the full format)."""

from __future__ import annotations

from streamlint.diagnostics import Diagnostic


def excerpt(diag: Diagnostic, lines: list[str] | None, *, label: str = "") -> str:
    """`row | line` and a caret line under the flagged span, framed by empty gutters;
    "" when the line cannot be shown. A span over several rows is underlined to the end
    of its first row. `label` (e.g. the code) follows the carets, as in ruff."""
    if not lines or not 1 <= diag.row <= len(lines):
        return ""
    line = lines[diag.row - 1].rstrip("\r\n")
    start = min(diag.column - 1, len(line))
    end = diag.end_column - 1 if diag.end_row == diag.row else len(line)
    end = max(start + 1, min(end, len(line)))
    gutter = str(diag.row)
    pad = " " * len(gutter)
    # Keep tabs in the indent so the carets line up whatever the tab width.
    indent = "".join(ch if ch == "\t" else " " for ch in line[:start])
    carets = "^" * (end - start) + (f" {label}" if label else "")
    return f"{pad} |\n{gutter} | {line}\n{pad} | {indent}{carets}\n{pad} |\n"
