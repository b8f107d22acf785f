"""PyTorch's handler: its fact tables (model/api/torch_api.py) and PyTorch's invariant: an
operation on CUDA tensors runs on the current stream and returns CUDA tensors made there."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional

import libcst as cst

from streamlint.model.api import cuda_python, interop, torch_api, torch_modules
from streamlint.model.api.facts import Arg
from streamlint.model.domain.paths import Index, IndexKind, Path, Root
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef
from streamlint.model.domain.values import HOST_MADE, UNKNOWN, AbsValue, HostBuilt, Memory, ValueKind
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.summary.perform import untold_access
from streamlint.model.api.op_kinds import OpKind
from streamlint.model.transfer.act import (access, copy, do, fresh, host_access, kernel, may_wait, operation, read_by_host,
                                           unseen_devices, wait_for)
from streamlint.model.transfer.arguments import Arguments, Handled
from streamlint.model.transfer.devices import is_device, is_host, memory_named, placed
from streamlint.model.transfer.fact_calls import apply_fact, made_at
from streamlint.model.transfer.frame import Frame

F = "torch"
# Where PyTorch's optimizers live: `torch.optim.AdamW(model.parameters())` holds the model's parameters.
OPTIMIZERS = ("torch.optim.",)
OPTIMIZER = "optimizer"


def read_as_int(api: str, value: Optional[AbsValue], node: cst.CSTNode, state: State, frame: Frame) -> State:
    """A CUDA tensor where the host needs a Python integer (a slice bound, `topk`'s `k`): PyTorch reads it back
    (`__index__`), and the host waits for the stream."""
    if value is None or not is_device(placed(value)):
        return state
    framework = value.framework or F
    return read_back(api, [placed(value)], state.current_stream(framework), "", framework, frame.site(node), state,
                     frame)[1]


def _int_arguments(table: dict, short: str, arguments: Arguments, state: State, frame: Frame) -> State:
    for parameter in table.get(short, ()):
        located = arguments.located(parameter)
        if located is not None:
            state = read_as_int(torch_api.INTEGER_ARGUMENT, located[0], located[1], state, frame)
    return state


def function(name: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    state = _int_arguments(torch_api.INT_PARAMETERS, name.removeprefix("torch."), arguments, state, frame)
    fact = torch_api.FUNCTIONS.get(name)
    if fact is not None:
        return apply_fact(fact, arguments, state, frame, name)
    if name in torch_api.MODULE_STATE:  # (it moves with its module: a device not told)
        return fresh(frame, arguments, Memory.UNKNOWN, None), state
    answer = _no_work(name)
    if answer is not None:
        return answer, state
    if name in torch_api.COLLECTIVES:
        return _collective(torch_api.COLLECTIVES[name], _tensor_arguments(name, arguments), state, frame)
    if name in torch_api.FUNCTIONAL_COLLECTIVES and arguments.positional:
        _, state = _collective((), replace(arguments, positional=arguments.positional[:1], keywords={}), state, frame)
        return fresh(frame, arguments, Memory.DEVICE, state.current_stream(F)), state
    if name.startswith(torch_api.TENSOR_LIST_FUNCTIONS):
        return _tensor_lists(name.endswith("_"), arguments, state, frame)
    if name in torch_api.ITEM_COMBINERS:
        return _combined(arguments, state, frame)
    if name.startswith(OPTIMIZERS) and name.rsplit(".", 1)[-1][:1].isupper():  # it holds the parameters it is given
        given = arguments.value(Arg(0, "params"))
        members = given.members if given is not None else frozenset()
        return AbsValue(ValueKind.CONTAINER, F, target=OPTIMIZER, members=members), state
    short = name.rsplit(".", 1)[-1]
    buffers = [v for v in arguments.values() if v.is_buffer]
    viewed = _view_function(name, short, arguments, state, frame)
    if viewed is not None:
        return viewed
    if name.startswith("torch.") and buffers and (short in torch_api.SIZED_BY_DATA or (
            short == "where" and len(arguments.values()) == 1)):  # `torch.where(cond)` is `nonzero`
        return sized_by_data(name, buffers, arguments, state, frame)
    given = arguments.value(Arg(0, "data"))
    if name == "torch.as_tensor" and given is not None and is_device(given) and given.identity is not None:
        # device memory another framework made, now a tensor too (no copy)
        return AbsValue(ValueKind.BUFFER, F, Memory.DEVICE, given.identity, given.stream), state
    created = _created(name, short, arguments, state, frame)
    if created is not None:
        return created
    if torch_api.returns_tensor(name) and all(v.memory is Memory.UNKNOWN and not (v.is_buffer and v.stream)
                                              for v in arguments.values()):
        return _of_untold(buffers, arguments, state, frame)
    return None


def _created(name: str, short: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    """A new tensor of a creator (`torch.zeros(n, device=d)`, `torch.zeros_like(t)`, `torch.LongTensor(n)`)."""
    if name.startswith("torch.") and short in torch_api.CREATORS:
        return _creator(short, arguments, state, frame)
    if short in torch_api.LEGACY_TENSOR_TYPES and name in (f"torch.{short}", torch_api.LEGACY_CUDA_NAMESPACE + short):
        if _given_data(arguments) and not name.startswith(torch_api.LEGACY_CUDA_NAMESPACE):
            return _creator("tensor", arguments, state, frame)  # (`torch.FloatTensor([...])`: built from the values)
        return _legacy_typed(name, arguments, state, frame)
    if name == "torch.Tensor" and arguments.positional and _cuda_default(frame):
        return _creator("tensor", arguments, state, frame)  # (the default tensor type's constructor: CUDA's now)
    if name == "torch.Tensor" and arguments.positional:
        # (the default tensor type's constructor: a host tensor, built from the values it is given or of the sizes)
        return _creator("tensor", arguments, state, frame) if _given_data(arguments) \
            else _legacy_typed(name, arguments, state, frame)
    if name.startswith("torch.") and short in torch_api.LIKE_CREATORS:
        return _like_creator(short, arguments, state, frame)
    return None


def _given_data(arguments: Arguments) -> bool:
    """A legacy constructor given values (`torch.Tensor([1.0, 2.0])`, a list it builds), not sizes (`torch.Tensor(3, 4)`)."""
    first = arguments.positional[0][0] if arguments.positional else None
    return first is not None and len(arguments.positional) == 1 and (
        first.kind is ValueKind.CONTAINER or (first.is_buffer and is_host(first)))


def _cuda_default(frame: Frame) -> bool:
    return frame.program is not None and frame.program.makes_cuda_default()


def _legacy_typed(name: str, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`torch.LongTensor(n, m)`: a new tensor in pageable host memory; `torch.cuda.FloatTensor(n)`: in CUDA memory."""
    if name.startswith(torch_api.LEGACY_CUDA_NAMESPACE):
        return _made("empty", Memory.DEVICE, arguments, state, frame)
    return fresh(frame, arguments, Memory.PAGEABLE, None), state


def _view_function(name: str, short: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    """`torch.split(t, n)`: views of its memory (iterating or unpacking them gives pieces where it is);
    `torch.reshape(t, shape)` is `t.reshape(shape)`: a view where the tensor is (a loader's pinned batch stays pinned)."""
    tensor = arguments.value(Arg(0, "tensor"))
    if not name.startswith("torch.") or tensor is None or not tensor.is_buffer:
        return None
    if short in torch_api.SPLITS:
        return tensor, state
    if short in torch_api.VIEW_METHODS and arguments.positional:
        return tensor_method(short, tensor, replace(arguments, positional=arguments.positional[1:]), state, frame)
    return None


def _of_untold(buffers: list, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """Given no tensor of known memory (or made on a known stream): a new tensor of a device not told, written where
    its inputs live (a value the walk knows nothing of, handed to a tensor function, is one of its tensors); under a
    stream the code chose, a CUDA tensor made there whatever it was given."""
    inputs = buffers or [v for v in arguments.values() if v.kind is ValueKind.UNKNOWN and v.identity is not None]
    if inputs or frame.untold_is_cuda(state):
        return untold_result(arguments, state, frame)
    return fresh(frame, arguments, Memory.UNKNOWN, None), state


def _no_work(name: str) -> Optional[AbsValue]:
    """What a function that queues nothing on the current stream returns: a host value read from a tensor's
    metadata (`torch.is_tensor(x)`), a P2P descriptor or a list of `Work` handles (no memory), a restored object of
    no kind told; None for others."""
    if name in torch_api.HOST_PREDICATES:
        return AbsValue(ValueKind.HOST_NUMBER)
    if name in torch_api.RESTORERS:  # (no framework object of its own: a model, a tensor, a dict, as it was saved)
        return UNKNOWN
    if name in torch_api.DISTRIBUTED_HANDLES:
        listed = torch_api.DISTRIBUTED_HANDLES[name] == torch_api.HANDLES
        return AbsValue(ValueKind.CONTAINER, element=UNKNOWN) if listed else UNKNOWN
    return None


def _like_creator(short: str, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`zeros_like(x)`: a new tensor where its input is, unless told (filled there unless only allocated)."""
    like = arguments.value(Arg(0, "input"))
    memory = memory_named(arguments, Arg(kw="device")) or (like.memory if like and like.is_buffer else None)
    pinned = arguments.flag(Arg(kw="pin_memory"), False)
    if memory is not Memory.DEVICE and pinned:
        memory = Memory.PINNED  # (`empty_like(x, pin_memory=True)`: page-locked host memory, whatever `x` is)
    elif memory is not Memory.DEVICE and memory is not None and pinned is None:
        memory = Memory.UNKNOWN  # (`pin_memory=self.use_pin_memory`: pinned or not as the option says: not told)
    elif memory is Memory.PINNED:
        memory = Memory.PAGEABLE  # (`zeros_like(pinned)`: host memory, page-locked only when asked: a tensor's
        # options carry no pinning)
    if memory is None and like is not None and like.is_buffer:
        filled = short not in torch_api.ALLOCATING_ONLY
        return untold_result(arguments, state, frame) if filled else (fresh(frame, arguments, Memory.UNKNOWN, None), state)
    return (UNKNOWN, state) if memory is None else _made(short, memory, arguments, state, frame)


def untold_result(arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A new tensor an operation makes from tensors of a device not told: where they are, written on the current
    stream if that is a device (PyTorch's invariant); a later use as device memory tells, and meets the write (D-11)."""
    tensors = [v for v in arguments.values() if v.is_buffer]
    if frame.untold_is_cuda(state) and not any(map(is_host, tensors)):  # (under a stream the code chose they are CUDA tensors: work there)
        # (a value the walk knows nothing of, handed to a tensor function, may be one of its tensors: the result is
        # CUDA memory made there; its memory is not told to be read there, D-11)
        unknowns = [AbsValue(ValueKind.BUFFER, F) for v in arguments.values() if v.kind is ValueKind.UNKNOWN]
        if tensors or unknowns:
            return run_operation(tensors + unknowns, None, False, arguments, state, frame)
    result = fresh(frame, arguments, Memory.UNKNOWN, None)
    return result, touch(state, frame, frame.site(arguments.node), result, True, None)


def read_back(api: str, values: list[AbsValue], stream: StreamRef, value_site: str, framework: str, site: str,
              state: State, frame: Frame) -> Handled:
    """The host reads device memory back (act.read_by_host), an operation the rules ask about."""
    state = operation(state, frame, site, api, OpKind.IMPLICIT_SYNC, stream, True, value_site=value_site,
                      framework=framework)
    return AbsValue(ValueKind.HOST_NUMBER), read_by_host(state, frame, site, values, stream)


def sized_by_data(api: str, inputs: list[AbsValue], arguments: Arguments, state: State, frame: Frame) -> Handled:
    """An operation whose result's size the data decides: of CUDA memory, the host reads the size back (it waits
    for the stream), then the result is made where the inputs are."""
    seen = [placed(v, frame.assumes_cuda) for v in inputs]
    read = [v for v in seen if is_device(v)]
    unseen_devices(frame, frame.site(arguments.node), seen)
    if read:
        site = frame.site(arguments.node)
        _, state = read_back(api, read[:1], state.current_stream(read[0].framework or F), made_at(read[0]),
                             read[0].framework or F, site, state, frame)
    return run_operation(inputs, None, False, arguments, state, frame)


def learn(state: State, learned: AbsValue) -> State:
    """The names, and the path, that hold a value of unknown kind at `learned`'s memory hold `learned` (evidence)."""
    for name, value in state.names:
        if value.identity == learned.identity and value.kind is ValueKind.UNKNOWN:
            state = state.bind(name, learned)
    held = state.stored(learned.identity)
    return state.store(learned.identity, learned) if held is not None and held.kind is ValueKind.UNKNOWN else state


def parameters_of(module: AbsValue) -> Optional[AbsValue]:
    """`model.parameters()`: the module's parameters, its memory (an nn.Module's method)."""
    if module.identity is None or module.kind not in (ValueKind.UNKNOWN, ValueKind.BUFFER):
        return None
    # (its items are tensors in the module's memory, where that memory is told: `list(model.parameters())` lists them)
    item = AbsValue(ValueKind.BUFFER, F, module.memory, module.identity.element(Index.any_())) \
        if module.memory is not Memory.UNKNOWN else None
    return AbsValue(ValueKind.CONTAINER, F, members=frozenset({module.identity}), element=item)


def optimizer_step(optimizer: AbsValue, name: str, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    """`opt.step()`, `opt.zero_grad()`: the parameters (CUDA memory) read and written on the current stream."""
    if name not in ("step", "zero_grad"):
        return None
    site = frame.site(arguments.node)
    current = state.current_stream(F)
    for member in sorted(optimizer.members, key=repr):
        if any(value.identity == member and is_host(value) for _, value in state.names):
            state = host_access(state, frame, site, member, True)  # CPU parameters: the host's work
            continue
        state = access(state, frame, site, member, False, current)
        state = access(state, frame, site, member, True, current)
        state = learn(state, AbsValue(ValueKind.BUFFER, F, Memory.DEVICE, member))
    return UNKNOWN, state


def _tensor_arguments(name: str, arguments: Arguments) -> Arguments:
    """The collective's arguments with its tensors given by keyword in their positions."""
    params = torch_api.COLLECTIVE_TENSOR_PARAMS.get(name, ())
    given = [(i, arguments.keywords[p]) for i, p in enumerate(params) if p in arguments.keywords]
    if not given or len(arguments.positional) > given[0][0]:
        return arguments
    positional = list(arguments.positional)
    for index, value in given:
        if index != len(positional):
            break
        positional.append(value)
    return replace(arguments, positional=tuple(positional))


def _collective(written: tuple[int, ...], arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A torch.distributed collective: on the current stream it reads its (CUDA) tensors and writes those
    its row names; `async_op=True` returns a work handle, an event recorded here."""
    site = frame.site(arguments.node)
    current = state.current_stream(F)
    for index, (value, _) in enumerate(arguments.positional):
        if value.kind in (ValueKind.BUFFER, ValueKind.UNKNOWN) and value.identity is not None:
            device = _on_device(value) if value.memory is Memory.UNKNOWN else value
            state = _known_as(state, value, device)
            if device != value and value.identity.steps and state.at(value.identity).kind is ValueKind.UNKNOWN:
                state = state.store(value.identity, device)  # (`self.out`, whose memory nothing stored told)
            state = touch(state, frame, site, device, False, current)
            if index in written:
                state = touch(state, frame, site, device, True, current)
    if not arguments.flag(Arg(kw="async_op"), False):
        return AbsValue(ValueKind.UNKNOWN), state
    work = AbsValue(ValueKind.EVENT, F, identity=Path(Root.fresh(site)), stream=current)
    return work, do(state, frame, Effect(EffectKind.RECORD_EVENT, site, work.identity, current))


def _tensor_lists(inplace: bool, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`torch._foreach_add_(params, grads)`: under a chosen stream, or for CUDA tensors, it reads every list
    on the current stream and writes the first in place, or returns new tensors made there."""
    site = frame.site(arguments.node)
    current = state.current_stream(F)
    chosen = frame.chosen_stream(state)
    lists = [v for v, _ in arguments.positional[:1]
             if (v.identity is not None or _items(v) is not None) and v.kind in (ValueKind.UNKNOWN, ValueKind.CONTAINER)]
    written = lists[0] if lists else None  # (the in-place write is the first list's, never another's)
    lists += [v for v, _ in arguments.positional[1:] if v.kind is ValueKind.CONTAINER and _items(v) is not None]
    on_device = [v for v in lists if chosen or (_items(v) is not None and is_device(_items(v)))]
    if not on_device:
        return UNKNOWN, state
    for value in on_device:
        known = replace(value, kind=ValueKind.CONTAINER, element=_on_device(_items(value) or AbsValue(framework=F)))
        state = _known_as(state, value, known)
        state = access(state, frame, site, _items_path(value), False, current)
    if inplace:
        first = written if written is not None and written in on_device else None
        return UNKNOWN, state if first is None else access(state, frame, site, _items_path(first), True, current)
    made = AbsValue(ValueKind.BUFFER, F, Memory.DEVICE, Path(Root.fresh(site)), current)
    state = access(state, frame, site, made.identity, True, current)
    return AbsValue(ValueKind.CONTAINER, F, element=made, members=frozenset({made.identity})), state


def _items(value: AbsValue) -> Optional[AbsValue]:
    return value.element if value.element is not None and value.element.is_buffer else None


def _items_path(value: AbsValue) -> Path:
    """Where a list's tensors live: the memory its items are, else every item of the list."""
    item = value.element
    if item is not None and item.identity is not None and item.is_buffer:
        return item.identity
    assert value.identity is not None
    return value.identity.element(Index.items())


def _combined(arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`torch.cat(tensors)`: a new tensor made where the list's items live (unknown items: device not told)."""
    given = arguments.value(Arg(0, "tensors"))
    if given is not None and given.is_buffer:
        # (the pieces of a tensor, or the tuple a split or `meshgrid` returns, which the walk holds as one tensor of
        # where they are: `torch.stack(torch.meshgrid(a, b), -1)` is made there)
        return run_operation([given], None, False, arguments, state, frame)
    if given is None or given.kind not in (ValueKind.CONTAINER, ValueKind.UNKNOWN):
        return UNKNOWN, state
    pieces = [p for p in given.positions if p.is_buffer]
    if pieces and any(is_host(p) for p in pieces):
        # (`torch.cat((b, torch.full(...)))`: the pieces the text shows, one of them on the host: so are the others,
        # PyTorch joins tensors of one device only)
        return run_operation(pieces, None, False, arguments, state, frame)
    item = _items(given)
    if item is None:
        return untold_result(arguments, state, frame)
    items = [replace(item, identity=member) for member in sorted(given.members, key=repr)]
    return run_operation(items or [item], None, False, arguments, state, frame)


def _known_as(state: State, before: AbsValue, after: AbsValue) -> State:
    """Every name and attribute holding `before` now holds `after`: evidence about a value is about it anywhere."""
    if before == after:
        return state
    for name, value in state.names:
        if value == before:
            state = state.bind(name, after)
    for path, value in state.heap.items():
        if value == before:
            state = state.store(path, after)
    return state


def _creator(short: str, arguments: Arguments, state: State, frame: Frame) -> Handled:
    memory = memory_named(arguments, Arg(kw="device"))
    if memory is None and arguments.located(Arg(kw="device")) is not None and frame.assumes_cuda:
        memory = Memory.DEVICE  # a device the code does not show, in a project that assumes CUDA
    if memory is None and arguments.located(Arg(kw="device")) is None and _cuda_default(frame):
        memory = Memory.DEVICE  # no `device=`, in a program that made CUDA the default device
        if short in torch_api.FROM_DATA and _host_built(arguments):  # (`torch.tensor([1e10])`: built, then uploaded)
            value = fresh(frame, arguments, memory, state.current_stream(F))
            built = AbsValue(ValueKind.BUFFER, F, Memory.PAGEABLE)
            return value, _copied("torch.tensor", built, value, True, False, arguments, state, frame,
                                  host_built=HostBuilt.EVERY_PASS)
    pinned = arguments.flag(Arg(kw="pin_memory"), False)
    if short in torch_api.FROM_DATA and arguments.located(Arg(kw="device")) is None \
            and _host_built(arguments, written_out=True):
        # `torch.tensor([a, b])`: built on the host from values the code writes out, where it stays
        # (in pinned memory it is what an upload should start from: no stand-in to report)
        return replace(fresh(frame, arguments, Memory.PINNED if pinned else Memory.PAGEABLE, None),
                       built=None if pinned else HostBuilt.EVERY_PASS), state
    data = arguments.value(Arg(0, "data"))
    if short in ("tensor", "as_tensor") and data is not None and data.kind is ValueKind.CONTAINER \
            and arguments.located(Arg(kw="device")) is None:
        # `torch.tensor(lengths)` of a Python list, no `device=`: made on the default device, the host's memory
        return fresh(frame, arguments, Memory.PINNED if pinned else Memory.PAGEABLE, None), state
    if memory is None and short in ("tensor", "as_tensor"):
        return UNKNOWN, state  # the input's device, or one the code does not show: not told
    if memory is None and arguments.located(Arg(kw="device")) is not None:
        # a new tensor on a device the code does not show: its memory is told by a later use (D-11)
        return fresh(frame, arguments, Memory.UNKNOWN, None), state
    if memory is not Memory.DEVICE:  # on the host: pinned when asked (`device="cpu", pin_memory=True`)
        memory = Memory.PINNED if pinned else (Memory.PAGEABLE if pinned is False else Memory.UNKNOWN)
    if short in torch_api.FROM_DATA and memory is Memory.DEVICE and _host_built(arguments):
        # built in pageable host memory, then copied: a blocking upload, no kernel
        value = fresh(frame, arguments, memory, state.current_stream(F))
        built = AbsValue(ValueKind.BUFFER, F, Memory.PAGEABLE)
        return value, _copied("torch.tensor", built, value, True, False, arguments, state, frame,
                                  host_built=HostBuilt.EVERY_PASS)
    made = _made(short, memory, arguments, state, frame)
    if memory is Memory.PAGEABLE and short not in torch_api.FROM_DATA | torch_api.ALLOCATING_ONLY \
            and arguments.located(Arg(kw="device")) is None:
        return replace(made[0], target=HOST_MADE), made[1]  # (`torch.zeros(n)`: values the host made)
    if short in torch_api.FROM_DATA and memory is Memory.DEVICE and not (data is not None and is_device(data)):
        # data not on the device: built on the host, then copied with `non_blocking=False`, which synchronizes the
        # current stream (API-FACTS 4.2): the host has waited for everything queued there (no upload claimed)
        return made[0], wait_for(made[1], frame, frame.site(arguments.node), state.current_stream(F))
    return made


def _made(short: str, memory: Memory, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """A new tensor in that memory: on the device made on the current stream, filled there unless only allocated."""
    current = state.current_stream(F) if memory is Memory.DEVICE else None
    value = fresh(frame, arguments, memory, current)
    if current is not None and short not in torch_api.ALLOCATING_ONLY:
        state = access(state, frame, frame.site(arguments.node), value.identity, True, current)
    return value, state


def _host_built(arguments: Arguments, written_out: bool = False) -> bool:
    """The data is Python values (`0.0`, `[a, b]`, `x.shape`): the tensor is built on the host (`written_out`: a
    number or a list written out of values that are no tensors, not data the program reads)."""
    located = arguments.located(Arg(0, "data"))
    if located is None:
        return False
    data, node = located
    if data.kind is ValueKind.HOST_NUMBER:
        return True
    # (a list written out, or computed over a range of counters: `[exp(-(x - c) ** 2) for x in range(n)]`)
    items, written = data.element, isinstance(node, (cst.List, cst.Tuple)) or _over_a_range(node)
    if data.kind is not ValueKind.CONTAINER or (written_out and not written):
        return False
    return (items is not None and items.kind is ValueKind.HOST_NUMBER) or (written and not (items and items.is_buffer))


def _over_a_range(node: cst.BaseExpression) -> bool:
    """A list comprehension whose every `for` runs over `range(...)`, or a list written out repeated (`[t] * n`):
    values the code computes, not data it reads."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        return any(isinstance(side, (cst.List, cst.Tuple)) and side.elements for side in (node.left, node.right))
    return isinstance(node, cst.ListComp) and _ranges(node.for_in)


def _ranges(for_in: Optional[cst.CompFor]) -> bool:
    while for_in is not None:
        it = for_in.iter
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"):
            return False
        for_in = for_in.inner_for_in
    return True


def tensor_method(name: str, tensor: AbsValue, arguments: Arguments, state: State, frame: Frame) -> Optional[Handled]:
    state = _int_arguments(torch_api.INT_METHOD_PARAMETERS, name, arguments, state, frame)
    if tensor.target == torch_api.STORAGE:
        return _storage_method(name, tensor, arguments, state, frame)
    if name in torch_api.STORAGE_METHODS:
        return replace(tensor, target=torch_api.STORAGE), state
    if name in _COPIES:  # (`non_blocking=` as its row's flag writes it, False where the row has none)
        fact = torch_api.TENSOR_COPIES[name]
        non_blocking = arguments.flag(fact.flag, fact.flag_default) if fact.flag else False
        return _COPIES[name](tensor, non_blocking, arguments, state, frame)
    if name in torch_api.HOST_VIEWS and is_host(tensor):  # `.cpu(...).numpy()`: the same memory, nothing read yet
        return replace(tensor, framework="numpy"), state
    if name in torch_api.HOST_ONLY_METHODS and not arguments.flag(torch_api.HOST_ONLY_METHODS[name], False):
        # (a tensor taken for a CUDA one, by `assume-device` or a join, is on the host: it would raise otherwise)
        return fresh(frame, arguments, Memory.PAGEABLE, None, "numpy"), state
    if name in torch_api.TENSOR_METHODS:
        return apply_fact(torch_api.TENSOR_METHODS[name], replace(arguments, receiver=tensor), state, frame,
                          f"torch.Tensor.{name}")
    if name in torch_api.SIZED_BY_DATA:
        return sized_by_data(f"torch.Tensor.{name}", [tensor], arguments, state, frame)
    if name in interop.ADDRESS_METHODS:  # its memory, as an address: no kernel, nothing read
        return replace(tensor, framework=cuda_python.RAW_ADDRESS), state
    if name in torch_api.RETURN_THEMSELVES:
        return tensor, state
    converts = name in torch_api.CONVERTING_WITH_ARGUMENT and bool(arguments.positional or arguments.keywords)
    if name in torch_api.NON_TENSOR_METHODS and not converts:
        return UNKNOWN, state
    if name in torch_api.TENSOR_PRESERVING or converts or (name.endswith("_") and name not in torch_api.NON_KERNEL_INPLACE):
        if name in torch_api.PURE_VIEWS and (tensor.identity is not None or is_device(tensor)):
            return tensor, state  # a view of the same memory: no kernel, nothing read
        inputs = [tensor] + [v for v in arguments.values() if v.is_buffer]
        written = tensor if name.endswith("_") else None  # (in place: `add_`)
        return run_operation(inputs, written, name in torch_api.VIEW_METHODS, arguments, state, frame)
    if name not in torch_api.tensor_attributes():  # (no tensor has it: the receiver is a module or another object)
        return (tensor if name in torch_modules.RETURNS_SELF else UNKNOWN), state
    return None


def _storage_method(name: str, storage: AbsValue, arguments: Arguments, state: State, frame: Frame) -> Handled:
    """`t.untyped_storage().resize_(0)`: the memory goes back to its stream's allocator now."""
    size = arguments.expression(Arg(0, "size"))
    freed = isinstance(size, cst.Integer) and size.evaluated_value == 0
    if name not in torch_api.STORAGE_RELEASES or not freed or storage.identity is None or storage.stream is None:
        return UNKNOWN, state
    site = frame.site(arguments.node)
    return UNKNOWN, do(state, frame, Effect(EffectKind.RELEASE, site, storage.identity, storage.stream))


def run_operation(inputs: list[AbsValue], written: Optional[AbsValue], view: bool, arguments: Arguments,
                  state: State, frame: Frame) -> Handled:
    """PyTorch's invariant for any operation on tensors: where they live, it runs."""
    site = frame.site(arguments.node)
    framework = next((v.framework for v in inputs if is_device(v) and v.framework), F)
    current = state.current_stream(framework)
    if frame.untold_is_cuda(state) and not any(map(is_host, inputs)):  # (a CPU operation ignores the stream)
        # under a stream the code chose (or assuming CUDA), a tensor of unknown device is a CUDA tensor: the work
        # is queued there, and the code after the block finds it a CUDA tensor too
        for untold in (v for v in [*inputs, written] if v is not None and v.is_buffer and v.identity is not None
                       and v.memory is Memory.UNKNOWN):
            state = state.learned_device(untold.identity)
        inputs, written = [placed(v) for v in inputs], placed(written)
    on_device = any(is_device(v) for v in inputs)
    stream = current if on_device else None
    state = kernel(state, frame, site, _operation_api(arguments.node, framework), stream, framework)
    for value in inputs:
        if value.identity is not None and (written is None or value.identity != written.identity):
            state = touch(state, frame, site, value, False, stream)
    if written is not None:
        state = touch(state, frame, site, written, True, stream)
        return written, state
    if view and inputs and (inputs[0].identity is not None or is_host(inputs[0])):
        return inputs[0], state  # a view: the same memory (a loader's batch keeps its pinnedness)
    if not on_device:
        # (a NumPy array's result is a NumPy array; items a whole index picks may be scalars: not told)
        host = next((v for v in inputs if is_host(v) and not maybe_item(v)), None)
        if host is None and any(v.is_buffer and v.framework == F and v.memory is Memory.UNKNOWN for v in inputs):
            # tensors of a device not told: a new tensor where they are (`domain/values._learned_on_one_path`)
            return untold_result(arguments, state, frame)
        if host is None:
            return UNKNOWN, state
        result = fresh(frame, arguments, Memory.PAGEABLE, None, host.framework or F)
        buffers = [v for v in inputs if v.is_buffer]
        if host.framework == F and all(v.target == HOST_MADE or v.host_built for v in buffers):
            result = replace(result, target=HOST_MADE)  # (`gauss / gauss.sum()`: values the host computed from its own)
        return result, state
    result = fresh(frame, arguments, Memory.DEVICE, stream, framework)
    return result, touch(state, frame, site, result, True, stream)


def _operation_api(node: cst.CSTNode, framework: str) -> str:
    """An operation's name for its Operation record: the operator's for one (`a * 2`)."""
    if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
        return "arithmetic" if not isinstance(node, cst.Comparison) else "a comparison"
    return f"{framework}.operation"


def maybe_item(value: AbsValue) -> bool:
    """An item a whole index picks from an array (`a[i]`): a scalar for a 1-D array."""
    if value.rank >= 1:
        return False
    steps = value.identity.steps if value.identity is not None else ()
    last = steps[-1] if steps else None
    return isinstance(last, Index) and last.kind in (IndexKind.CONST, IndexKind.ANY, IndexKind.SLOT)


def _on_device(value: AbsValue) -> AbsValue:
    return AbsValue(ValueKind.BUFFER, value.framework or F, Memory.DEVICE, value.identity, value.stream)


def touch(state: State, frame: Frame, site: str, value: AbsValue, write: bool, stream: Optional[StreamRef]) -> State:
    """An access where the memory lives: the host's, on `stream` for device memory, untold for a device not told."""
    if value.identity is None or not value.is_buffer:
        return state
    if stream is None and is_host(value):
        return host_access(state, frame, site, value.identity, write)
    if stream is None and value.memory is Memory.UNKNOWN and (write or value.stream is not None):
        # changed in place where it lives, a device not told: device memory if a later use shows so
        # (D-17); so is the use of a tensor a producer left on a holder, made on its stream (D-16)
        return untold_access(state, site, value.identity, write, state.current_stream(value.framework or F))
    if stream is not None and is_device(value):
        return access(state, frame, site, value.identity, write, stream)
    return state


def _to(tensor: AbsValue, non_blocking: Optional[bool], arguments: Arguments, state: State, frame: Frame) -> Handled:
    target = memory_named(arguments, Arg(0, "device")) or memory_named(arguments, Arg(kw="device"))
    like = arguments.value(Arg(0, "device"))
    if target is None and like is not None and like.is_buffer and like.framework in (F, "") and is_device(like):
        target = Memory.DEVICE  # (`t.to(other)`: to the device (and dtype) of a CUDA tensor)
    if target is None and non_blocking and arguments.located(Arg(0, "device")) is not None and frame.untold_is_cuda(state):
        # `t.to(device, non_blocking=True)` under a stream the code chose: a move to that stream's device
        target = Memory.DEVICE
    device = arguments.value(Arg(0, "device")) or arguments.value(Arg(kw="device"))
    untold = not tensor.is_buffer or tensor.memory is Memory.UNKNOWN
    if target is None and untold and frame.assumes_cuda and device is not None and not device.target \
            and device.kind in (ValueKind.UNKNOWN, ValueKind.DEVICE) and device.memory is Memory.UNKNOWN:
        # `x.to(device)` of a value and a device the code never shows, in a project that assumes CUDA: a CUDA tensor
        # (or a module whose parameters are), where the project's untold tensors already are: no copy
        return AbsValue(ValueKind.BUFFER, F, Memory.DEVICE, tensor.identity, state.current_stream(F)), state
    if target is None and tensor.is_buffer and device is not None and device.kind is ValueKind.UNKNOWN \
            and not device.target:
        # `t.to(device)` of a device (or dtype) not told: where the result is, is not told either
        return fresh(frame, arguments, Memory.UNKNOWN, None), state
    if target is None:
        return UNKNOWN if not tensor.is_buffer else tensor, state
    if device is not None and device.kind is ValueKind.DEVICE and tensor.is_buffer and device.identity is not None \
            and tensor.identity is not None and device.identity == tensor.identity.attr("device"):
        return tensor, state  # `x.to(x.device)`: where it is, on every path
    return copy_between(tensor, target, non_blocking, arguments, state, frame)


def copy_between(source: AbsValue, target: Memory, non_blocking: Optional[bool], arguments: Arguments,
                 state: State, frame: Frame) -> Handled:
    """`t.to(device)`: a copy only where `t` is elsewhere; the result is new memory there."""
    to_device = target is Memory.DEVICE
    built_here = to_device and source.host_built and source.memory is not Memory.PINNED
    # (`torch.zeros(n).cuda()`: a blocking upload of values the host made)
    made_here = to_device and not non_blocking and source.target == HOST_MADE and source.memory is Memory.PAGEABLE
    if built_here:
        # built on the host on some path to here (a scalar standing in for a norm): an upload on that path
        source = replace(source, memory=Memory.PAGEABLE)
    if frame.assumes_cuda and not to_device and (not source.is_buffer or source.memory is Memory.UNKNOWN):
        source = _on_device(source)  # a tensor the code never places, in a project that assumes CUDA
    if not source.is_buffer or source.memory is Memory.UNKNOWN:
        # a copy of a value the code says nothing about: a tensor on the other side (with
        # non_blocking=False, for a copy to the host, it may already be there: not told)
        if not non_blocking and not to_device:  # (of CUDA memory, the host waits: `act.may_wait`)
            return fresh(frame, arguments, target, None), may_wait(state, frame, frame.site(arguments.node),
                                                                   [replace(source, kind=ValueKind.BUFFER, framework=F)])
        source = AbsValue(ValueKind.BUFFER, F, Memory.UNKNOWN if to_device else Memory.DEVICE, source.identity)
    elif to_device == is_device(source):
        return source, state  # already there: `to` returns the tensor itself
    memory = Memory.DEVICE if to_device else (Memory.PINNED if non_blocking else Memory.PAGEABLE)
    result = fresh(frame, arguments, memory, state.current_stream(F) if to_device else None)
    blocks = not non_blocking or (to_device and source.memory is Memory.PAGEABLE)
    state = _copied("torch.Tensor.to", source, result, blocks, non_blocking, arguments, state, frame,
                    async_form=True, host_at="self" if to_device else "return",
                    host_built=source.built if built_here else HostBuilt.EVERY_PASS if made_here else None)
    return result, state


def index_uploaded(api: str, index: AbsValue, arguments: Arguments, state: State, frame: Frame) -> State:
    """A host index moved to the device before an indexing op reads it: a blocking upload of values the host made
    (with `non_blocking=False`, so the host waits for the current stream to drain)."""
    on_device = fresh(frame, arguments, Memory.DEVICE, state.current_stream(F))
    return _copied(api, replace(index, memory=Memory.PAGEABLE), on_device, True, False, arguments, state, frame,
                   host_built=HostBuilt.EVERY_PASS, value_site=made_at(index))


def _copied(api: str, source: AbsValue, target: AbsValue, blocks: bool, non_blocking: Optional[bool],
            arguments: Arguments, state: State, frame: Frame, **form) -> State:
    """A copy on the current stream; a blocking one returns with the data there (API-FACTS 4.3)."""
    site, current = frame.site(arguments.node), state.current_stream(F)
    upload, crosses = is_device(target), is_device(target) != is_device(source)
    kind = OpKind.COPY_D2D if not crosses else OpKind.COPY_H2D if upload else OpKind.COPY_D2H
    state = operation(state, frame, site, api, kind, current, crosses and blocks,
                      source.memory if upload else target.memory, non_blocking=non_blocking,
                      host_loader_batch=upload and source.loader_batch, **form)
    if form.get("host_built") not in (None, HostBuilt.KEPT):  # (a host-built scalar's memory is the host's own)
        source = replace(source, identity=None)
    staged = bool(crosses and blocks and upload and non_blocking)
    waits = crosses and blocks and (is_host(target) or (upload and not non_blocking))
    return copy(state, frame, site, current, source, target, upload, staged, waits)


def _copy_(tensor: AbsValue, non_blocking: Optional[bool], arguments: Arguments, state: State, frame: Frame) -> Handled:
    source = arguments.value(Arg(0, "src"))
    if source is None or not tensor.is_buffer:
        return tensor, state
    site = frame.site(arguments.node)
    if is_host(tensor) and non_blocking and (not source.is_buffer or source.memory is Memory.UNKNOWN):
        # into host memory, non-blocking, from a source of unknown device: a download on the current stream
        source = AbsValue(ValueKind.BUFFER, F, Memory.DEVICE, source.identity)
    if is_host(source) and tensor.memory is Memory.UNKNOWN:
        # into a tensor the code says nothing else about: non-blocking, an upload (a copy between host
        # tensors never overlaps anything); blocking, it has read its source when it returns
        if not non_blocking:
            return tensor, state if source.identity is None else host_access(state, frame, site, source.identity, False)
        tensor = _on_device(tensor)
    if is_device(source) and tensor.memory is Memory.UNKNOWN and frame.untold_is_cuda(state):
        tensor = _on_device(tensor)  # (into a tensor of a device not told, under a stream the code chose: CUDA's)
    if is_host(tensor) and not is_device(source):
        # host memory written: by the host, or by a stream from a source we cannot see
        if tensor.identity is not None:
            state = host_access(state, frame, site, tensor.identity, True)
        return tensor, state
    current = state.current_stream(F)
    if not source.is_buffer or (source.memory is Memory.UNKNOWN and is_device(tensor)):
        # into device memory from a source we cannot see, or of a device not told: the write is queued all the
        # same (into memory of a device not told from a source of unknown kind: under a stream the code chose)
        untold = tensor.memory is Memory.UNKNOWN and not source.is_buffer and frame.untold_is_cuda(state)
        if (is_device(tensor) or untold) and tensor.identity is not None:
            state = access(state, frame, site, tensor.identity, True, current)
        return tensor, state
    blocks = not non_blocking or Memory.PAGEABLE in (tensor.memory, source.memory)
    state = _copied("torch.Tensor.copy_", source, tensor, blocks, non_blocking, arguments, state, frame,
                    async_form=is_device(tensor) != is_device(source), host_at="0/src" if is_device(tensor) else "self")
    return tensor, state


# Copies whose direction and blocking depend on where source and target live (TENSOR_COPIES: what
# they do to which memory takes the tensor's place and the code's device argument, which a row cannot say).
_COPIES: dict[str, Callable[[AbsValue, Optional[bool], Arguments, State, Frame], Handled]] = {
    "to": _to,
    "cuda": lambda t, non_blocking, a, s, f: copy_between(t, Memory.DEVICE, non_blocking, a, s, f),
    "cpu": lambda t, non_blocking, a, s, f: copy_between(t, Memory.PAGEABLE, non_blocking, a, s, f),
    "copy_": _copy_,
}


def evident_receiver(name: str, receiver: AbsValue, chosen: bool = False, given: tuple = ()) -> Optional[AbsValue]:
    """What calling `name` on a value of unknown kind tells it is (a tensor's own method, an in-place kernel, a
    tensor operation under a chosen stream unless given host memory); else None."""
    if name in torch_api.RECEIVER_EVIDENCE:
        told = torch_api.RECEIVER_EVIDENCE[name]
        return AbsValue(ValueKind.BUFFER, F, Memory(told), receiver.identity, either=receiver.either) if told else receiver
    if receiver.identity is not None and name.endswith("_") and name not in torch_api.NON_KERNEL_INPLACE:
        return AbsValue(ValueKind.BUFFER, F, Memory.UNKNOWN, receiver.identity)
    if name in torch_api.TENSOR_OPERATIONS and chosen and not any(map(is_host, given)):
        # (of a value the walk cannot name too, `shards[i].norm()`: its result is a new CUDA tensor)
        return AbsValue(ValueKind.BUFFER, F, Memory.DEVICE, receiver.identity)
    return None
