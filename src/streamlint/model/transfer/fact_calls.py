"""One interpreter for the rows of the API fact tables (model/api/*.py): which stream a call
queues on, whether the host waits, which buffers it reads and writes, what it returns."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

from streamlint.model.api import cuda_python, numba_cuda
from streamlint.model.api.facts import Arg, Block, Fact, Stream
from streamlint.model.domain.paths import Index, Path, Root, RootKind
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import UNKNOWN_STREAM, StreamRef, StreamRefKind
from streamlint.model.domain.values import INDEX_LIST, NONE, TRUE, UNKNOWN, AbsValue, Memory, ValueKind, stream_value
from streamlint.model.api.op_kinds import OpKind
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.transfer.act import access, copy, do, host_access, operation, read_by_host, wait_for
from streamlint.model.transfer.arguments import Arguments, Handled
from streamlint.model.transfer.devices import device_value, is_device, is_host, placed
from streamlint.model.transfer.frame import Frame

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
    if value.kind is ValueKind.NAMESPACE and value.target in cuda_python.LEGACY_HANDLES:
        return LEGACY  # `cudart.cudaStreamLegacy`
    if value.kind is ValueKind.NAMESPACE and value.target in cuda_python.PER_THREAD_HANDLES:
        return StreamRef(StreamRefKind.PER_THREAD)
    if value.identity is not None and value.kind in (ValueKind.STREAM, ValueKind.UNKNOWN):
        return StreamRef.at(value.identity)
    return UNKNOWN_STREAM


def queue_of(fact: Fact, arguments: Arguments, state: State) -> Optional[StreamRef]:
    """Where the call queues its work, by the fact's stream rule."""
    given = stream_of_value(arguments.value(fact.stream_arg))
    rule = fact.stream
    if rule == Stream.CURRENT:
        return state.current_stream(fact.framework)
    if rule == Stream.LEGACY:
        return LEGACY
    if rule == Stream.ARG:
        return given or LEGACY
    if rule == Stream.ARG_OR_CURRENT:  # (None names the current stream here)
        none = given is LEGACY and arguments.value(fact.stream_arg).kind is ValueKind.NONE
        return state.current_stream(fact.framework) if given is None or none else given
    if rule == Stream.ARG_OR_BOUND:
        return given or _bound_stream(arguments) or LEGACY
    if rule == Stream.SELF:
        return stream_of_value(arguments.receiver)
    return None


def host_waits(fact: Fact, arguments: Arguments) -> Optional[bool]:
    if fact.blocking == Block.ALWAYS:
        return True
    if fact.blocking == Block.UNLESS_STREAM:  # a falsy stream selects the synchronous copy
        given = arguments.value(fact.stream_arg)
        if given is not None and given.kind is not ValueKind.NONE:
            return False
        bound = _bound_stream(arguments) if fact.stream == Stream.ARG_OR_BOUND else None
        # Numba: an array bound to a stream the code made copies on it, asynchronously
        return bound is None or bound.kind not in (StreamRefKind.CREATED, StreamRefKind.PATH)
    if fact.blocking == Block.FLAG:
        flag = arguments.flag(fact.flag, fact.flag_default)
        return None if flag is None else flag == fact.flag_blocks_when
    return False


def _bound_stream(arguments: Arguments) -> Optional[StreamRef]:
    """The stream a Numba array was made with (`device_array(n, stream=s)`): its copies' default."""
    receiver = arguments.receiver
    return receiver.stream if receiver is not None and receiver.is_buffer else None


def result_of(fact: Fact, arguments: Arguments, frame: Frame, stream: Optional[StreamRef]) -> AbsValue:
    """A value of the fact's result vocabulary ("device:cupy", "pinned:numpy", "stream", ...)."""
    made = _MADE.get(fact.result)
    if made is not None:
        return made(fact, arguments, fact.framework)
    kind, _, rest = fact.result.partition(":")
    framework = rest.split(":", 1)[0] or fact.framework
    fresh = Path(Root.fresh(frame.site(arguments.node)))
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
        return compiled_from(arguments) or AbsValue(ValueKind.CALLABLE, framework, target=fact.result)
    return UNKNOWN


