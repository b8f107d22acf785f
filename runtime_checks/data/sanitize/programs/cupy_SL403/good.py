"""CuPy SL403, good: the same copy, and the host waits for stream s before it reads the
pinned buffer."""
import sys
from pathlib import Path

import cupy as cp
import cupyx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cupy_kernels import kernels  # noqa: E402


def run(n: int = 1 << 16, rounds: int = 2000):
    produce, _ = kernels()
    s = cp.cuda.Stream(non_blocking=True)
    x = cp.asarray(np.arange(n, dtype=np.float32) % 997 * np.float32(1e-3))
    y = cp.zeros(n, dtype=cp.float32)
    host = cupyx.zeros_pinned(n, dtype=np.float32)
    cp.cuda.runtime.deviceSynchronize()
    grid, block = ((n + 255) // 256,), (256,)
    with s:
        produce(grid, block, (x, y, np.int32(n), np.int32(rounds)))
        cp.asnumpy(y, stream=s, out=host, blocking=False)
    s.synchronize()
    total = float(host.sum())
    return total
