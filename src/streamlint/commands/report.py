"""What `check` prints about the findings it reports, in the chosen format."""

from __future__ import annotations

import argparse
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
    )


def show_available_fixes(args: argparse.Namespace, diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    available = [d for d in diagnostics if d.fix is not None and d.fix.applies(args.unsafe_fixes)]
    describe(available, out, verb="Can fix")


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
