"""A spin kernel: one thread that keeps a stream busy for a given time, queued
asynchronously on any stream handle (the CUDA stream is the same whichever library
made it). Used to provoke races (provoke.py): a delay on the producing stream turns a
missing wait into a wrong result every time, and changes nothing where the order is
really enforced.

The kernel comes from the first library the program already imported: PyTorch
(`torch.cuda._sleep`), CuPy (a `RawKernel` spinning on `clock64()`), else Numba (a
kernel calling `cuda.nanosleep`).
"""

from __future__ import annotations

import sys
from typing import Any

DEFAULT_CLOCK_KHZ = 1_980_000  # an H100/H200 boost clock, when the device cannot be asked
_SPIN_SOURCE = r"""
extern "C" __global__ void streamlint_spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""
_state: dict[str, Any] = {}


def clock_khz() -> int:
    if "khz" not in _state:
        khz = DEFAULT_CLOCK_KHZ
        try:
            from cuda.bindings import runtime as cudart

            err, value = cudart.cudaDeviceGetAttribute(cudart.cudaDeviceAttr.cudaDevAttrClockRate, 0)
            if int(err) == 0 and value > 0:
                khz = int(value)
        except Exception:
            pass
        _state["khz"] = khz
    return _state["khz"]


def cycles_for(ms: float, khz: int | None = None) -> int:
    return max(1, int(ms * (khz or clock_khz())))


def framework() -> str | None:
    """The library whose kernel will spin: the first one the program imported."""
    for name in ("torch", "cupy", "numba.cuda"):
        if name in sys.modules:
            return name
    return None


def _torch_spin(handle: int, ms: float) -> None:
    torch = sys.modules["torch"]
    stream = torch.cuda.default_stream() if handle == 0 else torch.cuda.ExternalStream(handle)
    with torch.cuda.stream(stream):
        torch.cuda._sleep(cycles_for(ms))


def _cupy_spin(handle: int, ms: float) -> None:
    cupy = sys.modules["cupy"]
    kernel = _state.get("cupy")
    if kernel is None:
        kernel = _state["cupy"] = cupy.RawKernel(_SPIN_SOURCE, "streamlint_spin")
    stream = cupy.cuda.ExternalStream(handle)
    kernel((1,), (1,), (cupy.int64(cycles_for(ms)),), stream=stream)


def _numba_spin(handle: int, ms: float) -> None:
    cuda = sys.modules["numba.cuda"]
    kernel = _state.get("numba")
    if kernel is None:

        def streamlint_spin(microseconds):
            for _ in range(microseconds):
                cuda.nanosleep(1000)

        kernel = _state["numba"] = cuda.jit(streamlint_spin)
    stream = cuda.default_stream() if handle == 0 else cuda.external_stream(handle)
    kernel[1, 1, stream](int(ms * 1000))


SPINNERS = {"torch": _torch_spin, "cupy": _cupy_spin, "numba.cuda": _numba_spin}


def spin(handle: int, ms: float) -> None:
    name = framework()
    if name is None:
        raise RuntimeError("no CUDA library (torch, cupy, numba) is imported to queue a spin kernel")
    SPINNERS[name](handle, ms)


def warm_up() -> None:
    """Compile and load the spin kernel before tracing (its JIT is not the program's)."""
    if framework() is not None:
        spin(0, 0.001)
