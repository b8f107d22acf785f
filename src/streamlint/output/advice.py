"""What the user can do about a finding, for every place that shows findings: the
finding's own help, else its fix's title (as ruff's `help:` line)."""

from __future__ import annotations

from streamlint.diagnostics import Diagnostic


def help_line(diag: Diagnostic) -> str:
    if diag.help:
        return diag.help
    return diag.fix.message if diag.fix is not None else ""


def with_help(message: str, diag: Diagnostic, separator: str = "\n") -> str:
    """`message`, then `help: ...` after `separator` when there is advice."""
    advice = help_line(diag)
    return f"{message}{separator}help: {advice}" if advice else message
