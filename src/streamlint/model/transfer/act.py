"""Emit an effect and perform it: the interpreter's one way to change the order of work."""

from __future__ import annotations

from streamlint.model.domain.order import HOST
from streamlint.model.domain.paths import Path
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef
from typing import Optional

from streamlint.model.domain.values import Memory
from streamlint.model.api.op_kinds import OpKind
from streamlint.model.summary.effects import Effect, EffectKind, Guard, Operation
from streamlint.model.summary.perform import perform
from streamlint.model.transfer.frame import Frame


def do(state: State, frame: Frame, effect: Effect) -> State:
    effect = frame.emit(effect)  # (performed under the sides it ran on: two sides of one test never pair)
    state, found = perform(state, effect)
    frame.report(found)
    return state


def access(state: State, frame: Frame, site: str, path: Path, write: bool, stream: StreamRef,
           host_memory: bool = False, guard: Optional[Guard] = None) -> State:
    return do(state, frame, Effect(EffectKind.ACCESS, site, path, stream, write=write, guard=guard,
                                   host_memory=host_memory))


def host_access(state: State, frame: Frame, site: str, path: Path, write: bool, device_memory: bool = False) -> State:
    """The host itself reads or writes memory: its own (host memory), or device memory it hands
    to a library that reads it from outside the streams (CUDA-aware MPI)."""
    return access(state, frame, site, path, write, HOST, host_memory=not device_memory)


def operation(state: State, frame: Frame, site: str, api: str, op: OpKind, stream: Optional[StreamRef],
              host_blocking: Optional[bool], host_memory: Memory = Memory.UNKNOWN, value_site: str = "",
              host_inputs: bool = False, framework: str = "", **form) -> State:
    """Record an API operation the rules ask about (a copy, a synchronization, a stream made),
    with whether it runs in a loop of this function, and only sometimes; `form`: what the call
    as written says (Operation's `async_form`, `non_blocking`, `host_at`, ...)."""
    first_pass = form.pop("first_pass", False)
    detail = Operation(api, op.value, host_blocking, host_memory, frame.loop_depth > 0, value_site, host_inputs,
                       frame.guards > 0, **form)
    return do(state, frame, Effect(EffectKind.OPERATION, site, stream=stream, framework=framework, operation=detail,
                                   first_pass=first_pass))


def kernel(state: State, frame: Frame, site: str, api: str, stream: Optional[StreamRef], framework: str = "",
           host_inputs: bool = False) -> State:
    """A kernel queued on `stream` (a framework function, an operator, a compiled kernel called):
    the operation its accesses belong to. None: no device work (an operation of the host's)."""
    if stream is None or not stream.known:
        return state
    return operation(state, frame, site, api, OpKind.KERNEL, stream, False, host_inputs=host_inputs, framework=framework)

