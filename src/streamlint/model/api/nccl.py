"""NCCL communicators driven from Python with raw pointers: CuPy's
`cupy.cuda.nccl.NcclCommunicator` and the wrappers projects build the same way.

Each collective takes device pointers (`x.data.ptr`, a memory pointer's `.ptr`) and a
stream handle (`stream.ptr`) last: the collective is queued on that stream, reads the
send buffer and writes the receive buffer there (NCCL's own semantics: "the operation
is enqueued on the given stream"). Whatever the wrapper, a send buffer comes before the
receive buffer (NCCL 1 put the count between them for `allGather`; NCCL 2 does not), so
the roles are given per pointer argument in order, not per position.

A call is taken for one of these only when its method has one of these names and it is
handed a stream (its handle, or the stream itself): a raw stream handle passed to a
method that names a collective is the evidence.
"""

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

# Attributes of a stream object that are its raw handle (`stream.ptr` in CuPy,
# `stream.cuda_stream` in PyTorch, `stream.handle` in Numba): handing one to a call is
# handing it the stream.
STREAM_HANDLE_ATTRS = frozenset({"ptr", "cuda_stream", "handle"})
