"""A CuPy-only program (no PyTorch needed to verify it): per-batch uploads from pageable
NumPy memory, a stream created on every iteration and a host read of each result.

    streamlint verify runtime_checks/examples/cupy_pipeline.py --tracer cupti
"""
import cupy as cp
import numpy as np


def main(batches: int = 12, n: int = 1 << 22) -> float:
    host = (np.arange(batches * n, dtype=np.float32) % 997 * 1e-3).reshape(batches, n)
    total = 0.0
    for b in range(batches):
        stream = cp.cuda.Stream(non_blocking=True)
        with stream:
            d = cp.asarray(host[b])
            for _ in range(4):
                d = cp.tanh(d * 1.5 + 0.1)
            total += float(d.sum())
    return total


print(f"checksum {main():.4f}")
