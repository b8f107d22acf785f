"""NCCL communicators driven with raw pointers: a collective is queued on the stream handed last, the pointer
arguments in order (a send buffer first) read or written there."""

from __future__ import annotations

from streamlint.model.api.mpi import Role

_SEND_RECV = (Role.SENT, Role.RECEIVED)

# The roles of the pointer arguments, in order, by method name.
COMMUNICATOR_METHODS: dict[str, tuple[Role, ...]] = {
    **{name: _SEND_RECV for name in (
        "allReduce", "allreduce", "reduce", "reduceScatter", "reduce_scatter",
        "allGather", "allgather", "broadcast",
    )},
    "bcast": (Role.BOTH,),  # one buffer: sent by the root, received by the others
    "send": (Role.SENT,),
    "recv": (Role.RECEIVED,),
}

# Attributes of a stream object that are its raw handle (CuPy's, PyTorch's, Numba's).
STREAM_HANDLE_ATTRS = frozenset({"ptr", "cuda_stream", "handle"})
