"""Lint files: read, decode, prefilter, check, select, suppress; in parallel when it pays.

Every failure about one file (unreadable, not text, not UTF-8, unparsable, a crash in
the analysis or a rule) becomes one SL000 diagnostic for that file and the run goes on.
Checked code is only ever read: never imported, executed or written.
"""

from __future__ import annotations

import ast
import atexit
import multiprocessing
import os
import re
import stat
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable, NamedTuple, Optional, Sequence

import pathspec

from streamlint import rules as registry
from streamlint import deadline, memory, selection, suppression, unused_suppressions
from streamlint.config import Settings, SettingsResolver
from streamlint.diagnostics import Diagnostic
from streamlint.model import reads
from streamlint.rules import Rule

if TYPE_CHECKING:
    from streamlint.cache import ResultCache

# The model's vocabulary: a file with none of these words cannot have a finding.
from streamlint.model.prefilter import PREFILTER_KEYS as PREFILTER
BOM = b"\xef\xbb\xbf"
NOTEBOOK_SUFFIX = ".ipynb"
# Below this many files a process pool costs more (start-up, imports) than it saves.
PARALLEL_THRESHOLD = 8
# SL000 messages of failures that say nothing lasting about the file (never cached).
TRANSIENT_ERRORS = ("internal error", "analysis timed out")
# Small files are parsed without a trim after each (memory.py); a worker trims every so
# many files all the same, so that the freed memory of many goes back too.
TRIM_EVERY = 32

# CPython refuses more than 200 nested brackets. libcst's native parser does not raise on
# absurd nesting: it overflows the C stack (a segfault, at ~1,500 brackets or ~6,000
# chained operators on an 8 MiB stack) and slows quadratically on long chains. Nesting
# without brackets needs a long run of text between commas at one bracket level, so:
# the bracket depth is checked first; CPython's parser referees a text with such a long
# run; and the checker runs on a thread with a 32x larger stack, for margin.
MAX_BRACKET_DEPTH = 200
# The longest run in PyTorch's sources is ~430 (strings and comments count as one char).
LONG_RUN = 4096
CHECK_STACK_SIZE = 256 * 1024 * 1024  # reserved address space; pages are used on demand
# The walk notices its deadline within a few statements; a checker thread still busy
# this much later is in native code (the parser) and is left behind.
MIN_GRACE, MAX_GRACE = 1.0, 5.0
# Threads left behind. The interpreter must not finalize while one is inside libcst's
# native parser (that aborts the process), so exit waits for them, up to this long.
EXIT_WAIT = 600.0
_left_behind: list[threading.Thread] = []

CheckFn = Callable[[str, str, Sequence[type[Rule]]], "list[Diagnostic]"]


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic]
    analysed: bool  # False when the prefilter skipped the file (or it could not be read)
    lines: int


class _Checked(NamedTuple):
    """A file's result with what the cache needs: the hash of the bytes that were
    checked (None when they could not be read) and the other files the analysis read."""

    result: FileResult
    digest: Optional[str]
    deps: dict[str, reads.Note]


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
    text = universal_newlines(text)
    enabled = rules_for_file(settings, filename, rules)
    try:
        check, error_type = load_checker()
    except Exception as err:  # e.g. a broken install: report it per file, not a traceback
        return [source_error(filename, f"internal error: cannot load the checker: {err}")]
    problem = nesting_problem(text)
    if problem is not None:
        message, row, column = problem
        return [source_error(filename, message, row, column)]
    try:
        checked = [r for r in enabled if not r.meta]
        found = call_with_large_stack(check, text, filename, checked, timeout=settings.timeout)
    except deadline.AnalysisTimeout as err:
        message = f"{err}; raise `timeout` in [tool.streamlint] or pass --timeout"
        return [source_error(filename, message)]
    except error_type as err:
        message = getattr(err, "message", str(err))
        return [source_error(filename, message, getattr(err, "row", 1), getattr(err, "column", 1))]
    except RecursionError:
        return [source_error(filename, "file too deeply nested to analyse")]
    except Exception as err:
        return [source_error(filename, f"internal error: {type(err).__name__}: {err}")]
    codes = {rule.code for rule in enabled}
    kept = [d for d in found if d.code in codes or d.code == selection.SOURCE_ERROR]
    if unused_suppressions.CODE not in codes:
        return sorted(suppression.filter_diagnostics(kept, text))
    comments = suppression.parse(text)
    shown = [d for d in kept if not comments.suppresses(d)]
    known = selection.rule_codes()
    shown += unused_suppressions.find(text, filename, kept, comments, codes, known)
    return sorted(shown)


