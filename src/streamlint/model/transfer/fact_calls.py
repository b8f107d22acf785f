"""One interpreter for the rows of the API fact tables (model/api/*.py): which stream a call
queues on, whether the host waits, which buffers it reads and writes, what it returns. The
frameworks whose tables say everything (CuPy, Numba-CUDA, cuda-python) need nothing else;
PyTorch's handler adds the invariant its tables leave out."""

from __future__ import annotations

from typing import Callable, Optional

from streamlint.model.api.facts import (
    BLOCK_ALWAYS,
    BLOCK_FLAG,
    BLOCK_UNLESS_STREAM,
    STREAM_ARG,
    STREAM_ARG_OR_BOUND,
    STREAM_ARG_OR_CURRENT,
    STREAM_CURRENT,
    STREAM_LEGACY,
    STREAM_SELF,
    Arg,
    Fact,
)
from streamlint.model.domain.paths import Path, Root, RootKind
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import UNKNOWN, AbsValue, Memory, ValueKind, stream_value
from streamlint.model.ops import OpKind
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.transfer.act import access, do, host_access, operation
from streamlint.model.transfer.arguments import Arguments
from streamlint.model.transfer.devices import is_device, is_host
from streamlint.model.transfer.frame import Frame

Handled = tuple[AbsValue, State]
LEGACY = StreamRef.legacy()
# The target of a tuple whose first item is an error code and the rest its `element`.
ERROR_FIRST = "(error, value)"


def stream_of_value(value: Optional[AbsValue]) -> Optional[StreamRef]:
    """The stream a stream argument names; the legacy default stream for 0 and None."""
    if value is None:
        return None
    if value.kind is ValueKind.NONE or (value.kind is ValueKind.HOST_NUMBER and value.target == "0"):
        return LEGACY
    if value.kind is ValueKind.STREAM and value.stream is not None:
        return value.stream
    if value.identity is not None and value.kind in (ValueKind.STREAM, ValueKind.UNKNOWN):
        return StreamRef.at(value.identity)
    return StreamRef(StreamRefKind.UNKNOWN)


def queue_of(fact: Fact, arguments: Arguments, state: State) -> Optional[StreamRef]:
    """Where the call queues its work, by the fact's stream rule."""
    given = stream_of_value(arguments.value(fact.stream_arg))
    receiver = arguments.receiver
    rule = fact.stream
    if rule == STREAM_CURRENT:
        return state.current_stream(fact.framework)
    if rule == STREAM_LEGACY:
        return LEGACY
    if rule == STREAM_ARG:
        return given or LEGACY
    if rule == STREAM_ARG_OR_CURRENT:
        return given or state.current_stream(fact.framework)
    if rule == STREAM_ARG_OR_BOUND:
        bound = receiver.stream if receiver is not None and receiver.is_buffer else None
        return given or bound or LEGACY
    if rule == STREAM_SELF:
        return stream_of_value(receiver)
    return None


def host_waits(fact: Fact, arguments: Arguments) -> Optional[bool]:
    if fact.blocking == BLOCK_ALWAYS:
        return True
    if fact.blocking == BLOCK_UNLESS_STREAM:
        given = arguments.value(fact.stream_arg)
        return given is None or given.kind is ValueKind.NONE
    if fact.blocking == BLOCK_FLAG:
        flag = arguments.flag(fact.flag, fact.flag_default)
        return None if flag is None else flag == fact.flag_blocks_when
    return False


