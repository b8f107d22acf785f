"""cuda.core (`cuda.core`, older `cuda.core.experimental`): NVIDIA's Pythonic object API. Streams
are non-blocking unless `StreamOptions(nonblocking=False)`; `launch(stream, config, kernel, *args)`
runs compiled C++ we do not read, so every array argument may be written."""

from __future__ import annotations

from streamlint.model.api.facts import Arg, Block, Fact, Stream
from streamlint.model.api.op_kinds import OpKind as K

F = "cuda-python"
C = "cuda.core"

MODULE_ALIASES: dict[str, str] = {"cuda.core.experimental": C}

FUNCTIONS: dict[str, Fact] = {
    f"{C}.Device().create_stream": Fact(K.STREAM_CREATE, F, result="stream", creates_blocking="cuda_core"),
    f"{C}.Device().create_event": Fact(K.EVENT_CREATE, F, result="event"),
    f"{C}.Device().sync": Fact(K.DEVICE_SYNC, F, blocking=Block.ALWAYS),
    f"{C}.Device().allocate": Fact(K.ALLOC, F, stream_arg=Arg(1, "stream"), result="device:cuda-python"),
    f"{C}.Device().create_graph_builder": Fact(None, F, result="capture"),
    f"{C}.launch": Fact(
        K.KERNEL, F, stream=Stream.ARG, stream_arg=Arg(0, "stream"), reads_from=3, args_written=True,
    ),
    f"{C}.DeviceMemoryResource().allocate": Fact(K.ALLOC, F, stream_arg=Arg(1, "stream"), result="device:cuda-python"),
    f"{C}.PinnedMemoryResource().allocate": Fact(K.PINNED_ALLOC, F, result="pinned:cuda-python"),
    f"{C}.LegacyPinnedMemoryResource().allocate": Fact(K.PINNED_ALLOC, F, result="pinned:cuda-python"),
}

STREAM_METHODS: dict[str, Fact] = {
    "sync": Fact(K.STREAM_SYNC, F, stream=Stream.SELF, blocking=Block.ALWAYS),
    "record": Fact(K.EVENT_RECORD, F, stream=Stream.SELF, result="event", target=Arg(0, "event")),
    # wait(event_or_stream): the flow picks WAIT_STREAM when given a stream.
    "wait": Fact(K.STREAM_WAIT_EVENT, F, stream=Stream.SELF, target=Arg(0, "event_or_stream")),
    "create_graph_builder": Fact(None, F, result="capture"),
}

EVENT_METHODS: dict[str, Fact] = {
    "sync": Fact(K.EVENT_SYNC, F, blocking=Block.ALWAYS),
}

# Methods of a cuda.core Buffer (device memory): copies on the required `stream`.
BUFFER_METHODS: dict[str, Fact] = {
    "copy_to": Fact(K.COPY_D2D, F, stream=Stream.ARG, stream_arg=Arg(1, "stream"), self_reads=True,
                    writes=(Arg(0, "dst"),)),
    "copy_from": Fact(K.COPY_D2D, F, stream=Stream.ARG, stream_arg=Arg(1, "stream"), self_writes=True,
                      reads=(Arg(0, "src"),)),
}
