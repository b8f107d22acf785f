"""Keep the memory of parallel workers bounded: big parses take turns.

libcst's parser peaks at about 600 bytes of memory per byte of source (measured on
PyTorch: 740 MiB while parsing its 1.4 MB common_methods_invocations.py; the finished
tree is ~35x the source), and the allocator keeps that peak after the tree is gone.
So every parse of a big text (the checked file's, or another module's read for its
summaries) reserves its estimated peak from a budget shared by the workers of a run,
waits while the budget is spent, and hands the memory back to the system when done.
Small parses neither wait nor trim: they keep the other workers busy meanwhile.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Any, Iterator, Optional

PARSE_MEMORY_FACTOR = 600
# Texts below this size are parsed at once (their peak is under ~40 MiB).
SMALL_TEXT = 64 * 1024
# What the big parses of all workers together may reserve (their base of ~50 MiB each
# and the main process come on top): one huge file at a time, or a few mid-sized ones.
BUDGET = 768 * 2**20
# Waiting is a bound on memory, never a reason to hang: after this, parse anyway.
MAX_WAIT_SECONDS = 120.0

_shared: Optional[tuple[Any, Any]] = None  # (Condition, Value of bytes left), per worker


def shared_budget(context: Any) -> tuple[Any, Any]:
    """A budget for the workers of one pool, made from its multiprocessing context."""
    condition = context.Condition()
    left = context.Value("q", BUDGET, lock=False)  # guarded by the condition's lock
    return condition, left


def init_worker(condition: Any, left: Any) -> None:
    """The pool's initializer: this worker takes part in the budget."""
    global _shared
    _shared = (condition, left)


@contextmanager
def parsing(size: int) -> Iterator[None]:
    """Around a parse of `size` bytes of text."""
    if size < SMALL_TEXT:
        yield
        return
    need = min(size * PARSE_MEMORY_FACTOR, BUDGET)
    reserved = _reserve(need)
    try:
        yield
    finally:
        release_memory()
        if reserved:
            _give_back(need)


def _reserve(need: int) -> bool:
    if _shared is None:
        return False  # one process: nothing to share
    condition, left = _shared
    deadline = time.monotonic() + MAX_WAIT_SECONDS
    with condition:
        while left.value < need:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            condition.wait(remaining)
        left.value -= need
    return True


def _give_back(need: int) -> None:
    assert _shared is not None
    condition, left = _shared
    with condition:
        left.value += need
        condition.notify_all()


def release_memory() -> None:
    """Return freed memory to the system (glibc keeps it otherwise)."""
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass
