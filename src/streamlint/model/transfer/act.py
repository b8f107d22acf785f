"""Emit an effect and perform it: the interpreter's one way to change the order of work."""

from __future__ import annotations

from streamlint.model.domain.order import HOST
from streamlint.model.domain.paths import Path
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.summary.perform import perform
from streamlint.model.transfer.frame import Frame


def do(state: State, frame: Frame, effect: Effect) -> State:
    frame.emit(effect)
    state, found = perform(state, effect)
    frame.report(found)
    return state


def access(state: State, frame: Frame, site: str, path: Path, write: bool, stream: StreamRef,
           host_memory: bool = False) -> State:
    return do(state, frame, Effect(EffectKind.ACCESS, site, path, stream, write=write, host_memory=host_memory))


def host_access(state: State, frame: Frame, site: str, path: Path, write: bool) -> State:
    return access(state, frame, site, path, write, HOST)
