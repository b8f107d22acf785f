"""Per-thread default stream switches (API-FACTS.md 1.4): variable or config attribute -> the frameworks whose
default stream it makes the thread's own, not the legacy barrier."""

from __future__ import annotations

SWITCHES: dict[str, tuple[str, ...]] = {
    "CUPY_CUDA_PER_THREAD_DEFAULT_STREAM": ("cupy",),
    "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM": ("numba",),
    "CUDA_PER_THREAD_DEFAULT_STREAM": ("numba",),  # numba.config attribute
    "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM": ("numba", "cuda-python"),
}
# Values that switch it on (cuda-bindings < 13.2.1 took any value; we read the intent).
ON_VALUES = frozenset({"1", "true", "True", "yes", "on"})
