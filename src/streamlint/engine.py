"""Lint files: read, decode, prefilter, check, select, suppress; in parallel when it pays.

Every failure about one file (unreadable, not text, not UTF-8, unparsable, a crash in
the analysis or a rule) becomes one SL000 diagnostic for that file and the run goes on.
Checked code is only ever read: never imported, executed or written.
"""

from __future__ import annotations

import os
import stat
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import pathspec

from streamlint import rules as registry
from streamlint import selection, suppression
from streamlint.config import Settings, SettingsResolver
from streamlint.diagnostics import Diagnostic
from streamlint.rules import Rule

# A file that mentions none of these cannot use a GPU framework we model: not parsed.
PREFILTER = (b"cupy", b"numba", b"torch", b"cuda")
BOM = b"\xef\xbb\xbf"
# Below this many files a process pool costs more (start-up, imports) than it saves.
PARALLEL_THRESHOLD = 8

CheckFn = Callable[[str, str, Sequence[type[Rule]]], "list[Diagnostic]"]


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic]
    analysed: bool  # False when the prefilter skipped the file (or it could not be read)
    lines: int


def load_checker() -> tuple[CheckFn, type[Exception]]:
    """The checker and its error type; imported late (and swappable in tests)."""
    from streamlint import checker

    return checker.check_source, checker.SourceError


def source_error(filename: str, message: str, row: int = 1, column: int = 1) -> Diagnostic:
    row, column = max(row, 1), max(column, 1)
    return Diagnostic(filename, row, column, selection.SOURCE_ERROR, message, row, column, row)


def lint_text(
    text: str,
    filename: str,
    settings: Settings,
    *,
    rules: Sequence[type[Rule]] | None = None,
) -> list[Diagnostic]:
    """Diagnostics for one source text after selection and suppression, sorted."""
    enabled = rules_for_file(settings, filename, rules)
    try:
        check, error_type = load_checker()
    except Exception as err:  # e.g. a broken install: report it per file, not a traceback
        return [source_error(filename, f"internal error: cannot load the checker: {err}")]
    try:
        found = check(text, filename, enabled)
    except error_type as err:
        message = getattr(err, "message", str(err))
        return [source_error(filename, message, getattr(err, "row", 1), getattr(err, "column", 1))]
    except RecursionError:
        return [source_error(filename, "internal error: file too deeply nested to analyse")]
    except Exception as err:
        return [source_error(filename, f"internal error: {type(err).__name__}: {err}")]
    codes = {rule.code for rule in enabled}
    kept = [d for d in found if d.code in codes or d.code == selection.SOURCE_ERROR]
    return sorted(suppression.filter_diagnostics(kept, text))


def lint_bytes(data: bytes, filename: str, settings: Settings, **kwargs) -> FileResult:
    """Decode and prefilter raw file contents, then lint them."""
    text_or_error = decode(data, filename)
    if isinstance(text_or_error, Diagnostic):
        return FileResult(filename, [text_or_error], analysed=False, lines=0)
    text = text_or_error
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    if not any(word in data for word in PREFILTER):
        return FileResult(filename, [], analysed=False, lines=lines)
    try:
        diagnostics = lint_text(text, filename, settings, **kwargs)
    except Exception as err:  # selection/suppression bugs must not abort the run either
        diagnostics = [source_error(filename, f"internal error: {type(err).__name__}: {err}")]
    return FileResult(filename, diagnostics, analysed=True, lines=lines)


def decode(data: bytes, filename: str) -> str | Diagnostic:
    """The text of a source file, or the SL000 diagnostic saying why it has none."""
    nul = data.find(b"\0")
    if nul >= 0:
        row, column = _row_col(data, nul)
        return source_error(filename, "file is not text (contains NUL bytes)", row, column)
    skip = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = skip + err.start
        row, column = _row_col(data, offset)
        byte = data[offset]
        message = f"file is not valid UTF-8 (byte 0x{byte:02x} at offset {offset})"
        return source_error(filename, message, row, column)


def lint_file(path: Path, settings: Settings, **kwargs) -> FileResult:
    filename = str(path)
    try:
        data = _read(path)
    except OSError as err:
        reason = err.strerror or str(err)
        return FileResult(filename, [source_error(filename, f"cannot read file: {reason}")], False, 0)
    return lint_bytes(data, filename, settings, **kwargs)


