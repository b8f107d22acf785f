"""Files in, results out: each file read once, served from the cache when its stored
result still holds, else linted (and with `fix`, fixed in the same pass) by the lint
function its kind calls for; in a process pool (`pool.py`) when there are many.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from functools import partial
from pathlib import Path
from typing import Callable, NamedTuple, Optional, Sequence

from streamlint import memory, reads, selection
from streamlint import rules as registry
from streamlint.cache import Cached, Conditional, ResultCache
from streamlint.cache.keys import config_key
from streamlint.config import SettingsResolver
from streamlint.discovery import Discovery, discover
from streamlint.engine import lint, pool
from streamlint.engine.lint import FileResult, FixRequest
from streamlint.engine.progress import Progress
from streamlint.notebooks.fix import lint_fix_notebook
from streamlint.notebooks.lint import lint_notebook
from streamlint.rules import Rule
from streamlint.settings import Settings, enabled_codes_for_file
from streamlint.source import SourceFile, SourceKind, read_bytes, source_error

# SL000 messages of failures that say nothing lasting about the file (never cached).
TRANSIENT_ERRORS = ("internal error", "analysis timed out")
# Small files are parsed without a trim after each (memory.py); a worker trims every so
# many files all the same, so that the freed memory of many goes back too.
TRIM_EVERY = 32

Item = tuple[Path, Settings]
# Each run's name, and the run whose files this process's model memory is of (check_chunk)
_runs = itertools.count()
_memory_of: Optional[str] = None


class Checked(NamedTuple):
    """A file's result with what the cache needs: the hash of the bytes that were
    checked (None when they could not be read) and the other files the analysis read."""

    result: FileResult
    digest: Optional[str]
    deps: dict[str, reads.Note]


def lint_source(
    source: SourceFile,
    settings: Settings,
    *,
    rules: Sequence[type[Rule]] | None = None,
    fix: Optional[FixRequest] = None,
) -> FileResult:
    """One file's result, by its kind; with `fix`, linted and fixed in one pass."""
    try:
        if source.kind is SourceKind.NOTEBOOK:
            if fix is None:
                return lint_notebook(source.data, source.path, settings, rules=rules)
            return lint_fix_notebook(source, settings, unsafe=fix.unsafe, rules=rules)
        return lint.lint_python(source, settings, rules=rules, fix=fix)
    except Exception as err:  # a bug in reading one file must not abort the run
        diag = source_error(source.path, f"internal error: {type(err).__name__}: {err}")
        return FileResult(source.path, [diag], analysed=True, lines=0)


def lint_bytes(data: bytes, filename: str, settings: Settings, **kwargs) -> FileResult:
    """`lint_source` of raw contents under a name (stdin, an editor's buffer)."""
    return lint_source(SourceFile(filename, data), settings, **kwargs)


def lint_file(path: Path, settings: Settings, **kwargs) -> FileResult:
    return check_path(path, settings, **kwargs).result


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
    if resolver is None and settings is not None:
        resolver = SettingsResolver(fixed=settings)
    found = discover(paths, resolver or SettingsResolver(), force_exclude=force_exclude)
    results = lint_files(found.files, jobs=jobs, rules=rules, cache=cache)
    return sorted(results + unreadable_results(found), key=lambda r: r.path)


def unreadable_results(found: Discovery) -> list[FileResult]:
    """One SL000 for each directory named on the command line that cannot be read."""
    return [
        FileResult(shown, [source_error(shown, f"cannot read directory: {why}")], analysed=False, lines=0)
        for shown, why in found.unreadable
    ]


