"""CuPy SL404, good: y is allocated on s1 and read on s2, then dropped; CuPy's pool (which
has no record_stream) hands its block to the next allocation on s1, which a kernel on s1
overwrites; here s1 first waits for an event recorded on s2 after the read."""
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
    z = cp.zeros(n, dtype=cp.float32)
    cp.cuda.runtime.deviceSynchronize()
    grid, block = ((n + 255) // 256,), (256,)
    with s1:
        y = cp.empty(n, dtype=cp.float32)
        produce(grid, block, (x, y, np.int32(n), np.int32(rounds)))
        s2.wait_event(s1.record())
    with s2:
        consume(grid, block, (y, z, np.int32(n)))
    s1.wait_event(s2.record())
    del y
    with s1:
        fresh = cp.empty(n, dtype=cp.float32)
        produce(grid, block, (x, fresh, np.int32(n), np.int32(rounds)))
    s1.synchronize()
    s2.synchronize()
    return cp.asnumpy(z), cp.asnumpy(fresh)
