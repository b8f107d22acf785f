"""The corrected cupy_race_once.py: s2 waits for an event recorded on s1 after the
producer, through a bound method streamlint cannot follow, so SL401 is still reported.
`streamlint verify` provokes it as for the bad program and sees the consumer queued
while the producer still ran, yet start only after it: ordered on the device.

    streamlint verify runtime_checks/examples/cupy_race_once_fixed.py
"""
import cupy as cp

produce = cp.ElementwiseKernel(
    "float32 x, int32 rounds", "float32 y",
    "float v = x; for (int k = 0; k < rounds; ++k) { v = sinf(v) * 0.5f + 0.25f; } y = v;",
    "streamlint_example_produce",
)


def main(n: int = 1 << 20, rounds: int = 4000) -> float:
    s1 = cp.cuda.Stream(non_blocking=True)
    s2 = cp.cuda.Stream(non_blocking=True)
    x = cp.arange(n, dtype=cp.float32) % 997 * cp.float32(1e-3)
    y = cp.zeros(n, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    with s1:
        produce(x, cp.int32(rounds), y)
        done = s1.record()
    order = s2.wait_event
    order(done)
    with s2:
        z = y * 2.0 + 1.0
    s2.synchronize()
    return float(z.sum())


print(f"checksum {main():.4f}")
