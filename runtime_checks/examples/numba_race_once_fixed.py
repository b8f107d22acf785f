"""The corrected numba_race_once.py: s2 waits for an event recorded on s1 after the
producer, through a bound method streamlint cannot follow, so SL401 is still reported.
`streamlint verify` provokes it as for the bad program and sees the consumer queued
while the producer still ran, yet start only after it: ordered on the device.

    streamlint verify runtime_checks/examples/numba_race_once_fixed.py
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
    done = cuda.event()
    produce[blocks, THREADS, s1](d_x, d_y, rounds)
    done.record(stream=s1)
    order = done.wait
    order(stream=s2)
    consume[blocks, THREADS, s2](d_y, d_z)
    s2.synchronize()
    return float(d_z.copy_to_host().sum())


print(f"checksum {main():.4f}")
