"""A Numba-only program (no PyTorch needed to verify it): a producer kernel on stream s1
writes `d_y` and a consumer on s2 reads it with no event in between (SL401), and a
kernel launched on NumPy arrays copies them to and from the GPU implicitly (SL102).

    streamlint verify runtime_checks/examples/numba_race.py --tracer cupti
"""
import math

import numpy as np
from numba import cuda

THREADS = 256


@cuda.jit
def produce(x, y, rounds, step):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        for _ in range(rounds):
            v = math.sin(v) * 0.5 + 0.25
        y[i] = v + step


@cuda.jit
def consume(y, z):
    i = cuda.grid(1)
    if i < y.size:
        z[i] = y[i] * 2.0 + 1.0


def main(steps: int = 6, n: int = 1 << 16, rounds: int = 2000) -> float:
    blocks = (n + THREADS - 1) // THREADS
    s1 = cuda.stream()
    s2 = cuda.stream()
    h_x = np.arange(n, dtype=np.float32) % 997 * np.float32(1e-3)
    d_x = cuda.to_device(h_x)
    d_y = cuda.device_array(n, dtype=np.float32)
    d_z = cuda.device_array(n, dtype=np.float32)
    total = 0.0
    for step in range(steps):
        produce[blocks, THREADS, s1](d_x, d_y, rounds, np.float32(step))
        consume[blocks, THREADS, s2](d_y, d_z)
        s2.synchronize()
        total += float(d_z.copy_to_host().sum())
        h_w = np.zeros(n, dtype=np.float32)
        consume[blocks, THREADS](h_x, h_w)
        total += float(h_w[0])
    return total


print(f"checksum {main():.4f}")
