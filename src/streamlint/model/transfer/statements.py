"""Statements: bindings, joined branches, loops to a fixpoint, stream contexts, returns."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Optional, Sequence, Union

import libcst as cst

from streamlint.model.api import numba_cuda, python_std, torch_api
from streamlint.model.api.facts import STREAM_ORDERED_ALLOCATORS, Arg
from streamlint.model.api.op_kinds import OpKind
from streamlint.model.domain.order import HOST, AccessEvent, Conflict, ConflictKind, access_key
from streamlint.model.domain.paths import Index, Path, Root, RootKind, outermost_site
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import UNKNOWN_STREAM, StreamRef, StreamRefKind
from streamlint.model.summary.function_summary import Evidence
from streamlint.model.domain.values import ITEMS_ONLY, MERGED, NO_ITEMS, OPTION, PERIODIC, UNBOUND, UNKNOWN, AbsValue, Memory, ValueKind, truth
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.summary.perform import released, untold_access
from streamlint.model.transfer.act import access, do, host_access, kernel, unseen_devices, untold_tensor, wait_for
from streamlint.model.transfer.arguments import Arguments
from streamlint.model.transfer.devices import is_device, is_host, memory_named, placed
from streamlint.model.transfer.expressions import YIELDED, evaluate, memory_of, slice_bounds, subscript, unpacked
from streamlint.model.transfer.frame import Frame
from streamlint.model.syntax.counters import advance
from streamlint.model.syntax.tests import update_boundaries
from streamlint.model.syntax.tests import (called_on_every_side, empty_test, ends_in_raise, ends_the_loop, fills_on_miss, first_passes, listed_passes, stepped_counters, refills_on_change,
                                           sets_what_it_found_unset,
                                           item_guards, item_tests,
                                           latch_sides, names_read, negated, rare_test, rare_unless_settled,
                                           settled_flag, written_constant)
from streamlint.model.transfer.names import import_targets
from streamlint.model.transfer.nodes import preorder
from streamlint.model.transfer.handlers import STREAMS_ENTERED
from streamlint.model.transfer.torch_calls import F, learn, read_back, touch
from streamlint.model.transfer import calls, command_line, torch_calls, type_tests
from streamlint.model.transfer.fact_calls import made_at

# The one loop budget: rounds of a body to a fixpoint (past it later rounds go unseen: fewer reports only).
MAX_LOOP_ROUNDS = 6


def run_block(statements: Sequence[cst.CSTNode], state: State, frame: Frame) -> State:
    for at, statement in enumerate(statements):
        if not state.reachable:
            break
        if type(statement) is cst.If:  # (a cache refilled when its key changes: the key may be kept after the `if`)
            frame.numbering.refills[id(statement)] = refills_on_change(statement, statements[at + 1:])
        handler = _HANDLERS.get(type(statement))  # (none: a statement that does nothing the model sees)
        state = handler(statement, state, frame) if handler is not None else state
    return state


def _expr(node: cst.Expr, state: State, frame: Frame) -> State:
    moved = _module_move(node.value, state, frame)
    if moved is not None:
        return moved
    state = evaluate(node.value, state, frame)[1]
    if isinstance(node.value, cst.Yield):
        _yielded_unwaited(state.value(YIELDED), state, frame, node.value)
        _yielded_unrecorded(state.value(YIELDED), state, frame, node.value)
    return state


def _yielded_unwaited(item: AbsValue, state: State, frame: Frame, node: cst.CSTNode) -> None:
    """A generator's item another stream may still write, handed to its consumer: the consumer reads it on the stream
    current at the `yield` (a `with` around the yield is still entered while the consumer runs), as a caller reads
    what a function returns (reported where no consumer reads it in sight)."""
    reader = state.current_stream(F)
    identities = [v.identity for v in (item, *item.positions, *item.either) if v.is_buffer and v.identity is not None]
    for identity in dict.fromkeys(identities):
        use = AccessEvent(identity, False, reader, _where_held(identity, frame, frame.site(node)))
        frame.found.handed_out.extend(c for c in state.order.conflicts(use) if c.earlier.write and not c.earlier.assumed)


def _yielded_unrecorded(item: AbsValue, state: State, frame: Frame, node: cst.CSTNode) -> None:
    """A generator's item made on a stream the generator made and keeps across its yields, handed to its consumer's
    current stream: when the consumer drops it, the memory goes back to that stream's pool, and the generator's next
    allocation there may take it while the consumer's work still reads it, unless `record_stream` tells the
    allocator (a hand-out, as a kept stream's is: reported at the generator)."""
    caller = state.current_stream(F)  # (a `with` around the `yield` is still entered while the consumer runs)
    for value in (item, *item.positions, *item.either):
        made_on = value.stream if value.is_buffer else None
        if made_on is None or value.identity is None or made_on.kind is not StreamRefKind.CREATED \
                or value.framework not in STREAM_ORDERED_ALLOCATORS or not made_on.distinct_from(caller):
            continue
        if any((stream == caller or caller in stream.paths) and path.may_alias(value.identity)
               for path, stream in state.order.kept_for):
            continue
        use = AccessEvent(value.identity, False, caller, _where_held(value.identity, frame, frame.site(node)))
        frame.found.handed_out.append(Conflict(ConflictKind.RELEASE_WITHOUT_RECORD, use,
                                               AccessEvent(value.identity, True, made_on, frame.site(node))))


# Methods that move or cast an nn.Module in place (and return it): `model.to(device)`.
MODULE_MOVES = frozenset({"to", "cuda", "half", "float", "bfloat16", "double"})


def _module_move(call: cst.BaseExpression, state: State, frame: Frame) -> Optional[State]:
    """`model.to(...)` as a statement on an untold value: a module moved in place on the current stream."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in MODULE_MOVES):
        return None
    receiver, state = evaluate(call.func.value, state, frame)
    if receiver.kind is not ValueKind.UNKNOWN or receiver.identity is None:
        return None
    positional, keywords = [], {}
    for arg in call.args:
        value, state = evaluate(arg.value, state, frame)
        if arg.keyword is not None:
            keywords[arg.keyword.value] = (value, arg.value)
        else:
            positional.append((value, arg.value))
    arguments = Arguments(tuple(positional), keywords, None, call)
    current, site = state.current_stream(F), frame.site(call)
    to_host = call.func.attr.value == "to" and Memory.PAGEABLE in (memory_named(arguments, Arg(0, "device")),
                                                                   memory_named(arguments, Arg(kw="device")))
    module = AbsValue(ValueKind.BUFFER, F, Memory.PAGEABLE if to_host else Memory.DEVICE, receiver.identity, current)
    state = access(state, frame, site, receiver.identity, True, current, guard=receiver.identity)
    told = to_host or call.func.attr.value != "to" or memory_named(arguments, Arg(0, "device")) is not None \
        or memory_named(arguments, Arg(kw="device")) is not None
    if not arguments.flag(Arg(kw="non_blocking"), False) and (to_host or not told):
        # (a blocking move to the host returns with the parameters there: the host waited for the copy; to a
        # device not told, it may have; a cast or a move to a GPU does not wait)
        state = do(state, frame, Effect(EffectKind.SYNC, site, stream=current, may=not to_host))
    return learn(state, module)  # (every name of it holds the moved module)


def _assign(node: cst.Assign, state: State, frame: Frame) -> State:
    if len(node.targets) == 1 and _parallel(node.targets[0].target, node.value):
        # `s1, s2 = cp.cuda.Stream(), cp.cuda.Stream()`: each name its own item, not their join
        items = []
        for element in node.value.elements:  # (all evaluated before any is bound)
            item, state = evaluate(element.value, state, frame)
            items.append(item)
        for element, item in zip(node.targets[0].target.elements, items):
            state = bind(element.value, item, state, frame, node)
        return state
    if advance(node) is not None and frame.ring_size(node.targets[0].target):
        return _ring_counter(node.targets[0].target, state, frame, node, moved=True)
    value, state = evaluate(node.value, state, frame)
    for target in node.targets:
        state = bind(target.target, value, state, frame, node)
    return state


def _ring_counter(target: cst.Attribute, state: State, frame: Frame, node: cst.CSTNode, moved: bool) -> State:
    """`x.i = 1 - x.i` keeps the counter's name and renames what was done at its slots (an effect a caller replays)."""
    base, state = evaluate(target.value, state, frame)
    if base.identity is None:
        return state
    return do(state, frame, Effect(EffectKind.COUNTER, frame.site(node), base.identity.attr(target.attr.value),
                                   write=not moved))


def _parallel(target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """A tuple of targets given a tuple of as many items, none starred."""
    return (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))
            and len(target.elements) == len(value.elements)
            and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)))


