"""Emit an effect and perform it: the interpreter's one way to change the order of work."""

from __future__ import annotations

from typing import Optional

from streamlint.model.api.op_kinds import OpKind
from streamlint.model.domain.order import HOST
from streamlint.model.domain.paths import Path, Root
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef
from streamlint.model.domain.values import AbsValue, Memory, ValueKind
from streamlint.model.summary.effects import Effect, EffectKind, Operation
from streamlint.model.summary.perform import perform
from streamlint.model.transfer.arguments import Arguments
from streamlint.model.transfer.devices import is_device, is_host
from streamlint.model.transfer.frame import Frame


def do(state: State, frame: Frame, effect: Effect) -> State:
    effect = frame.emit(effect)  # (performed under the sides it ran on: two sides of one test never pair)
    state, found = perform(state, effect)
    frame.report(found)
    return state


def fresh(frame: Frame, arguments: Arguments, memory: Memory, stream: Optional[StreamRef] = None,
          framework: str = "torch") -> AbsValue:
    """New memory the call makes (made on `stream`, when told)."""
    return AbsValue(ValueKind.BUFFER, framework, memory, Path(Root.fresh(frame.site(arguments.node))), stream)


def wait_for(state: State, frame: Frame, site: str, stream: Optional[StreamRef]) -> State:
    """The host waits for the work queued on `stream` so far."""
    return do(state, frame, Effect(EffectKind.SYNC, site, stream=stream))


def access(state: State, frame: Frame, site: str, path: Path, write: bool, stream: StreamRef,
           host_memory: bool = False, guard: Optional[Path] = None) -> State:
    return do(state, frame, Effect(EffectKind.ACCESS, site, path, stream, write=write, guard=guard,
                                   host_memory=host_memory))


def host_access(state: State, frame: Frame, site: str, path: Path, write: bool) -> State:
    """The host itself reads or writes its own memory."""
    return access(state, frame, site, path, write, HOST, host_memory=True)


def host_reads(state: State, frame: Frame, site: str, values: list[AbsValue]) -> State:
    for value in values:
        if is_host(value) and value.identity is not None:
            state = host_access(state, frame, site, value.identity, False)
    return state


def device_reads(state: State, frame: Frame, site: str, values: list[AbsValue], stream: StreamRef) -> State:
    """The device memory among `values` read on `stream`."""
    for value in values:
        if is_device(value) and value.identity is not None:
            state = access(state, frame, site, value.identity, False, stream)
    return state


def copy(state: State, frame: Frame, site: str, stream: StreamRef, source: Optional[AbsValue], target: AbsValue,
         upload: bool, staged: bool, waits: bool) -> State:
    """A copy on `stream`: an upload from pageable memory the host stages first (`staged`: it waits, then reads the
    source itself, as it does for a blocking upload); `waits`: the host waits for the copy."""
    hosted = source is not None and source.is_buffer and not is_device(source)
    if staged:
        state = wait_for(state, frame, site, stream)
    if source is not None and source.identity is not None and upload and (staged or waits) and hosted:
        state = host_access(state, frame, site, source.identity, False)
    elif source is not None and source.identity is not None and (source.is_buffer or not upload) and not staged:
        state = access(state, frame, site, source.identity, False, stream, host_memory=hosted)
    if target.identity is not None:
        state = access(state, frame, site, target.identity, True, stream, host_memory=not upload)
    return wait_for(state, frame, site, stream) if waits else state


def read_by_host(state: State, frame: Frame, site: str, values: list[AbsValue], stream: Optional[StreamRef]) -> State:
    """The host reads the data: device memory on `stream`, which the host then waits for; host memory itself (and
    a tensor of a device not told: the host may wait for the current stream, `may_wait`)."""
    if stream is None:
        return may_wait(host_reads(state, frame, site, values), frame, site, values)
    return wait_for(device_reads(state, frame, site, values, stream), frame, site, stream)


def may_wait(state: State, frame: Frame, site: str, values: list[AbsValue]) -> State:
    """A host read of a tensor of a device not told waits for the current stream where it is CUDA memory: on the
    may clock (a race after it is not told either way)."""
    untold = next((v for v in values if untold_tensor(v)), None)
    if untold is None:
        return state
    unseen_devices(frame, site, values)
    return do(state, frame, Effect(EffectKind.SYNC, site, stream=state.current_stream("torch"), may=True))


def untold_tensor(value: AbsValue) -> bool:
    """A tensor of a device the code does not show."""
    return value.is_buffer and value.memory is Memory.UNKNOWN and value.framework in ("torch", "")


def unseen_devices(frame: Frame, site: str, values: list[AbsValue]) -> None:
    """The tensors of a device not told that the host reads here, noted for `readings/untold.py` (no finding)."""
    for value in values:
        if untold_tensor(value):
            frame.unseen(site, "device", value.identity)


def operation(state: State, frame: Frame, site: str, api: str, op: OpKind, stream: Optional[StreamRef],
              host_blocking: Optional[bool], host_memory: Memory = Memory.UNKNOWN, value_site: str = "",
              host_inputs: bool = False, framework: str = "", **form) -> State:
    """Record an operation the rules ask about, with whether it runs in a loop here and only
    sometimes; `form`: what the call as written says (Operation's `async_form`, `host_at`, ...)."""
    detail = Operation(api, op.value, host_blocking, host_memory, frame.loop_depth > 0, value_site, host_inputs,
                       frame.guards > 0, **form)
    if op in (OpKind.COPY_H2D, OpKind.COPY_D2H) and host_memory is Memory.UNKNOWN:
        frame.unseen(site, "memory")  # (pinned or pageable: what the pinned-memory rules need)
    if stream is not None and not stream.known:
        frame.unseen(site, "stream")
    return do(state, frame, Effect(EffectKind.OPERATION, site, stream=stream, framework=framework, operation=detail))


def kernel(state: State, frame: Frame, site: str, api: str, stream: Optional[StreamRef], framework: str = "",
           host_inputs: bool = False) -> State:
    """A kernel queued on `stream`: the operation its accesses belong to (None: the host's work)."""
    if stream is None or not stream.known:
        return state
    return operation(state, frame, site, api, OpKind.KERNEL, stream, False, host_inputs=host_inputs, framework=framework)
