"""GitHub Actions workflow commands: one `::error ...::` line per finding.

Escaping follows GitHub's rules for workflow commands: in the message `%`, CR and LF
are percent-encoded; in properties `:` and `,` are too.
"""

from __future__ import annotations

from typing import Sequence, TextIO

from streamlint.diagnostics import Diagnostic


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def format_line(diag: Diagnostic) -> str:
    props = {
        "title": f"streamlint ({diag.code})",
        "file": diag.filename,
        "line": diag.row,
        "col": diag.column,
        "endLine": diag.end_row,
        "endColumn": diag.end_column,
    }
    rendered = ",".join(f"{key}={escape_property(str(value))}" for key, value in props.items())
    return f"::error {rendered}::{escape_data(f'{diag.code} {diag.message}')}"


def write(diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    for diag in diagnostics:
        out.write(format_line(diag) + "\n")
