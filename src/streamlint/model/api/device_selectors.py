"""Calls that make a device current, by qualified name: a loop whose every pass selects the device its item names
runs once per device (a few passes, judged by the loop around it)."""

from __future__ import annotations

DEVICE_SELECTORS = frozenset({
    "torch.cuda.device", "torch.cuda.set_device",
    "cupy.cuda.Device", "cupy.cuda.runtime.setDevice",
    "numba.cuda.select_device",
    "cuda.bindings.runtime.cudaSetDevice", "cuda.cudart.cudaSetDevice",
})
