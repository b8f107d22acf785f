"""CuPy: every op runs on the thread's current stream unless given `stream=`.

API-FACTS.md section 2. `Stream()` is blocking unless `non_blocking=True`;
`asnumpy`/`get` block by default (CuPy >= 13) and synchronize the whole stream.
"""

from __future__ import annotations

from streamlint.model.api.facts import (
    BLOCK_ALWAYS,
    BLOCK_FLAG,
    STREAM_ARG,
    STREAM_ARG_OR_CURRENT,
    STREAM_CURRENT,
    STREAM_LEGACY,
    STREAM_SELF,
    Arg,
    Fact,
)
from streamlint.model.api.op_kinds import OpKind as K

F = "cupy"


FUNCTIONS: dict[str, Fact] = {
    "cupy.cuda.Stream": Fact(K.STREAM_CREATE, F, result="stream", creates_blocking="not:non_blocking"),
    "cupy.cuda.ExternalStream": Fact(K.STREAM_CREATE, F, result="stream", creates_blocking="unknown"),
    "cupy.cuda.Stream.from_external": Fact(K.STREAM_CREATE, F, result="stream", creates_blocking="unknown"),
    "cupy.cuda.get_current_stream": Fact(None, F, result="current_stream"),
    "cupy.cuda.Event": Fact(K.EVENT_CREATE, F, result="event"),
    "cupy.cuda.Device().synchronize": Fact(K.DEVICE_SYNC, F, blocking=BLOCK_ALWAYS),
    "cupy.cuda.runtime.deviceSynchronize": Fact(K.DEVICE_SYNC, F, blocking=BLOCK_ALWAYS),
    "cupy.cuda.runtime.streamSynchronize": Fact(K.STREAM_SYNC, F, blocking=BLOCK_ALWAYS, target=Arg(0)),
    "cupy.asnumpy": Fact(
        K.COPY_D2H, F, stream=STREAM_ARG_OR_CURRENT, stream_arg=Arg(1, "stream"), blocking=BLOCK_FLAG,
        flag=Arg(kw="blocking"), flag_default=True, flag_blocks_when=True,
        result="pageable:numpy", out=Arg(3, "out"), async_api=True,
    ),
    # asarray/array stage a pageable source through CuPy's pinned pool: no SL301.
    "cupy.asarray": Fact(K.COPY_H2D, F, stream=STREAM_CURRENT, result="device:cupy", host=Arg(0, "a")),
    "cupy.array": Fact(K.COPY_H2D, F, stream=STREAM_CURRENT, result="device:cupy", host=Arg(0, "obj")),
    "cupy.asanyarray": Fact(K.COPY_H2D, F, stream=STREAM_CURRENT, result="device:cupy", host=Arg(0, "a")),
    "cupy.ascontiguousarray": Fact(K.COPY_H2D, F, stream=STREAM_CURRENT, result="device:cupy", host=Arg(0, "a")),
    # DLPack imports: no copy of device memory (api/interop.py)
    "cupy.from_dlpack": Fact(None, F, result="device:cupy"),
    "cupy.fromDlpack": Fact(None, F, result="device:cupy"),
    "cupy.empty": Fact(K.ALLOC, F, result="device:cupy"),
    "cupy.empty_like": Fact(K.ALLOC, F, result="device:cupy"),
    "cupyx.empty_pinned": Fact(K.PINNED_ALLOC, F, result="pinned:numpy"),
    "cupyx.zeros_pinned": Fact(K.PINNED_ALLOC, F, result="pinned:numpy"),
    "cupyx.empty_like_pinned": Fact(K.PINNED_ALLOC, F, result="pinned:numpy"),
    "cupyx.zeros_like_pinned": Fact(K.PINNED_ALLOC, F, result="pinned:numpy"),
    "cupy.cuda.alloc_pinned_memory": Fact(K.PINNED_ALLOC, F, result="pinned:raw"),
    "cupy.cuda.runtime.memcpy": Fact(
        K.COPY, F, stream=STREAM_LEGACY, blocking=BLOCK_ALWAYS, direction=Arg(3, "kind"), sync_api=True,
    ),
    "cupy.cuda.runtime.memcpyAsync": Fact(
        K.COPY, F, stream=STREAM_ARG, stream_arg=Arg(4, "stream"), direction=Arg(3, "kind"), async_api=True,
    ),
    "cupy.cuda.runtime.memset": Fact(K.MEMSET, F, stream=STREAM_LEGACY),
    "cupy.cuda.runtime.memsetAsync": Fact(K.MEMSET, F, stream=STREAM_ARG, stream_arg=Arg(3, "stream")),
    "cupy.cuda.runtime.malloc": Fact(K.RAW_ALLOC, F, stream=STREAM_LEGACY, result="device:raw"),
    "cupy.cuda.runtime.free": Fact(K.RAW_ALLOC, F, stream=STREAM_LEGACY),
    # A raw allocation from CuPy's pool: a MemoryPointer (pointer arithmetic keeps it).
    "cupy.cuda.alloc": Fact(K.ALLOC, F, result="device:raw"),
    "cupy.cuda.memory.alloc": Fact(K.ALLOC, F, result="device:raw"),
    # A raw kernel is launched as `kernel(grid, block, args)`: its arguments start at 2.
    "cupy.RawKernel": Fact(K.ALLOC, F, result="kernel:cupy:2"),
    "cupy.ElementwiseKernel": Fact(K.ALLOC, F, result="kernel:cupy"),
    "cupy.ReductionKernel": Fact(K.ALLOC, F, result="kernel:cupy"),
    "cupy.RawModule().get_function": Fact(K.ALLOC, F, result="kernel:cupy:2"),
}


