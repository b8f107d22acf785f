"""CuPy (API-FACTS.md section 2): every op runs on the thread's current stream unless given
`stream=`; `Stream()` is blocking unless `non_blocking=True`; `asnumpy`/`get` block by default."""

from __future__ import annotations

from streamlint.model.api.facts import Arg, Block, Fact, Stream
from streamlint.model.api.op_kinds import OpKind as K

F = "cupy"

FUNCTIONS: dict[str, Fact] = {
    "cupy.cuda.Stream": Fact(K.STREAM_CREATE, F, result="stream", creates_blocking="not:non_blocking"),
    # A wrapper of a stream made elsewhere: no stream is made (API-FACTS: it keeps the foreign flags)
    "cupy.cuda.ExternalStream": Fact(None, F, result="wrapped_stream", target=Arg(0, "ptr")),
    "cupy.cuda.Stream.from_external": Fact(None, F, result="wrapped_stream", target=Arg(0, "stream")),
    "cupy.cuda.get_current_stream": Fact(None, F, result="current_stream"),
    "cupy.cuda.Event": Fact(K.EVENT_CREATE, F, result="event"),
    "cupy.cuda.Device().synchronize": Fact(K.DEVICE_SYNC, F, blocking=Block.ALWAYS),
    "cupy.cuda.runtime.deviceSynchronize": Fact(K.DEVICE_SYNC, F, blocking=Block.ALWAYS),
    "cupy.cuda.runtime.streamSynchronize": Fact(K.STREAM_SYNC, F, blocking=Block.ALWAYS, target=Arg(0)),
    # `hostRegister(h.ctypes.data, nbytes, flags)`: cudaHostRegister, the host array page-locked in place
    "cupy.cuda.runtime.hostRegister": Fact(K.HOST_REGISTER, F, host=Arg(0, "ptr")),
    "cupy.asnumpy": Fact(
        K.COPY_D2H, F, stream=Stream.ARG_OR_CURRENT, stream_arg=Arg(1, "stream"), blocking=Block.FLAG,
        flag=Arg(kw="blocking"), flag_default=True, flag_blocks_when=True,
        result="pageable:numpy", out=Arg(3, "out"), async_api=True,
    ),
    # asarray/array stage a pageable source through CuPy's pinned pool: no SL301.
    **{f"cupy.{name}": Fact(K.COPY_H2D, F, stream=Stream.CURRENT, result="device:cupy", host=Arg(0, "a"))
       for name in ("asarray", "asanyarray", "ascontiguousarray")},
    "cupy.array": Fact(K.COPY_H2D, F, stream=Stream.CURRENT, result="device:cupy", host=Arg(0, "obj")),
    # DLPack imports: no copy of device memory (api/interop.py)
    **{f"cupy.{name}": Fact(None, F, result="device:cupy") for name in ("from_dlpack", "fromDlpack")},
    **{f"cupy.{name}": Fact(K.ALLOC, F, result="device:cupy") for name in ("empty", "empty_like")},
    **{f"cupyx.{name}_pinned": Fact(K.PINNED_ALLOC, F, result="pinned:numpy")
       for name in ("empty", "zeros", "empty_like", "zeros_like")},
    "cupy.cuda.alloc_pinned_memory": Fact(K.PINNED_ALLOC, F, result="pinned:raw"),
    "cupy.cuda.runtime.memcpy": Fact(
        K.COPY, F, stream=Stream.LEGACY, blocking=Block.ALWAYS, direction=Arg(3, "kind"), sync_api=True,
    ),
    "cupy.cuda.runtime.memcpyAsync": Fact(
        K.COPY, F, stream=Stream.ARG, stream_arg=Arg(4, "stream"), direction=Arg(3, "kind"), async_api=True,
    ),
    "cupy.cuda.runtime.memset": Fact(K.MEMSET, F, stream=Stream.LEGACY),
    "cupy.cuda.runtime.memsetAsync": Fact(K.MEMSET, F, stream=Stream.ARG, stream_arg=Arg(3, "stream")),
    "cupy.cuda.runtime.malloc": Fact(K.RAW_ALLOC, F, stream=Stream.LEGACY, result="device:raw"),
    "cupy.cuda.runtime.free": Fact(K.RAW_ALLOC, F, stream=Stream.LEGACY),
    # `cupy.copyto(dst, src)`: a kernel on the current stream that reads src and writes dst in place
    "cupy.copyto": Fact(K.KERNEL, F, stream=Stream.CURRENT, reads=(Arg(1, "src"),), writes=(Arg(0, "dst"),), result="none"),
    # A raw allocation from CuPy's pool: a MemoryPointer (pointer arithmetic keeps it).
    **{name: Fact(K.ALLOC, F, result="device:raw") for name in ("cupy.cuda.alloc", "cupy.cuda.memory.alloc")},
    # A raw kernel is launched as `kernel(grid, block, args)`: its arguments start at 2.
    "cupy.RawKernel": Fact(K.ALLOC, F, result="kernel:cupy:2"),
    **{f"cupy.{name}": Fact(K.ALLOC, F, result="kernel:cupy") for name in ("ElementwiseKernel", "ReductionKernel")},
    "cupy.RawModule().get_function": Fact(K.ALLOC, F, result="kernel:cupy:2"),
}

