"""Kernels shared by the CuPy sanitizer programs (a slow producer and a consumer)."""
import cupy as cp

SOURCE = r"""
extern "C" __global__ void produce(const float* x, float* y, int n, int rounds) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        for (int r = 0; r < rounds; ++r) v = sinf(v) * 0.5f + 0.25f;
        y[i] = v;
    }
}
extern "C" __global__ void consume(const float* y, float* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = y[i] * 2.0f + 1.0f;
}
"""


def kernels():
    return cp.RawKernel(SOURCE, "produce"), cp.RawKernel(SOURCE, "consume")
