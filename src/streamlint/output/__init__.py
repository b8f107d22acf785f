"""Output formats. Each module renders a sorted list of diagnostics to a text stream."""

from __future__ import annotations

from typing import Callable, Sequence, TextIO

from streamlint.diagnostics import Diagnostic

FORMATS = ("text", "json", "sarif", "github")

# (filename, notebook cell or None) -> the source lines (None when they cannot be
# shown), for --show-source.
SourceLoader = Callable[[str, "int | None"], "list[str] | None"]


def write(
    fmt: str,
    diagnostics: Sequence[Diagnostic],
    out: TextIO,
    *,
    show_source: bool = False,
    statistics: bool = False,
    quiet: bool = False,
    source: SourceLoader | None = None,
    unsafe_fixes: bool = False,
    color: bool = False,
) -> None:
    """Render `diagnostics` (already sorted) in format `fmt`; `unsafe_fixes` counts
    unsafe fixes as applicable in the text format's `[*]` marks and hint; `color`
    paints the text format with ANSI styles."""
    from streamlint.output import github, json, sarif, text

    if statistics:
        # Like ruff: --statistics replaces the listing; JSON keeps being JSON.
        if fmt == "json":
            json.write_statistics(diagnostics, out)
        else:
            text.write_statistics(diagnostics, out, quiet=quiet)
    elif fmt == "text":
        text.write(diagnostics, out, show_source=show_source, quiet=quiet, source=source,
                   unsafe_fixes=unsafe_fixes, color=color)
    elif fmt == "json":
        json.write(diagnostics, out)
    elif fmt == "sarif":
        sarif.write(diagnostics, out)
    elif fmt == "github":
        github.write(diagnostics, out)
    else:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