def lint_bytes(data: bytes, filename: str, settings: Settings, **kwargs) -> FileResult:
    """Decode and prefilter raw file contents, then lint them (notebooks cell by cell)."""
    if filename.endswith(NOTEBOOK_SUFFIX):
        from streamlint.notebooks.lint import lint_notebook

        try:
            return lint_notebook(data, filename, settings, **kwargs)
        except Exception as err:  # a bug in reading the notebook must not abort the run
            diag = source_error(filename, f"internal error: {type(err).__name__}: {err}")
            return FileResult(filename, [diag], analysed=True, lines=0)
    text_or_error = decode(data, filename)
    if isinstance(text_or_error, Diagnostic):
        return FileResult(filename, [text_or_error], analysed=False, lines=0)
    text = text_or_error
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    lines = breaks + (1 if text and not text.endswith(("\n", "\r")) else 0)
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


_LINE_BREAK = re.compile(r"\r\n?|\n")
_LONE_CR = re.compile(r"\r(?!\n)")


def universal_newlines(text: str) -> str:
    """The text with no lone CR (Python's third line break, which libcst and the
    tokenizer miscount): every break becomes the file's first CRLF or LF, so that fixes,
    generated in that style, match the file. Rows and columns do not change."""
    if "\r" not in text or not _LONE_CR.search(text):
        return text
    first = re.search(r"\r\n|\n", text)
    return _LINE_BREAK.sub(first.group() if first else "\n", text)


def source_lines(text: str) -> list[str]:
    """The lines as Python counts them (not str.splitlines, which also breaks at form
    feeds, U+2028 and other characters that Python's tokenizer keeps inside a line)."""
    return _LINE_BREAK.split(text)


_STRINGS_AND_COMMENTS = re.compile(
    r"#[^\n]*"
    r'|"""(?:\\.|[^\\])*?"""'
    r"|'''(?:\\.|[^\\])*?'''"
    r'|"(?:\\.|[^"\\\n])*"'
    r"|'(?:\\.|[^'\\\n])*'",
    re.S,
)
_STRUCTURE = re.compile(r"[()\[\]{},;]|\\?\r?\n")


def nesting_problem(text: str) -> tuple[str, int, int] | None:
    """(message, row, column) when the text nests deeper than Python allows, else None."""
    openers = text.count("(") + text.count("[") + text.count("{")
    if openers <= MAX_BRACKET_DEPTH and len(text) <= LONG_RUN:
        return None  # too small to nest deeply: the common case costs three counts
    # Strings and comments become one space (plus NULs that keep their line count).
    stripped = _STRINGS_AND_COMMENTS.sub(lambda m: " " + "\0" * m.group().count("\n"), text)
    # run[d]: length of the open run at bracket depth d (its own text, not that of the
    # brackets inside it); outer[d]: the runs enclosing it, which nest with it.
    run, outer, pos, suspect = [0], [0], 0, None
    for match in _STRUCTURE.finditer(stripped):
        char, at = match.group(), match.start()
        run[-1] += at - pos
        pos = match.end()
        if char in "([{":
            if len(run) > MAX_BRACKET_DEPTH:
                row, column = _stripped_position(stripped, at)
                return "SyntaxError: too many nested parentheses", row, column
            run[-1] += 1
            outer.append(outer[-1] + run[-1])
            run.append(0)
            continue
        if char[-1] == "\n" and (len(run) > 1 or char[0] == "\\"):
            continue  # a line break inside a statement
        # A closing bracket, a comma, a semicolon or the end of a statement ends a run.
        if outer[-1] + run[-1] > LONG_RUN and suspect is None:
            suspect = at
        if char in ")]}":
            if len(run) > 1:
                run.pop()
                outer.pop()
            run[-1] += 1
        else:
            run[-1] = 0
    if outer[-1] + run[-1] + len(stripped) - pos > LONG_RUN and suspect is None:
        suspect = len(stripped)
    if suspect is None:
        return None
    try:
        ast.parse(text)  # C speed, and it raises rather than crashes on deep nesting
    except (RecursionError, MemoryError):
        row, _ = _stripped_position(stripped, suspect)
        return "file too deeply nested to parse (Python refuses it too)", row, 1
    except (SyntaxError, ValueError):
        pass  # may be newer syntax than this interpreter's; libcst decides
    return None


