"""Output formats: the registry `--format` takes its choices from, and `write`.

Each format is a module of this package with a `render(diagnostics, out, options)`
function; adding a format is adding a module and a line to `_MODULES`. The modules are
imported lazily, on first use, so that a run pays only for the format it prints.
"""

from __future__ import annotations

import importlib
from typing import Callable, Sequence, TextIO

from streamlint.diagnostics import Diagnostic
from streamlint.output.options import FixList, Options, SourceLoader

__all__ = [
    "ALIASES", "DEFAULT_FORMAT", "FORMATS", "FixList", "Options", "SourceLoader", "canonical", "renderer", "write",
]

# Format name -> the module (under streamlint.output) that renders it.
_MODULES = {
    "full": "full",  # the default, as in ruff: the source line, carets, help and the fix diff
    "concise": "text",  # one line per finding
    "json": "json",
    "sarif": "sarif",
    "github": "github",  # GitHub Actions annotations
    "gitlab": "gitlab",  # GitLab code quality report
    "junit": "junit",  # JUnit XML
}
FORMATS = tuple(_MODULES)
DEFAULT_FORMAT = "full"
# Older names that keep working: "text" was the one-line format before it took ruff's name.
ALIASES = {"text": "concise"}


def canonical(fmt: str) -> str:
    """The format an alias stands for; any other name unchanged (the caller refuses it)."""
    return ALIASES.get(fmt, fmt)


def renderer(fmt: str) -> Callable[[Sequence[Diagnostic], TextIO, Options], None]:
    fmt = canonical(fmt)
    if fmt not in _MODULES:
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
    # lazy: load only the chosen format (sarif pulls in every rule's docs)
    return importlib.import_module(f"streamlint.output.{_MODULES[fmt]}").render


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
    fixed: int = 0,
    fix_list: FixList | None = None,
) -> None:
    """Render `diagnostics` (already sorted) in format `fmt`; `unsafe_fixes` counts
    unsafe fixes as applicable in the `[*]` marks and the fix hint; `color` paints
    the text formats with ANSI styles; `fixed` (with --fix) is how many findings the
    run fixed, for the summary line; `fix_list` (--show-fixes), listed by the human
    formats before that line (as ruff; not with --statistics, nor in the formats read
    by tools)."""
    render = renderer(fmt)
    options = Options(show_source=show_source, quiet=quiet, source=source, unsafe_fixes=unsafe_fixes,
                      color=color, fixed=fixed, fix_list=fix_list)  # fmt: skip
    if statistics:
        # lazy: the statistics writers live with the text and JSON formats
        from streamlint.output import json, text

        # Like ruff: --statistics replaces the listing; JSON keeps being JSON.
        if canonical(fmt) == "json":
            json.write_statistics(diagnostics, out, unsafe_fixes=unsafe_fixes)
        else:
            text.write_statistics(diagnostics, out, options)
        return
    render(diagnostics, out, options)
