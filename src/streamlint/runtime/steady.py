"""Steady state: which executions of a flagged statement to leave out of its cost.

The first execution of a statement pays for things that happen once: CUDA's lazy loading
of the module's kernels, a Numba kernel's JIT compile, the caching allocator growing its
pool, cuBLAS creating its handle. Counting it would charge that once-only time to the
finding ("lost overlap" that is really a compile). So the first execution is always left
out when there are others, and so are the executions right after it that are still far
slower than the rest (a warm-up that takes a few steps).
"""

from __future__ import annotations

from statistics import median
from typing import Sequence

OUTLIER = 3.0  # an execution this many times slower than the median of those after it is warm-up
MIN_STEADY = 1  # keep at least this many executions


def warmup_count(durations: Sequence[float]) -> int:
    """How many leading executions are warm-up (durations in execution order)."""
    n = len(durations)
    if n < 2:
        return 0  # a single execution is all there is: it is kept, warm-up included
    k = 1
    while n - k > MIN_STEADY and durations[k] > OUTLIER * median(durations[k + 1 :]):
        k += 1
    return k


def steady_window(starts: Sequence[float], excluded: int) -> float | None:
    """Where the steady state of one statement begins (its first kept execution)."""
    if excluded >= len(starts):
        return None
    return starts[excluded]
