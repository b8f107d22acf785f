"""A per-thread time budget for one file's analysis, checked cooperatively.

The flow walk calls `tick()` once per statement; every few ticks it reads the clock and
raises `AnalysisTimeout` once the deadline has passed, so a pathological file costs at
most about its budget. Native code (libcst's parser) cannot be interrupted this way:
the join timeout on the checker thread (isolation.py) is the backstop for it.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

# Reading the clock costs about as much as walking a small statement: look every so often.
CHECK_EVERY = 32

_local = threading.local()


class AnalysisTimeout(Exception):
    """The file's analysis ran past its budget (seconds)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"analysis timed out after {seconds:g} s")
        self.seconds = seconds


@contextmanager
def bounded(seconds: float | None) -> Iterator[None]:
    """Within the block, `tick()` raises AnalysisTimeout after `seconds` (None: no bound)."""
    saved = getattr(_local, "state", None)
    _local.state = None if seconds is None else [time.monotonic() + seconds, seconds, 0]
    try:
        yield
    finally:
        _local.state = saved


def tick() -> None:
    state = getattr(_local, "state", None)
    if state is None:
        return
    state[2] += 1
    if state[2] % CHECK_EVERY == 0 and time.monotonic() > state[0]:
        raise AnalysisTimeout(state[1])