def lint_files(
    files: Sequence[Item],
    jobs: int | None = None,
    rules: Sequence[type[Rule]] | None = None,
    cache: ResultCache | None = None,
    *,
    fix: Optional[FixRequest] = None,
    progress: Optional[Progress] = None,
) -> list[FileResult]:
    """Lint (path, settings) pairs, in a process pool when there are many; results
    sorted by path. With a `cache`, files whose stored result is still valid (and, with
    `fix`, has nothing to fix) are not checked again; new results are stored and saved.
    `progress` hears of each file as its result is known."""
    jobs = pool.default_jobs() if jobs is None else max(1, jobs)
    items = list(files)
    results: list[FileResult] = []
    keys: dict[str, tuple[str, str]] = {}  # filename -> (absolute path, config key)
    conditional: list[tuple[Item, Conditional]] = []
    on_done = progress.file_done if progress is not None else None
    if cache is not None:
        items, results, conditional = _from_cache(items, rules, cache, keys, fix)
        _tell(on_done, results)
    if items or conditional:
        lint.load_checker()  # a broken install is one internal error, not SL000 on every file
    checked: list[Checked] = []
    # without a cache no use of another module's summaries is noted
    run = f"{os.getpid()}-{next(_runs)}"  # (a pool's workers keep what they made of the project for the run)
    chunk: Callable[..., list[Checked]] = partial(check_chunk, run=run, digests=cache is not None)
    if conditional and items and jobs > 1:
        # An edited helper: the files that changed are checked in the pool while this
        # process compares the helper's summaries for its importers (both parse the
        # helper; on two cores, side by side rather than one after the other).
        with _still(progress):
            running = pool.start(chunk, items, jobs, rules, fix)
        try:
            settled = len(results)
            items = _settle(conditional, cache, fix, results)
            _tell(on_done, results[settled:])
        except BaseException:
            running.cancel()
            raise
        checked = running.results(on_done)
    elif conditional:
        settled = len(results)
        items += _settle(conditional, cache, fix, results)
        _tell(on_done, results[settled:])
    if jobs > 1 and len(items) > pool.PARALLEL_THRESHOLD:
        with _still(progress):
            parallel = pool.start(chunk, items, jobs, rules, fix)
        checked += parallel.results(on_done)
    else:
        checked += chunk(items, rules, fix, on_done=on_done)
    for result, digest, deps in checked:
        results.append(result)
        if cache is not None and digest is not None and result.fixed is None and _cacheable(result):
            path, config = keys[result.path]
            cache.store(path, digest, config, result.diagnostics, result.analysed, result.lines, deps)
    if cache is not None:
        cache.save()
    return sorted(results, key=lambda r: r.path)


def check_chunk(
    items: Sequence[Item], rules: Sequence[type[Rule]] | None = None, fix: Optional[FixRequest] = None,
    *, on_done: Optional[Callable[[str], None]] = None, digests: bool = True, run: Optional[str] = None,
) -> list[Checked]:
    """Check files one after the other (in this process or in a pool worker);
    `on_done` (in this process) hears each file's name as its check ends. `digests`: make
    the summary notes a cache keeps (reads.recording). `run`: the run the chunk is of (a
    worker's chunks of one run share what was made of the project's files)."""
    global _memory_of
    if items and (run is None or run != _memory_of):
        # lazy: the model imports libcst, which a run served from the cache never needs.
        from streamlint.model import resolve

        # Import resolutions (and what is made once per run of the project's files) are
        # remembered for one run only: a module created or deleted since an earlier run in
        # this process must be seen (the cache relies on it).
        resolve.forget()
        _memory_of = run
    out = []
    for n, (path, settings) in enumerate(items, 1):
        out.append(check_path(path, settings, rules=rules, fix=fix, digests=digests))
        if on_done is not None:
            on_done(str(path))
        if n % TRIM_EVERY == 0:
            memory.release_memory()
    return out


def check_path(
    path: Path, settings: Settings, *, rules: Sequence[type[Rule]] | None = None, fix: Optional[FixRequest] = None,
    digests: bool = True,
) -> Checked:
    """One file read once and checked, with the hash of its bytes and what the
    analysis read besides."""
    filename = str(path)
    try:
        data = read_bytes(path)
    except OSError as err:
        diag = source_error(filename, f"cannot read file: {err.strerror or err}")
        return Checked(FileResult(filename, [diag], analysed=False, lines=0), None, {})
    with reads.recording(digests) as deps:
        result = lint_source(SourceFile(filename, data), settings, rules=rules, fix=fix)
    # A message that names another module points at its lines: such a result is made
    # again whenever that module's text changes, not only its summary.
    final = reads.strict(deps, lambda dep: _mentions(result, dep, filename))
    return Checked(result, reads.content_hash(data), final)


def _mentions(result: FileResult, path: str, filename: str) -> bool:
    """Does a message name `path` (messages spell other modules relative to the file)?"""
    names = {path}
    try:
        names.add(os.path.relpath(path, os.path.dirname(os.path.abspath(filename))))
    except ValueError:  # another drive
        pass
    texts = [t for d in result.diagnostics for t in (d.message, d.help, d.fix.message if d.fix else None) if t]
    return any(f" of {name}" in text or name in text and os.sep in name for text in texts for name in names)


