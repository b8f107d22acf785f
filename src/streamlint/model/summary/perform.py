"""The one place an effect changes a state, for the interpreter and for `apply` (a callee's, in its caller's terms)."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

from streamlint.model.domain.order import HOST, AccessEvent, Conflict, Order
from streamlint.model.api.facts import STREAM_ORDERED_ALLOCATORS
from streamlint.model.domain.paths import RootKind
from streamlint.model.domain.state import State
from streamlint.model.domain.values import AbsValue, Memory
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.summary.effects import Effect, EffectKind

Result = tuple[State, list[Conflict]]


def perform(state: State, effect: Effect, reported: bool = True) -> Result:
    """`reported`: the conflicts found are reported here, so each missing wait is then assumed in place."""
    effect = _on_its_sides(effect)
    if effect.kind is EffectKind.ACCESS:
        return _access(state, effect, reported)
    handler = _HANDLERS.get(effect.kind)
    return handler(state, effect) if handler else (state, [])


def _on_its_sides(e: Effect) -> Effect:
    """Of two streams chosen by a configuration test, the one of the side the work is done on (D-18)."""
    if not e.branch:
        return e
    stream = e.stream.on_sides(e.branch) if e.stream is not None else None
    other = e.other.on_sides(e.branch) if e.other is not None else None
    return e if stream is e.stream and other is e.other else replace(e, stream=stream, other=other)


def released(old: AbsValue, after: State, site: str) -> Optional[Effect]:
    """The release of memory nothing holds once `old` was overwritten, to its stream's allocator (or None)."""
    identity = old.identity
    if not (old.is_buffer and old.stream is not None and identity is not None):
        return None
    if old.framework not in STREAM_ORDERED_ALLOCATORS:
        return None
    if identity.root.kind is not RootKind.FRESH or identity.steps or after.holds(identity):
        return None
    return Effect(EffectKind.RELEASE, site, identity, old.stream)


def _access(state: State, e: Effect, reported: bool = True) -> Result:
    if e.path is None or e.stream is None or not e.stream.known:
        return state, []  # no evidence of what or where: silent
    if e.stream in state.capturing:  # recorded into a graph: it runs when the graph is launched
        recorded = dict(state.recorded)
        recorded[e.stream] = recorded.get(e.stream, ()) + (replace(e, stream=None),)
        return replace(state, recorded=tuple(recorded.items())), []
    event = AccessEvent(e.path, e.write, e.stream, e.site, e.chain, e.host_memory, branch=e.branch, handed=e.handed)
    order = legacy_barrier(state.order, e.stream)
    found = order.conflicts(event)
    if e.guard is not None:
        # a module's move: its parameters were made complete before the body began
        found = [c for c in found if not c.earlier.assumed]
    after = order.add(event)
    return state.with_order(_missing_waits_assumed(after, event, found) if reported else after), found


def untold_access(state: State, site: str, path, write: bool, stream: StreamRef) -> State:
    """An access to memory of a device not told yet: pending, so that a later device access meets it (D-11); silent."""
    if not stream.known or stream in state.capturing:
        return state
    return state.with_order(state.order.add(AccessEvent(path, write, stream, site, untold=True)))


def _missing_waits_assumed(order: Order, event: AccessEvent, found: list[Conflict]) -> Order:
    """One missing wait, one report: the walk goes on as if the wait were there (the host is no stream)."""
    if event.stream == HOST:
        return order
    for waiter, stream in dict.fromkeys((c.later.stream, c.earlier.stream) for c in found
                                        if c.earlier.stream != HOST):
        order = order.wait(waiter, stream)  # (the later access's stream on the path that races)
    return order


def legacy_barrier(order: Order, stream: StreamRef) -> Order:
    """The legacy default stream and blocking streams order each other both ways."""
    if stream.kind is StreamRefKind.EITHER:
        for one in stream.members:  # on each path, that path's stream (D-14)
            order = legacy_barrier(order, one)
        return order
    if stream.kind is StreamRefKind.LEGACY:
        return order.wait_any(stream, {s for s in order.streams() if _blocking(s)})
    if _blocking(stream):
        return order.wait(stream, StreamRef.legacy())
    return order


def _blocking(stream: StreamRef) -> bool:
    if stream == HOST:
        return False  # the host is no stream: the legacy stream does not order it
    return stream.blocking and stream.kind in (StreamRefKind.CREATED, StreamRefKind.PATH) and stream.framework != ""


def _ordering(op: Callable[[Order, Effect], Order]) -> Callable[[State, Effect], Result]:
    return lambda state, e: (state.with_order(op(state.order, e)), [])


