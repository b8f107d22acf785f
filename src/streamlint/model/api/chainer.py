"""Chainer's CUDA backend (`chainer.backends.cuda`, `chainer.cuda`) re-exports CuPy's objects and
memoized constructors of its kernels with the same arguments: CuPy's facts apply."""

from __future__ import annotations

_BACKEND = ("chainer.backends.cuda", "chainer.cuda")

# name in chainer.backends.cuda -> the CuPy name it is.
_REEXPORTS: dict[str, str] = {
    "cupy": "cupy",
    "cupyx": "cupyx",
    "cuda": "cupy.cuda",
    "ndarray": "cupy.ndarray",
    "Device": "cupy.cuda.Device",
    "Event": "cupy.cuda.Event",
    "Stream": "cupy.cuda.Stream",
    "memoize": "cupy.memoize",
    "elementwise": "cupy.ElementwiseKernel",
    "reduce": "cupy.ReductionKernel",
    "raw": "cupy.RawKernel",
}

MODULE_ALIASES: dict[str, str] = {
    f"{module}.{name}": cupy for module in _BACKEND for name, cupy in _REEXPORTS.items()
}

# Chainer's own `get_array_module`: as `cupy.get_array_module` (it also unwraps `chainer.Variable`).
ARRAY_MODULE_FUNCTIONS = frozenset(
    {f"{module}.get_array_module" for module in _BACKEND} | {"chainer.backend.get_array_module"}
)