def _from_cache(
    items: list[Item],
    rules: Sequence[type[Rule]] | None,
    cache: ResultCache,
    keys: dict[str, tuple[str, str]],
    fix: Optional[FixRequest],
) -> tuple[list[Item], list[FileResult], list[tuple[Item, Conditional]]]:
    """(the items to check, the results found in the cache, the entries that hold only
    if some modules' summaries did not change: `_settle` decides). Files are read and
    hashed here; nothing is parsed, and neither the checker nor libcst is imported."""
    codes = tuple(r.code for r in rules) if rules is not None else registry.rule_codes()
    pending, hits = [], []
    conditional: list[tuple[Item, Conditional]] = []
    for path, settings in items:
        filename = str(path)
        absolute = os.path.abspath(filename)
        config = config_key(settings, enabled_codes_for_file(settings, filename, codes))
        keys[filename] = (absolute, config)
        try:
            data = read_bytes(path)
        except OSError:
            pending.append((path, settings))  # reported by the check, never cached
            continue
        found = cache.lookup(absolute, filename, reads.content_hash(data), config)
        if isinstance(found, Conditional):
            conditional.append(((path, settings), found))
            continue
        _take(found, (path, settings), fix, pending, hits)
    return pending, hits, conditional


def _settle(
    conditional: list[tuple[Item, Conditional]], cache: ResultCache, fix: Optional[FixRequest],
    hits: list[FileResult],
) -> list[Item]:
    """The conditional entries whose modules' summaries changed (to check again); the
    others' results go to `hits`."""
    pending: list[Item] = []
    checks = [c for _, cond in conditional for c in cond.checks]
    asked = {(c.path, c.names, "") for c in checks}
    asked |= {(c.path, c.names, c.content_then) for c in checks if c.digest == reads.DEFERRED}
    digests = _summaries(asked, cache.texts.text_of)
    for item, cond in conditional:
        now = {c.path: digests.get((c.path, c.names, "")) for c in cond.checks}
        then = {c.path: digests.get((c.path, c.names, c.content_then)) if c.digest == reads.DEFERRED else c.digest
                for c in cond.checks}
        holds = all(now[c.path] is not None and now[c.path] == then[c.path] for c in cond.checks)
        _take(cache.confirm(cond, holds, now), item, fix, pending, hits)
    return pending


def _take(found: Optional[Cached], item: Item, fix: Optional[FixRequest], pending: list, hits: list) -> None:
    if found is None or (fix is not None and lint.has_fix(found.diagnostics, fix.unsafe)):
        pending.append(item)
    else:
        hits.append(FileResult(str(item[0]), found.diagnostics, found.analysed, found.lines))


def _summaries(
    asked: set[tuple[str, tuple[str, ...], str]], text_of: Callable[[str], Optional[bytes]]
) -> dict[tuple[str, tuple[str, ...], str], str]:
    """The digests of what names of changed modules give an importer (each module analysed
    once per text, as an importer's analysis would): now (version ""), or from the text of
    the content hash `version` the cache kept. The early cutoff of the cache. Only runs where
    a module with importers changed get here, so libcst is loaded."""
    from streamlint.model.interproc.digests import local_name
    from streamlint.model.interproc.solver import digest_of_use

    out: dict[tuple[str, tuple[str, ...], str], str] = {}
    # Importers share names (a helper's 16 importers used 84 distinct names 134 times):
    # each name's digest is made once per text.
    digests: dict[tuple[str, str, str], str] = {}
    for path, names, version in sorted(asked):
        try:
            data = text_of(version) if version else None
            if version and data is None:
                raise LookupError(version)  # (the kept text is gone: the importer is checked again)
            for n in names:
                if (path, n, version) in digests:
                    continue
                local = local_name(n)
                if local is None:  # (not a use the model notes: the importer is checked again)
                    raise LookupError(n)
                digests[(path, n, version)] = digest_of_use(path, local, data)
            out[(path, names, version)] = reads.combine([(n, digests[(path, n, version)]) for n in names])
        except Exception:  # the importer is checked again: never worse than no cutoff
            continue
    return out


def _still(progress: Optional[Progress]):
    """No drawing while the pool forks its workers (see Progress.still)."""
    return progress.still() if progress is not None else contextlib.nullcontext()


def _tell(on_done: Optional[Callable[[str], None]], results: Sequence[FileResult]) -> None:
    for result in results if on_done is not None else ():
        on_done(result.path)


def _cacheable(result: FileResult) -> bool:
    # An internal error or a time-out may be transient (memory, a killed worker, a
    # loaded machine): such a file is checked again next time.
    return not any(
        d.code == selection.SOURCE_ERROR and d.message.startswith(TRANSIENT_ERRORS)
        for d in result.diagnostics
    )