STREAM_METHODS: dict[str, Fact] = {
    "synchronize": Fact(K.STREAM_SYNC, F, stream=STREAM_SELF, blocking=BLOCK_ALWAYS),
    "use": Fact(K.SET_STREAM, F, stream=STREAM_SELF, result="self"),
    # s.record(event=None): records the given event (or a new one) and returns it.
    "record": Fact(K.EVENT_RECORD, F, stream=STREAM_SELF, result="event", target=Arg(0, "event")),
    "wait_event": Fact(K.STREAM_WAIT_EVENT, F, stream=STREAM_SELF, target=Arg(0, "event")),
}

EVENT_METHODS: dict[str, Fact] = {
    "record": Fact(K.EVENT_RECORD, F, stream=STREAM_ARG_OR_CURRENT, stream_arg=Arg(0, "stream")),
    "synchronize": Fact(K.EVENT_SYNC, F, blocking=BLOCK_ALWAYS),
}

ARRAY_METHODS: dict[str, Fact] = {
    "get": Fact(
        K.COPY_D2H, F, stream=STREAM_ARG_OR_CURRENT, stream_arg=Arg(0, "stream"), blocking=BLOCK_FLAG,
        flag=Arg(3, "blocking"), flag_default=True, flag_blocks_when=True,
        result="pageable:numpy", out=Arg(2, "out"), async_api=True,
    ),
    "set": Fact(
        K.COPY_H2D, F, stream=STREAM_ARG_OR_CURRENT, stream_arg=Arg(1, "stream"),
        host=Arg(0, "arr"), async_api=True,
    ),
    "item": Fact(K.IMPLICIT_SYNC, F, stream=STREAM_CURRENT, blocking=BLOCK_ALWAYS),
    "tolist": Fact(K.IMPLICIT_SYNC, F, stream=STREAM_CURRENT, blocking=BLOCK_ALWAYS),
    "tobytes": Fact(K.IMPLICIT_SYNC, F, stream=STREAM_CURRENT, blocking=BLOCK_ALWAYS),
    "tofile": Fact(K.IMPLICIT_SYNC, F, stream=STREAM_CURRENT, blocking=BLOCK_ALWAYS),
}

