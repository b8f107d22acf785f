"""Triton: a kernel its decorators compile (`@triton.jit`, under `@triton.autotune`) launched as `kernel[grid](...)`
runs on PyTorch's current stream (Triton's launcher asks torch for it), not on Numba's legacy default stream; what its
body stores through pointers (`tl.store`) is not told, so its tensor arguments are taken as read and written."""

from __future__ import annotations

KERNEL_DECORATORS = frozenset({"triton.jit", "triton.autotune", "triton.heuristics"})
LAUNCHED_ON = "torch"  # the framework whose current stream a launch without a stream runs on
