"""A Numba program that runs its racing kernels ONCE: `produce` writes `d_y` on stream s1
and `consume` reads it on s2 with no event in between (SL401). Run plainly it usually
prints the right checksum, because the two kernels' first-call JIT compiles (tens of ms
each) hold the host until the producer has finished; the race is real all the same.
`streamlint verify` must provoke it despite those compiles.

    streamlint verify runtime_checks/examples/numba_race_once.py
"""
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


@cuda.jit
def consume(y, z):
    i = cuda.grid(1)
    if i < y.size:
        z[i] = y[i] * 2.0 + 1.0


def main(n: int = 1 << 20, rounds: int = 4000) -> float:
    blocks = (n + THREADS - 1) // THREADS
    s1 = cuda.stream()
    s2 = cuda.stream()
    d_x = cuda.to_device(np.arange(n, dtype=np.float32) % 997 * np.float32(1e-3))
    d_y = cuda.to_device(np.zeros(n, dtype=np.float32))
    d_z = cuda.to_device(np.zeros(n, dtype=np.float32))
    cuda.synchronize()
    produce[blocks, THREADS, s1](d_x, d_y, rounds)
    consume[blocks, THREADS, s2](d_y, d_z)
    s2.synchronize()
    return float(d_z.copy_to_host().sum())


print(f"checksum {main():.4f}")