def _stripped_position(stripped: str, at: int) -> tuple[int, int]:
    row = stripped.count("\n", 0, at) + stripped.count("\0", 0, at) + 1
    line_start = max(stripped.rfind("\n", 0, at), stripped.rfind("\0", 0, at)) + 1
    return row, at - line_start + 1  # the column is exact unless a string precedes it


def call_with_large_stack(fn: Callable, *args, timeout: float | None = None):
    """fn(*args) on a thread with a large stack: deep recursion in native parsers and
    in the analysis then raises (RecursionError) or succeeds instead of crashing.

    With a timeout, the walk raises deadline.AnalysisTimeout once it has used it up; a
    thread still busy a grace period later (stuck in native code) is left behind, as a
    daemon, and the caller gets AnalysisTimeout all the same.
    """
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            with deadline.bounded(timeout):
                outcome["value"] = fn(*args)
        except BaseException as err:  # re-raised in the caller's thread
            outcome["error"] = err

    try:
        old = threading.stack_size(CHECK_STACK_SIZE)
    except (ValueError, RuntimeError):  # a platform that refuses: run here
        run()
    else:
        try:
            thread = threading.Thread(target=run, name="streamlint-check", daemon=True)
            thread.start()
        except RuntimeError:  # no memory for the stack: run here
            thread = None
        finally:
            threading.stack_size(old)
        if thread is None:
            run()
        else:
            thread.join(None if timeout is None else timeout + _grace(timeout))
            if thread.is_alive():
                _leave_behind(thread)
                raise deadline.AnalysisTimeout(timeout)  # type: ignore[arg-type]
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]


def _grace(timeout: float) -> float:
    return max(MIN_GRACE, min(timeout, MAX_GRACE))


def _leave_behind(thread: threading.Thread) -> None:
    # Once past its parse, the thread meets its deadline at the next statement and ends.
    if not _left_behind:
        atexit.register(_wait_for_left_behind)
    _left_behind.append(thread)