def _ann_assign(node: cst.AnnAssign, state: State, frame: Frame) -> State:
    if node.value is None:
        return state
    value, state = evaluate(node.value, state, frame)
    return bind(node.target, value, state, frame, node)


def _aug_assign(node: cst.AugAssign, state: State, frame: Frame) -> State:
    current, state = evaluate(node.target, state, frame)
    other, state = evaluate(node.value, state, frame)
    if current.is_buffer and current.identity is not None:  # (of a device not told: D-11)
        stream = state.current_stream(current.framework or F) if is_device(current) else None
        state = kernel(state, frame, frame.site(node), "in-place arithmetic", stream, current.framework or F)
        return touch(state, frame, frame.site(node), current, True, stream)
    if current.kind is ValueKind.UNKNOWN and current.identity is not None and other.kind is not ValueKind.HOST_NUMBER \
            and current.identity.root.kind is RootKind.PARAM and not current.identity.steps:
        # a parameter of a kind not told changed in place (`flat_grads /= n`): the same memory (D-11)
        state = untold_access(state, frame.site(node), current.identity, True, state.current_stream(F))
        return bind(node.target, AbsValue(identity=current.identity), state, frame, node)
    if current.kind is ValueKind.HOST_NUMBER and other.is_buffer:
        # `total += t` on a Python number is `total = total + t`: a new tensor where `t` lives
        operator = Arguments((), {}, None, node)  # type: ignore[arg-type]
        result, state = torch_calls.run_operation([other], None, False, operator, state, frame)
        return bind(node.target, result, state, frame, node)
    return bind(node.target, UNKNOWN if other.kind is not ValueKind.HOST_NUMBER else other, state, frame, node)


def _unbind(node: cst.Del, state: State, frame: Frame) -> State:
    """`del x`, `del self.buf`, `del a, b`: what nothing else holds goes back to the allocator (an item stays)."""
    if isinstance(node.target, cst.Subscript):
        return state
    return bind(node.target, UNBOUND if isinstance(node.target, cst.Attribute) else UNKNOWN, state, frame, node)


