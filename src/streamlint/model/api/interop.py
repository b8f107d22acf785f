"""Cross-framework views of one buffer: CUDA Array Interface and DLPack.

`cp.asarray(cuda_tensor)`, `torch.as_tensor(cupy_array)`, `numba.cuda.as_cuda_array(t)`,
`cp.from_dlpack(t)`, `torch.from_dlpack(a)` / `torch.utils.dlpack.from_dlpack` and
`numba.cuda.from_cuda_array_interface` make no copy when the source is on the device: the
result is the same memory (one buffer, two names), so what one framework's stream writes the
other framework's stream reads. From host memory, the CuPy and torch spellings copy
(`cp.asarray(numpy_array)` is an H2D copy, in cupy.py); DLPack and CAI imports of host memory
stay host memory.
"""

from __future__ import annotations

from streamlint.model.api.facts import Arg

# Host-side handles of a raw pointer (cffi, ctypes): the same device memory under
# another name, as CUDA-aware MPI takes it (`ffi.buffer(ffi.cast("void *", mem.ptr), n)`).
# qualified name -> the argument holding the pointer.
POINTER_WRAPPERS: dict[str, Arg] = {
    "cffi.FFI().cast": Arg(1, "init"),
    "cffi.FFI().buffer": Arg(0, "cdata"),
    "ctypes.cast": Arg(0, "obj"),
    "ctypes.c_void_p": Arg(0, "value"),
    # mpi4py's own buffer over a raw address (`MPI.memory` is the old name of `MPI.buffer`)
    "mpi4py.MPI.buffer.fromaddress": Arg(0, "address"),
    "mpi4py.MPI.memory.fromaddress": Arg(0, "address"),
}
# Arrays made over existing device memory: `cupy.ndarray(shape, dtype, memptr=mem)` is
# no allocation and no kernel, it is the memory `memptr` points into, seen as an array.
# qualified name -> the argument holding the memory (absent: a new allocation).
MEMORY_VIEWS: dict[str, Arg] = {
    "cupy.ndarray": Arg(2, "memptr"),
}
# Attributes of an array that are its memory, or the address of it: a tensor's `.data`,
# a CuPy array's `.data` (a MemoryPointer) and that pointer's `.ptr`.
MEMORY_ATTRIBUTES = frozenset({"data", "ptr"})
# Of those, the ones that are an address (a Python int naming the memory): compared, the host
# compares numbers (`a.data.ptr == b.data.ptr`); no kernel runs and nothing is waited for.
ADDRESS_ATTRIBUTES = frozenset({"ptr"})
# Classes whose instances provide those wrappers as methods.
POINTER_LIBRARY_CLASSES = frozenset({"cffi.FFI"})
