"""`streamlint check`: find the files, lint them (through the cache, in parallel), and
report; `--fix`/`--diff`/`--fix-only` hand the results to `fix`, `--add-noqa` and
`--baseline` to the modules of those names."""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, TextIO

from streamlint import cache as result_cache
from streamlint import output
from streamlint.commands import add_noqa, baseline, fix, report, show, sources, watch
from streamlint.commands.exit import EXIT_CLEAN, EXIT_FINDINGS, UsageError
from streamlint.commands.options import apply_run_config, resolver_from
from streamlint.config import SettingsResolver
from streamlint.diagnostics import sort_key
from streamlint.discovery import discover
from streamlint.engine import lint, run
from streamlint.engine.lint import FileResult, FixRequest
from streamlint.engine.progress import Progress
from streamlint.output.paths import display_path
from streamlint.source import SourceFile, SourceKind, read_bytes, universal_newlines
from streamlint.suppression import comments

# The formats --statistics can be printed in (as ruff: its text, or JSON); the others
# (SARIF, annotations, reports) have no place for counts.
STATISTICS_FORMATS = ("concise", "full", "json")


@dataclass
class Linted:
    results: list[FileResult] = field(default_factory=list)
    stdin_name: str = "-"
    stdin_text: Optional[str] = None  # the text read from stdin, if it was read and decoded


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    paths = list(args.paths) or (["-"] if args.stdin_filename else ["."])
    validate(args, reads_stdin="-" in paths)
    if not args.watch:
        return check_once(args, paths, out, err)
    if "-" in paths:
        raise UsageError("--watch cannot watch stdin; name the files or directories")
    return watch.run(
        lambda: check_once(args, paths, out, err),
        lambda: watch.snapshot(paths, resolver_from(args), force_exclude=args.force_exclude),
        err,
    )


def check_once(args: argparse.Namespace, paths: list[str], out: TextIO, err: TextIO) -> int:
    resolver = resolver_from(args)
    apply_run_config(args, resolver)
    if args.statistics and output.canonical(args.format) not in STATISTICS_FORMATS:
        raise UsageError(f"--statistics cannot be shown in the {args.format} format; use full, concise or json")
    if args.show_settings or args.show_files:
        return show.run(args, paths, resolver, out)
    if args.show_unknowns:
        from streamlint.commands import unknowns  # lazy: only this listing loads the model (and libcst) up front

        return unknowns.run(args, paths, resolver, out)
    # --add-noqa edits comments, not code: a config's `fix = true` does not apply to it.
    fixing = (args.fix and not args.add_noqa) or args.diff or args.fix_only
    linted = lint_paths(args, paths, resolver, err, fix=FixRequest(args.unsafe_fixes) if fixing else None)
    if fixing:
        return fix.run(args, linted.results, linted.stdin_name, linted.stdin_text, out, err)
    diagnostics = sorted((d for r in linted.results for d in r.diagnostics), key=sort_key)
    source = sources.loader(linted.stdin_name, linted.stdin_text)
    status = EXIT_CLEAN
    if args.add_noqa:
        diagnostics, status = add_noqa.run(linted.results, err, quiet=args.quiet, reason=args.add_noqa_reason)
    elif args.baseline is not None:
        diagnostics = baseline.apply(args, linted.results, diagnostics, source, err)
    report.write(args, diagnostics, out, source, fix_list=report.available_fixes(args, diagnostics))
    out.flush()
    if status != EXIT_CLEAN:
        return status
    return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN


def validate(args: argparse.Namespace, reads_stdin: bool) -> None:
    """Refuse combinations of options that cannot work (exit 2)."""
    if args.update_baseline and args.baseline is None:
        raise UsageError("--update-baseline needs --baseline FILE")
    if args.add_noqa and args.baseline is not None:
        raise UsageError("--add-noqa and --baseline cannot be used together")
    if args.add_noqa and reads_stdin:
        raise UsageError("--add-noqa edits files in place; it cannot edit stdin")
    if args.add_noqa and (args.fix or args.diff or args.fix_only):
        raise UsageError("--add-noqa cannot be combined with --fix, --fix-only or --diff")
    if args.baseline is None:
        return
    if args.diff or ((args.fix or args.fix_only) and reads_stdin):
        raise UsageError("--baseline works with --fix on files, not with --diff or stdin")
    if args.baseline.is_dir():
        raise UsageError(f"--baseline {args.baseline} is a directory; name a file")
    if reads_stdin and (args.update_baseline or not args.baseline.exists()):
        # An editor checking one buffer must not write the team's baseline.
        raise UsageError(
            f"cannot record the baseline {args.baseline} from stdin: record it by "
            "checking the files (streamlint --baseline FILE PATH ...)"
        )