def bind(target: cst.BaseExpression, value: AbsValue, state: State, frame: Frame, node: cst.CSTNode) -> State:
    if isinstance(target, cst.Name):
        old = state.value(target.value)
        if value.is_buffer and value.identity is not None and value.identity.root.kind is not RootKind.FRESH:
            frame.found.taken.setdefault(value.identity, frame.site(node))
        return release_if_dropped(old, state.bind(target.value, value), frame, node)
    if isinstance(target, (cst.Tuple, cst.List)):
        for index, element in enumerate(target.elements):
            state = bind(element.value, unpacked(value, index), state, frame, node)
        return state
    if isinstance(target, cst.Attribute):
        if frame.ring_size(target):
            state = _ring_counter(target, state, frame, node, moved=False)
        base, state = evaluate(target.value, state, frame)
        if base.identity is not None:
            path = base.identity.attr(target.attr.value)
            value = _made_under_chosen(value, path, state, frame)
            old = state.at(path)
            _left_on_holder(base, target.attr.value, value, state, frame)
            state = _consumed(target, value, state, frame, node)
            state = release_if_dropped(old, state.store(path, value), frame, node)
            state = state.with_order(state.order.replaced_at(path))
        if isinstance(target.value, cst.Name) and target.attr.value in base.keys:  # (`args.device = "cpu"`)
            state = state.bind(target.value.value, command_line.with_field(base, target.attr.value, value))
        return state
    if isinstance(target, cst.Subscript):
        return _store_element(target, value, state, frame, node)
    return state


def _made_under_chosen(value: AbsValue, path, state: State, frame: Frame) -> AbsValue:
    """A value the walk knows nothing of, kept on `self` under a stream the code chose: if it is a tensor, it was made
    there (PyTorch's invariant), and the class's other methods find it made on that stream, not on their callers'."""
    made_here = value.identity is None or value.identity.root.kind is RootKind.FRESH  # (not a value handed in)
    untold = value.kind is ValueKind.UNKNOWN or (value.is_buffer and value.memory is not Memory.PINNED
                                                 and value.memory is not Memory.PAGEABLE)
    if not (untold and made_here) or value.stream is not None or path.root.kind is not RootKind.SELF \
            or not frame.chosen_stream(state):
        return value
    return replace(value, stream=state.current_stream("torch"))


def _consumed(target: cst.Attribute, value: AbsValue, state: State, frame: Frame, node: cst.CSTNode) -> State:
    """Host memory stored where a framework reads it later on the host (`p.grad.data = cpu`): a host read."""
    at = target.value.attr.value if target.attr.value == "data" and isinstance(target.value, cst.Attribute) else target.attr.value
    if at not in torch_api.CONSUMED_ATTRIBUTES or not is_host(value) or value.identity is None:
        return state
    return host_access(state, frame, frame.site(node), value.identity, False)


def _left_on_holder(holder: AbsValue, attr: str, value: AbsValue, state: State, frame: Frame) -> None:
    """A tensor stored on an object a parameter reaches, with its stream (D-16; two streams: None)."""
    if holder.identity is None or holder.identity.root.kind is not RootKind.PARAM or holder.is_buffer \
            or attr in torch_api.TENSOR_ATTRIBUTES:
        return  # (`p.grad`, `p.data`: a tensor's own, whatever the walk knows of `p`)
    if not (value.is_buffer and value.framework in STREAM_ORDERED_ALLOCATORS):
        return
    made = replace(value, identity=None, stream=value.stream or state.current_stream(value.framework),
                   positions=(), element=None, members=frozenset())
    found = frame.found.holder_stores
    if attr in found and found[attr] is not None and found[attr].stream != made.stream:
        found[attr] = None
    elif attr not in found:
        found[attr] = made


def release_if_dropped(old: AbsValue, state: State, frame: Frame, node: cst.CSTNode) -> State:
    """Memory nothing holds any more goes back to the allocator of the stream it was made on."""
    for value in (old,) if old.is_buffer else old.either:  # (each memory it is on some path: D-20)
        effect = released(value, state, frame.site(node))
        state = do(state, frame, effect) if effect is not None else state
    return state


def _store_element(target: cst.Subscript, value: AbsValue, state: State, frame: Frame, node: cst.CSTNode) -> State:
    """`buf[i] = v`: a write by the buffer's side (host or current stream), or an item stored."""
    holder, state = evaluate(target.value, state, frame)
    if holder.identity is None and holder.kind is ValueKind.CONTAINER and isinstance(target.value, cst.Name):
        return state.bind(target.value.value, _put(holder, value))  # `out[key] = v` into a display: its items
    if holder.identity is None and holder.kind is ValueKind.CONTAINER and isinstance(target.value, cst.Attribute):
        owner, state = evaluate(target.value.value, state, frame)  # (`self.events[d] = e`: the dict kept there)
        if owner.identity is not None:
            holder = replace(holder, identity=owner.identity.attr(target.value.attr.value))
    if isinstance(target.value, cst.Name) and isinstance(_told_key(target), str) and calls.holds_keys(holder):
        # (`batch["img"] = ...` into a loader's batch: a mapping, named by the name that holds it from here on)
        holder = replace(holder, identity=Path(Root.local(target.value.value)))
        state = state.named_anew(target.value.value, holder)
    if holder.identity is None or not holder.is_buffer:
        state = _indices(target, state, frame)  # (what `buf[i]` evaluates below does this)
    if holder.identity is None:
        return state
    site = frame.site(node)
    # (no tensor takes a string key: `batch["img"] = ...` stores an item of a loader's dict)
    if holder.is_buffer and not isinstance(_told_key(target), str):
        element, state = subscript(target, state, frame, value)  # the region written: `buf[:half]`, `buf[k % 2]`
        written = element.identity if element.identity is not None else holder.identity
        if is_host(holder):
            state = _device_values_copied_in(target, holder, value, state, frame)
            return host_access(state, frame, site, written, True)
        if is_device(holder):
            return access(state, frame, site, written, True, state.current_stream(holder.framework or F))
        return state
    if holder.kind is ValueKind.UNKNOWN and any(isinstance(e.slice, cst.Slice) for e in target.slice):
        return state  # `x[:n] = v` of something of unknown kind: a region written, no item stored
    kept = state.stored(holder.identity)
    if kept is not None and kept.kind is ValueKind.CONTAINER and kept.target == NO_ITEMS:
        # `self.events[dev] = Event()` into an empty dict kept on `self`: it has items now (as `append` gives it)
        state = state.store(holder.identity, replace(kept, target="", element=value))
    state = state.store(holder.identity.element(Index.any_()), value)
    key = _told_key(target)
    # (a key written out is that item's own place too: `d["step"]` reads what was stored there, not another key's)
    return state.store(holder.identity.element(Index.const_(key)), value) if key is not None else state