def _context(fact: Fact, arguments: Arguments, framework: str) -> AbsValue:
    """`torch.cuda.stream(s)`: a context that makes its stream argument current (None: changes nothing)."""
    given = arguments.value(fact.stream_arg)
    if given is not None and given.kind is ValueKind.NONE:
        return NONE
    return AbsValue(ValueKind.STREAM_CONTEXT, framework, stream=stream_of_value(given) or UNKNOWN_STREAM)


def _loader(fact: Fact, arguments: Arguments, framework: str) -> AbsValue:
    """A data loader: its batches are host buffers, pinned when its flag (`pin_memory=`) asks."""
    pinned = arguments.flag(fact.flag, fact.flag_default)
    memory = Memory.UNKNOWN if pinned is None else Memory.PINNED if pinned else Memory.PAGEABLE
    batching = arguments.value(Arg(kw="batch_size"))
    dataset = arguments.value(Arg(0, "dataset"))
    indexed_by_framework = dataset is not None and (dataset.target.startswith(_FRAMEWORK_DATASETS) or (
        dataset.is_buffer and dataset.memory is Memory.PAGEABLE))  # (`TensorDataset(data)` of host tensors)
    if memory is Memory.PAGEABLE and batching is not None and batching.kind is ValueKind.NONE and not indexed_by_framework:
        # (`batch_size=None`: no collation, the batches are the dataset's own items, in whatever memory a project's
        # dataset keeps them; a framework's `TensorDataset` indexes its tensors into new pageable ones)
        memory = Memory.UNKNOWN
    return AbsValue(ValueKind.CONTAINER, framework, element=AbsValue(ValueKind.BUFFER, framework, memory, loader_batch=True))


# The framework's own datasets (`TensorDataset(data)`): their items are indexed out of host tensors it was given.
_FRAMEWORK_DATASETS = ("torch.utils.data.",)


def _like_first(fact: Fact, arguments: Arguments, framework: str) -> AbsValue:
    """The memory it is given first (`torch.from_numpy(a)`) under the framework's name, no copy; unplaced: not told."""
    given = arguments.value(Arg(0))
    if given is None or not given.is_buffer or given.memory is Memory.UNKNOWN or given.identity is None:
        return UNKNOWN
    return AbsValue(ValueKind.BUFFER, framework, given.memory, given.identity, given.stream)


def _sync_on_exit(fact: Fact, arguments: Arguments, framework: str) -> AbsValue:
    """`with s.auto_synchronize():` a context on the receiver's stream that synchronizes it at its exit."""
    stream = arguments.receiver.stream if arguments.receiver is not None else None
    if stream is None:
        return UNKNOWN
    return AbsValue(ValueKind.STREAM_CONTEXT, framework, stream=stream, target=fact.result)


# Results that are no new memory (by the fact's whole `result`).
_MADE: dict[str, Callable[[Fact, Arguments, str], AbsValue]] = {
    "context": _context,
    # work under the context (`torch.cuda.graph(g)`) is recorded into a graph on a capture stream
    "graph_context": lambda fact, arguments, framework: AbsValue(ValueKind.STREAM_CONTEXT, framework, stream=None),
    "device": lambda fact, arguments, framework: device_value(arguments),
    "loader": _loader,
    # a batch sampler: its items are lists of indices the host holds
    "index_batches": lambda fact, arguments, framework: AbsValue(ValueKind.CONTAINER, element=AbsValue(
        ValueKind.CONTAINER, element=AbsValue(ValueKind.HOST_NUMBER), target=INDEX_LIST)),
    "like_arg0": _like_first,
    # a tensor over a Python buffer (`torch.frombuffer(bytearray(b))`): pageable host memory, no copy
    "host_view": lambda fact, arguments, framework: AbsValue(ValueKind.BUFFER, framework, Memory.PAGEABLE),
    numba_cuda.SYNC_ON_EXIT: _sync_on_exit,
    "true": lambda fact, arguments, framework: TRUE,
    "none": lambda fact, arguments, framework: NONE,
}


def compiled_from(arguments: Arguments) -> Optional[AbsValue]:
    """`cuda.jit(fn)`, `cuda.jit(signature)(fn)`: the kernel of the project function `fn`."""
    given = arguments.value(Arg(0))
    if given is not None and given.kind is ValueKind.CALLABLE and given.target and ":" not in given.target:
        return replace(given, framework="numba")  # (compiled by Numba, whatever its own decorators say)
    return None


