"""Output formats: the registry `--format` takes its choices from, and `write`.

Each format is a module of this package with a `render(diagnostics, out, options)`
function; adding a format is adding a module and a line to `_MODULES`. The modules are
imported lazily, on first use, so that a run pays only for the format it prints.
"""

from __future__ import annotations

import importlib
from typing import Callable, Sequence, TextIO

from streamlint.diagnostics import Diagnostic
from streamlint.output.options import Options, SourceLoader

__all__ = ["FORMATS", "Options", "SourceLoader", "renderer", "write"]

# Format name -> the module (under streamlint.output) that renders it.
_MODULES = {
    "text": "text",  # ruff's "concise": one line per finding
    "full": "full",  # the source line, carets, help and the fix diff
    "json": "json",
    "sarif": "sarif",
    "github": "github",  # GitHub Actions annotations
    "gitlab": "gitlab",  # GitLab code quality report
    "junit": "junit",  # JUnit XML
}
FORMATS = tuple(_MODULES)


def renderer(fmt: str) -> Callable[[Sequence[Diagnostic], TextIO, Options], None]:
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
) -> None:
    """Render `diagnostics` (already sorted) in format `fmt`; `unsafe_fixes` counts
    unsafe fixes as applicable in the `[*]` marks and the fix hint; `color` paints
    the text formats with ANSI styles."""
    render = renderer(fmt)
    if statistics:
        # lazy: the statistics writers live with the text and JSON formats
        from streamlint.output import json, text

        # Like ruff: --statistics replaces the listing; JSON keeps being JSON.
        if fmt == "json":
            json.write_statistics(diagnostics, out)
        else:
            text.write_statistics(diagnostics, out, quiet=quiet)
        return
    options = Options(show_source=show_source, quiet=quiet, source=source, unsafe_fixes=unsafe_fixes, color=color)
    render(diagnostics, out, options)