def _device_values_copied_in(target: cst.Subscript, holder: AbsValue, value: AbsValue, state: State,
                             frame: Frame) -> State:
    """`pose[:3, :3] = rotation` of a CUDA tensor into a PyTorch host tensor: a copy back that waits for the stream."""
    if (holder.framework or F) != F or not value.is_buffer or (value.framework or F) != F or not is_device(value):
        return state
    return read_back(torch_api.HOST_STORE, [value], state.current_stream(F), made_at(value), F, frame.site(target),
                     state, frame)[1]


def _told_key(target: cst.Subscript) -> Optional[Union[int, str]]:
    """The key of `d["k"] = v`, `d[0] = v` written out (None for any other)."""
    if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return None
    key = target.slice[0].slice.value
    if isinstance(key, cst.SimpleString) and key.prefix == "":
        return key.raw_value  # (as a read names it: expressions._told_index)
    return int(key.value, 0) if isinstance(key, cst.Integer) else None


def _indices(target: cst.Subscript, state: State, frame: Frame) -> State:
    """The work a store's indices do (`mask[b, : lengths[b].item()] = 0`)."""
    for element in target.slice:
        if isinstance(element.slice, cst.Index):
            _, state = evaluate(element.slice.value, state, frame)
    return slice_bounds(target, state, frame)


def _put(container: AbsValue, item: AbsValue) -> AbsValue:
    """A container with `item` put in it: its items are the join of what they were and `item`."""
    empty = container.target == NO_ITEMS
    items = item if empty else (container.element.join(item) if container.element is not None else None)
    return replace(container, element=items, target="" if empty else container.target,
                   members=container.members | memory_of(item))


def _return(node: cst.Return, state: State, frame: Frame) -> State:
    value = UNKNOWN
    if node.value is not None:
        value, state = evaluate(node.value, state, frame)
        value = state.with_items(value)
        if value.identity is not None and value.identity.root.kind is RootKind.PARAM and not calls.told_keys(value, state):
            # (`batch[key] = val.cuda()` for the keys it iterates, then `return batch`: its items are what is told of
            # it; items stored under keys written out reach the caller by key, the summary's `param_keys`)
            value = state.items_told(value.identity, value)
        if value.positions:
            # (an item read at a path since stored over names memory no caller can name by that path)
            value = replace(value, positions=tuple(replace(p, identity=None) if _restored(p.identity, state) else p
                                                   for p in value.positions))
    returned = frame.found.returned
    frame.found.returned = value if returned is None else type_tests.joined_returns(returned, value)
    _hand_out(value, state, frame, node)
    leave(state, frame)
    return state.unreachable()


def _restored(identity: Optional[Path], state: State) -> bool:
    """The path holds other memory now than when it was read (the function stored there since)."""
    stored = state.stored(identity) if identity is not None else None
    return stored is not None and stored.identity != identity


def _hand_out(value: AbsValue, state: State, frame: Frame, node: cst.CSTNode) -> None:
    """Memory returned while another stream may still write it (reported where no caller reads it)."""
    held = value.identity is not None and value.kind is not ValueKind.EVENT  # (an event handed out is no memory read)
    identities = ([value.identity] if held else []) + sorted(value.members, key=repr) \
        + [v.identity for v in value.either]  # (memory it is on some path: D-20)
    # the callers read it on their current stream: the `with` blocks around the return are left by it
    current = state if frame.outside_withs is None else replace(state, current=frame.outside_withs)
    caller = AccessEvent(Path(Root.local("<returned>")), False, current.current_stream(F), frame.site(node))
    # an event handed out with the memory, recorded after the write, lets the caller wait for it; so does one
    # at a parameter's path (`ctx.finished_event`, an event the callers handed in): they hold it
    handed_events = set().union(*(state.order.recorded(identity) or () for identity in identities),
                                *(captured for path, captured in state.order.events if path.root.kind is RootKind.PARAM))
    for identity in identities:
        site = _where_held(identity, frame, caller.site) if _restored(identity, state) else caller.site
        made = _held_value(value, identity, state) or _made_by_write(identity, frame)
        # (a NumPy array over host memory is read by the host, wherever the callers use it)
        numpy_view = identity == value.identity and value.framework == "numpy" and is_host(value)
        reader = HOST if numpy_view or _read_back(identity, frame) else caller.stream
        found = state.order.conflicts(replace(caller, path=identity, site=site, stream=reader))
        frame.found.handed_out.extend(c for c in found if c.earlier.write and not c.earlier.assumed
                                      and access_key(c.earlier) not in handed_events)
        if made is not None and _released_unrecorded(made, caller.stream, state, frame):
            use = replace(caller, path=identity, site=_where_held(identity, frame, caller.site))
            release = AccessEvent(identity, True, made.stream, caller.site)
            frame.found.handed_out.append(Conflict(ConflictKind.RELEASE_WITHOUT_RECORD, use, release))
    for item in _stored_items(value):  # (their callers release them too: recorded for their stream or not)
        made = _held_value(value, item, state) or _made_by_write(item, frame)
        if made is not None and _released_unrecorded(made, caller.stream, state, frame):
            use = replace(caller, path=item, site=_where_held(item, frame, caller.site))
            frame.found.handed_out.append(Conflict(ConflictKind.RELEASE_WITHOUT_RECORD, use,
                                                   AccessEvent(item, True, made.stream, caller.site)))


