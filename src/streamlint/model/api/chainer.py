"""Chainer's CUDA backend: CuPy under Chainer's names.

`chainer.backends.cuda` (also importable as `chainer.cuda`) imports CuPy's own objects
for convenience (chainer/backends/cuda.py: "imported name / original name"): `cupy`,
`cuda` (= `cupy.cuda`), `ndarray`, `Device`, `Event`, `Stream`. Its kernel helpers
`elementwise`, `reduce` and `raw` are memoized constructors of `cupy.ElementwiseKernel`,
`cupy.ReductionKernel` and `cupy.RawKernel` with the same arguments. Code that spells
them through Chainer (`chainer.cuda.Stream.null`, `chainer.cuda.cupy.ElementwiseKernel`,
`chainer.backends.cuda.raw(...)`) calls CuPy, so CuPy's facts apply.
"""

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

# Chainer's own `get_array_module` (it also unwraps `chainer.Variable`): CuPy's module for
# a CuPy array, NumPy's otherwise, as `cupy.get_array_module` (api/cupy.py).
ARRAY_MODULE_FUNCTIONS = frozenset(
    {f"{module}.get_array_module" for module in _BACKEND} | {"chainer.backend.get_array_module"}
)
