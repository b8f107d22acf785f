"""Human-readable output: `path:row:col: CODE message` (the concise format, and the
first line of each finding in the full one), the summary lines ruff prints under the
findings, and `--statistics`.

A notebook's finding reads `nb.ipynb:cell 3:row:col: CODE message`, as in ruff.
Paths are printed relative to the working directory (output/paths.py)."""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence, TextIO

from streamlint.diagnostics import Diagnostic, sort_key
from streamlint.output.excerpt import excerpt
from streamlint.output.options import FixList, Options
from streamlint.output.paths import display_path
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
    fixed: int = 0,
    fix_list: FixList | None = None,
) -> None:
    for diag in diagnostics:
        out.write(headline(diag, unsafe_fixes=unsafe_fixes, color=color) + "\n")
        if show_source and source is not None:
            out.write(excerpt(diag, source(diag.filename, diag.cell)))
    write_fix_list(fix_list, out)
    if not quiet:
        write_summary(diagnostics, out, unsafe_fixes=unsafe_fixes, fixed=fixed, color=color)


def write_fix_list(fix_list: FixList | None, out: TextIO) -> None:
    """--show-fixes: as ruff, between the findings and the summary line, set off by a
    blank line on each side (and even with --quiet, which drops only the summary); one
    line per fix under "Fixed N errors:". Nothing when there is none (as ruff)."""
    if fix_list is None or not fix_list.fixes:
        return
    fixes = fix_list.fixes
    out.write(f"\n{fix_list.verb} {_plural(len(fixes), 'error')}:\n")
    for diag in sorted(fixes, key=sort_key):
        fix = diag.fix
        out.write(f"  {location(diag)}: {diag.code} [{fix.applicability.value}] {fix.message}\n")
    out.write("\n")


def headline(diag: Diagnostic, *, unsafe_fixes: bool = False, color: bool = False) -> str:
    """`path:row:col: CODE [*] message`, the `[*]` when a fix applies (as ruff)."""
    paint = _paint if color else _plain
    mark = paint(" [*]", _CYAN) if fixable(diag, unsafe_fixes) else ""
    return f"{paint(location(diag), _BOLD)}: {paint(diag.code, _BOLD_RED)}{mark} {diag.message}"


# ANSI styles, as ruff colours a finding: its location bold, its code bold red.
_BOLD, _BOLD_RED, _CYAN = "1", "1;31", "36"


def _paint(text: str, style: str) -> str:
    return f"\x1b[{style}m{text}\x1b[0m"


def _plain(text: str, style: str) -> str:
    return text


def fixable(diag: Diagnostic, unsafe_fixes: bool = False) -> bool:
    return diag.fix is not None and diag.fix.applies(unsafe_fixes)


def _plural(count: int, noun: str, suffix: str = "s") -> str:
    return f"{count} {noun}{'' if count == 1 else suffix}"


def write_summary(
    diagnostics: Sequence[Diagnostic], out: TextIO, *, unsafe_fixes: bool = False, fixed: int = 0,
    color: bool = False,
) -> None:  # fmt: skip
    out.write(summary(len(diagnostics), fixed) + "\n")
    hint = fix_hint(diagnostics, unsafe_fixes, color=color)
    if hint:
        out.write(hint + "\n")


def summary(remaining: int, fixed: int = 0) -> str:
    """ruff's line under the findings: what was found, and with --fix how much of it
    was fixed; nothing about fixing when nothing was."""
    if fixed:
        return f"Found {_plural(fixed + remaining, 'error')} ({fixed} fixed, {remaining} remaining)."
    if remaining:
        return f"Found {_plural(remaining, 'error')}."
    return "All checks passed!"


