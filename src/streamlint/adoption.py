"""Adopting streamlint on a code base that has findings today: the `check` options
`--add-noqa` (suppress every current finding in place) and `--baseline FILE`
(report only findings that are not recorded in FILE; `--update-baseline` records)."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Sequence, TextIO

from streamlint import baseline
from streamlint.add_noqa import SKIPPED, add_noqa_to_file
from streamlint.diagnostics import Diagnostic
from streamlint.engine import FileResult

EXIT_CLEAN, EXIT_ERROR = 0, 2


class AdoptionError(Exception):
    """A combination of options that cannot work (exit 2)."""


def check_arguments(args: argparse.Namespace, reads_stdin: bool) -> None:
    if args.update_baseline and args.baseline is None:
        raise AdoptionError("--update-baseline needs --baseline FILE")
    if args.add_noqa and args.baseline is not None:
        raise AdoptionError("--add-noqa and --baseline cannot be used together")
    if args.add_noqa and reads_stdin:
        raise AdoptionError("--add-noqa edits files in place; it cannot edit stdin")
    if args.add_noqa and (args.fix or args.diff):
        raise AdoptionError("--add-noqa cannot be combined with --fix or --diff")
    if args.baseline is None:
        return
    if args.diff or (args.fix and reads_stdin):
        raise AdoptionError("--baseline works with --fix on files, not with --diff or stdin")
    if args.baseline.is_dir():
        raise AdoptionError(f"--baseline {args.baseline} is a directory; name a file")
    if reads_stdin and (args.update_baseline or not args.baseline.exists()):
        # An editor checking one buffer must not write the team's baseline.
        raise AdoptionError(
            f"cannot record the baseline {args.baseline} from stdin: record it by "
            "checking the files (streamlint --baseline FILE PATH ...)"
        )


def add_noqa(
    results: Sequence[FileResult], err: TextIO, *, quiet: bool = False
) -> tuple[list[Diagnostic], int]:
    """Suppress every finding of `results` in its file. Returns the findings that
    remain (SL000, SL900) and EXIT_ERROR if a file could not be written."""
    added = files = 0
    status = EXIT_CLEAN
    for result in results:
        todo = [d for d in result.diagnostics if d.code not in SKIPPED]
        if not todo:
            continue
        try:
            count = add_noqa_to_file(result.path, todo)
        except OSError as error:
            err.write(f"streamlint: error: cannot edit {result.path}: {error.strerror or error}\n")
            status = EXIT_ERROR
            continue
        added += count
        files += 1 if count else 0
    if not quiet:
        err.write(f"streamlint: added {_plural(added, 'noqa code')} in {_plural(files, 'file')}\n")
    left = sorted(d for r in results for d in r.diagnostics if d.code in SKIPPED)
    return left, status


def apply_baseline(
    args: argparse.Namespace,
    results: Sequence[FileResult],
    diagnostics: list[Diagnostic],
    source: baseline.SourceLines,
    err: TextIO,
) -> list[Diagnostic]:
    """The findings of `diagnostics` that are not in the baseline; records or updates
    the baseline first when asked to (or when it does not exist yet)."""
    path: Path = args.baseline
    root = path.absolute().parent
    checked = [r.path for r in results]
    say = (lambda line: None) if args.quiet else (lambda line: err.write(f"streamlint: {line}\n"))
    recording = args.update_baseline or not path.exists()
    if recording:
        old = baseline.load(path) if path.exists() else Counter()
        current = baseline.count_findings(diagnostics, root, source)
        recorded = baseline.updated(old, current, root, checked)
        baseline.save(path, recorded)
        total = _plural(sum(recorded.values()), "finding")
        if old:
            added, dropped = sum((recorded - old).values()), sum((old - recorded).values())
            say(f"updated the baseline {path}: {total} ({added} added, {dropped} dropped)")
        else:
            say(f"recorded {total} in the baseline {path}; only new findings are reported from now on")
    else:
        recorded = baseline.load(path)
    comparison = baseline.compare(diagnostics, recorded, root, source, checked)
    if comparison.matched and not recording:
        say(f"{_plural(comparison.matched, 'finding')} in the baseline not shown")
    if comparison.stale:
        entries = "entry no longer matches" if comparison.stale == 1 else "entries no longer match"
        say(
            f"{comparison.stale} baseline {entries} a finding (fixed or changed); "
            "--update-baseline drops stale entries"
        )
    return comparison.new


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
