"""Raw handles (streams, events, pointers) as ints, whatever binding made them, and the
byte ranges of device arrays of any framework."""

from __future__ import annotations

from typing import Any, Optional

from .log_writer import array_range, extent


def handle_int(h: Any) -> int:
    """A CUDA handle as an int: ctypes pointers, cuda-python objects, CuPy/Numba wrappers."""
    if h is None:
        return 0
    if isinstance(h, int):
        return h
    protocol = getattr(h, "__cuda_stream__", None)
    if callable(protocol):
        return int(protocol()[1])
    for attr in ("ptr", "handle"):
        inner = getattr(h, attr, None)
        if inner is not None and inner is not h:
            return handle_int(inner)
    if hasattr(h, "value"):  # ctypes c_void_p
        return int(h.value or 0)
    try:
        return int(h)
    except (TypeError, ValueError):
        pass
    get_ptr = getattr(h, "getPtr", None)
    return int(get_ptr()) if callable(get_ptr) else id(h)


def device_range(obj: Any) -> Optional[tuple[int, int]]:
    """Bytes a CuPy or Numba device array (or any CUDA-array-interface object) spans."""
    data = getattr(obj, "data", None)
    if data is not None and hasattr(data, "ptr") and hasattr(obj, "strides"):  # CuPy
        return extent(int(data.ptr), obj.shape, obj.strides, obj.itemsize)
    pointer = getattr(obj, "device_ctypes_pointer", None)
    if pointer is not None:  # Numba
        return extent(int(pointer.value or 0), obj.shape, obj.strides, obj.dtype.itemsize)
    if hasattr(obj, "__cuda_array_interface__"):
        return array_range(obj)
    return None


def host_range(obj: Any) -> Optional[tuple[int, int]]:
    if hasattr(obj, "__array_interface__") and not hasattr(obj, "__cuda_array_interface__"):
        return array_range(obj)
    return None
