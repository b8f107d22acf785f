"""Numba SL403, bad: d_y is copied into a pinned host array on stream s (asynchronous:
a stream and pinned memory), and the host sums the array before s is synchronized."""
import math

import numpy as np
from numba import cuda

THREADS = 256


@cuda.jit
def produce(x, y, rounds):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        for _ in range(rounds):
            v = math.sin(v) * 0.5 + 0.25
        y[i] = v


def run(n: int = 1 << 16, rounds: int = 2000, synchronized: bool = False):
    blocks = (n + THREADS - 1) // THREADS
    s = cuda.stream()
    d_x = cuda.to_device(np.arange(n, dtype=np.float32) % 997 * np.float32(1e-3), stream=s)
    d_y = cuda.device_array(n, dtype=np.float32, stream=s)
    host = cuda.pinned_array(n, dtype=np.float32)
    host[:] = -1.0
    produce[blocks, THREADS, s](d_x, d_y, rounds)
    d_y.copy_to_host(host, stream=s)
    if synchronized:
        s.synchronize()
    total = float(host.sum())
    s.synchronize()
    return total
