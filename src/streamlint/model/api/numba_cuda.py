"""Numba-CUDA (API-FACTS.md section 3): no current stream, every API takes `stream=0` (the legacy
default stream); a device array's transfers use its bound stream; a falsy stream copies synchronously."""

from __future__ import annotations

from streamlint.model.api.facts import Arg, Block, Fact, Stream
from streamlint.model.api.op_kinds import OpKind as K

F = "numba"
# The target of a stream context that changes no current stream and synchronizes at its exit.
SYNC_ON_EXIT = "synchronize on exit"

FUNCTIONS: dict[str, Fact] = {
    "numba.cuda.stream": Fact(K.STREAM_CREATE, F, result="stream", creates_blocking="yes"),
    "numba.cuda.default_stream": Fact(None, F, result="legacy_stream"),
    "numba.cuda.legacy_default_stream": Fact(None, F, result="legacy_stream"),
    "numba.cuda.per_thread_default_stream": Fact(None, F, result="per_thread_stream"),
    # a wrapper of a stream made elsewhere: no stream is made, the foreign flags kept
    "numba.cuda.external_stream": Fact(None, F, result="wrapped_stream", target=Arg(0, "ptr")),
    "numba.cuda.event": Fact(K.EVENT_CREATE, F, result="event"),
    "numba.cuda.synchronize": Fact(K.DEVICE_SYNC, F, blocking=Block.ALWAYS),
    "numba.cuda.to_device": Fact(
        K.COPY_H2D, F, stream=Stream.ARG, stream_arg=Arg(1, "stream"), blocking=Block.UNLESS_STREAM,
        result="device:numba:bound", host=Arg(0, "obj"), sync_api=True, async_api=True,
    ),
    "numba.cuda.device_array": Fact(K.ALLOC, F, stream=Stream.ARG, stream_arg=Arg(4, "stream"), result="device:numba:bound"),
    "numba.cuda.device_array_like": Fact(K.ALLOC, F, stream=Stream.ARG, stream_arg=Arg(1, "stream"), result="device:numba:bound"),
    # `with cuda.pinned(h):` page-locks the host array in place for the block
    "numba.cuda.pinned": Fact(K.HOST_REGISTER, F, host=Arg(0)),
    **{f"numba.cuda.{kind}_array{like}": Fact(K.PINNED_ALLOC, F, result=result) for kind, result in (
        ("pinned", "pinned:numpy"), ("mapped", "mapped:numba")) for like in ("", "_like")},
    "numba.cuda.managed_array": Fact(K.ALLOC, F, result="mapped:numba"),
    "numba.cuda.as_cuda_array": Fact(None, F, result="device:numba"),
    "numba.cuda.from_cuda_array_interface": Fact(None, F, result="device:numba"),
    "numba.cuda.jit": Fact(None, F, result="kernel:numba"),
}

# Calls that only allocate when a flag says not to copy (`cuda.to_device(h, stream, copy=False)`: memory shaped like
# `h`, nothing copied): the flag, and the call the flag makes it.
WITHOUT_COPY: dict[str, tuple[Arg, str]] = {
    "numba.cuda.to_device": (Arg(2, "copy"), "numba.cuda.device_array_like"),
}

STREAM_METHODS: dict[str, Fact] = {
    "synchronize": Fact(K.STREAM_SYNC, F, stream=Stream.SELF, blocking=Block.ALWAYS),
    # `await s.async_done()`: the coroutine resumes once the stream has drained.
    "async_done": Fact(K.STREAM_SYNC, F, stream=Stream.SELF),
    # `with s.auto_synchronize():` a context whose exit synchronizes the stream
    "auto_synchronize": Fact(None, F, result=SYNC_ON_EXIT),
}

EVENT_METHODS: dict[str, Fact] = {
    # (stream=0: the legacy default stream, not any bound stream)
    "record": Fact(K.EVENT_RECORD, F, stream=Stream.ARG, stream_arg=Arg(0, "stream")),
    "wait": Fact(K.STREAM_WAIT_EVENT, F, stream=Stream.ARG, stream_arg=Arg(0, "stream")),
    "synchronize": Fact(K.EVENT_SYNC, F, blocking=Block.ALWAYS),
    "elapsed_time": Fact(K.HOST_TIMER, F),  # (`start.elapsed_time(end)`, as `cuda.event_elapsed_time`)
}

ARRAY_METHODS: dict[str, Fact] = {
    "copy_to_host": Fact(
        K.COPY_D2H, F, stream=Stream.ARG_OR_BOUND, stream_arg=Arg(1, "stream"), blocking=Block.UNLESS_STREAM,
        result="pageable:numpy", out=Arg(0, "ary"), sync_api=True, async_api=True,
    ),
    "copy_to_device": Fact(
        K.COPY_H2D, F, stream=Stream.ARG_OR_BOUND, stream_arg=Arg(1, "stream"), blocking=Block.UNLESS_STREAM,
        host=Arg(0, "ary"), sync_api=True, async_api=True,
    ),
}

# Type tests that hold on the device side (`isinstance(x, DeviceNDArray)`, `cuda.is_cuda_array(x)`).
DEVICE_ARRAY_TYPES = frozenset({
    "numba.cuda.cudadrv.devicearray.DeviceNDArray", "numba.cuda.devicearray.DeviceNDArray",
})
DEVICE_ARRAY_TESTS = frozenset({"numba.cuda.is_cuda_array"})

# `cuda.atomic.<op>(array, index, value)` in a kernel stores into `array`, as `array[index] op= value`.
ATOMIC_NAMESPACE = "atomic"
ATOMIC_OPERATIONS = frozenset({
    "add", "sub", "and_", "or_", "xor", "inc", "dec", "exch", "max", "min", "nanmax", "nanmin", "compare_and_swap",
    "cas",
})
