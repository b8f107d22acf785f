"""What `check` prints about the findings it reports, in the chosen format."""

from __future__ import annotations

import argparse
import os
from typing import Sequence, TextIO

from streamlint import output
from streamlint.commands.sources import SourceLoader
from streamlint.diagnostics import Diagnostic


def write(
    args: argparse.Namespace, diagnostics: Sequence[Diagnostic], out: TextIO, source: SourceLoader,
    *, fixed: int = 0, fix_list: output.FixList | None = None,
) -> None:  # fmt: skip
    """The findings in the chosen format; `fixed`: how many --fix fixed (summary line);
    `fix_list`: what --show-fixes lists (before that line)."""
    output.write(
        args.format,
        diagnostics,
        out,
        show_source=args.show_source,
        statistics=args.statistics,
        quiet=args.quiet,
        source=source,
        unsafe_fixes=args.unsafe_fixes,
        color=use_color(out, getattr(args, "color", "auto")),
        fixed=fixed,
        fix_list=fix_list if args.show_fixes else None,
    )


def use_color(out: TextIO, mode: str = "auto") -> bool:
    """As ruff: `--color always/never` decide; with auto, a non-empty `NO_COLOR` turns
    colour off, then a non-empty `FORCE_COLOR` or `CLICOLOR_FORCE` on, then `CLICOLOR=0`
    off, and otherwise colour only on a terminal."""
    if mode != "auto":
        return mode == "always"
    env = os.environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR") or env.get("CLICOLOR_FORCE"):
        return True
    if env.get("CLICOLOR") == "0":
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


def available_fixes(args: argparse.Namespace, diagnostics: Sequence[Diagnostic]) -> output.FixList:
    """--show-fixes without --fix: the fixes that --fix would apply."""
    available = [d for d in diagnostics if d.fix is not None and d.fix.applies(args.unsafe_fixes)]
    return output.FixList(available, verb="Can fix")


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
