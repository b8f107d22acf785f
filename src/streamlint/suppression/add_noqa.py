"""`--add-noqa`: write a `# noqa: CODE` comment for every current finding, so that a
code base adopts streamlint today and its findings are fixed one by one later (ruff's
`--add-noqa`).

The comment goes where `suppression` honours it: on the finding's first row, or, when
that row cannot take a trailing comment (it ends inside a multi-line string or with
a backslash), on the last row of the statement. An existing `# noqa: CODES` there
gets the new codes appended. SL000 cannot be suppressed and SL900 (a stale
suppression) should be removed rather than suppressed, so both are skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from streamlint.atomic_write import write_atomic
from streamlint.diagnostics import Diagnostic
from streamlint.selection import SOURCE_ERROR, matches
from streamlint.source import SourceFile, split_lines
from streamlint.suppression import comments
from streamlint.suppression.unused import CODE as UNUSED_SUPPRESSION

SKIPPED = frozenset({SOURCE_ERROR, UNUSED_SUPPRESSION})


def add_noqa(text: str, diagnostics: Iterable[Diagnostic], reason: str = "") -> tuple[str, int]:
    """`text` with `# noqa` comments for `diagnostics` (findings in that text), and the
    number of codes added; `reason` (ruff's `--add-noqa=REASON`) follows the codes."""
    layout = comments.scan(text)
    wanted: dict[int, set[str]] = {}
    for diag in diagnostics:
        if diag.code in SKIPPED or diag.cell is not None:
            continue
        row = _comment_row(diag, layout)
        if row is not None:
            wanted.setdefault(row, set()).add(diag.code)
    lines = split_lines(text, keepends=True)
    added = 0
    after = f" {reason.strip()}" if reason.strip() else ""
    for row, codes in sorted(wanted.items()):
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        noqa = _noqa_with_codes(layout, row)
        if noqa is not None:
            new = sorted(c for c in codes if not any(matches(k.selector, c) for k in noqa.codes))
            if not new:
                continue
            end = noqa.codes_end
            body = f"{body[:end]}, {', '.join(new)}{after}{body[end:]}"
        else:
            new = sorted(codes)
            body = f"{body.rstrip()}  # noqa: {', '.join(new)}{after}"
        lines[row - 1] = body + ending
        added += len(new)
    return "".join(lines), added


def add_noqa_to_file(path: str | Path, diagnostics: Iterable[Diagnostic], reason: str = "") -> int:
    """Add the comments to a .py file in place (keeping its BOM, line endings and
    permissions); the number of codes added. A file that is no longer UTF-8 is left alone."""
    source = SourceFile(str(path), Path(path).read_bytes())
    text = source.text()
    if not isinstance(text, str):
        return 0
    new_text, added = add_noqa(text, diagnostics, reason)
    if added:
        write_atomic(path, source.encode(new_text))
    return added


def _comment_row(diag: Diagnostic, layout: comments.Suppressions) -> int | None:
    if diag.noqa_row in layout.line_ends:
        return diag.noqa_row
    end = layout.statement_end.get(diag.end_row, diag.end_row)
    return end if end in layout.line_ends else None


def _noqa_with_codes(layout: comments.Suppressions, row: int) -> comments.Directive | None:
    for directive in layout.directives:
        lower = directive.malformed is comments.Malformed.LOWER_CASE  # SL900 asks to fix it first
        if directive.row == row and directive.kind == "noqa" and directive.codes and not lower:
            return directive
    return None
