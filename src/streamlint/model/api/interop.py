"""Cross-framework views of one buffer (CUDA Array Interface, DLPack, raw pointers): no copy of
device memory, so what one framework's stream writes the other framework's stream reads."""

from __future__ import annotations

from streamlint.model.api.facts import Arg

# Host-side handles of a raw pointer (cffi, ctypes), as CUDA-aware MPI takes it: the same device
# memory. Qualified name -> the argument holding the pointer.
POINTER_WRAPPERS: dict[str, Arg] = {
    "cffi.FFI().cast": Arg(1, "init"),
    "cffi.FFI().buffer": Arg(0, "cdata"),
    "ctypes.cast": Arg(0, "obj"),
    "ctypes.c_void_p": Arg(0, "value"),
    # mpi4py's own buffer over a raw address (`MPI.memory` is the old name of `MPI.buffer`)
    "mpi4py.MPI.buffer.fromaddress": Arg(0, "address"),
    "mpi4py.MPI.memory.fromaddress": Arg(0, "address"),
}
# Arrays made over existing device memory (no allocation, no kernel): qualified name -> the argument
# holding the memory (absent: a new allocation).
MEMORY_VIEWS: dict[str, Arg] = {
    "cupy.ndarray": Arg(2, "memptr"),
}
# Attributes of an array that are its memory, or its address (a CuPy array's `.data.ptr`).
MEMORY_ATTRIBUTES = frozenset({"data", "ptr"})
# Of those, the addresses (Python ints: compared on the host, no kernel).
ADDRESS_ATTRIBUTES = frozenset({"ptr"})
# Methods of a tensor that return its address (a Python int that names its memory: `t.data_ptr()`).
ADDRESS_METHODS = frozenset({"data_ptr"})
# Classes whose instances provide those wrappers as methods.
POINTER_LIBRARY_CLASSES = frozenset({"cffi.FFI"})
