"""mpi4py's buffer methods: which buffers each reads and writes from the host when called (MPI is not
stream-aware: a device buffer's streams must have finished first)."""

from __future__ import annotations

from enum import Enum

from streamlint.model.api.facts import Arg


class Role(Enum):
    SENT = "read"  # MPI reads it (a send buffer)
    RECEIVED = "written"  # MPI writes it (a receive buffer)
    BOTH = "read and written"  # Bcast's buffer: sent by the root, received by the others


_BUF_SENT = ((Arg(0, "buf"), Role.SENT),)
_BUF_RECEIVED = ((Arg(0, "buf"), Role.RECEIVED),)
_BUF_BOTH = ((Arg(0, "buf"), Role.BOTH),)
_SEND_RECV = ((Arg(0, "sendbuf"), Role.SENT), (Arg(1, "recvbuf"), Role.RECEIVED))

# Comm methods: their buffer arguments and what MPI does to each (the non-blocking `I` forms read the send
# buffer later too: it must be ready at the call).
COMM_METHODS: dict[str, tuple[tuple[Arg, Role], ...]] = {
    **{name: _BUF_SENT for name in ("Send", "Ssend", "Bsend", "Rsend", "Isend", "Issend", "Ibsend", "Irsend")},
    **{name: _BUF_RECEIVED for name in ("Recv", "Irecv", "Mrecv")},
    "Sendrecv": ((Arg(0, "sendbuf"), Role.SENT), (Arg(3, "recvbuf"), Role.RECEIVED)),
    "Sendrecv_replace": _BUF_BOTH,
    **{name: _BUF_BOTH for name in ("Bcast", "Ibcast")},
    **{name: _SEND_RECV for name in (
        "Reduce", "Ireduce", "Allreduce", "Iallreduce", "Gather", "Igather", "Gatherv", "Igatherv",
        "Allgather", "Iallgather", "Allgatherv", "Iallgatherv", "Scatter", "Iscatter", "Scatterv",
        "Iscatterv", "Alltoall", "Ialltoall", "Alltoallv", "Ialltoallv", "Reduce_scatter",
        "Ireduce_scatter", "Reduce_scatter_block", "Ireduce_scatter_block", "Scan", "Iscan",
        "Exscan", "Iexscan",
    )},
}

# The root of the module whose import makes `x.Allreduce(...)` on an unseen `x` an MPI call.
MODULE_ROOT = "mpi4py"
