"""cuda-python (`cuda.bindings.runtime`/`driver`, API-FACTS.md section 5): explicit streams only
(0/None: the legacy default stream); every call returns (error, value); streams block unless flagged."""

from __future__ import annotations

from streamlint.model.api.facts import Arg, Block, Fact, Stream
from streamlint.model.api.op_kinds import OpKind as K

RT = "cuda.bindings.runtime"
DRV = "cuda.bindings.driver"
F = "cuda-python"


def _t(kind, **kw) -> Fact:
    return Fact(kind, F, returns_tuple=True, **kw)


# Copies take the destination first, then the source (`cudaMemcpy2D(dst, dpitch, src, ...)`).
_DST_SRC = (Arg(0, "dst"), Arg(1, "src"))
_DST_SRC_2D = (Arg(0, "dst"), Arg(2, "src"))


RUNTIME: dict[str, Fact] = {
    "cudaStreamCreate": _t(K.STREAM_CREATE, result="stream", creates_blocking="yes"),
    **dict.fromkeys(("cudaStreamCreateWithFlags", "cudaStreamCreateWithPriority"),
                    _t(K.STREAM_CREATE, result="stream", creates_blocking="flags:0")),
    "cudaStreamSynchronize": _t(K.STREAM_SYNC, blocking=Block.ALWAYS, target=Arg(0)),
    "cudaStreamWaitEvent": _t(K.STREAM_WAIT_EVENT, stream=Stream.ARG, stream_arg=Arg(0), target=Arg(1)),
    "cudaDeviceSynchronize": _t(K.DEVICE_SYNC, blocking=Block.ALWAYS),
    **dict.fromkeys(("cudaEventCreate", "cudaEventCreateWithFlags"), _t(K.EVENT_CREATE, result="event")),
    "cudaEventRecord": _t(K.EVENT_RECORD, stream=Stream.ARG, stream_arg=Arg(1), target=Arg(0)),
    "cudaEventSynchronize": _t(K.EVENT_SYNC, blocking=Block.ALWAYS, target=Arg(0)),
    "cudaMemcpy": _t(K.COPY, stream=Stream.LEGACY, blocking=Block.ALWAYS, direction=Arg(3), sync_api=True),
    "cudaMemcpyAsync": _t(K.COPY, stream=Stream.ARG, stream_arg=Arg(4), direction=Arg(3), async_api=True),
    "cudaMemcpy2D": _t(K.COPY, stream=Stream.LEGACY, blocking=Block.ALWAYS, direction=Arg(6), sync_api=True,
                       ends=_DST_SRC_2D),
    "cudaMemcpy2DAsync": _t(K.COPY, stream=Stream.ARG, stream_arg=Arg(7), direction=Arg(6), async_api=True,
                            ends=_DST_SRC_2D),
    "cudaMemset": _t(K.MEMSET, stream=Stream.LEGACY),
    "cudaMemsetAsync": _t(K.MEMSET, stream=Stream.ARG, stream_arg=Arg(3)),
    "cudaMalloc": _t(K.RAW_ALLOC, stream=Stream.LEGACY, result="device:raw"),
    "cudaFree": _t(K.RAW_ALLOC, stream=Stream.LEGACY),
    "cudaMallocAsync": _t(K.ALLOC, stream=Stream.ARG, stream_arg=Arg(1), result="device:raw"),
    "cudaFreeAsync": _t(K.ALLOC, stream=Stream.ARG, stream_arg=Arg(1)),
    **dict.fromkeys(("cudaMallocHost", "cudaHostAlloc"), _t(K.PINNED_ALLOC, result="pinned:raw")),
    "cudaHostRegister": _t(K.HOST_REGISTER, host=Arg(0)),
    "cudaLaunchKernel": _t(K.KERNEL, stream=Stream.ARG, stream_arg=Arg(5)),
    "cudaGraphLaunch": _t(K.KERNEL, stream=Stream.ARG, stream_arg=Arg(1)),
}