def _stored_items(value: AbsValue) -> list[Path]:
    """The memory of the items the code stored into an object it was not told of and hands out (`self.batch[k] =
    v.to(device, non_blocking=True)`, then `return batch`: row 10.80's items-only value)."""
    items = value.element if value.target == ITEMS_ONLY and value.element is not None else None
    if items is None or not items.is_buffer:
        return []
    return [v.identity for v in (items, *items.either) if v.identity is not None and v.identity not in value.members]


def _read_back(identity: Path, frame: Frame) -> bool:
    """Memory a copy to the host made (`t.to("cpu", non_blocking=True)`): its callers read it on the host. A host
    buffer the code made and copied into (an offload's pinned buffer) may go back to the device instead."""
    root = identity.root
    return root.kind is RootKind.FRESH and not identity.steps and any(
        e.kind is EffectKind.OPERATION and e.site == root.site and e.operation.op == OpKind.COPY_D2H.value
        for e in frame.found.effects)


def _held_value(returned: AbsValue, identity: Path, state: State) -> Optional[AbsValue]:
    """The buffer the function returns at `identity` (itself, or an item of what it returns)."""
    items = returned.element if returned.element is not None and returned.element.is_buffer else None
    told = ([returned] if returned.is_buffer else []) + list(returned.either) \
        + ([items, *items.either] if items is not None else [])
    return next((v for v in told if v.identity == identity), None) \
        or next((v for _, v in state.names if v.is_buffer and v.identity == identity), None)


def _made_by_write(identity: Path, frame: Frame) -> Optional[AbsValue]:
    """Memory this call allocated (an item of a container it returns, where a join of two paths' allocations
    named no one of them): a buffer on the stream of the write that made it."""
    root = identity.root
    if root.kind is not RootKind.FRESH or identity.steps:
        return None
    made = next((e for e in frame.found.effects if e.kind is EffectKind.ACCESS and e.write and e.path == identity
                 and e.site == root.site and e.stream is not None), None)
    return AbsValue(ValueKind.BUFFER, made.framework or made.stream.framework, Memory.DEVICE, identity,
                    made.stream) if made else None


def _where_held(identity: Path, frame: Frame, default: str) -> str:
    """Where a caller's use of memory handed out shows: where this function or the keeper took it."""
    if identity.root.kind is RootKind.FRESH and identity in frame.found.taken:
        return outermost_site(identity.root.site.split(MERGED)[0])  # (made at either of two sites: the first)
    return frame.found.taken.get(identity, default)


def _released_unrecorded(value: AbsValue, caller: StreamRef, state: State, frame: Frame) -> bool:
    """Memory made on a stream the object keeps, handed to a caller's stream that drops the last reference: the
    object's next allocation on its stream may take it unless recorded. The last reference is the caller's when the
    memory was taken out of what the object keeps (`pop`), or made by this call and not kept on `self` too."""
    made_on, identity = value.stream, value.identity
    if made_on is None or made_on.path is None or made_on.path.root.kind is not RootKind.SELF \
            or value.framework not in STREAM_ORDERED_ALLOCATORS or identity is None:
        return False
    made_here = identity.root.kind is RootKind.FRESH and identity.root.site.startswith(frame.qualname + "#")
    if identity.root.kind is not RootKind.SELF and identity not in frame.found.taken \
            and not (made_here and identity not in state.kept_on_self()):
        return False  # (the object still holds it: its callers' drop releases nothing)
    if not made_on.distinct_from(caller):
        return False
    # (kept for one of two streams, one the caller's: recorded on that path only, D-14)
    return not any((stream == caller or caller in stream.paths) and path.may_alias(value.identity)
                   for path, stream in state.order.kept_for)


def leave(state: State, frame: Frame) -> None:
    """The function ends here on this path."""
    frame.found.exit_state = state if frame.found.exit_state is None else frame.found.exit_state.join(state)


def tested(node: cst.BaseExpression, state: State, frame: Frame) -> tuple[AbsValue, State]:
    """A test's value; testing a CUDA tensor's truth copies it to the host, which waits for the current stream."""
    value, state = evaluate(node, state, frame)
    if untold_tensor(value) and not frame.assumes_cuda:
        unseen_devices(frame, frame.site(node), [value])
    if is_device(placed(value, frame.assumes_cuda)):
        value, site = placed(value), frame.site(node)
        state = read_back("bool", [value], state.current_stream(value.framework or F), "", value.framework, site, state,
                          frame)[1]
    return value, state