def _wait_stream(order: Order, e: Effect) -> Order:
    if e.stream is None or e.other is None:
        return order
    if not e.other.known:
        return order.wait_any(e.stream, order.streams())  # a wait we cannot resolve may order anything
    return order.wait(e.stream, e.other, e.branch)


def _wait_event(order: Order, e: Effect) -> Order:
    if e.path is None or e.stream is None:
        return order
    if order.recorded(e.path) is None and e.path.root.kind is RootKind.FRESH:
        return order  # an event the program made, which nothing recorded yet: waiting on it orders nothing
    if order.recorded(e.path) is None:
        return order.wait_any(e.stream, order.streams())  # an event recorded where we cannot see: may order anything
    return order.wait_event(e.stream, e.path, e.branch)


def _sync(order: Order, e: Effect) -> Order:
    if e.stream is not None and e.stream.kind is not StreamRefKind.UNKNOWN:
        return order.synchronize_stream(e.stream, e.branch, may=e.may)
    if e.path is not None and order.recorded(e.path) is not None:
        return order.synchronize_event(e.path)
    # a synchronization of we know not what: silence
    return order.synchronize_device(e.branch if e.stream is None and e.path is None else ())


def _release(state: State, e: Effect) -> Result:
    if e.path is None or e.stream is None or not e.stream.known:
        return state, []
    order, found = state.order.release(AccessEvent(e.path, True, e.stream, e.site, e.chain))
    return state.with_order(order), found


def _capture(begin: bool) -> Callable[[State, Effect], Result]:
    def handler(state: State, e: Effect) -> Result:
        if e.stream is None:
            return state, []
        capturing = state.capturing | {e.stream} if begin else state.capturing - {e.stream}
        recorded = dict(state.recorded)
        work = recorded.pop(e.stream, ())
        if not begin and e.path is not None:
            recorded[e.path] = work  # the graph holds the captured work
        return replace(state, capturing=capturing, recorded=tuple(recorded.items())), []
    return handler


def _launch_graph(state: State, e: Effect) -> Result:
    """A graph's launch runs the work captured into it, on the launching stream."""
    found: list[Conflict] = []
    for captured in dict(state.recorded).get(e.path, ()):
        state, more = _access(state, replace(captured, stream=e.stream, site=e.site, chain=()))
        found.extend(more)
    return state, found


def _record_in_capture(state: State, e: Effect) -> Result:
    """An event recorded on a capturing stream belongs to the capture: a stream that waits for it joins it."""
    if e.path is None or e.stream is None:
        return state, []
    state = state.with_order(state.order.record(e.path, e.stream, e.branch))
    return replace(state, capturing=state.capturing | {e.path}) if e.stream in state.capturing else state, []


def _wait_in_capture(state: State, e: Effect) -> Result:
    if e.path is not None and e.path in state.capturing and e.stream is not None:
        return replace(state, capturing=state.capturing | {e.stream}), []
    return state.with_order(_wait_event(state.order, e)), []


def _counter_moved(state: State, e: Effect) -> Result:
    """A ring counter moved on (D-25): slot `k` is `k - 1` from now on; set to a value not told, none known before."""
    if e.path is None:
        return state, []
    symbol = e.path.spell()
    return state.renamed(lambda p: p.forgotten(symbol) if e.write else p.shifted(symbol, 1)), []


def _pinned(state: State, e: Effect) -> Result:
    """Host memory page-locked in place (in a helper the caller handed it to): everything holding it is pinned."""
    return (state.with_memory(e.path, Memory.PINNED) if e.path is not None else state), []


_HANDLERS: dict[EffectKind, Callable[[State, Effect], Result]] = {
    EffectKind.BEGIN_CAPTURE: _capture(True),
    EffectKind.END_CAPTURE: _capture(False),
    EffectKind.LAUNCH_GRAPH: _launch_graph,
    EffectKind.WAIT_STREAM: _ordering(_wait_stream),
    EffectKind.RECORD_EVENT: _record_in_capture,
    EffectKind.WAIT_EVENT: _wait_in_capture,
    EffectKind.SYNC: _ordering(_sync),
    EffectKind.RECORD_STREAM: _ordering(lambda order, e: order.record_stream(e.path, e.stream)
                                        if e.path is not None and e.stream is not None else order),
    EffectKind.RELEASE: _release,
    EffectKind.SET_CURRENT: lambda state, e: (state.with_current(e.framework, e.stream) if e.stream else state, []),
    EffectKind.COUNTER: _counter_moved,
    EffectKind.PIN: _pinned,
}