# Driver calls that do what a runtime call does.
_TWINS = {
    "cuStreamCreateWithPriority": "cudaStreamCreateWithPriority", "cuStreamSynchronize": "cudaStreamSynchronize",
    "cuStreamWaitEvent": "cudaStreamWaitEvent", "cuCtxSynchronize": "cudaDeviceSynchronize",
    "cuEventCreate": "cudaEventCreate", "cuEventRecord": "cudaEventRecord",
    "cuEventSynchronize": "cudaEventSynchronize",
    "cuMemAlloc": "cudaMalloc", "cuMemFree": "cudaFree", "cuMemAllocAsync": "cudaMallocAsync",
    "cuMemAllocHost": "cudaMallocHost", "cuMemHostAlloc": "cudaHostAlloc", "cuMemHostRegister": "cudaHostRegister",
    "cuGraphLaunch": "cudaGraphLaunch",
}

DRIVER: dict[str, Fact] = {
    **{driver: RUNTIME[runtime] for driver, runtime in _TWINS.items()},
    "cuStreamCreate": _t(K.STREAM_CREATE, result="stream", creates_blocking="flags:0"),
    "cuMemcpyHtoD": _t(K.COPY_H2D, stream=Stream.LEGACY, blocking=Block.ALWAYS, host=Arg(1), sync_api=True,
                       ends=_DST_SRC),
    "cuMemcpyDtoH": _t(K.COPY_D2H, stream=Stream.LEGACY, blocking=Block.ALWAYS, host=Arg(0), sync_api=True,
                       ends=_DST_SRC),
    "cuMemcpyDtoD": _t(K.COPY_D2D, stream=Stream.LEGACY, ends=_DST_SRC),
    "cuMemcpyHtoDAsync": _t(K.COPY_H2D, stream=Stream.ARG, stream_arg=Arg(3), host=Arg(1), async_api=True,
                            ends=_DST_SRC),
    "cuMemcpyDtoHAsync": _t(K.COPY_D2H, stream=Stream.ARG, stream_arg=Arg(3), host=Arg(0), async_api=True,
                            ends=_DST_SRC),
    "cuMemcpyDtoDAsync": _t(K.COPY_D2D, stream=Stream.ARG, stream_arg=Arg(3), ends=_DST_SRC),
    **{f"cuMemsetD{bits}": _t(K.MEMSET, stream=Stream.LEGACY) for bits in (8, 16, 32)},
    **{f"cuMemsetD{bits}Async": _t(K.MEMSET, stream=Stream.ARG, stream_arg=Arg(3)) for bits in (8, 16, 32)},
    "cuLaunchKernel": _t(K.KERNEL, stream=Stream.ARG, stream_arg=Arg(8, "hStream")),
}

FUNCTIONS: dict[str, Fact] = {
    **{f"{RT}.{name}": fact for name, fact in RUNTIME.items()},
    **{f"{DRV}.{name}": fact for name, fact in DRIVER.items()},
}

# Named stream handles.
LEGACY_HANDLES = frozenset({f"{RT}.cudaStreamLegacy", f"{DRV}.CU_STREAM_LEGACY"})
PER_THREAD_HANDLES = frozenset({f"{RT}.cudaStreamPerThread", f"{DRV}.CU_STREAM_PER_THREAD"})
# Stream creation flags, by the last component of their name.
BLOCKING_FLAGS = frozenset({"cudaStreamDefault", "CU_STREAM_DEFAULT"})

# The framework of memory known by a raw address ("device:raw"): an offset added is the same allocation.
RAW_ADDRESS = "raw"

# A copy's direction argument (`cudaMemcpyKind`, CuPy's `kind`), by its last name or its number.
COPY_DIRECTIONS = {
    "cudaMemcpyHostToDevice": "h2d", "cudaMemcpyDeviceToHost": "d2h", "cudaMemcpyDeviceToDevice": "d2d",
    "memcpyHostToDevice": "h2d", "memcpyDeviceToHost": "d2h", "memcpyDeviceToDevice": "d2d",
    "1": "h2d", "2": "d2h", "3": "d2d",
}