def _a_setting(test: cst.BaseExpression, state: State, frame: Frame) -> bool:
    """A test of the run's settings: an option, a field of the namespace a command-line parser returned
    (`if args.render_only:`, `args.dataset_type == "blender"`), compared with written constants or not: the same side
    for the whole run."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _a_setting(test.expression, state, frame)
    if isinstance(test, cst.Attribute):
        return _a_setting_read(test, state, frame)
    if not isinstance(test, cst.Comparison):
        return False
    operands = [o for o in (test.left, *(c.comparator for c in test.comparisons)) if not _constants(o)]
    return bool(operands) and all(isinstance(o, cst.Attribute) and _a_setting_read(o, state, frame) for o in operands)


def _constants(node: cst.BaseExpression) -> bool:
    """A constant written out, or a tuple, list or set of them (`("blender", "llff")`)."""
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return all(isinstance(e, cst.Element) and written_constant(e.value) for e in node.elements)
    return written_constant(node)


def _a_setting_read(operand: cst.Attribute, state: State, frame: Frame) -> bool:
    if evaluate(operand, state, frame)[0].target == OPTION:
        return True
    base = evaluate(operand.value, state, frame)[0]
    return base.kind is ValueKind.OBJECT and base.target == command_line.PARSED


def _counters(frame: Frame) -> frozenset[str]:
    """The enclosing loops' counters and the names the function steps by a constant (`self.global_step += 1`)."""
    stepped = frame.numbering.once("stepped", lambda: stepped_counters(
        frame.numbering.text_facts.get("body") or frame.numbering.text_facts.get("nodes") or []))
    return stepped | frozenset(frame.loop_names)


def _update_boundaries(frame: Frame) -> frozenset[int]:
    """The tests of a training loop's `if`s that step the update: every optimizer step takes them (row 7.79)."""
    return frame.numbering.once("updates", lambda: update_boundaries(
        frame.numbering.text_facts.get("body") or frame.numbering.text_facts.get("nodes") or []))


def _if(node: cst.If, state: State, frame: Frame) -> State:
    test, state = tested(node.test, state, frame)
    # (`if best is None: best = loss.item()` in a loop: the side that sets what it found unset runs on the first pass)
    latched_here = frame.loop_depth > 0 and sets_what_it_found_unset(node, frame.numbering.params)
    if truth(test) is True or type_tests.decided(node.test, state, frame, evaluate):
        frame.guards += latched_here
        frame.numbering.periodic += latched_here
        state = run_block(node.body.body, state, frame)
        frame.guards -= latched_here
        frame.numbering.periodic -= latched_here
        return state
    holds, state = type_tests.sides(node.test, state, frame, evaluate)  # a type test narrows each side
    # (no guard for a test of an option, nor of a loop's item against None, row 7.32)
    option = test.kind is ValueKind.UNKNOWN and test.target == OPTION
    every_n = test.target == PERIODIC  # (a helper's `step % freq == 0`, tested here)
    chosen_passes = first_passes(node.test, frame.loop_names) or listed_passes(node.test, _counters(frame))
    rare = (rare_unless_settled(node.test, frame.numbering.settled, frame.numbering.settled - frame.numbering.fixed) or chosen_passes or every_n) and not option and not type_tests.tells_device(node.test) \
        and id(node.test) not in frame.numbering.item_tests and not settled_flag(node.test, frame.numbering.settled) \
        and id(node.test) not in _update_boundaries(frame)
    once_body, once_else = fills_on_miss(node)  # (a side that stores the key it missed runs once per key)
    once_body = once_body or latched_here
    refill_body, refill_else = frame.numbering.refills.get(id(node), (False, False))
    latch_body, latch_else = latch_sides(node.test, frame.numbering.latched)  # (the side before a latch is set)
    once_body, once_else = once_body or refill_body or latch_body, once_else or refill_else or latch_else
    usual_else = rare and not negated(node.test)  # (the other side of a one-off, a flag, every N steps)
    body_calls, else_calls = called_on_every_side(node) if rare else ([], [])
    steady = body_calls + ([] if usual_else else else_calls)  # (a callee either side calls runs every time)
    for call in steady:
        frame.numbering.every_side[id(call)] = frame.numbering.every_side.get(id(call), 0) + 1
    outside = frame.branch  # (no restore on an exception: a walk that raises is abandoned with its frame)
    yes, no = frame.side(node.test, True, option), frame.side(node.test, False, option)
    frame.branch, frame.guards = yes, frame.guards + rare + once_body
    entered = frame.guards
    periodic = rare and (rare_test(node.test, periodic=True) or chosen_passes or every_n)
    periodic = periodic or once_body  # (a cache's miss side: once per new key, now and then for its callees too)
    frame.numbering.periodic += periodic
    taken = run_block(node.body.body, holds, frame) if truth(test) is None else state.unreachable()
    frame.numbering.periodic -= periodic
    # (an exit on the rare side leaves the usual path as it was)
    frame.guards = (entered if rare else frame.guards) - once_body - usual_else
    frame.branch, other = no, state
    if isinstance(node.orelse, cst.If):
        other = _if(node.orelse, state, frame)
    elif isinstance(node.orelse, cst.Else):
        frame.guards += once_else
        frame.numbering.periodic += once_else
        other = run_block(node.orelse.body.body, state, frame)
        frame.numbering.periodic -= once_else
        frame.guards -= once_else
    frame.guards -= rare - usual_else
    for call in steady:
        frame.numbering.every_side[id(call)] -= 1
    frame.branch = outside
    leaves_loop = frame.loop_depth > 0 and ends_the_loop(node.body)  # (`if i == n: break`: every pass runs on)
    # (`if not x.shape[0]: continue`: the empty case leaves; the usual pass runs on)
    # (`if not is_valid(x): continue`: which items pass is the data's choice; the usual pass runs on, row 7.59)
    edge_case = not taken.reachable and (empty_test(node.test) or id(node.test) in frame.numbering.item_guards)
    sides = (frame.configuration_side(node.test, True, option), frame.configuration_side(node.test, False, option))
    # (a setting that leaves, `if args.render_only: render(); return`: what follows runs on every call of a run that
    # does not set it, not now and then)
    if truth(test) is None and taken.reachable != other.reachable and not ends_in_raise(node.body) and not leaves_loop \
            and not edge_case and id(node.test) not in _update_boundaries(frame) and not option \
            and not _a_setting(node.test, state, frame):
        frame.guards += 1  # one side leaves (`if done: return`): what follows runs only sometimes
    if truth(test) is None and not frame.loop_depth and taken.reachable != other.reachable and sides[0]:
        frame.branch += (sides[other.reachable],)  # what follows is on the side that stays (D-18)
    if not any(sides) and other.reachable:
        other = other.with_order(other.order.on_side("", _conjuncts(node.test, frame, option)))
    # (a test of an enclosing loop's counter takes both sides over the iterations)
    counter = bool(frame.loop_names) and any(isinstance(n, cst.Name) and n.value in frame.loop_names
                                             for n in preorder(node.test, lambda n: True))
    return taken.join(other, every_path=counter, sides=sides)


