"""The full format, after ruff's: each finding's concise line, then the flagged source
with carets, a `= help:` line (the finding's help, or else its fix's title) and the fix
as a diff, marked safe or unsafe.

    pipeline.py:12:5: SL201 [*] `tensor.cuda()` in a side stream blocks the host ...
       |
    12 |     x = batch.cuda()
       |         ^^^^^^^^^^^^ SL201
       |
       = help: Pass `non_blocking=True`

    Safe fix
    @@ -12 +12 @@
    -    x = batch.cuda()
    +    x = batch.cuda(non_blocking=True)
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from typing import Sequence, TextIO

from streamlint.diagnostics import Diagnostic
from streamlint.fixes.apply import apply_edits
from streamlint.fixes.model import Applicability
from streamlint.output import text
from streamlint.output.advice import help_line
from streamlint.output.excerpt import excerpt
from streamlint.output.options import FixList, Options, SourceLoader


def write(
    diagnostics: Sequence[Diagnostic],
    out: TextIO,
    *,
    quiet: bool = False,
    source: SourceLoader | None = None,
    unsafe_fixes: bool = False,
    color: bool = False,
    fixed: int = 0,
    fix_list: FixList | None = None,
) -> None:
    for diag in diagnostics:
        lines = source(diag.filename, diag.cell) if source is not None else None
        out.write(render_finding(diag, lines, unsafe_fixes=unsafe_fixes, color=color))
        out.write("\n")
    text.write_fix_list(fix_list, out)
    if not quiet:
        text.write_summary(diagnostics, out, unsafe_fixes=unsafe_fixes, fixed=fixed, color=color)


def render_finding(
    diag: Diagnostic, lines: list[str] | None, *, unsafe_fixes: bool = False, color: bool = False
) -> str:
    """One finding as the full format shows it, ending with a newline."""
    parts = [text.headline(diag, unsafe_fixes=unsafe_fixes, color=color) + "\n"]
    shown = excerpt(diag, lines, label=diag.code)
    parts.append(shown)
    help_text = help_line(diag)
    if help_text:
        pad = " " * (len(str(diag.row)) + 1)
        parts.append(f"{pad}= help: {help_text}\n")
    if diag.fix is not None:
        parts.append("\n" + fix_diff(diag, lines))
    return "".join(parts)


def fix_diff(diag: Diagnostic, lines: list[str] | None) -> str:
    """The fix's header (safe or unsafe, and its title) and its edits as a unified diff
    of the file (or cell) with one line of context; the bare edits when the source
    cannot be read."""
    fix = diag.fix
    assert fix is not None
    kind = "Safe fix" if fix.applicability is Applicability.SAFE else "Unsafe fix"
    header = f"{kind}: {fix.message}\n"
    if lines is None:
        edits = "".join(
            f"  {e.row}:{e.column}-{e.end_row}:{e.end_column} -> {e.content!r}\n" for e in fix.edits
        )
        return header + edits
    window, offset, edits = _window(lines, fix.edits)
    old = "\n".join(window)
    try:
        new = apply_edits(old, edits)
    except ValueError as err:  # overlapping edits: show that rather than fail the listing
        return header + f"  (cannot show the fix: {err})\n"
    before, after = old.split("\n"), new.split("\n")
    at_end = offset + len(window) == len(lines)
    if at_end and before[-1] == after[-1] == "":  # the final line break, not an empty last line
        before, after = before[:-1], after[:-1]
    hunks = difflib.unified_diff(before, after, n=1, lineterm="")
    body = [_shifted(line, offset) for line in hunks if not line.startswith(("---", "+++"))]
    return header + "".join(line + "\n" for line in body)


def _window(lines: list[str], edits) -> tuple[list[str], int, list]:
    """The lines the edits touch with one line of context on each side, how many lines
    come before them, and the edits counted from the window's first line: a diff of the
    window is the diff of the file (with one line of context) at the cost of the window,
    not of the file, for each of a file's many findings."""
    first = min((e.row for e in edits), default=0)
    last = max((e.end_row for e in edits), default=0)
    if first < 1 or last > len(lines):  # (no edit, or one past the end: the whole file)
        return lines, 0, list(edits)
    low, high = max(1, first - 1), min(len(lines), last + 1)
    offset = low - 1
    moved = [dataclasses.replace(e, row=e.row - offset, end_row=e.end_row - offset) for e in edits]
    return lines[offset:high], offset, moved


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@$")


def _shifted(line: str, offset: int) -> str:
    """A hunk header of the window's diff as the file's."""
    match = _HUNK.match(line) if offset else None
    if match is None:
        return line
    old, old_len, new, new_len = match.groups()
    return f"@@ -{int(old) + offset}{old_len or ''} +{int(new) + offset}{new_len or ''} @@"


def render(diagnostics: Sequence[Diagnostic], out: TextIO, options: Options) -> None:
    write(diagnostics, out, quiet=options.quiet, source=options.source, unsafe_fixes=options.unsafe_fixes,
          color=options.color, fixed=options.fixed, fix_list=options.fix_list)
