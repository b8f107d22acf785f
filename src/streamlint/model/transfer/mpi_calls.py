"""mpi4py's buffer methods (`comm.Send`, `comm.Allreduce`, ...): MPI reads and writes the buffers
from the host side when called, waiting for no stream (model/api/mpi.py's rows)."""

from __future__ import annotations

from typing import Optional

from streamlint.model.api import mpi
from streamlint.model.domain.paths import Path
from streamlint.model.domain.state import State
from streamlint.model.domain.values import UNKNOWN, AbsValue
from streamlint.model.transfer.act import host_access
from streamlint.model.transfer.arguments import Arguments
from streamlint.model.transfer.devices import is_device
from streamlint.model.transfer.frame import Frame

Handled = tuple[AbsValue, State]


def comm_method(name: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    rows = mpi.COMM_METHODS.get(name)
    if rows is None:
        return None
    site = frame.site(arguments.node)
    for row in rows:
        given = arguments.value(row.arg)
        on_device = given is not None and (is_device(given) or (given.element is not None and is_device(given.element)))
        for buffer in _buffers(given):
            if row.role in (mpi.Role.SENT, mpi.Role.BOTH):
                state = host_access(state, frame, site, buffer, False, on_device)
            if row.role in (mpi.Role.RECEIVED, mpi.Role.BOTH):
                state = host_access(state, frame, site, buffer, True, on_device)
    return UNKNOWN, state


def _buffers(given: Optional[AbsValue]) -> list[Path]:
    """The array's memory, or that of the array in a buffer specification (`[buf, MPI.FLOAT]`)."""
    if given is None:
        return []
    if given.is_buffer and given.identity is not None:
        return [given.identity]
    return sorted(given.members, key=repr)