# Methods of a raw allocation (`cupy.cuda.MemoryPointer`): device copies and fills queued on
# the given stream, else the current one (CuPy's memory.pyx).
_D2D_INTO_SELF = Fact(
    K.COPY_D2D, F, stream=STREAM_ARG_OR_CURRENT, stream_arg=Arg(2, "stream"), reads=(Arg(0, "src"),),
    self_writes=True,
)
_MEMSET_SELF = Fact(K.MEMSET, F, stream=STREAM_ARG_OR_CURRENT, stream_arg=Arg(2, "stream"), self_writes=True)
MEMORY_POINTER_METHODS: dict[str, Fact] = {
    "copy_from_device": _D2D_INTO_SELF,
    "copy_from_device_async": _D2D_INTO_SELF,
    "memset": _MEMSET_SELF,
    "memset_async": _MEMSET_SELF,
}
# Of those, the methods no other framework's object or builtin has: calling one on a value the
# code says nothing else about shows it is a MemoryPointer, raw device memory (`dst.data.
# copy_from_device(src, n)` for a parameter `dst`: an array's `.data`), as D-11 takes a
# CUDA-only method as evidence.
MEMORY_POINTER_ONLY = frozenset({"copy_from_device", "copy_from_device_async", "memset_async"})

# Array methods that launch a kernel on the current stream and return a device array.
KERNEL_METHODS = frozenset({
    "sum", "mean", "max", "min", "argmax", "argmin", "prod", "std", "var", "cumsum", "cumprod",
    "astype", "copy", "fill", "dot", "clip", "round", "conj", "all", "any", "sort", "argsort",
    "take", "put", "repeat", "flatten", "trace", "diagonal", "ptp", "partition",
})
# cupy.<name>(dst, src, ...) writes its first argument in place (and returns None).
DESTINATION_FIRST = frozenset({"copyto"})
# Array methods that only make a view (no device work).
VIEW_METHODS = frozenset({"reshape", "view", "transpose", "swapaxes", "squeeze", "ravel"})

# Namespaces whose functions compute on device arrays (a call is a kernel launch).
KERNEL_NAMESPACES = frozenset({"cupy", "cupy.linalg", "cupy.fft", "cupyx.scipy.signal", "cupyx.scipy.ndimage", "cupyx.scipy.special"})
NON_KERNEL_FUNCTIONS = frozenset({
    "get_array_module", "get_default_memory_pool", "get_default_pinned_memory_pool", "dtype",
    "result_type", "can_cast", "isscalar", "ndim", "shape", "size", "iinfo", "finfo", "show_config",
    "is_available", "fuse", "vectorize", "asnumpy", "float16", "float32", "float64", "int8", "int16",
    "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool_", "complex64", "complex128",
    "get_include", "memoize", "clear_memo", "broadcast_shapes", "printoptions", "set_printoptions",
    # host-side predicates and type helpers (they return Python values, not arrays)
    "issubdtype", "may_share_memory", "shares_memory", "common_type", "min_scalar_type",
    "promote_types", "iscomplexobj", "isrealobj", "isfortran", "obj2sctype", "asnumpy",
    "get_default_memory_pool", "is_available",
})

# Type tests that tell a CuPy array (device memory) from a host array: code under the
# test's device side works on a device array (narrowing, flow.Walker.array_kind_test).
# `get_array_module(x)` is the `cupy` module for a CuPy array and `numpy` otherwise, so
# `get_array_module(x) is numpy` holds on the host side, `is cupy` / `is not numpy` on the
# device side; `isinstance(x, cupy.ndarray)` on the device side.
# Streams named by a class attribute: the legacy default stream (`Stream.null`), the per-thread
# default stream (`Stream.ptds`).
STREAM_CONSTANTS = {"cupy.cuda.Stream.null": "legacy", "cupy.cuda.Stream.ptds": "per_thread"}
ARRAY_MODULE_FUNCTIONS = frozenset({"cupy.get_array_module", "cupyx.scipy.get_array_module"})
DEVICE_ARRAY_TYPES = frozenset({"cupy.ndarray"})
DEVICE_MODULE = "cupy"
HOST_MODULE = "numpy"

# Namespaces whose functions make new device arrays filled by a kernel (`cp.random.random(n)`).
CREATING_NAMESPACES = frozenset({"cupy.random"})