def result_of(fact: Fact, arguments: Arguments, frame: Frame, stream: Optional[StreamRef]) -> AbsValue:
    """A value of the fact's result vocabulary ("device:cupy", "pinned:numpy", "stream", ...)."""
    kind, _, rest = fact.result.partition(":")
    framework = rest.split(":", 1)[0] or fact.framework
    site = frame.site(arguments.node)
    fresh = Path(Root.fresh(site))
    memories = {"device": Memory.DEVICE, "pinned": Memory.PINNED, "pageable": Memory.PAGEABLE, "mapped": Memory.PINNED}
    if kind in memories:
        bound = stream if kind == "device" and rest.endswith("bound") else None
        made_on = stream if kind == "device" else None
        return AbsValue(ValueKind.BUFFER, framework, memories[kind], fresh, bound or made_on)
    if kind == "event":
        return AbsValue(ValueKind.EVENT, framework, identity=fresh)
    if kind == "legacy_stream":
        return stream_value(LEGACY)
    if kind == "per_thread_stream":
        return stream_value(StreamRef(StreamRefKind.PER_THREAD))
    if kind == "self" and arguments.receiver is not None:
        return arguments.receiver
    if kind == "cuda_device":  # a device designator of a CUDA device (a declared model's value)
        return AbsValue(ValueKind.DEVICE, framework, Memory.DEVICE)
    if kind == "kernel":  # a compiled kernel (`cupy.RawKernel(...)`): calling it launches
        return AbsValue(ValueKind.CALLABLE, framework, target=fact.result)
    return UNKNOWN


def apply_fact(fact: Fact, arguments: Arguments, state: State, frame: Frame, api: str = "") -> Handled:
    view = _shared_view(fact, arguments)
    if view is not None:
        return view, state
    if fact.kind is not None:
        host = arguments.value(fact.host) or arguments.value(fact.out)
        memory = host.memory if host is not None and host.is_buffer else Memory.UNKNOWN
        stream = queue_of(fact, arguments, state)
        state = operation(state, frame, frame.site(arguments.node), api, fact.kind, stream,
                          host_waits(fact, arguments), memory, made_at(arguments.receiver))
    handler = _BY_KIND.get(fact.kind)
    if handler is not None:
        value, state = handler(fact, arguments, state, frame)
    elif fact.result == "current_stream":
        value = stream_value(state.current_stream(fact.framework))
    else:
        value = result_of(fact, arguments, frame, None)
    if fact.returns_tuple:  # cuda-python: (error, value)
        value = AbsValue(ValueKind.CONTAINER, element=value, target=ERROR_FIRST)
    return value, state


def made_at(value: Optional[AbsValue]) -> str:
    """The site that allocated a value's memory, when it is fresh memory of a known site."""
    if value is None or not value.is_buffer or value.identity is None or value.identity.steps:
        return ""
    root = value.identity.root
    return root.site if root.kind is RootKind.FRESH else ""


def _shared_view(fact: Fact, arguments: Arguments) -> Optional[AbsValue]:
    """A call that wraps device memory it is given (`cp.asarray(cuda_tensor)`,
    `numba.cuda.as_cuda_array(t)`: CUDA Array Interface, DLPack) makes no copy: the result is the
    same memory under another framework's name."""
    wraps_device = fact.result.startswith("device:") and fact.kind in (None, OpKind.COPY_H2D)
    given = arguments.value(fact.host) if fact.host is not None else arguments.value(Arg(0))
    if not wraps_device or given is None or not is_device(given) or given.identity is None:
        return None
    framework = fact.result.split(":")[1]
    return AbsValue(ValueKind.BUFFER, framework, Memory.DEVICE, given.identity, given.stream)


def _subject(fact: Fact, arguments: Arguments) -> Optional[AbsValue]:
    """The event or stream a call acts on: the receiver of a method, else its `target` argument."""
    receiver = arguments.receiver
    return receiver if receiver is not None else arguments.value(fact.target)