def lint_paths(
    args: argparse.Namespace, paths: list[str], resolver: SettingsResolver, err: TextIO, *, fix: Optional[FixRequest]
) -> Linted:
    linted = Linted(stdin_name=args.stdin_filename or "-")
    file_paths = [p for p in paths if p != "-"]
    if len(file_paths) != len(paths):
        _lint_stdin(args, resolver, linted, fix, err)
    if file_paths:
        found = discover(file_paths, resolver, force_exclude=args.force_exclude)
        if not args.quiet:
            for warning in found.warnings:
                err.write(f"streamlint: warning: {warning}\n")
            if not found.files and not found.unreadable and not linted.results:
                err.write("streamlint: warning: no Python files found under the given paths\n")
        cache = None if args.no_cache else _open_cache(args.cache_dir, resolver)
        progress = Progress.for_stream(len(found.files), err, quiet=args.quiet, verbose=args.verbose)
        try:
            linted.results.extend(run.lint_files(found.files, cache=cache, fix=fix, progress=progress))
        finally:
            if progress is not None:
                progress.close()
        linted.results.extend(run.unreadable_results(found))
        if not args.quiet:
            for path, settings in found.files:
                if not settings.ignore_noqa:
                    _warn_invalid_noqa(path, None, err)
        if cache is not None and not args.quiet:
            for warning in cache.warnings:
                err.write(f"streamlint: warning: {warning}\n")
    linted.results.sort(key=lambda r: r.path)
    return linted


def _lint_stdin(
    args: argparse.Namespace, resolver: SettingsResolver, linted: Linted, fix: Optional[FixRequest], err: TextIO
) -> None:
    lint.load_checker()  # a broken install is an internal error, not an SL000
    name = linted.stdin_name
    settings = resolver.for_path(name if args.stdin_filename else os.getcwd())
    if args.force_exclude and args.stdin_filename:
        if not discover([name], resolver, force_exclude=True).files:
            return  # excluded by name, as ruff does with --force-exclude
    stream = sys.stdin
    data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode("utf-8")
    linted.results.append(run.lint_bytes(data, name, settings, fix=fix))
    text = SourceFile(name, data).text()
    linted.stdin_text = text if isinstance(text, str) else None
    if not args.quiet and not settings.ignore_noqa:
        _warn_invalid_noqa(name, data, err)


# Raw bytes that may hold a `noqa:` list starting with a lower-case letter: the files
# without one (nearly all) are not decoded or tokenized again.
_MAYBE_INVALID_NOQA = re.compile(rb"(?i:noqa):\s*[A-Z]*[a-z]")


def _warn_invalid_noqa(path: str | Path, data: Optional[bytes], err: TextIO) -> None:
    """As ruff: a warning on stderr for each `# noqa: sl103` (a code not in upper case
    makes no list of codes, so the comment suppresses nothing; SL900 reports it too,
    when selected). Each time the file is checked, from the cache or not."""
    if SourceKind.of(path) is not SourceKind.PYTHON:
        return  # (a notebook's comments are in its cells' JSON strings)
    if data is None:
        try:
            data = read_bytes(path)
        except OSError:
            return  # (reported as an SL000 by the check)
    if not _MAYBE_INVALID_NOQA.search(data):
        return
    text = SourceFile(str(path), data).text()
    if not isinstance(text, str):
        return
    shown = display_path(str(path))
    for row, written in comments.invalid_noqa(universal_newlines(text)):
        err.write(
            f"streamlint: warning: invalid `# noqa` directive on {shown}:{row}: `{written}` is not a list of codes "
            f"(codes are upper case: `# noqa: {written.upper()}`); it suppresses nothing\n"
        )


def _open_cache(option: Path | None, resolver: SettingsResolver) -> result_cache.ResultCache | None:
    if result_cache.disabled_by_env():
        return None
    return result_cache.ResultCache(cache_dir(option, resolver))


def cache_dir(option: Path | None, resolver: SettingsResolver) -> Path:
    # One cache per run: the one of the configuration that applies to the working
    # directory (like ruff's project root), whatever paths are checked.
    settings = resolver.for_path(os.getcwd())
    return result_cache.cache_dir(option, settings.cache_dir, settings.root)
