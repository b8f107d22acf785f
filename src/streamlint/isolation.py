"""Run the checker where a crash cannot take the process down: on a thread with a large
stack (deep recursion then raises instead of overflowing the C stack), bounded by a
deadline, and left behind when it is stuck in native code past that deadline.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from typing import Callable

from streamlint import deadline

CHECK_STACK_SIZE = 256 * 1024 * 1024  # reserved address space; pages are used on demand
# The walk notices its deadline within a few statements; a checker thread still busy
# this much later is in native code (the parser) and is left behind.
MIN_GRACE, MAX_GRACE = 1.0, 5.0
# Threads left behind. The interpreter must not finalize while one is inside libcst's
# native parser (that aborts the process), so exit waits for them, up to this long.
EXIT_WAIT = 600.0
_left_behind: list[threading.Thread] = []


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
