"""What `check` prints about the findings it reports, in the chosen format."""

from __future__ import annotations

import argparse
import os
from typing import Sequence, TextIO

from streamlint import output
from streamlint.commands.sources import SourceLoader
from streamlint.diagnostics import Diagnostic
from streamlint.fixes.runner import describe


def write(
    args: argparse.Namespace, diagnostics: Sequence[Diagnostic], out: TextIO, source: SourceLoader
) -> None:
    output.write(
        args.format,
        diagnostics,
        out,
        show_source=args.show_source,
        statistics=args.statistics,
        quiet=args.quiet,
        source=source,
        unsafe_fixes=args.unsafe_fixes,
        color=use_color(out),
    )


def use_color(out: TextIO) -> bool:
    """As ruff: colour on a terminal; `NO_COLOR` turns it off, `FORCE_COLOR` (or
    `CLICOLOR_FORCE`) on, whatever the output is."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR") or os.environ.get("CLICOLOR_FORCE"):
        return True
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


def show_available_fixes(args: argparse.Namespace, diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    available = [d for d in diagnostics if d.fix is not None and d.fix.applies(args.unsafe_fixes)]
    describe(available, out, verb="Can fix")


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