def lint_paths(
    paths: Sequence[Path],
    settings: Settings | None = None,
    jobs: int | None = None,
    *,
    resolver: SettingsResolver | None = None,
    force_exclude: bool = False,
    rules: Sequence[type[Rule]] | None = None,
) -> list[FileResult]:
    """Discover and lint files and directories; results sorted by path.

    `settings` applies to every file; without it each file gets its nearest config.
    """
    from streamlint.discovery import discover  # discovery imports config only

    if resolver is None and settings is not None:
        resolver = _FixedResolver(settings)
    found = discover(paths, resolver or SettingsResolver(), force_exclude=force_exclude)
    return lint_files(found.files, jobs=jobs, rules=rules)


def lint_files(
    files: Sequence[tuple[Path, Settings]],
    jobs: int | None = None,
    rules: Sequence[type[Rule]] | None = None,
) -> list[FileResult]:
    """Lint (path, settings) pairs, in a process pool when there are many."""
    jobs = default_jobs() if jobs is None else max(1, jobs)
    items = list(files)
    if jobs > 1 and len(items) > PARALLEL_THRESHOLD:
        results = _lint_parallel(items, jobs, rules)
    else:
        results = _lint_chunk(items, rules)
    return sorted(results, key=lambda r: r.path)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may use
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def rules_for_file(
    settings: Settings, filename: str, rules: Sequence[type[Rule]] | None = None
) -> tuple[type[Rule], ...]:
    """The rules selected for one file: settings' layers, then per-file-ignores."""
    pool = tuple(rules) if rules is not None else registry.all_rules()
    enabled = selection.enabled_codes(settings.layers, tuple(r.code for r in pool))
    ignored = per_file_ignored(settings, filename)
    return tuple(
        r for r in pool if r.code in enabled and not selection.is_ignored(ignored, r.code)
    )


def per_file_ignored(settings: Settings, filename: str) -> tuple[str, ...]:
    if not settings.per_file_ignores:
        return ()
    # Patterns are relative to the config's directory; a file outside it can still
    # match a pattern by its path as given or by its base name.
    root = str(settings.root) if settings.root else os.getcwd()
    absolute = os.path.abspath(filename)
    rel = os.path.relpath(absolute, root).replace(os.sep, "/")
    if rel.startswith("../"):
        rel = filename.replace(os.sep, "/")
    candidates = (rel, os.path.basename(absolute))
    out: list[str] = []
    for pattern, selectors in settings.per_file_ignores:
        spec = _glob_spec(pattern)
        if any(spec.match_file(c) for c in candidates):
            out.extend(selectors)
    return tuple(out)


@lru_cache(maxsize=256)
def _glob_spec(pattern: str) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines([pattern])


def _read(path: Path) -> bytes:
    # Refuse FIFOs and devices: reading them could block forever.
    with open(path, "rb") as fh:
        mode = os.fstat(fh.fileno()).st_mode
        if not stat.S_ISREG(mode):
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(21, "is a directory")
            raise OSError(0, "not a regular file")
        return fh.read()


def _row_col(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1


def _lint_chunk(
    items: Sequence[tuple[Path, Settings]], rules: Sequence[type[Rule]] | None = None
) -> list[FileResult]:
    return [lint_file(path, settings, rules=rules) for path, settings in items]


def _lint_parallel(
    items: list[tuple[Path, Settings]], jobs: int, rules: Sequence[type[Rule]] | None
) -> list[FileResult]:
    # Small chunks keep the cores busy to the end; large files are not known in advance.
    size = max(1, min(16, len(items) // (jobs * 4)))
    chunks = [items[i : i + size] for i in range(0, len(items), size)]
    results: list[FileResult] = []
    with ProcessPoolExecutor(max_workers=min(jobs, len(chunks))) as pool:
        futures = [(chunk, pool.submit(_lint_chunk, chunk, rules)) for chunk in chunks]
        for chunk, future in futures:
            try:
                results.extend(future.result())
            except BrokenProcessPool:
                # A worker died (killed, out of memory, a crash in native code).
                message = "internal error: the worker process checking this file died"
                results.extend(
                    FileResult(str(p), [source_error(str(p), message)], False, 0) for p, _ in chunk
                )
    return results


class _FixedResolver(SettingsResolver):
    """One Settings for every path (lint_paths called with explicit settings)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self._fixed = settings
