"""Numba SL402, bad: a consumer on stream s2 reads d_y, then a producer on s1 overwrites
d_y with nothing making s1 wait for the read."""
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


def run(n: int = 1 << 16, rounds: int = 2000, ordered: bool = False):
    blocks = (n + THREADS - 1) // THREADS
    s1 = cuda.stream()
    s2 = cuda.stream()
    d_x = cuda.to_device(np.arange(n, dtype=np.float32) % 997 * np.float32(1e-3), stream=s1)
    d_y = cuda.to_device(np.ones(n, dtype=np.float32), stream=s1)
    d_z = cuda.device_array(n, dtype=np.float32)
    s1.synchronize()
    consume[blocks, THREADS, s2](d_y, d_z)
    if ordered:
        read_done = cuda.event(timing=False)
        read_done.record(s2)
        read_done.wait(s1)
    produce[blocks, THREADS, s1](d_x, d_y, rounds)
    h_z = d_z.copy_to_host(stream=s2)
    s2.synchronize()
    s1.synchronize()
    return h_z
