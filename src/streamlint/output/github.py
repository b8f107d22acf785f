"""GitHub Actions workflow commands: one `::error ...::` line per finding, its message
the finding and, on a second line, its help (as ruff's); the file relative to the
working directory.

Escaping follows GitHub's rules for workflow commands: in the message `%`, CR and LF
are percent-encoded; in properties `:` and `,` are too.
"""

from __future__ import annotations

from typing import Sequence, TextIO

from streamlint.diagnostics import Diagnostic
from streamlint.output.advice import with_help
from streamlint.output.options import Options
from streamlint.output.paths import display_path


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def format_line(diag: Diagnostic) -> str:
    props = {
        "title": f"streamlint ({diag.code})",
        "file": display_path(diag.filename),
        "line": diag.row,
        "col": diag.column,
        "endLine": diag.end_row,
        "endColumn": diag.end_column,
    }
    message = f"{diag.code} {diag.message}"
    if diag.cell is not None:
        # A cell's rows are not lines of the .ipynb file: annotate the file's first
        # line (as ruff does) and say where in the notebook.
        props.update(line=1, col=1, endLine=1, endColumn=1)
        message = f"cell {diag.cell}:{diag.row}:{diag.column}: {message}"
    message = with_help(message, diag, "\n  ")
    rendered = ",".join(f"{key}={escape_property(str(value))}" for key, value in props.items())
    return f"::error {rendered}::{escape_data(message)}"


def write(diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    for diag in diagnostics:
        out.write(format_line(diag) + "\n")


def render(diagnostics: Sequence[Diagnostic], out: TextIO, options: Options) -> None:
    write(diagnostics, out)
