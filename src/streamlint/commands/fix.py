"""`check --fix`, `--diff` and `--fix-only`: the engine has linted and fixed each file
in one pass (engine/lint.py `lint_fix`); this writes the fixed files (or prints their
diff, or stdin's fixed text) and reports what remains.

A file is written in one step, and only if it did not change on disk since it was
read. A fix that failed verification is left out and named; the file's other fixes
are applied.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence, TextIO

from streamlint.commands import baseline, report, sources
from streamlint.commands.exit import EXIT_CLEAN, EXIT_FINDINGS
from streamlint.diagnostics import Diagnostic, sort_key
from streamlint.engine.lint import FileResult
from streamlint.fixes.runner import unified_diff, write_atomic
from streamlint.notebooks.fix import cell_diff
from streamlint.output import FixList, canonical, text
from streamlint.source import SourceFile, SourceKind

# The formats that end with summary lines (the others are read by tools).
HUMAN_FORMATS = ("full", "concise")


@dataclass
class FixReport:
    diagnostics: list[Diagnostic] = field(default_factory=list)  # what remains
    applied: list[Diagnostic] = field(default_factory=list)  # what was (or would be) fixed
    changed_files: list[str] = field(default_factory=list)
    failed_files: list[str] = field(default_factory=list)
    refused: int = 0  # fixes not applied because they were wrong (each named on stderr)


def run(
    args: argparse.Namespace,
    results: Sequence[FileResult],
    stdin_name: str,
    stdin_text: Optional[str],
    out: TextIO,
    err: TextIO,
) -> int:
    if stdin_text is not None:
        stdin_result = next(r for r in results if r.path == stdin_name)
        fixed = _fix_stdin(args, stdin_result, stdin_text, out, err)
        results = [r for r in results if r is not stdin_result]
        if not results:
            return _exit_code(args, fixed)
    fixed = put_out(results, diff=args.diff, out=out, err=err)
    if args.diff:
        out.flush()
        summary = text.diff_summary(len(fixed.applied), fixed.diagnostics, args.unsafe_fixes)
        if summary and not args.quiet:
            out.write(("\n" if fixed.applied else "") + summary + "\n")  # after the diff, on stdout, as ruff
        return _exit_code(args, fixed)
    if args.baseline is not None:  # the files are fixed: their lines are read anew
        fixed.diagnostics = baseline.apply(args, results, fixed.diagnostics, sources.loader("-", None), err)
    fix_list = FixList(fixed.applied)  # --show-fixes lists them before the summary line, as ruff
    if not args.fix_only:
        # (the summary line says how many were fixed, as ruff's: "Found 3 errors (2 fixed, 1 remaining).")
        report.write(args, fixed.diagnostics, out, sources.loader("-", None), fixed=len(fixed.applied),
                     fix_list=fix_list)  # fmt: skip
    elif canonical(args.format) in HUMAN_FORMATS:
        if args.show_fixes and not args.statistics:
            text.write_fix_list(fix_list, out)
        summary = text.fix_only_summary(len(fixed.applied), fixed.diagnostics, args.unsafe_fixes)
        if summary and not args.quiet:
            out.write(summary + "\n")
    out.flush()
    return _exit_code(args, fixed)


def put_out(results: Sequence[FileResult], *, diff: bool, out: TextIO, err: TextIO) -> FixReport:
    """Write each fixed file (with `diff`, print its diff instead)."""
    fixed = FixReport()
    for result in results:
        outcome = result.fixed
        if outcome is None or result.data is None:
            fixed.diagnostics.extend(result.diagnostics)
            continue
        fixed.diagnostics.extend(outcome.remaining)
        _name_refused(result.path, outcome.refused, err, fixed)
        if outcome.error is not None:
            err.write(f"streamlint: error: {result.path}: {outcome.error}; the file was left unchanged\n")
            fixed.failed_files.append(result.path)
            continue
        if not outcome.changed:
            continue
        source = SourceFile(result.path, result.data)
        if diff:
            out.write(_diff(source, outcome.source))
        else:
            problem = write_atomic(Path(result.path), source.encode(outcome.source), expected=result.data)
            if problem is not None:
                err.write(f"streamlint: error: {result.path}: {problem}; the file was left unchanged\n")
                fixed.failed_files.append(result.path)
                continue
        fixed.applied.extend(outcome.applied)
        fixed.changed_files.append(result.path)
    fixed.diagnostics.sort(key=sort_key)
    return fixed


def _fix_stdin(args: argparse.Namespace, result: FileResult, text: str, out: TextIO, err: TextIO) -> FixReport:
    """Stdin's fixed text (or its diff) goes to stdout."""
    outcome = result.fixed
    fixed = FixReport(diagnostics=list(result.diagnostics))
    if outcome is not None:
        _name_refused(result.path, outcome.refused, err, fixed)
    if outcome is not None and outcome.error:
        err.write(f"streamlint: error: {result.path}: {outcome.error}; the text was left unchanged\n")
        fixed.failed_files.append(result.path)
    new_text = outcome.source if outcome is not None and outcome.changed else text
    if outcome is not None and outcome.changed:
        fixed.applied = list(outcome.applied)
    out.write(_diff(SourceFile(result.path, b""), new_text, text) if args.diff else new_text)
    out.flush()
    return fixed


def _name_refused(path: str, refused: Sequence[str], err: TextIO, fixed: FixReport) -> None:
    """A fix that would have made the code worse is left out, and named; the file's
    other fixes are applied."""
    for why in refused:
        err.write(f"streamlint: warning: {path}: {why}; that fix was not applied\n")
    fixed.refused += len(refused)


def _diff(source: SourceFile, new: str, old: Optional[str] = None) -> str:
    if old is None:
        decoded = source.text()
        old = decoded if isinstance(decoded, str) else ""
    if source.kind is SourceKind.NOTEBOOK:
        return cell_diff(old, new, source.path)
    return unified_diff(old, new, source.path)


def _exit_code(args: argparse.Namespace, fixed: FixReport) -> int:
    if args.exit_zero:
        return EXIT_CLEAN
    if args.diff:  # as in ruff: 1 when anything would change; here also when a fix was refused
        return EXIT_FINDINGS if fixed.applied or fixed.refused or fixed.failed_files else EXIT_CLEAN
    if fixed.failed_files or fixed.refused or (args.exit_non_zero_on_fix and fixed.applied):
        return EXIT_FINDINGS
    if args.fix_only:  # as in ruff: what remains is not reported, nor counted
        return EXIT_CLEAN
    return EXIT_FINDINGS if fixed.diagnostics else EXIT_CLEAN
