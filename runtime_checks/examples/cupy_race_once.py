"""A CuPy program that runs its racing kernels ONCE: `produce` writes `y` on stream s1 and
the consumer reads it on s2 with no event in between (SL401). `produce` is compiled on
its first call (or loaded from CuPy's kernel cache), which usually holds the host until
it has finished; the race is real all the same.

    streamlint verify runtime_checks/examples/cupy_race_once.py
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
    with s2:
        z = y * 2.0 + 1.0
    s2.synchronize()
    return float(z.sum())


print(f"checksum {main():.4f}")