STREAM_METHODS: dict[str, Fact] = {
    "synchronize": Fact(K.STREAM_SYNC, F, stream=Stream.SELF, blocking=Block.ALWAYS),
    "use": Fact(K.SET_STREAM, F, stream=Stream.SELF, result="self"),
    # s.record(event=None): records the given event (or a new one) and returns it.
    "record": Fact(K.EVENT_RECORD, F, stream=Stream.SELF, result="event", target=Arg(0, "event")),
    "wait_event": Fact(K.STREAM_WAIT_EVENT, F, stream=Stream.SELF, target=Arg(0, "event")),
}

EVENT_METHODS: dict[str, Fact] = {
    "record": Fact(K.EVENT_RECORD, F, stream=Stream.ARG_OR_CURRENT, stream_arg=Arg(0, "stream")),
    "synchronize": Fact(K.EVENT_SYNC, F, blocking=Block.ALWAYS),
}

_WRITTEN = "device:cupy:written"  # (fact_calls.result_of: new device memory the kernel writes)
ARRAY_METHODS: dict[str, Fact] = {
    "get": Fact(
        K.COPY_D2H, F, stream=Stream.ARG_OR_CURRENT, stream_arg=Arg(0, "stream"), blocking=Block.FLAG,
        flag=Arg(3, "blocking"), flag_default=True, flag_blocks_when=True,
        result="pageable:numpy", out=Arg(2, "out"), async_api=True,
    ),
    "set": Fact(
        K.COPY_H2D, F, stream=Stream.ARG_OR_CURRENT, stream_arg=Arg(1, "stream"),
        host=Arg(0, "arr"), async_api=True,
    ),
    **{name: Fact(K.IMPLICIT_SYNC, F, stream=Stream.CURRENT, blocking=Block.ALWAYS)
       for name in ("item", "tolist", "tobytes", "tofile")},
    # views: the same memory, no device work
    **{name: Fact(None, F, result="self") for name in ("reshape", "view", "transpose", "swapaxes", "squeeze", "ravel")},
    # kernels on the current stream that write a new device array there (`fill`: in place)
    **{name: Fact(K.KERNEL, F, stream=Stream.CURRENT, self_reads=True, result=_WRITTEN) for name in (
        "sum", "mean", "max", "min", "argmax", "argmin", "prod", "std", "var", "cumsum", "cumprod", "astype", "copy",
        "dot", "clip", "round", "conj", "all", "any", "sort", "argsort", "take", "put", "repeat", "flatten",
        "trace", "diagonal", "ptp", "partition")},
    "fill": Fact(K.KERNEL, F, stream=Stream.CURRENT, self_writes=True, result=_WRITTEN),
}

# Methods of a raw allocation (`cupy.cuda.MemoryPointer`): device copies and fills queued on
# the given stream, else the current one (CuPy's memory.pyx).
MEMORY_POINTER_METHODS: dict[str, Fact] = {
    **dict.fromkeys(("copy_from_device", "copy_from_device_async"), Fact(
        K.COPY_D2D, F, stream=Stream.ARG_OR_CURRENT, stream_arg=Arg(2, "stream"), reads=(Arg(0, "src"),),
        self_writes=True)),
    **dict.fromkeys(("memset", "memset_async"),
                    Fact(K.MEMSET, F, stream=Stream.ARG_OR_CURRENT, stream_arg=Arg(2, "stream"), self_writes=True)),
}
# Of those, the methods no other object has: called on a value of unknown kind, they show it is a
# MemoryPointer, raw device memory (`dst.data.copy_from_device(src, n)`; D-11's evidence).
MEMORY_POINTER_ONLY = frozenset({"copy_from_device", "copy_from_device_async", "memset_async"})


# Functions whose result's size the data decides (`cupy.where(cond)` with one argument too): the host reads the size
# back before it can make the result, so it waits for the stream (as PyTorch's `nonzero` does).
SIZED_BY_DATA = frozenset({"nonzero", "argwhere", "flatnonzero", "unique", "extract", "compress"})

# Namespaces whose functions compute on device arrays (a call is a kernel launch).
KERNEL_NAMESPACES = frozenset({"cupy", "cupy.linalg", "cupy.fft", "cupyx.scipy.signal", "cupyx.scipy.ndimage", "cupyx.scipy.special"})
# (and host-side predicates and type helpers, which return Python values)
NON_KERNEL_FUNCTIONS = frozenset({
    "get_array_module", "get_default_memory_pool", "get_default_pinned_memory_pool", "dtype", "result_type", "can_cast",
    "isscalar", "ndim", "shape", "size", "iinfo", "finfo", "show_config", "is_available", "fuse", "vectorize",
    "asnumpy", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "bool_", "complex64", "complex128", "get_include", "memoize", "clear_memo", "broadcast_shapes",
    "printoptions", "set_printoptions", "issubdtype", "may_share_memory", "shares_memory", "common_type",
    "min_scalar_type", "promote_types", "iscomplexobj", "isrealobj", "isfortran", "obj2sctype",
})
# Streams named by a class attribute: the legacy default stream (`Stream.null`), the per-thread one.
STREAM_CONSTANTS = {"cupy.cuda.Stream.null": "legacy", "cupy.cuda.Stream.ptds": "per_thread"}
# Type tests that tell a CuPy array from a host array (`get_array_module(x) is numpy`, `isinstance(x, cupy.ndarray)`).
ARRAY_MODULE_FUNCTIONS = frozenset({"cupy.get_array_module", "cupyx.scipy.get_array_module"})
DEVICE_ARRAY_TYPES = frozenset({"cupy.ndarray"})
DEVICE_MODULE = "cupy"
HOST_MODULE = "numpy"

# Namespaces whose functions make new device arrays filled by a kernel (`cp.random.random(n)`).
CREATING_NAMESPACES = frozenset({"cupy.random"})
