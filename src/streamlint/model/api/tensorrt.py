"""TensorRT's execution context (`tensorrt.IExecutionContext`, the Python API's ExecutionContext page): inference is
queued on the stream handle it is given and reads and writes the device memory bound to it by address, as the
`bindings` list of the older calls or through `set_tensor_address(name, address)`; nothing of it is ordered after the
caller's current stream. These method names exist on TensorRT's context only, so a call of one shows what its receiver
is (as a stream's own method does)."""

from __future__ import annotations

from streamlint.model.api.facts import Arg, Fact, Stream
from streamlint.model.api.op_kinds import OpKind as K

F = "tensorrt"

# Inference queued on the handle given: it reads and writes every buffer bound to it (inputs and outputs alike;
# which binding is which is the engine's, not the text's).
_BINDINGS_V2 = Arg(0, "bindings")
_BINDINGS_V1 = Arg(1, "bindings")
CONTEXT_METHODS: dict[str, Fact] = {
    # the addresses set on the context (the memory it keeps); a context is never memory itself
    "execute_async_v3": Fact(K.KERNEL, F, stream=Stream.ARG, stream_arg=Arg(0, "stream_handle"), self_kept=True),
    "execute_async_v2": Fact(K.KERNEL, F, stream=Stream.ARG, stream_arg=Arg(1, "stream_handle"),
                             reads=(_BINDINGS_V2,), writes=(_BINDINGS_V2,)),
    "execute_async": Fact(K.KERNEL, F, stream=Stream.ARG, stream_arg=Arg(2, "stream_handle"),
                          reads=(_BINDINGS_V1,), writes=(_BINDINGS_V1,)),
}
# Methods that bind an address to the context: it keeps that memory for the launches after it.
BINDING_METHODS = frozenset({"set_tensor_address"})
