"""Human-readable output: `path:row:col: CODE message`, then a summary line.

A notebook's finding reads `nb.ipynb:cell 3:row:col: CODE message`, as in ruff."""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence, TextIO

from streamlint.diagnostics import Diagnostic
from streamlint.output.excerpt import excerpt
from streamlint.output.options import Options
from streamlint.selection import SOURCE_ERROR_NAME


def write(
    diagnostics: Sequence[Diagnostic],
    out: TextIO,
    *,
    show_source: bool = False,
    quiet: bool = False,
    source: Callable[[str, "int | None"], "list[str] | None"] | None = None,
    unsafe_fixes: bool = False,
    color: bool = False,
) -> None:
    paint = _paint if color else _plain
    for diag in diagnostics:
        mark = paint(" [*]", _CYAN) if diag.fix is not None and diag.fix.applies(unsafe_fixes) else ""
        out.write(f"{paint(location(diag), _BOLD)}: {paint(diag.code, _BOLD_RED)}{mark} {diag.message}\n")
        if show_source and source is not None:
            out.write(excerpt(diag, source(diag.filename, diag.cell)))
    if not quiet:
        out.write(summary(len(diagnostics)) + "\n")
        hint = fix_hint(diagnostics, unsafe_fixes)
        if hint:
            out.write(hint + "\n")


# ANSI styles, as ruff colours a finding: its location bold, its code bold red.
_BOLD, _BOLD_RED, _CYAN = "1", "1;31", "36"


def _paint(text: str, style: str) -> str:
    return f"\x1b[{style}m{text}\x1b[0m"


def _plain(text: str, style: str) -> str:
    return text


def fix_hint(diagnostics: Sequence[Diagnostic], unsafe_fixes: bool = False) -> str:
    """ruff's line about what `--fix` and `--unsafe-fixes` would do. With
    `--unsafe-fixes` given, unsafe fixes count as fixable and none is hidden."""
    safe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applies(unsafe_fixes))
    unsafe = sum(1 for d in diagnostics if d.fix is not None) - safe
    hidden = f"{unsafe} hidden fix{'es' if unsafe != 1 else ''} can be enabled with the `--unsafe-fixes` option"
    if safe:
        line = f"[*] {safe} fixable with the `--fix` option"
        return f"{line} ({hidden})." if unsafe else f"{line}."
    return f"No fixes available ({hidden})." if unsafe else ""


def location(diag: Diagnostic) -> str:
    cell = f"cell {diag.cell}:" if diag.cell is not None else ""
    return f"{diag.filename}:{cell}{diag.row}:{diag.column}"


def summary(count: int) -> str:
    if count == 0:
        return "All checks passed!"
    return f"Found {count} finding{'s' if count != 1 else ''}."


def write_statistics(
    diagnostics: Sequence[Diagnostic], out: TextIO, *, quiet: bool = False
) -> None:
    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    width = max((len(str(n)) for n in counts.values()), default=1)
    for code, count in rows:
        out.write(f"{count:>{width}}  {code}  {names[code] or SOURCE_ERROR_NAME}\n")
    if not quiet:
        out.write(summary(len(diagnostics)) + "\n")


def render(diagnostics: Sequence[Diagnostic], out: TextIO, options: Options) -> None:
    write(diagnostics, out, show_source=options.show_source, quiet=options.quiet,
          source=options.source, unsafe_fixes=options.unsafe_fixes, color=options.color)
