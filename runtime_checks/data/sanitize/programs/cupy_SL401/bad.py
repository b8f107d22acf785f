"""CuPy SL401, bad: a producer on stream s1 writes y, a consumer on s2 reads it with
nothing ordering the two."""
import sys
from pathlib import Path

import cupy as cp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cupy_kernels import kernels  # noqa: E402


def run(n: int = 1 << 16, rounds: int = 2000):
    produce, consume = kernels()
    s1, s2 = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream(non_blocking=True)
    x = cp.asarray(np.arange(n, dtype=np.float32) % 997 * np.float32(1e-3))
    y = cp.zeros(n, dtype=cp.float32)
    z = cp.zeros(n, dtype=cp.float32)
    cp.cuda.runtime.deviceSynchronize()
    grid, block = ((n + 255) // 256,), (256,)
    with s1:
        produce(grid, block, (x, y, np.int32(n), np.int32(rounds)))

    with s2:
        consume(grid, block, (y, z, np.int32(n)))
    s1.synchronize()
    s2.synchronize()
    return cp.asnumpy(z)