def _wait_for_left_behind() -> None:
    give_up = time.monotonic() + EXIT_WAIT
    for thread in _left_behind:
        thread.join(max(0.0, give_up - time.monotonic()))
    if any(thread.is_alive() for thread in _left_behind):
        sys.stderr.write("streamlint: a checker thread never finished; exiting without cleanup\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(2)


def lint_file(path: Path, settings: Settings, **kwargs) -> FileResult:
    filename = str(path)
    try:
        data = _read(path)
    except OSError as err:
        reason = err.strerror or str(err)
        diag = source_error(filename, f"cannot read file: {reason}")
        return FileResult(filename, [diag], analysed=False, lines=0)
    return lint_bytes(data, filename, settings, **kwargs)


def lint_paths(
    paths: Sequence[Path],
    settings: Settings | None = None,
    jobs: int | None = None,
    *,
    resolver: SettingsResolver | None = None,
    force_exclude: bool = False,
    rules: Sequence[type[Rule]] | None = None,
    cache: ResultCache | None = None,
) -> list[FileResult]:
    """Discover and lint files and directories; results sorted by path.

    `settings` applies to every file; without it each file gets its nearest config.
    """
    from streamlint.discovery import discover  # discovery imports config only

    if resolver is None and settings is not None:
        resolver = _FixedResolver(settings)
    found = discover(paths, resolver or SettingsResolver(), force_exclude=force_exclude)
    return lint_files(found.files, jobs=jobs, rules=rules, cache=cache)


def lint_files(
    files: Sequence[tuple[Path, Settings]],
    jobs: int | None = None,
    rules: Sequence[type[Rule]] | None = None,
    cache: ResultCache | None = None,
) -> list[FileResult]:
    """Lint (path, settings) pairs, in a process pool when there are many; results
    sorted by path. With a `cache`, files whose stored result is still valid are not
    checked again, and the new results are stored (and saved) at the end."""
    jobs = default_jobs() if jobs is None else max(1, jobs)
    items = list(files)
    results: list[FileResult] = []
    keys: dict[str, tuple[str, str]] = {}  # filename -> (absolute path, config key)
    if cache is not None:
        items, results = _from_cache(items, rules, cache, keys)
    if items:
        load_checker()  # a broken install is one internal error, not SL000 on every file
    if jobs > 1 and len(items) > PARALLEL_THRESHOLD:
        checked = _lint_parallel(items, jobs, rules)
    else:
        checked = _lint_chunk(items, rules)
    for result, digest, deps in checked:
        results.append(result)
        if cache is not None and digest is not None and _cacheable(result):
            path, config = keys[result.path]
            cache.store(path, digest, config, result.diagnostics, result.analysed, result.lines, deps)
    if cache is not None:
        cache.save()
    return sorted(results, key=lambda r: r.path)


def _from_cache(
    items: list[tuple[Path, Settings]],
    rules: Sequence[type[Rule]] | None,
    cache: ResultCache,
    keys: dict[str, tuple[str, str]],
) -> tuple[list[tuple[Path, Settings]], list[FileResult]]:
    """(the items to check, the results found in the cache). Files are read and hashed
    here; nothing is parsed, and neither the checker nor libcst is imported."""
    from streamlint.cache.keys import config_key

    codes = tuple(r.code for r in rules) if rules is not None else registry.rule_codes()
    pending, hits = [], []
    for path, settings in items:
        filename = str(path)
        absolute = os.path.abspath(filename)
        config = config_key(settings, enabled_codes_for_file(settings, filename, codes))
        keys[filename] = (absolute, config)
        try:
            data = _read(path)
        except OSError:
            pending.append((path, settings))  # reported by the check, never cached
            continue
        found = cache.lookup(absolute, filename, reads.content_hash(data), config)
        if found is None:
            pending.append((path, settings))
        else:
            hits.append(FileResult(filename, found.diagnostics, found.analysed, found.lines))
    return pending, hits


def _cacheable(result: FileResult) -> bool:
    # An internal error or a time-out may be transient (memory, a killed worker, a
    # loaded machine): such a file is checked again next time.
    return not any(
        d.code == selection.SOURCE_ERROR and d.message.startswith(TRANSIENT_ERRORS)
        for d in result.diagnostics
    )


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
    enabled = enabled_codes_for_file(settings, filename, tuple(r.code for r in pool))
    return tuple(r for r in pool if r.code in enabled)


def enabled_codes_for_file(
    settings: Settings, filename: str, codes: tuple[str, ...]
) -> tuple[str, ...]:
    """Which of `codes` run on one file (the same choice as `rules_for_file`, from
    codes alone, so that the cache can be keyed without importing any rule)."""
    return _codes_after(settings.layers, codes, per_file_ignored(settings, filename))


@lru_cache(maxsize=256)
def _codes_after(
    layers: tuple[selection.RuleSelection, ...], codes: tuple[str, ...], ignored: tuple[str, ...]
) -> tuple[str, ...]:
    enabled = selection.enabled_codes(layers, codes)
    return tuple(c for c in codes if c in enabled and not selection.is_ignored(ignored, c))


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
    # O_NONBLOCK so that opening a FIFO does not wait for a writer; then refuse
    # anything but a regular file (FIFOs and devices could block or never end).
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
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
) -> list[_Checked]:
    if items:
        from streamlint.model import project

        # Import resolutions are remembered per chunk only: a module created or deleted
        # since an earlier run in this process must be seen (the cache relies on it).
        project.forget_resolutions()
    out = []
    for n, (path, settings) in enumerate(items, 1):
        out.append(_lint_recorded(path, settings, rules))
        if n % TRIM_EVERY == 0:
            memory.release_memory()
    return out


