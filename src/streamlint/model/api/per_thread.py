"""Per-thread default stream switches (API-FACTS.md section 1.4).

Set in the file itself (`os.environ["CUPY_CUDA_PER_THREAD_DEFAULT_STREAM"] = "1"`,
`os.environ.setdefault(...)`, `numba.config.CUDA_PER_THREAD_DEFAULT_STREAM = 1`), they make
the framework's default stream (CuPy's initial current stream, Numba's stream 0) the
per-thread default stream: an ordinary blocking stream of this thread, not the legacy
barrier. Each key is a variable or config attribute; each value the frameworks it switches.
"""

from __future__ import annotations

SWITCHES: dict[str, tuple[str, ...]] = {
    "CUPY_CUDA_PER_THREAD_DEFAULT_STREAM": ("cupy",),
    "NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM": ("numba",),
    "CUDA_PER_THREAD_DEFAULT_STREAM": ("numba",),  # numba.config attribute
    "CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM": ("numba", "cuda-python"),
}
# Values that switch it on (cuda-bindings < 13.2.1 took any value; we read the intent).
ON_VALUES = frozenset({"1", "true", "True", "yes", "on"})
