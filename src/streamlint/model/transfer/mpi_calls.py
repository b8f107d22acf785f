"""Communicators' buffer methods: mpi4py's run on the host when called, NCCL's on the stream they are handed."""

from __future__ import annotations

from typing import Optional

from streamlint.model.api import interop, mpi, nccl
from streamlint.model.domain.paths import Path
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef
from streamlint.model.domain.values import UNKNOWN, AbsValue, ValueKind
from streamlint.model.domain.order import HOST
from streamlint.model.transfer.act import access
from streamlint.model.transfer.arguments import Arguments, Handled
from streamlint.model.transfer.devices import is_device
from streamlint.model.transfer.frame import Frame



def comm_method(name: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    rows = mpi.COMM_METHODS.get(name)
    if rows is None:
        return None
    site = frame.site(arguments.node)
    for where, role in rows:
        given = arguments.value(where)
        on_device = given is not None and (is_device(given) or (given.element is not None and is_device(given.element)))
        for buffer in _buffers(given):
            state = _by_role(state, frame, site, buffer, role, HOST, host_memory=not on_device)
    return UNKNOWN, state


def _by_role(state: State, frame: Frame, site: str, path: Path, role: mpi.Role, stream: StreamRef,
             host_memory: bool = False) -> State:
    if role is not mpi.Role.RECEIVED:
        state = access(state, frame, site, path, False, stream, host_memory=host_memory)
    if role is not mpi.Role.SENT:
        state = access(state, frame, site, path, True, stream, host_memory=host_memory)
    return state


def _buffers(given: Optional[AbsValue]) -> list[Path]:
    """The array's memory, or that of the array in a buffer specification (`[buf, MPI.FLOAT]`)."""
    if given is None:
        return []
    if given.is_buffer and given.identity is not None:
        return [given.identity]
    return sorted(given.members, key=repr)


def collective(name: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    """An NCCL collective: a method of that name handed a stream (or its handle) and as many device
    buffers (pointers into them) as it has roles; None otherwise."""
    roles = nccl.COMMUNICATOR_METHODS.get(name)
    if roles is None:
        return None
    given = arguments.keywords.get("stream")
    candidates = [given[0]] if given is not None else [v for v, _ in arguments.positional]
    stream = next((v.stream for v in candidates if v.kind is ValueKind.STREAM and v.stream is not None), None)
    if stream is None and given is None and arguments.positional:
        stream = _handle_given(arguments.positional[-1][0])
    if stream is None or not stream.known:
        return None
    buffers = [v.identity for v in arguments.values() if is_device(v) and v.identity is not None]
    if not buffers:  # pointers into memory the code says nothing else about: NCCL's operands are CUDA memory
        buffers = [p for p in (_pointed_at(v) for v, _ in arguments.positional[:len(roles)]) if p is not None]
    if len(buffers) != len(roles):
        return None  # (the pointers the call shows do not match the collective's)
    site = frame.site(arguments.node)
    for path, role in zip(buffers, roles):
        state = _by_role(state, frame, site, path, role, stream)
    return UNKNOWN, state


def _handle_given(value: AbsValue) -> Optional[StreamRef]:
    """`comm.allReduce(..., stream.ptr)`: a raw handle handed last, of a value of unknown kind, shows it
    is the stream held at its path (as a stream's own method would)."""
    path = value.identity
    if value.kind is not ValueKind.UNKNOWN or path is None or not path.steps:
        return None
    if path.steps[-1] not in nccl.STREAM_HANDLE_ATTRS:
        return None
    return StreamRef.at(Path(path.root, path.steps[:-1]))


def _pointed_at(value: AbsValue) -> Optional[Path]:
    """`a.data.ptr` of a value of unknown kind: the memory at `a`."""
    path = value.identity
    if value.kind is not ValueKind.UNKNOWN or path is None or not path.steps or path.steps[-1] not in interop.MEMORY_ATTRIBUTES:
        return None
    steps = path.steps
    while steps and steps[-1] in interop.MEMORY_ATTRIBUTES:
        steps = steps[:-1]
    return Path(path.root, steps)
