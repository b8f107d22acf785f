"""Many files over several processes: chunks of about equal bytes, largest first; a
worker that dies takes only its own chunk's files to a retry, each file alone, so that
a crash in native code names its file and spares the rest."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Optional, Sequence

from streamlint import memory
from streamlint.engine.lint import FileResult, FixRequest
from streamlint.settings import Settings
from streamlint.source import source_error

# Below this many files a process pool costs more (start-up, imports) than it saves.
PARALLEL_THRESHOLD = 8

Item = tuple[Path, Settings]
# run.check_chunk: (items, rules, fix) -> the Checked results, in any order.
ChunkFn = Callable[..., list]


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may use
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


class Running:
    """Chunks being checked in a pool while the caller does other work."""

    def __init__(self, executor: ProcessPoolExecutor, futures: list, check_chunk: ChunkFn,
                 rules: Optional[Sequence], fix: Optional[FixRequest]) -> None:
        self._executor = executor
        self._futures = futures
        self._args = (check_chunk, rules, fix)

    def results(self, on_done: Optional[Callable[[str], None]] = None) -> list:
        """Every chunk's results (waiting for them, in the order they end; `on_done`
        hears each file's name); the files of a dead worker are checked again one by one."""
        results: list = []
        suspects: list[Item] = []
        chunks = {id(future): chunk for chunk, future in self._futures}
        try:
            for future in as_completed([future for _, future in self._futures]):
                try:
                    checked = future.result()
                    results.extend(checked)
                    for item in checked if on_done is not None else ():
                        on_done(item[0].path)
                except BrokenProcessPool:
                    chunk = chunks[id(future)]
                    # A worker died (killed, out of memory, a crash in native code) and took
                    # every pending chunk with it: those files are retried one by one.
                    suspects.extend(chunk)
        finally:
            self._executor.shutdown(cancel_futures=True)
        check_chunk, rules, fix = self._args
        retried = _lint_isolated(check_chunk, suspects, rules, fix)
        for item in retried if on_done is not None else ():
            on_done(item[0].path)
        return results + retried

    def cancel(self) -> None:
        self._executor.shutdown(cancel_futures=True)


def start(
    check_chunk: ChunkFn, items: list[Item], jobs: int, rules: Optional[Sequence], fix: Optional[FixRequest]
) -> Running:
    """Start checking `items` in a pool of up to `jobs` workers; `results()` collects them."""
    chunks = _chunks(items, jobs)
    context = multiprocessing.get_context()
    budget = memory.shared_budget(context)  # big parses take turns (memory.py)
    executor = ProcessPoolExecutor(
        max_workers=min(jobs, len(chunks)), mp_context=context,
        initializer=memory.init_worker, initargs=budget,
    )  # fmt: skip
    futures = [(chunk, executor.submit(check_chunk, chunk, rules, fix)) for chunk in chunks]
    return Running(executor, futures, check_chunk, rules, fix)


def _chunks(items: list[Item], jobs: int) -> list[list[Item]]:
    """Chunks of about equal bytes, each of one directory's files (a small one's with the next:
    a worker's chunks of one run
    share what was made of their package: its modules' summaries, kept once a module's own check
    made them), largest file first within each; the chunks largest first, so that big files do
    not end up queued last, and small ones travel together to save round trips. The largest
    parse of the run (the one that may need the whole memory budget) thus starts first, while
    the other workers are still fresh and small: they wait for it rather than grow."""
    sized = sorted(((str(path.parent), -_size(path), i) for i, (path, _) in enumerate(items)))
    target = max(-sum(size for _, size, _ in sized) // (jobs * 8), 1)
    chunks, current, weight, folder = [], [], 0, None
    for directory, size, i in sized:
        if current and (weight >= target or len(current) >= 64 or directory != folder and weight * 4 >= target):
            chunks.append(current)
            current, weight = [], 0
        current.append(items[i])
        weight -= size
        folder = directory
    chunks += [current] if current else []
    return sorted(chunks, key=lambda chunk: -_size(chunk[0][0]))


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _lint_isolated(
    check_chunk: ChunkFn, items: Sequence[Item], rules: Optional[Sequence], fix: Optional[FixRequest]
) -> list:
    """Each file in a worker of its own."""
    results: list = []
    executor: ProcessPoolExecutor | None = None
    try:
        for path, settings in items:
            executor = executor or ProcessPoolExecutor(max_workers=1)
            try:
                results.extend(executor.submit(check_chunk, [(path, settings)], rules, fix).result())
            except BrokenProcessPool:
                executor.shutdown()
                executor = None
                message = "internal error: the checker crashed on this file (in native code)"
                crashed = FileResult(str(path), [source_error(str(path), message)], True, 0)
                results.append((crashed, None, {}))  # a run.Checked: no digest, no deps
    finally:
        if executor is not None:
            executor.shutdown()
    return results