def _create_stream(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    rule = fact.creates_blocking or "yes"
    blocking = rule == "yes"
    if rule.startswith("not:"):
        flag = arguments.flag(Arg(kw=rule[4:]), False)
        blocking = flag is False
    return stream_value(StreamRef.created(frame.site(arguments.node), fact.framework, blocking)), state


def _record_event(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    receiver = arguments.receiver
    site = frame.site(arguments.node)
    if receiver is not None and receiver.kind is ValueKind.STREAM:  # stream.record(event=None)
        event = arguments.value(fact.target)
        if event is None or event.identity is None:
            event = AbsValue(ValueKind.EVENT, fact.framework, identity=Path(Root.fresh(site)))
        stream = stream_of_value(receiver)
    else:
        event = _subject(fact, arguments)
        stream = queue_of(fact, arguments, state)
    if event is None or event.identity is None or stream is None:
        return UNKNOWN, state
    state = do(state, frame, Effect(EffectKind.RECORD_EVENT, site, event.identity, stream, framework=fact.framework))
    return event, state


def _wait_event(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    receiver = arguments.receiver
    if receiver is not None and receiver.kind is ValueKind.STREAM:
        waiter, event = stream_of_value(receiver), arguments.value(fact.target)
    else:
        waiter, event = queue_of(fact, arguments, state), (receiver or arguments.value(fact.target))
    site = frame.site(arguments.node)
    if waiter is None:
        return UNKNOWN, state
    if event is None or event.identity is None:
        return UNKNOWN, do(state, frame, Effect(EffectKind.WAIT_STREAM, site, stream=waiter,
                                                 other=StreamRef(StreamRefKind.UNKNOWN)))
    return UNKNOWN, do(state, frame, Effect(EffectKind.WAIT_EVENT, site, event.identity, waiter, framework=fact.framework))


def _sync_stream(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    target = stream_of_value(arguments.value(fact.target)) if fact.target else queue_of(fact, arguments, state)
    effect = Effect(EffectKind.SYNC_STREAM, frame.site(arguments.node), stream=target, framework=fact.framework)
    return UNKNOWN, do(state, frame, effect)


def _sync_event(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    event = _subject(fact, arguments)
    if event is None or event.identity is None:
        return UNKNOWN, do(state, frame, Effect(EffectKind.SYNC_DEVICE, frame.site(arguments.node)))
    return UNKNOWN, do(state, frame, Effect(EffectKind.SYNC_EVENT, frame.site(arguments.node), event.identity))


def _sync_device(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    return UNKNOWN, do(state, frame, Effect(EffectKind.SYNC_DEVICE, frame.site(arguments.node), framework=fact.framework))


def _set_stream(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    stream = queue_of(fact, arguments, state) or stream_of_value(arguments.value(fact.stream_arg))
    if stream is None:
        return UNKNOWN, state
    effect = Effect(EffectKind.SET_CURRENT, frame.site(arguments.node), stream=stream, framework=fact.framework)
    return result_of(fact, arguments, frame, stream), do(state, frame, effect)


def _copy_to_device(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """An upload: the host side read by the stream, the device side written (new memory, or
    the receiver for `a.set(host)` / `d.copy_to_device(host)`)."""
    stream = queue_of(fact, arguments, state)
    host = arguments.value(fact.host)
    site = frame.site(arguments.node)
    if stream is None:
        return UNKNOWN, state
    if host is not None and host.is_buffer and host.identity is not None:
        state = access(state, frame, site, host.identity, False, stream, host_memory=True)
    receiver = arguments.receiver
    target = receiver if receiver is not None and receiver.is_buffer else result_of(fact, arguments, frame, stream)
    if target.identity is not None:
        state = access(state, frame, site, target.identity, True, stream)
    pageable = host is None or not host.is_buffer or host.memory is not Memory.PINNED
    if host_waits(fact, arguments) or pageable:
        state = do(state, frame, Effect(EffectKind.SYNC_STREAM, site, stream=stream, framework=fact.framework))
    return (target if receiver is None or not receiver.is_buffer else UNKNOWN), state


def _copy_to_host(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A download: the device side read, the host side (an `out=` array or new memory) written
    by the stream; unless the host waits, the host's reads of it must wait for the stream."""
    stream = queue_of(fact, arguments, state)
    site = frame.site(arguments.node)
    receiver = arguments.receiver
    source = receiver if receiver is not None and receiver.is_buffer else _first_buffer(arguments)
    if stream is None:
        return UNKNOWN, state
    if source is not None and source.identity is not None:
        state = access(state, frame, site, source.identity, False, stream)
    out = arguments.value(fact.out)
    target = out if out is not None and out.is_buffer else result_of(fact, arguments, frame, None)
    if target.identity is not None:
        state = access(state, frame, site, target.identity, True, stream, host_memory=True)
    waits = host_waits(fact, arguments)
    if waits or (target.memory is not Memory.PINNED and waits is not None):
        state = do(state, frame, Effect(EffectKind.SYNC_STREAM, site, stream=stream, framework=fact.framework))
    return target, state


def _copy(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A copy whose direction the memory of its ends tells (`cudaMemcpyAsync(dst, src, ...)`):
    the source read and the destination written on its stream."""
    stream = queue_of(fact, arguments, state)
    site = frame.site(arguments.node)
    if stream is None:
        return UNKNOWN, state
    destination, source = arguments.value(Arg(0, "dst")), arguments.value(Arg(1, "src"))
    for value, write in ((source, False), (destination, True)):
        if value is not None and value.is_buffer and value.identity is not None:
            state = access(state, frame, site, value.identity, write, stream, host_memory=not is_device(value))
    if host_waits(fact, arguments):
        state = do(state, frame, Effect(EffectKind.SYNC_STREAM, site, stream=stream, framework=fact.framework))
    return UNKNOWN, state


def _first_buffer(arguments: Arguments) -> Optional[AbsValue]:
    return next((v for v, _ in arguments.positional if v.is_buffer), None)


def _device_work(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A kernel or memset: the buffers its fact names, read and written on its stream."""
    stream = queue_of(fact, arguments, state)
    site = frame.site(arguments.node)
    if stream is None:
        return UNKNOWN, state
    writes = fact.writes
    if fact.kind is OpKind.MEMSET and not writes and arguments.receiver is None:
        writes = (Arg(0),)  # a memset writes the memory it is given first (`cudaMemsetAsync(ptr, ...)`)
    for where, write in [(a, False) for a in fact.reads] + [(a, True) for a in writes]:
        value = arguments.value(where)
        if value is not None and value.is_buffer and value.identity is not None:
            state = access(state, frame, site, value.identity, write, stream)
    receiver = arguments.receiver
    if receiver is not None and receiver.identity is not None and (fact.self_reads or fact.self_writes):
        state = access(state, frame, site, receiver.identity, fact.self_writes, stream)
    return result_of(fact, arguments, frame, stream), state


def _allocate(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    stream = queue_of(fact, arguments, state) or state.current_stream(fact.framework)
    return result_of(fact, arguments, frame, stream), state


def _pinned(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    return result_of(fact, arguments, frame, None), state


def _implicit_sync(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    stream = queue_of(fact, arguments, state)
    receiver = arguments.receiver
    site = frame.site(arguments.node)
    if stream is not None and receiver is not None and is_device(receiver) and receiver.identity is not None:
        state = access(state, frame, site, receiver.identity, False, stream)
    if stream is not None:
        state = do(state, frame, Effect(EffectKind.SYNC_STREAM, site, stream=stream, framework=fact.framework))
    elif receiver is not None and is_host(receiver) and receiver.identity is not None:
        state = host_access(state, frame, site, receiver.identity, False)
    return AbsValue(ValueKind.HOST_NUMBER), state


_BY_KIND: dict[Optional[OpKind], Callable[[Fact, Arguments, State, Frame], Handled]] = {
    OpKind.STREAM_CREATE: _create_stream,
    OpKind.EVENT_CREATE: lambda fact, a, s, f: (result_of(fact, a, f, None), s),
    OpKind.EVENT_RECORD: _record_event,
    OpKind.STREAM_WAIT_EVENT: _wait_event,
    OpKind.STREAM_SYNC: _sync_stream,
    OpKind.EVENT_SYNC: _sync_event,
    OpKind.DEVICE_SYNC: _sync_device,
    OpKind.SET_STREAM: _set_stream,
    OpKind.COPY_H2D: _copy_to_device,
    OpKind.COPY_D2H: _copy_to_host,
    OpKind.KERNEL: _device_work,
    OpKind.MEMSET: _device_work,
    OpKind.COPY_D2D: _device_work,
    OpKind.COPY: _copy,
    OpKind.ALLOC: _allocate,
    OpKind.PINNED_ALLOC: _pinned,
    OpKind.IMPLICIT_SYNC: _implicit_sync,
}