def _conjuncts(test: cst.BaseExpression, frame: Frame, option: bool) -> tuple:
    """The (true, false) sides of each configuration test of `a and b` (D-18); () for another test."""
    if not (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And)):
        return ()
    parts = (test.left, test.right)
    sides = tuple((frame.configuration_side(p, True, option), frame.configuration_side(p, False, option)) for p in parts)
    return sides if all(t and f for t, f in sides) else ()


def _loop(node: cst.For | cst.While, head: State, frame: Frame, enter: Callable[[State], State], symbol: str) -> State:
    """The body to a fixpoint at the head, renamed on the back edge (ring slots shift, allocations age); the `else`
    runs where it ran out, not where it broke."""
    frame.loop_names.append(symbol)
    guards = frame.guards  # (a `continue` under a test makes the rest of the body conditional, not what follows)
    entry = head
    inside = frame.sites_within(node)

    def next_iteration(path: Path) -> Path:
        return (path.shifted(symbol, 1) if symbol else path).aged(inside.__contains__)

    broke: list[State] = []
    for _ in range(MAX_LOOP_ROUNDS):
        broke, continued = [], []
        frame.found.loop_exits.append((broke, continued))
        entered = enter(head)
        after = run_block(node.body.body, entered, frame)
        after = _joined(after if after.reachable else entered, continued)  # (a body that always leaves)
        frame.found.loop_exits.pop()
        if after.reachable:
            after = after.renamed(next_iteration)
        joined = head.join(after, back_edge=True)
        if joined == head:
            break
        head = joined
    frame.loop_names.pop()
    frame.guards = guards
    state, left = entry.join(head), _joined(head.unreachable(), broke)
    if node.orelse is not None:
        state = run_block(node.orelse.body.body, state, frame)
    return _joined(state, [left] if left.reachable else [])


def _joined(state: State, others: list[State]) -> State:
    """`state` joined with the states that reach the same point by a jump (`break`, `continue`)."""
    for other in others:
        state = other if not state.reachable else state.join(other)
    return state


def _for(node: cst.For, state: State, frame: Frame) -> State:
    iterable, state = evaluate(node.iter, state, frame)
    element, state = calls.iterated_object(iterable, node, state, frame)  # (a project class's `__iter__`)
    element = iterable.iterated() if element is None else element
    frame.numbering.item_tests.update(frame.numbering.once(("item_tests", id(node)), lambda: item_tests(node)))
    frame.numbering.item_guards.update(frame.numbering.once(("item_guards", id(node)),
                                                            lambda: item_guards(node)))
    return _loop(node, state, frame, lambda s: bind(node.target, element, s, frame, node), _counter(node))


def _counter(node: cst.For) -> str:
    """The name that counts the iterations: the target, or the count of `enumerate(...)`."""
    if isinstance(node.target, cst.Name):
        return node.target.value
    counted = isinstance(node.iter, cst.Call) and isinstance(node.iter.func, cst.Name) and node.iter.func.value == "enumerate"
    if counted and isinstance(node.target, cst.Tuple) and isinstance(node.target.elements[0].value, cst.Name):
        return node.target.elements[0].value.value
    return ""


def _while(node: cst.While, state: State, frame: Frame) -> State:
    _, state = tested(node.test, state, frame)
    return _loop(node, state, frame, lambda s: tested(node.test, s, frame)[1], "")


def _with(node: cst.With, state: State, frame: Frame) -> State:
    saved, outer = state.current, frame.outside_withs
    synced_at_exit = []
    for item in node.items:
        value, state = evaluate(item.item, state, frame)
        if value.kind is ValueKind.STREAM_CONTEXT and value.target == numba_cuda.SYNC_ON_EXIT:
            synced_at_exit.append(value)
        elif value.kind is ValueKind.STREAM_CONTEXT or (value.kind is ValueKind.STREAM and value.framework in STREAMS_ENTERED):
            entered = value.stream or UNKNOWN_STREAM
            if entered.kind is StreamRefKind.PATH and entered.path is not None and entered.path.root.kind is RootKind.PARAM \
                    and not entered.path.steps:
                frame.note(entered.path.root.name, Evidence.ENTERED)  # (a caller's object's stream is then a side stream)
            state = state.with_current(value.framework, _entered(value, state))
        elif item.asname is not None:
            state = bind(item.asname.name, value, state, frame, node)
    frame.outside_withs = saved if outer is None else outer  # (what a return in the body leaves current)
    state = run_block(node.body.body, state, frame)
    frame.outside_withs = outer
    for context in synced_at_exit:
        state = wait_for(state, frame, frame.site(node), context.stream)
    return replace(state, current=saved) if state.reachable else state