def apply_fact(fact: Fact, arguments: Arguments, state: State, frame: Frame, api: str = "") -> Handled:
    view = _shared_view(fact, arguments)
    if view is not None:
        return view, state
    queued = True
    if fact.stream == Stream.DATA:
        fact, arguments, queued = _placed(fact, arguments, state, frame)
    if fact.kind is not None and queued:
        state = _record_operation(fact, arguments, state, frame, api)
    handler = _BY_KIND.get(fact.kind)
    if handler is not None:
        value, state = handler(fact, arguments, state, frame)
    elif fact.result == "current_stream":
        value = stream_value(state.current_stream(fact.framework))
    elif fact.result == "wrapped_stream":
        value = _wrapped_stream(fact, arguments, frame)
    else:
        value = result_of(fact, arguments, frame, None)
    if fact.returns_tuple:  # cuda-python: (error, value)
        value = AbsValue(ValueKind.CONTAINER, element=value, target=ERROR_FIRST)
    return value, state


def _placed(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> tuple[Fact, Arguments, bool]:
    """Work where its data lives (PyTorch's invariant): on the current stream for device memory (memory of
    a device not told is, under a chosen stream or an assumed device), else the host's own work (no operation queued)."""
    chosen = frame.untold_is_cuda(state)
    arguments = replace(arguments, positional=tuple((placed(v, chosen), e) for v, e in arguments.positional),
                        keywords={k: (placed(v, chosen), e) for k, (v, e) in arguments.keywords.items()},
                        receiver=placed(arguments.receiver, chosen))
    data = [v for v in [arguments.receiver, *arguments.values()] if v is not None and v.is_buffer]
    queued = any(is_device(v) for v in data)
    return replace(fact, stream=Stream.CURRENT if queued else Stream.NONE), arguments, queued


def _record_operation(fact: Fact, arguments: Arguments, state: State, frame: Frame, api: str) -> State:
    """The operation as the rules read it: its kind, its host side and that side's memory, the call's form."""
    kind, host_at, host = _host_side(fact, arguments)
    memory = host.memory if host is not None and host.is_buffer else Memory.UNKNOWN
    if host_at == "return" and fact.result.startswith("pageable"):
        memory = Memory.PAGEABLE  # the new host array it returns
    waits = host_waits(fact, arguments)
    read = made_at(arguments.receiver) if kind is OpKind.IMPLICIT_SYNC else ""  # (the value a read-back reads)
    return operation(state, frame, frame.site(arguments.node), api, kind, queue_of(fact, arguments, state), waits,
                     memory, read, async_form=fact.async_api, non_blocking=None if waits is None else not waits,
                     host_at=host_at, sync_form=fact.sync_api and waits is True,
                     host_loader_batch=host is not None and host.loader_batch)


def _host_side(fact: Fact, arguments: Arguments) -> tuple[OpKind, str, Optional[AbsValue]]:
    """A copy's kind, and its host side in the call ("<pos>/<keyword>", "self", "return") with the value there."""
    if fact.kind is OpKind.COPY:  # its direction argument names the direction, or the memory of its ends shows it
        given = arguments.value(fact.direction)
        direction = cuda_python.COPY_DIRECTIONS.get(given.target.rsplit(".", 1)[-1] if given is not None else "")
        destination, source = arguments.value(Arg(0, "dst")), arguments.value(Arg(1, "src"))
        if direction is None and destination is not None and source is not None:
            if is_device(destination) and is_host(source):
                direction = "h2d"
            elif is_host(destination) and is_device(source):
                direction = "d2h"
        if direction == "h2d":
            return OpKind.COPY_H2D, "1/src", source
        if direction == "d2h":
            return OpKind.COPY_D2H, "0/dst", destination
        return (OpKind.COPY_D2D if direction == "d2d" else OpKind.COPY), "", None
    for where in (fact.host, fact.out):
        if where is not None and arguments.located(where) is not None:
            return fact.kind, f"{'' if where.pos is None else where.pos}/{where.kw or ''}", arguments.value(where)
    receiver = arguments.receiver
    if fact.kind is OpKind.PIN and receiver is not None and receiver.is_buffer and not is_device(receiver):
        return fact.kind, "self", receiver  # the host memory of the receiver (`t.pin_memory()`)
    if fact.kind is OpKind.COPY_D2H and fact.result.split(":")[0] in ("pageable", "pinned"):
        return fact.kind, "return", None
    return fact.kind, "", None


def made_at(value: Optional[AbsValue]) -> str:
    """The site that allocated a value's memory, when it is fresh memory of a known site."""
    if value is None or not value.is_buffer or value.identity is None or value.identity.steps:
        return ""
    root = value.identity.root
    return root.site if root.kind is RootKind.FRESH else ""


def _shared_view(fact: Fact, arguments: Arguments) -> Optional[AbsValue]:
    """A call that wraps device memory it is given (CUDA Array Interface, DLPack) makes no copy: the same memory."""
    wraps_device = fact.result.startswith("device:") and fact.kind in (None, OpKind.COPY_H2D)
    given = arguments.value(fact.host) if fact.host is not None else arguments.value(Arg(0))
    if not wraps_device or given is None or given.identity is None or is_host(given):
        return None
    if fact.kind is not None and not is_device(given):
        return None  # a copying spelling (`cp.asarray`) views device memory only; a pure wrapper
        # (`numba.cuda.as_cuda_array`) accepts nothing else, so what it is given is device memory
    framework = fact.result.split(":")[1]
    return AbsValue(ValueKind.BUFFER, framework, Memory.DEVICE, given.identity, given.stream)


def _create_stream(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    rule = fact.creates_blocking or "yes"
    blocking = rule == "yes"
    if rule.startswith("not:"):
        blocking = arguments.flag(Arg(kw=rule[4:]), False) is False
    if rule.startswith("flags:"):
        blocking = _flags_block(arguments.value(Arg(int(rule[6:]), "flags")))
    handle = arguments.value(fact.target) if fact.target is not None else None
    if handle is not None and handle.kind is ValueKind.UNKNOWN and handle.identity is None:
        # a wrapper of a handle the code does not show where it came from (`ExternalStream(ctx.allocate_stream())`):
        # any stream, the current one or the one another wrapper of it makes current (unknown stays silent)
        return AbsValue(ValueKind.STREAM, fact.framework, stream=UNKNOWN_STREAM), state
    return stream_value(StreamRef.created(frame.site(arguments.node), fact.framework, blocking)), state


def _wrapped_stream(fact: Fact, arguments: Arguments, frame: Frame) -> AbsValue:
    """`ExternalStream(ptr)`: a stream made elsewhere, wrapped (none is made). The handle of a stream the code holds
    (`ExternalStream(torch_stream.cuda_stream)`) wraps that very stream: its work is that stream's, its flags its own
    (a PyTorch pool stream is non-blocking), entered it is this framework's current stream. A handle the code does not
    show where it came from is any stream (unknown stays silent); one it shows nothing more of is taken as ordered by
    the legacy default stream."""
    handle = arguments.value(fact.target)
    if handle is not None and handle.kind is ValueKind.UNKNOWN and handle.identity is None:
        return AbsValue(ValueKind.STREAM, fact.framework, stream=UNKNOWN_STREAM)
    if handle is not None and handle.kind is ValueKind.STREAM and handle.stream is not None and handle.stream.known:
        return AbsValue(ValueKind.STREAM, fact.framework, stream=handle.stream)
    return stream_value(StreamRef.created(frame.site(arguments.node), fact.framework, True))


def _flags_block(flags: Optional[AbsValue]) -> bool:
    """Whether creation flags make a blocking stream: absent, 0 or the default flag (any other: not, or not told)."""
    if flags is None:
        return True
    if flags.kind is ValueKind.HOST_NUMBER and flags.target.isdigit():
        return flags.target == "0"
    return flags.kind is ValueKind.NAMESPACE and flags.target.rsplit(".", 1)[-1] in cuda_python.BLOCKING_FLAGS


def _stream_and_event(fact: Fact, arguments: Arguments, state: State) -> tuple[Optional[StreamRef], Optional[AbsValue]]:
    """A record's or wait's stream and event: a stream's method is given its event, an event's its stream."""
    receiver = arguments.receiver
    if receiver is not None and receiver.kind is ValueKind.STREAM:
        return stream_of_value(receiver), arguments.value(fact.target)
    return queue_of(fact, arguments, state), receiver if receiver is not None else arguments.value(fact.target)


def _record_event(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    site = frame.site(arguments.node)
    stream, event = _stream_and_event(fact, arguments, state)
    by_stream = arguments.receiver is not None and arguments.receiver.kind is ValueKind.STREAM
    if by_stream and (event is None or event.identity is None):  # `stream.record(event=None)` makes one
        event = AbsValue(ValueKind.EVENT, fact.framework, identity=Path(Root.fresh(site)), stream=stream)
    if event is None or event.identity is None or stream is None:
        return UNKNOWN, state
    state = do(state, frame, Effect(EffectKind.RECORD_EVENT, site, event.identity, stream))
    return event, state


def _wait_event(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    waiter, event = _stream_and_event(fact, arguments, state)
    if waiter is None:
        return UNKNOWN, state
    site = frame.site(arguments.node)
    if event is not None and event.kind is not ValueKind.STREAM and event.identity is not None:
        return UNKNOWN, do(state, frame, Effect(EffectKind.WAIT_EVENT, site, event.identity, waiter))
    # cuda.core `s.wait(other_stream)`; an event the walk cannot name: a wait for we know not what
    other = stream_of_value(event) if event is not None and event.kind is ValueKind.STREAM else UNKNOWN_STREAM
    return UNKNOWN, do(state, frame, Effect(EffectKind.WAIT_STREAM, site, stream=waiter, other=other))


def _sync(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """The host waits for a stream, an event, or the device (for an event the walk cannot tell, one of a
    list of events, too: it may be the one that orders, D-1)."""
    site = frame.site(arguments.node)
    if fact.kind is OpKind.STREAM_SYNC:
        stream = stream_of_value(arguments.value(fact.target)) if fact.target else queue_of(fact, arguments, state)
        return UNKNOWN, wait_for(state, frame, site, stream)
    event = arguments.receiver if arguments.receiver is not None else arguments.value(fact.target)
    told = event.identity if fact.kind is OpKind.EVENT_SYNC and event is not None else None
    return UNKNOWN, do(state, frame, Effect(EffectKind.SYNC, site, told))


def _wait_stream(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`s.wait_stream(other)`: later work on `s` waits for `other`'s so far; a stream handed in that waits
    for the current stream is another stream (waiting for itself orders nothing): evidence."""
    waiter = queue_of(fact, arguments, state)
    if waiter is None:
        return UNKNOWN, state
    other = stream_of_value(arguments.value(fact.target)) or UNKNOWN_STREAM
    state = do(state, frame, Effect(EffectKind.WAIT_STREAM, frame.site(arguments.node), stream=waiter, other=other))
    if other != state.current_stream(fact.framework) or waiter.kind is not StreamRefKind.PATH or waiter.fresh:
        return UNKNOWN, state
    fresh = replace(waiter, fresh=True)
    for name, value in state.names:
        if value.kind is ValueKind.STREAM and value.stream == waiter:
            state = state.bind(name, replace(value, stream=fresh))
    return UNKNOWN, state


def _record_stream(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`t.record_stream(s)`: the allocator told of `s`'s use (D-20); the producer's stream is another (D-16)."""
    stream = stream_of_value(arguments.value(fact.target))
    tensor = arguments.receiver
    if stream is None or not stream.known or tensor is None:
        return UNKNOWN, state
    for made in (tensor.stream.paths if tensor.stream is not None else ()):
        if made.kind is StreamRefKind.PRODUCED:
            frame.found.unlike.setdefault(made, set()).add(stream)
    site = frame.site(arguments.node)
    for identity in [tensor.identity] if tensor.identity is not None else [v.identity for v in tensor.either]:
        state = do(state, frame, Effect(EffectKind.RECORD_STREAM, site, identity, stream))
    return UNKNOWN, state


def _pin(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`t.pin_memory()` (a method of host memory only): the host copies the receiver into new page-locked memory; of
    memory pinned already it returns the tensor itself, read by nobody (a `non_blocking` copy's pinned output)."""
    receiver = arguments.receiver
    if receiver is not None and is_device(receiver):
        return UNKNOWN, state
    if receiver is not None and receiver.is_buffer and receiver.memory is Memory.PINNED:
        return receiver, state
    if receiver is not None and receiver.identity is not None:
        state = host_access(state, frame, frame.site(arguments.node), receiver.identity, False)
    return result_of(fact, arguments, frame, None), state


def _set_stream(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    given = arguments.value(fact.stream_arg)
    if given is not None and given.kind is ValueKind.NONE and fact.stream == Stream.NONE:
        return UNKNOWN, state  # `torch.cuda.set_stream(None)` changes nothing
    stream = queue_of(fact, arguments, state) or stream_of_value(given)
    if stream is None:
        return UNKNOWN, state
    effect = Effect(EffectKind.SET_CURRENT, frame.site(arguments.node), stream=stream, framework=fact.framework)
    return result_of(fact, arguments, frame, stream), do(state, frame, effect)


def _copy(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """An upload or a download on the stream; from pageable memory the host stages it first (CUDA's rule)."""
    stream = queue_of(fact, arguments, state)
    if stream is None:
        return UNKNOWN, state
    site = frame.site(arguments.node)
    upload = fact.kind is OpKind.COPY_H2D
    source, target, into_receiver = _copy_ends(fact, arguments, frame, stream if upload else None)
    waits = host_waits(fact, arguments)
    staged = upload and not waits and (source is None or not source.is_buffer or source.memory is not Memory.PINNED)
    after = waits or (not upload and target.memory is not Memory.PINNED and waits is not None)
    state = copy(state, frame, site, stream, source, target, upload, staged, bool(after))
    return (UNKNOWN if into_receiver else target), state


def _copy_ends(fact: Fact, arguments: Arguments, frame: Frame, made_on: Optional[StreamRef]
               ) -> tuple[Optional[AbsValue], AbsValue, bool]:
    """A copy's source and destination (the receiver's own memory, the buffers its fact names, else what it
    returns), and whether the receiver is the destination."""
    receiver, upload = arguments.receiver, fact.kind is OpKind.COPY_H2D
    own = receiver is not None and (receiver.is_buffer or (fact.self_writes if upload else fact.self_reads)) \
        and receiver.identity is not None
    to, of = fact.ends or (next(iter(fact.writes), None), next(iter(fact.reads), None))
    given = [v for v in (arguments.value(fact.out), arguments.value(to)) if v is not None and v.is_buffer]
    target = receiver if own and upload else given[0] if given else result_of(fact, arguments, frame, made_on)
    if upload:
        return arguments.value(fact.host), target, own
    first = next((v for v, _ in arguments.positional if v.is_buffer), None)
    return (receiver if own else arguments.value(of) if of is not None else first), target, False


def _device_work(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A kernel, memset or copy: the buffers its fact names read and written on its stream; a copy of
    unknown direction reads its source and writes its destination, and the host may wait for it."""
    stream = queue_of(fact, arguments, state)
    site = frame.site(arguments.node)
    if stream is None:
        return UNKNOWN, state
    copy = fact.kind is OpKind.COPY
    for given, write in _touched(fact, arguments, state):
        for value in _memory_in(given, state):
            host_memory = (copy and not is_device(value)) or is_host(value)
            state = access(state, frame, site, value.identity, write, stream, host_memory=host_memory)
    if not copy:  # (a kernel writes the new memory it returns on its stream)
        result = result_of(fact, arguments, frame, stream)
        made = fact.result.endswith(":written") and result.identity is not None
        return result, access(state, frame, site, result.identity, True, stream) if made else state
    if host_waits(fact, arguments):
        state = wait_for(state, frame, site, stream)
    return UNKNOWN, state


def _memory_in(value: Optional[AbsValue], state: State) -> tuple[AbsValue, ...]:
    """The memory an argument names: a buffer; of a list or tuple (TensorRT's `bindings`), every memory an item may
    be, whatever its index (the call reaches them all)."""
    if value is None or value.kind is not ValueKind.CONTAINER:
        return (value,) if value is not None and value.is_buffer and value.identity is not None else ()
    identity = value.identity
    stored = [v for path, v in state.heap if identity is not None and path.root == identity.root
              and path.steps[:-1] == identity.steps and path.steps and isinstance(path.steps[-1], Index)]
    items = (*value.positions, *(v for v in (value.element, *stored) if v is not None))
    return tuple(m for item in items if item.kind is not ValueKind.CONTAINER for m in item.alternatives)


def _touched(fact: Fact, arguments: Arguments, state: State) -> list[tuple[Optional[AbsValue], bool]]:
    """The arguments a call reads and writes, by its fact (from `reads_from` on: a kernel's arguments)."""
    writes, reads, ends = fact.writes, fact.reads, fact.ends
    if fact.kind is OpKind.MEMSET and not writes and arguments.receiver is None:
        writes = (Arg(0),)  # a memset writes the memory it is given first (`cudaMemsetAsync(ptr, ...)`)
    if fact.kind is OpKind.COPY and not (reads or writes or fact.self_reads or fact.self_writes):
        ends = ends or (Arg(0, "dst"), Arg(1, "src"))  # a copy no effect model names: destination, source
    if ends:  # a copy given both ends
        writes, reads = writes + ends[:1], reads + ends[1:]
    touched = [(arguments.value(a), False) for a in reads] + [(arguments.value(a), True) for a in writes]
    if fact.reads_from is not None:
        for value, _ in arguments.positional[fact.reads_from:]:
            touched.append((value, False))
            if fact.args_written:
                touched.append((value, True))
    receiver = arguments.receiver
    if receiver is not None and fact.self_kept:
        # the memory bound to it, read and written (TensorRT's context reads its inputs and writes its outputs through
        # the addresses it keeps, here or by another method: the class's state); none known, none touched
        slot = state.stored(receiver.identity.element(Index.items())) if receiver.identity is not None else None
        kept = slot or receiver.element
        return touched + ([(kept, False), (kept, True)] if kept is not None else [])
    if receiver is not None and (fact.self_reads or fact.self_writes):  # its own memory, whatever it is
        own = replace(receiver, kind=ValueKind.BUFFER)
        touched += [(own, False)] if fact.self_reads and not fact.self_writes else [(own, True)]
    return touched


def _register_host(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`cudaHostRegister(h.ctypes.data, ...)`, `with cuda.pinned(h):`: the host array is page-locked in place."""
    host = arguments.value(fact.host)
    # (a host array whose pinnedness nobody told, a parameter's, is page-locked too)
    if host is not None and host.is_buffer and host.memory is not Memory.DEVICE and host.identity is not None:
        # (an effect, so a caller that handed the array to this helper finds it pinned too)
        state = do(state, frame, Effect(EffectKind.PIN, frame.site(arguments.node), host.identity))
    return result_of(fact, arguments, frame, None), state


def _allocate(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """New memory, made on (Numba: bound to) the stream given, else its fact's, else the current stream."""
    given = stream_of_value(arguments.value(fact.stream_arg)) if fact.stream_arg is not None else None
    stream = given or queue_of(fact, arguments, state) or state.current_stream(fact.framework)
    return result_of(fact, arguments, frame, stream), state


def _implicit_sync(fact: Fact, arguments: Arguments, state: State, frame: Frame) -> Handled:
    data = [v for v in [arguments.receiver, *arguments.values()] if v is not None]
    state = read_by_host(state, frame, frame.site(arguments.node), data, queue_of(fact, arguments, state))
    return AbsValue(ValueKind.HOST_NUMBER), state


_BY_KIND: dict[Optional[OpKind], Callable[[Fact, Arguments, State, Frame], Handled]] = {
    OpKind.STREAM_CREATE: _create_stream,
    OpKind.EVENT_RECORD: _record_event,
    OpKind.STREAM_WAIT_EVENT: _wait_event,
    OpKind.STREAM_SYNC: _sync,
    OpKind.EVENT_SYNC: _sync,
    OpKind.DEVICE_SYNC: _sync,
    OpKind.SET_STREAM: _set_stream,
    OpKind.COPY_H2D: _copy,
    OpKind.COPY_D2H: _copy,
    OpKind.KERNEL: _device_work,
    OpKind.MEMSET: _device_work,
    OpKind.COPY_D2D: _device_work,
    OpKind.COPY: _device_work,
    OpKind.ALLOC: _allocate,
    OpKind.HOST_REGISTER: _register_host,
    OpKind.IMPLICIT_SYNC: _implicit_sync,
    OpKind.WAIT_STREAM: _wait_stream,
    OpKind.RECORD_STREAM: _record_stream,
    OpKind.PIN: _pin,
}