def fix_hint(diagnostics: Sequence[Diagnostic], unsafe_fixes: bool = False, *, color: bool = False) -> str:
    """ruff's line about what `--fix` (and `--fix --unsafe-fixes`) would do. With
    `--unsafe-fixes` given, unsafe fixes count as fixable and none is hidden."""
    safe = sum(1 for d in diagnostics if fixable(d, unsafe_fixes))
    hidden = sum(1 for d in diagnostics if d.fix is not None) - safe
    unsafe = f"{_plural(hidden, 'unsafe fix', 'es')} available with `--fix --unsafe-fixes`"
    if safe:
        mark = f"[{_paint('*', _CYAN) if color else '*'}]"
        line = f"{mark} {safe} fixable with `--fix`"
        return f"{line} ({unsafe})." if hidden else f"{line}."
    return f"{unsafe}." if hidden else ""


def fix_only_summary(fixed: int, remaining: Sequence[Diagnostic], unsafe_fixes: bool = False) -> str:
    """ruff's line for --fix-only, which lists nothing: what was fixed, and the unsafe
    fixes left for `--unsafe-fixes`; "" when nothing was fixed and nothing is left."""
    return _fixed_line(fixed, remaining, unsafe_fixes, ("Fixed", "No errors fixed"))


def diff_summary(would_fix: int, remaining: Sequence[Diagnostic], unsafe_fixes: bool = False) -> str:
    """ruff's line after --diff, the same with "would"."""
    return _fixed_line(would_fix, remaining, unsafe_fixes, ("Would fix", "No errors would be fixed"))


def _fixed_line(fixed: int, remaining: Sequence[Diagnostic], unsafe_fixes: bool, words: tuple[str, str]) -> str:
    done, none = words
    hidden = sum(1 for d in remaining if d.fix is not None and not d.fix.applies(unsafe_fixes))
    fixes = f"fix{'' if hidden == 1 else 'es'} available with `--unsafe-fixes`"
    if not hidden:
        return f"{done} {_plural(fixed, 'error')}." if fixed else ""
    if fixed:
        return f"{done} {_plural(fixed, 'error')} ({hidden} additional {fixes})."
    return f"{none} ({hidden} {fixes})."


def location(diag: Diagnostic) -> str:
    cell = f"cell {diag.cell}:" if diag.cell is not None else ""
    return f"{display_path(diag.filename)}:{cell}{diag.row}:{diag.column}"


def write_statistics(diagnostics: Sequence[Diagnostic], out: TextIO, options: Options) -> None:
    """ruff's (and flake8's) `--statistics`: count, code, and (when anything is fixable)
    `[*]` all of them fixable, `[-]` some, `[ ]` none, then the rule's name; columns
    separated by tabs. Nothing at all when nothing was found."""
    if not diagnostics:
        return
    counts = Counter(d.code for d in diagnostics)
    fixables = Counter(d.code for d in diagnostics if fixable(d, options.unsafe_fixes))
    names = {d.code: d.name for d in diagnostics}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    count_width = max(len(str(n)) for n in counts.values())
    code_width = max(len(code) for code in counts)
    paint = _paint if options.color else _plain
    any_fixable = bool(fixables)
    for code, count in rows:
        column = ""
        if any_fixable:
            sign = "*" if fixables[code] == count else "-" if fixables[code] else " "
            column = f"[{paint(sign, _CYAN) if sign != ' ' else sign}] "
        number, label = paint(f"{count:>{count_width}}", _BOLD), paint(f"{code:<{code_width}}", _BOLD_RED)
        out.write(f"{number}\t{label}\t{column}{names[code] or SOURCE_ERROR_NAME}\n")
    if not options.quiet:
        write_summary(diagnostics, out, unsafe_fixes=options.unsafe_fixes, fixed=options.fixed, color=options.color)


def render(diagnostics: Sequence[Diagnostic], out: TextIO, options: Options) -> None:
    write(diagnostics, out, show_source=options.show_source, quiet=options.quiet, source=options.source,
          unsafe_fixes=options.unsafe_fixes, color=options.color, fixed=options.fixed, fix_list=options.fix_list)