def _entered(context: AbsValue, state: State) -> StreamRef:
    """The stream a `with` makes current; a context chosen per path enters one of two (D-14)."""
    entered = (context.stream or UNKNOWN_STREAM).entered()
    if context.kind is not ValueKind.STREAM_CONTEXT or not context.may_be_none:
        return replace(entered, sides=()) if entered.kind is not StreamRefKind.EITHER else entered
    either = StreamRef.either_of((entered, state.current_stream(context.framework))) or UNKNOWN_STREAM
    if len(entered.sides) != 2:  # (chosen by a configuration test: the side entered, the side not: D-18)
        return either
    return either.chosen_by({entered: entered.sides[0], state.current_stream(context.framework): entered.sides[1]})


def _try(node: cst.Try, state: State, frame: Frame) -> State:
    after = run_block(node.body.body, state, frame)
    if node.orelse is not None:
        after = run_block(node.orelse.body.body, after, frame)
    frame.guards += 1  # a handler runs only when something raised
    frame.numbering.periodic += 1
    for handler in node.handlers:
        if not _import_failure(handler):  # (else the framework is there: the body's bindings stand)
            after = after.join(run_block(handler.body.body, state.join(after), frame))
    frame.guards -= 1
    frame.numbering.periodic -= 1
    if node.finalbody is not None:
        after = run_block(node.finalbody.body.body, after, frame)
    return after


def _import_failure(handler: cst.ExceptHandler) -> bool:
    """`except ImportError:` (or a tuple of such): the path where a module or name is missing."""
    caught = handler.type
    names = caught.elements if isinstance(caught, cst.Tuple) else [caught] if caught is not None else []
    values = [e.value if isinstance(e, cst.Element) else e for e in names]
    return bool(values) and all(isinstance(v, cst.Name) and v.value in python_std.IMPORT_FAILURES for v in values)


def _def(node: cst.FunctionDef, state: State, frame: Frame) -> State:
    """A nested function's name holds a closure the program solves on its own; a decorated one holds what the
    project's decorators return for it (`@chunks.gpu_batch(axis=0)`: the wrapper that runs it per chunk), and nothing
    told where a decorator is not the project's."""
    if frame.qualname.rsplit(".", 1)[-1].startswith("<"):
        return state  # (a module's top level: its functions are the module's)
    # its cells: what this function's never-rebound names it reads hold (D-21): parameters, locals assigned once
    read = frame.numbering.once(f"cells:{node.name.value}", lambda: names_read(node, frame.numbering.settled))
    cells = tuple(sorted((name, state.value(name)) for name in read if state.value(name).kind is not ValueKind.UNKNOWN))
    closure = AbsValue(ValueKind.CALLABLE, target=f"{frame.qualname}.{node.name.value}",
                       positions=tuple(v for _, v in cells), keys=tuple(k for k, _ in cells))
    for decorator in reversed(node.decorators):  # (the innermost applies first)
        applied, state = _decorated(decorator.decorator, closure, node, state, frame)
        if applied is None:
            return state
        closure = applied
    return state.bind(node.name.value, closure)


def _decorated(decorator: cst.BaseExpression, function: AbsValue, node: cst.FunctionDef, state: State,
               frame: Frame) -> tuple[Optional[AbsValue], State]:
    """What a project decorator returns for the function (a callable), else None (a framework's or one not told)."""
    value, state = evaluate(decorator, state, frame)
    project = value.kind is ValueKind.CALLABLE and value.target and not value.target.startswith((calls.METHOD, "kernel:")) \
        and frame.program is not None and not frame.program.is_class(value.target)
    if not project:
        return None, state
    arguments = Arguments(((function, node.name),), {}, None, node)
    result, state = calls.call(value, arguments, state, frame)
    return (result if result.kind is ValueKind.CALLABLE else None), state


def _import(node: cst.Import | cst.ImportFrom, state: State, frame: Frame) -> State:
    """An import binds its names to what they stand for (a relative one as the module's table names it)."""
    for local, target in import_targets(node).items():
        target = frame.imports.get(local, target) if target.startswith(".") else target
        if not target.startswith("."):
            state = state.bind(local, AbsValue(ValueKind.NAMESPACE, target=target))
    return state


def _break(node: cst.CSTNode, state: State, frame: Frame) -> State:
    """A jump: the state goes to the loop's exit (`break`) or its next iteration (`continue`)."""
    if frame.found.loop_exits:
        frame.found.loop_exits[-1][isinstance(node, cst.Continue)].append(state)
    return state.unreachable()


_HANDLERS: dict[type, Callable[..., State]] = {
    cst.SimpleStatementLine: lambda node, state, frame: run_block(node.body, state, frame),
    cst.Expr: _expr,
    cst.Assign: _assign,
    cst.AnnAssign: _ann_assign,
    cst.AugAssign: _aug_assign,
    cst.Del: _unbind,
    cst.Assert: lambda node, state, frame: tested(node.test, state, frame)[1],  # (as an `if`'s test)
    cst.Return: _return,
    cst.Raise: lambda node, state, frame: (evaluate(node.exc, state, frame)[1] if node.exc else state).unreachable(),
    cst.If: _if,
    cst.For: _for,
    cst.While: _while,
    cst.With: _with,
    cst.Try: _try,
    cst.FunctionDef: _def,
    cst.Import: _import,
    cst.ImportFrom: _import,
    cst.Break: _break,
    cst.Continue: _break,
}