def _lint_recorded(path: Path, settings: Settings, rules: Sequence[type[Rule]] | None) -> _Checked:
    """lint_file, plus the hash of the bytes checked and what the analysis read besides."""
    filename = str(path)
    try:
        data = _read(path)
    except OSError:
        return _Checked(lint_file(path, settings, rules=rules), None, {})
    with reads.recording() as deps:
        result = lint_bytes(data, filename, settings, rules=rules)
    return _Checked(result, reads.content_hash(data), deps)


def _lint_parallel(
    items: list[tuple[Path, Settings]], jobs: int, rules: Sequence[type[Rule]] | None
) -> list[_Checked]:
    results: list[_Checked] = []
    suspects: list[tuple[Path, Settings]] = []
    chunks = _chunks(items, jobs)
    context = multiprocessing.get_context()
    budget = memory.shared_budget(context)  # big parses take turns (memory.py)
    with ProcessPoolExecutor(
        max_workers=min(jobs, len(chunks)), mp_context=context,
        initializer=memory.init_worker, initargs=budget,
    ) as pool:  # fmt: skip
        futures = [(chunk, pool.submit(_lint_chunk, chunk, rules)) for chunk in chunks]
        for chunk, future in futures:
            try:
                results.extend(future.result())
            except BrokenProcessPool:
                # A worker died (killed, out of memory, a crash in native code) and took
                # every pending chunk with it: those files are retried one by one.
                suspects.extend(chunk)
    return results + _lint_isolated(suspects, rules)


def _chunks(items: list[tuple[Path, Settings]], jobs: int) -> list[list[tuple[Path, Settings]]]:
    """Largest files first, in chunks of about equal bytes: big files do not end up
    queued last, and small ones travel together to save round trips. The largest parse
    of the run (the one that may need the whole memory budget) thus starts first, while
    the other workers are still fresh and small: they wait for it rather than grow."""
    sized = sorted(((_size(path), i) for i, (path, _) in enumerate(items)), reverse=True)
    target = max(sum(size for size, _ in sized) // (jobs * 8), 1)
    chunks, current, weight = [], [], 0
    for size, i in sized:
        current.append(items[i])
        weight += size
        if weight >= target or len(current) >= 64:
            chunks.append(current)
            current, weight = [], 0
    return chunks + [current] if current else chunks


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _lint_isolated(
    items: Sequence[tuple[Path, Settings]], rules: Sequence[type[Rule]] | None
) -> list[_Checked]:
    """Each file in a worker of its own, so a crash names its file and spares the rest."""
    results: list[_Checked] = []
    pool: ProcessPoolExecutor | None = None
    try:
        for path, settings in items:
            pool = pool or ProcessPoolExecutor(max_workers=1)
            try:
                results.extend(pool.submit(_lint_chunk, [(path, settings)], rules).result())
            except BrokenProcessPool:
                pool.shutdown()
                pool = None
                message = "internal error: the checker crashed on this file (in native code)"
                crashed = FileResult(str(path), [source_error(str(path), message)], True, 0)
                results.append(_Checked(crashed, None, {}))
    finally:
        if pool is not None:
            pool.shutdown()
    return results


class _FixedResolver(SettingsResolver):
    """One Settings for every path (lint_paths called with explicit settings)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self._fixed = settings
