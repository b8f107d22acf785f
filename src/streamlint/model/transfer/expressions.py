"""Expressions: what a value is, and the work evaluating it queues (calls, host reads)."""

from __future__ import annotations

import builtins
from dataclasses import replace
from functools import reduce
from typing import Callable, Optional

import libcst as cst

from streamlint.model.api import cuda_python, host_math, nccl, numpy_api, torch_api
from streamlint.model.api.facts import POINTER_FRAMEWORKS
from streamlint.model.domain.paths import FILL, PREFIX, Index, IndexKind, Path, Root, RootKind
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.paths import MERGED
from streamlint.model.domain.values import NO_ITEMS, PER_ITEM, FALSE, NONE, OF_ARGUMENTS, OPTION, PERIODIC, TRUE, UNKNOWN, AbsValue, Memory, ValueKind, stream_value, truth
from streamlint.model.transfer import array_calls, calls, command_line, masks, torch_calls, type_tests
from streamlint.model.transfer.arguments import Arguments
from streamlint.model.transfer.act import host_access
from streamlint.model.transfer.devices import is_host, memory_of_device_string
from streamlint.model.transfer.fact_calls import ERROR_FIRST
from streamlint.model.syntax.children import walk
from streamlint.model.syntax.names import dotted
from streamlint.model.syntax.tests import rare_test, written_constant
from streamlint.model.transfer.frame import Frame

Evaluated = tuple[AbsValue, State]
_BUILTINS = frozenset(dir(builtins))
ZERO = AbsValue(ValueKind.HOST_NUMBER, target="0")  # stream 0, flags 0: the APIs' defaults
HOST_NUMBER = AbsValue(ValueKind.HOST_NUMBER)
_CONSTANTS = {"None": NONE, "True": TRUE, "False": FALSE}


def evaluate(node: cst.BaseExpression, state: State, frame: Frame) -> Evaluated:
    return _HANDLERS.get(type(node), _children_then_unknown)(node, state, frame)


def _name(node: cst.Name, state: State, frame: Frame) -> Evaluated:
    bound = _CONSTANTS.get(node.value) or state.names.get(node.value) or frame.globals.get(node.value)
    if bound is not None:
        return bound, state
    target = frame.imports.get(node.value)
    if target is not None:
        return AbsValue(ValueKind.NAMESPACE, target=target), state
    if node.value in frame.local_functions:
        return AbsValue(ValueKind.CALLABLE, target=f"{frame.module}.{node.value}"), state
    if node.value in _BUILTINS:
        return AbsValue(ValueKind.NAMESPACE, target=f"builtins.{node.value}"), state
    return UNKNOWN, state


def _lambda(node: cst.Lambda, state: State, frame: Frame) -> Evaluated:
    """`to_np = lambda x: ...` at a module's top: the function it defines (nothing runs when it is made)."""
    qualname = frame.program.lambda_function(frame.module, node) if frame.program is not None else None
    if not qualname:  # (another lambda: its body's work taken to run where it is written)
        return _children_then_unknown(node, state, frame)
    return AbsValue(ValueKind.CALLABLE, target=qualname), state


def _attribute(node: cst.Attribute, state: State, frame: Frame) -> Evaluated:
    base, state = evaluate(node.value, state, frame)
    attr = node.attr.value
    if base.kind is ValueKind.NAMESPACE:
        return calls.method_of(base, attr), state  # (a default stream named as an attribute: a stream)
    if base.kind is ValueKind.STREAM and attr in nccl.STREAM_HANDLE_ATTRS:
        return base, state  # a stream's raw handle: handing it to a call hands it the stream
    held = state.at(base.identity.attr(attr)) if base.identity is not None else UNKNOWN
    carried = command_line.field_of(base, attr) if held.kind is ValueKind.UNKNOWN else None
    if carried is not None:  # (an option's default the parsed namespace carries, also into callees)
        return carried, state
    if held.kind is ValueKind.UNKNOWN and attr in host_math.NUMBER_ATTRIBUTES:  # `x.size`, or a tuple: `x.shape`
        many = attr in host_math.NUMBER_TUPLE_ATTRIBUTES
        return (AbsValue(ValueKind.CONTAINER, element=HOST_NUMBER) if many else HOST_NUMBER), state
    if base.identity is None:  # (a tensor's device is told all the same: where it lives)
        return (calls.attribute_of(base, attr, None) if attr in torch_api.DEVICE_ATTRIBUTES else UNKNOWN), state
    path = base.identity.attr(attr)
    if held.kind is not ValueKind.UNKNOWN or held.target or held.element is not None:
        return held, state  # (what it is, that it is an option, or the memory an object not seen into keeps)
    kept = None
    if base.kind is ValueKind.OBJECT and base.target and frame.program is not None:
        kept = frame.program.class_attribute(base.target, attr)  # what the object's class keeps there
        kept = calls.of_object(kept, base.identity) if kept is not None and kept.kind is not ValueKind.UNKNOWN else None
        # (a default None of the class is no evidence about an object handed in: its producers' stores are, D-16)
        if kept is not None and not (kept.kind is ValueKind.NONE and base.identity.root.kind is RootKind.PARAM):
            return kept, state
    read = _property_read(base, attr, node, state, frame)
    if read is not None:
        return read
    bound = _bound_method(base, attr, frame)
    if bound is not None:
        return bound, state
    left, state = calls.left_on_holder(base, attr, state, frame)
    return (left or kept or calls.attribute_of(base, attr, path)), state


def _property_read(base: AbsValue, attr: str, node: cst.Attribute, state: State, frame: Frame) -> Optional[Evaluated]:
    """`model.device` of an object whose project class makes `device` a property: the read runs the method. (Not
    `self.<attr>` in the class's own methods: a property is the class's interface, read by its users out of sight
    after any of its methods, which the class's own reads must not stand in for, row 10.88.)"""
    cls = base.target if base.kind is ValueKind.OBJECT and frame.program is not None and MERGED not in base.target else ""
    method = frame.program.property_of(cls, attr) if cls else ""
    return calls.run_property(method, base, node, state, frame) if method else None


def _class_of(base: AbsValue, frame: Frame) -> str:
    """The project class of an object, or of `self` in a method of one; "" when not told."""
    cls = base.target if base.kind is ValueKind.OBJECT else ""
    if not cls and base.identity is not None and base.identity.root.kind is RootKind.SELF and not base.identity.steps \
            and frame.class_name:
        cls = f"{frame.module}.{frame.class_name}"
    return "" if not cls or frame.program is None or MERGED in cls else cls


def _bound_method(base: AbsValue, attr: str, frame: Frame) -> Optional[AbsValue]:
    """`trainer.train_step` read, not called: the method of the object's project class, bound to the object (a
    callable handed to a loop, a callback)."""
    cls = _class_of(base, frame)
    if not cls:
        return None
    method = f"{cls}.{attr}"
    if method not in frame.program.methods_named(cls, attr):
        return None
    return AbsValue(ValueKind.CALLABLE, identity=base.identity, target=method)


def subscript(node: cst.Subscript, state: State, frame: Frame, stored: Optional[AbsValue] = None) -> Evaluated:
    """`base[index]`: the item or region it names; `stored`: the value a store puts there (None for a read)."""
    base, state = evaluate(node.value, state, frame)
    state = slice_bounds(node, state, frame)
    index = Index.any_()
    indices = []  # (what the indices hold: a mask among them selects)
    written = []  # (and how each was written: a list of numbers written out is an index the host builds)
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        chosen, state = evaluate(node.slice[0].slice.value, state, frame)
        indices.append(chosen)
        written.append(node.slice[0].slice.value)
        if is_host(base) and chosen.kind in (ValueKind.BUFFER, ValueKind.CONTAINER):
            # `h[index_array]`: advanced indexing of a host array copies the items into new pageable memory
            state = host_access(state, frame, frame.site(node), base.identity, False) if base.identity is not None else state
            return AbsValue(ValueKind.BUFFER, base.framework, Memory.PAGEABLE, Path(Root.fresh(frame.site(node)))), state
        index = _told_index(node.slice[0].slice.value, chosen, state, frame)
    elif len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
        cut = _cut_by_cursor(node.slice[0].slice, frame.numbering.cursors)  # (a cut by a fill level: a view, D-30)
        index = Index.view(frame.site(node), cut) if cut else _region(node.slice[0].slice)
    else:
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                value, state = evaluate(element.slice.value, state, frame)
                indices.append(value)
                written.append(element.slice.value)
    state = masks.host_indices_uploaded(node, base, list(zip(indices, written)), state, frame)
    selected = masks.indexed(node, base, indices, stored, state, frame)
    if selected is not None:
        return selected  # `x[mask]`: a new tensor of the items selected, sized by a count the host reads
    if index.kind is IndexKind.ANY and any(isinstance(element.slice, cst.Slice) for element in node.slice):
        index = Index.view(frame.site(node), _cut_by_cursor(node.slice[0].slice, frame.numbering.cursors))  # bounds the text does not tell
    if index.kind is IndexKind.CONST and isinstance(index.const, int) and -len(base.positions) <= index.const < len(base.positions) \
            and not base.keys:
        return base.positions[index.const], state  # `t[0]` of a tuple whose items the text shows
    if index.kind is IndexKind.REGION and base.kind is ValueKind.CONTAINER and base.positions and not base.keys \
            and all(end is None or isinstance(end, int) for end in index.const):
        # `args[1:]` of a tuple whose items the text shows: a tuple of those items
        return AbsValue(ValueKind.CONTAINER, positions=base.positions[index.const[0]:index.const[1]]), state
    if index.kind is IndexKind.CONST and index.const in base.keys:
        return base.positions[base.keys.index(index.const)], state  # `d["k"]` of a dict written out
    if base.identity is None and base.target == PER_ITEM and base.element is not None and base.element.identity:
        return replace(base.element, identity=base.element.identity.element(index)), state  # the item indexed
    if base.target == PER_ITEM and _made_stream(base.element) and index.kind in (IndexKind.SLOT, IndexKind.CONST):
        return replace(base.element, stream=StreamRef.pool_item(base.element.stream, index)), state  # `streams[i % 2]`
    if base.identity is None:  # (a buffer's item, `batch["x"]`: in the same memory)
        return (base.element or (base if base.is_buffer else UNKNOWN)), state
    return _item_at(base, index, state), state


def _item_at(base: AbsValue, index: Index, state: State) -> AbsValue:
    """The item at `base[index]`, `base` memory or a container the walk can name."""
    path = base.identity.element(index)  # type: ignore[union-attr]
    held = state.at(path)
    if held.kind is ValueKind.UNKNOWN and not base.is_buffer and index.kind in (IndexKind.CONST, IndexKind.SLOT) \
            and not _known_by_its_keys(base, state):
        held = state.at(base.identity.element(Index.any_()))  # (a told key nothing was stored at: the weak slot, D-12)
    if held.kind is not ValueKind.UNKNOWN:
        return held
    if base.element is not None and index.kind is IndexKind.SLOT and base.element.is_buffer:
        return replace(base.element, identity=path)  # one of a ring's buffers: its slot (D-25)
    if base.element is not None:
        return base.element
    if base.kind is ValueKind.BUFFER:
        rank = -1 if base.rank < 0 else base.rank - (index.kind is not IndexKind.REGION)  # (a region keeps them all)
        return AbsValue(ValueKind.BUFFER, base.framework, base.memory, path, base.stream, target=masks.keeps_mask(base),
                        loader_batch=base.loader_batch, rank=rank)
    return AbsValue(identity=path)


def _known_by_its_keys(base: AbsValue, state: State) -> bool:
    """An object the code was handed (a parameter, a loader's batch named where the code first stored in it) whose
    items are known under keys written out: a key nothing was stored at holds what it was handed with, not what was
    stored at other keys (the weak slot holds those)."""
    return base.identity.root.kind in (RootKind.PARAM, RootKind.LOCAL) and bool(calls.told_keys(base, state))


def _made_stream(value: Optional[AbsValue]) -> bool:
    """A stream made at a site (a pool's element: its items are distinct streams)."""
    return (value is not None and value.kind is ValueKind.STREAM and value.stream is not None
            and value.stream.kind is StreamRefKind.CREATED)


def slice_bounds(node: cst.Subscript, state: State, frame: Frame) -> State:
    """The work the bounds of its slices do (`x[: lengths[b].item()]`); a CUDA tensor as a bound (`x[:n]`, `n` a
    0-d count on the device) is read back as an integer, and the host waits for the stream."""
    for element in node.slice:
        if isinstance(element.slice, cst.Slice):
            for bound in (element.slice.lower, element.slice.upper, element.slice.step):
                if bound is not None and not isinstance(bound, cst.Integer):
                    value, state = evaluate(bound, state, frame)
                    state = torch_calls.read_as_int(torch_api.SLICE_BOUND, value, node, state, frame)
    return state


def _told_index(node: cst.BaseExpression, chosen: AbsValue, state: State, frame: Frame) -> Index:
    """The index `node` names: a ring slot a name or a counter holds, `k % n`, a constant, else unknown."""
    named = _slot_of(chosen) if isinstance(node, cst.Name) else None
    named = named or _counter_slot(node, state, frame) or _slot(node)
    if named is not None:
        return named
    if isinstance(node, cst.Integer):
        return Index.const_(int(node.value, 0))
    return Index.const_(node.raw_value) if isinstance(node, cst.SimpleString) and node.prefix == "" else Index.any_()


def _counter_slot(node: cst.BaseExpression, state: State, frame: Frame) -> Optional[Index]:
    """`bufs[x.i]`, `x.i` a ring counter of the module: the slot its value names now (D-25)."""
    size = frame.ring_size(node)
    if not size:
        return None
    holder, _ = evaluate(node.value, state, frame)
    return Index.slot(holder.identity.attr(node.attr.value).spell(), size) if holder.identity is not None else None


def _slot_of(value: AbsValue) -> Optional[Index]:
    if value.kind is not ValueKind.HOST_NUMBER or not value.target.startswith(_SLOT):
        return None
    symbol, modulus, offset = value.target[len(_SLOT):].split(" ")
    return Index.slot(symbol, int(modulus), int(offset))


_SLOT = "slot of "
# The keyword under which `f(**d)` hands the items of a dict whose keys the text does not tell (no parameter's name).
UNNAMED_KEYWORDS = "**"


def _region(node: cst.Slice) -> Index:
    """`x[lo:hi]` with each end a name, a number or open; any other end makes it unknown."""
    if node.step is not None:
        return Index.any_()
    ends = [_bound(node.lower), _bound(node.upper)]
    return Index.any_() if "?" in ends else Index.region(ends[0], ends[1])


def _cut_by_cursor(node: cst.BaseSlice, cursors: frozenset) -> tuple:
    """(FILL, k) for `x[k : k + n]`, (PREFIX, k) for `x[:k]` or `x[0:k]`, `k` a fill level: an attribute (a cursor
    kept on an object) or a local name of `cursors` (set to 0, only raised by `+=`), D-30; () for any other slicing."""
    if not isinstance(node, cst.Slice) or node.step is not None \
            or not isinstance(node.upper, (cst.Attribute, cst.BinaryOperation, cst.Name)):
        return ()
    lower = dotted(node.lower) if node.lower is not None else None
    if not isinstance(node.upper, cst.BinaryOperation):
        upper = dotted(node.upper)
        level = upper and ("." in upper or upper in cursors)
        return (PREFIX, upper) if level and (node.lower is None or _bound(node.lower) == 0) else ()
    level = lower and ("." in lower or lower in cursors)
    fills = isinstance(node.upper.operator, cst.Add) and level and dotted(node.upper.left) == lower
    return (FILL, lower) if fills else ()


def _bound(node: Optional[cst.BaseExpression]):
    if node is None:
        return None
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    return "?"


def _slot(node: cst.BaseExpression) -> Optional[Index]:
    """`k % n` and `(k + c) % n` with `n` a literal: a slot of a ring of `n` buffers."""
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo)
            and isinstance(node.right, cst.Integer)):
        return None
    modulus = int(node.right.value, 0)
    left, offset = node.left, 0
    if isinstance(left, cst.BinaryOperation) and isinstance(left.right, cst.Integer):
        sign = {cst.Add: 1, cst.Subtract: -1}.get(type(left.operator))
        if sign is None:
            return None
        offset, left = sign * int(left.right.value, 0), left.left
    if not isinstance(left, cst.Name) or modulus <= 0:
        return None
    return Index.slot(left.value, modulus, offset)


def _call(node: cst.Call, state: State, frame: Frame) -> Evaluated:
    receiver: Optional[AbsValue] = None
    settings: Optional[list[AbsValue]] = None  # a Numba kernel launch's: `kernel[grid, block, stream](args)`
    if isinstance(node.func, cst.Subscript):
        callee, state = evaluate(node.func.value, state, frame)
        settings = []
        for element in node.func.slice:
            if isinstance(element.slice, cst.Index):
                value, state = evaluate(element.slice.value, state, frame)
                settings.append(value)
    elif isinstance(node.func, cst.Attribute):
        receiver, state = evaluate(node.func.value, state, frame)
        held = state.stored(receiver.identity.attr(node.func.attr.value)) if receiver.identity is not None else None
        if held is not None and held.kind in (ValueKind.UNKNOWN, ValueKind.CALLABLE, ValueKind.OBJECT, ValueKind.NAMESPACE,
                                              ValueKind.BUFFER):
            callee, receiver = held, None  # `self.model(x)`: the value stored there, called
        else:
            callee = calls.method_of(receiver, node.func.attr.value)
            if receiver.kind in (ValueKind.NAMESPACE, ValueKind.CALLABLE):
                receiver = None  # `cudart.f(...)`, `Class.helper(...)`: a function, not a method of an object
    else:
        callee, state = evaluate(node.func, state, frame)
    positional, keywords = [], {}
    spread: Optional[AbsValue] = None
    placed = True  # (past a `*items` whose items the text does not tell, no argument has a known position)
    for arg in node.args:
        value, state = evaluate(arg.value, state, frame)
        if arg.keyword is not None:
            keywords[arg.keyword.value] = (value, arg.value)
        elif arg.star == "**":  # a dict written out: its keys are keyword arguments
            keywords.update({k: (v, arg.value) for k, v in zip(value.keys, value.positions) if k not in keywords})
            if not value.keys and value.kind is ValueKind.CONTAINER and value.element is not None:
                # keys not told (`{k: v.to(device) for ...}`): its items are handed, under no parameter's name
                keywords.setdefault(UNNAMED_KEYWORDS, (value.element, arg.value))
        elif arg.star and settings is None and value.kind is ValueKind.CONTAINER and value.positions and not value.keys:
            positional.extend((item, arg.value) for item in value.positions)  # `f(*args)` of a tuple told: its items
        elif arg.star and settings is None:
            placed = False
            spread = value.iterated() if spread is None else spread.join(value.iterated())
        elif placed:  # (a launch's `*args`: the arrays it hands the kernel)
            positional.append((value, arg.value))
    arguments = Arguments(tuple(positional), keywords, receiver, node, spread)
    if settings is not None:
        return array_calls.launch(callee, settings, arguments, state, frame)
    result, state = calls.call(callee, arguments, state, frame)
    return masks.of_call(*_called_name(node, callee, receiver), result, arguments), state


def _called_name(node: cst.Call, callee: AbsValue, receiver: Optional[AbsValue]) -> tuple[str, bool]:
    """The name of what was called, and whether it is a framework's function or a method of one of its tensors."""
    if receiver is not None and isinstance(node.func, cst.Attribute):
        return node.func.attr.value, receiver.is_buffer or receiver.kind is ValueKind.UNKNOWN
    module, _, name = callee.target.rpartition(".")
    return name, callee.kind in (ValueKind.CALLABLE, ValueKind.NAMESPACE) and module.split(".")[0] in ("torch", "cupy")


def _display(node: cst.Tuple | cst.List | cst.Dict, state: State, frame: Frame) -> Evaluated:
    """A tuple, list or dict written out: a container of its items; a tuple's positions and a dict's string keys each
    name their item (`AbsValue.keys`); a list of streams is a pool of them."""
    joined: Optional[AbsValue] = None
    members: set = set()
    streams: list = []
    values: list = []
    mapping = isinstance(node, cst.Dict)
    for element in node.elements:
        if isinstance(element, cst.DictElement):
            _, state = evaluate(element.key, state, frame)
        value, state = evaluate(element.value, state, frame)
        values.append(value)
        if isinstance(element, cst.StarredDictElement):
            # `**other`: its values (a mapping known only as memory a call made: that memory)
            value = value.element or (value if value.is_buffer else UNKNOWN)
        elif value.kind is ValueKind.NAMESPACE and not mapping:
            continue  # a type or module beside the items (`[buf, MPI.FLOAT]`) holds no memory
        joined = value if joined is None else joined.join(value)
        streams.append(value.stream if value.kind is ValueKind.STREAM else None)
        members |= memory_of(value)
    pool = None if mapping else StreamRef.listed(streams)
    if pool is not None:  # `[s0, s1]`: a pool of the streams it lists, each item another stream
        return AbsValue(ValueKind.CONTAINER, element=stream_value(pool), target=PER_ITEM), state
    keys = tuple(e.key.evaluated_value for e in node.elements if isinstance(e, cst.DictElement)
                 and isinstance(e.key, cst.SimpleString)) if mapping else ()
    if mapping:
        told = len(keys) == len(node.elements) == len(values) and all(isinstance(k, str) for k in keys)
    else:
        told = isinstance(node, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in node.elements)
    return AbsValue(ValueKind.CONTAINER, element=joined, target="" if node.elements else NO_ITEMS,
                    members=frozenset(members), positions=tuple(values) if told else (),
                    keys=keys if told else ()), state


def _comprehension(node: cst.BaseExpression, state: State, frame: Frame) -> Evaluated:
    """A container of what one evaluation of the element makes; its names are its own."""
    inner = state
    clause: Optional[cst.CompFor] = getattr(node, "for_in", None)
    while clause is not None:
        iterable, inner = evaluate(clause.iter, inner, frame)
        items = iterable.items if isinstance(clause.target, cst.Name) else iterable.element
        inner = _bind_names(clause.target, items or UNKNOWN, inner)
        for condition in clause.ifs:
            _, inner = evaluate(condition.test, inner, frame)
        clause = clause.inner_for_in
    item, inner = evaluate(node.value if isinstance(node, cst.DictComp) else node.elt, inner, frame)
    members = memory_of(item)
    made = item.identity is not None and not item.identity.steps and item.identity.root.site in frame.sites_within(node)
    made = made or (_made_stream(item) and item.stream.site in frame.sites_within(node))  # (a stream per item)
    # memory the element makes is new for each item: the items are the elements of that allocation
    return (AbsValue(ValueKind.CONTAINER, element=item, target=PER_ITEM if made else "", members=members),
            replace(inner, names=state.names))


def memory_of(item: AbsValue) -> frozenset:
    """The memory an item of a container holds: itself (a buffer, an event) and its own members."""
    own = {item.identity} if item.identity is not None and item.kind in (ValueKind.BUFFER, ValueKind.EVENT) else set()
    return item.members | own


def _bind_names(target: cst.BaseExpression, value: AbsValue, state: State) -> State:
    """A comprehension's target bound to one item, tuples unpacked as an assignment unpacks them."""
    if isinstance(target, cst.Name):
        return state.bind(target.value, value)
    if isinstance(target, (cst.Tuple, cst.List)):
        for position, element in enumerate(target.elements):
            state = _bind_names(element.value, unpacked(value, position), state)
    return state


def unpacked(value: AbsValue, position: int) -> AbsValue:
    """The item at `position` of an unpacked value (an (error, value) pair's error is a number)."""
    if position == 0 and value.target == ERROR_FIRST:
        return HOST_NUMBER
    if value.keys:
        return UNKNOWN  # (a dict's keys)
    if position < len(value.positions):
        return value.positions[position]
    if value.element is None and value.is_buffer:
        if value.framework == numpy_api.FRAMEWORK:
            return UNKNOWN  # (a NumPy array's items are scalars or rows: its dimensions are untold)
        return AbsValue(ValueKind.BUFFER, value.framework, value.memory, loader_batch=value.loader_batch)
    return value.element or UNKNOWN


def _ternary(node: cst.IfExp, state: State, frame: Frame) -> Evaluated:
    test, state = evaluate(node.test, state, frame)
    known = truth(test)
    if known is not None:
        return evaluate(node.body if known else node.orelse, state, frame)
    holds, fails = type_tests.sides(node.test, state, frame, evaluate)  # a type test narrows each side (`v.item() if torch.is_tensor(v)`)
    yes, after_yes = evaluate(node.body, holds, frame)
    no, after_no = evaluate(node.orelse, fails, frame)
    if ValueKind.NONE in (yes.kind, no.kind):  # (the other one, or None)
        return (yes if no.kind is ValueKind.NONE else no).join_none(), after_yes.join(after_no)
    return yes.join(no), after_yes.join(after_no)


def _children_then_unknown(node: cst.CSTNode, state: State, frame: Frame) -> Evaluated:
    """Any other expression: evaluate what it contains (calls queue work), know nothing of it."""
    for child in node.children:
        if isinstance(child, cst.BaseExpression) and not isinstance(child, (cst.Lambda,)):
            _, state = evaluate(child, state, frame)
        elif isinstance(child, (cst.Arg, cst.Element, cst.DictElement, cst.FormattedStringExpression)):
            _, state = _children_then_unknown(child, state, frame)
    return UNKNOWN, state


def _repeated(node: cst.BaseExpression, values: list) -> Optional[AbsValue]:
    """`[None] * n`: a list of the same items repeated (how many the text does not tell)."""
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply)):
        return None
    lists = [v for v in values if v.kind is ValueKind.CONTAINER]
    if len(lists) != 1 or len(values) != 2:
        return None  # (a list times anything else: a count, whatever the walk knows of it)
    return replace(lists[0], positions=())


def _concatenated(node: cst.BaseExpression, values: list) -> Optional[AbsValue]:
    """`[(frame_id, keyframe)] + self.keyframes`: a list of the items of both (a tuple of both tuples' items where the
    text shows them all); an empty one adds nothing."""
    if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add)) or len(values) != 2 \
            or not all(v.kind is ValueKind.CONTAINER and not v.keys for v in values):
        return None
    filled = [v for v in values if v.target != NO_ITEMS]
    if len(filled) < 2:
        return replace(filled[0], identity=None) if filled else replace(values[0], identity=None)
    if all(v.positions and v.element is None for v in filled):
        return AbsValue(ValueKind.CONTAINER, positions=filled[0].positions + filled[1].positions)
    items = [item for v in filled for item in (*v.positions, *((v.element,) if v.element is not None else ()))]
    if len(items) < 2 and any(not v.positions and v.element is None for v in filled):
        return AbsValue(ValueKind.CONTAINER)  # (a list whose items the walk was not told: nor are the sum's)
    return AbsValue(ValueKind.CONTAINER, element=reduce(AbsValue.join, items) if items else None,
                    members=filled[0].members | filled[1].members)


def _looked_up(node: cst.BaseExpression, values: list[AbsValue]) -> bool:
    """`x in c` / `x not in c` where `c` is no tensor nor a list or tuple written out: a dict's or a set's lookup
    (a tensor hashes by identity), or a container's not told; `t in [a, b]` compares with each item, `x in t` reads `t`."""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return False
    comparison = node.comparisons[0]
    return isinstance(comparison.operator, (cst.In, cst.NotIn)) and not values[1].is_buffer and not values[1].either \
        and not isinstance(comparison.comparator, (cst.List, cst.Tuple))


def _operator(node: cst.BaseExpression, state: State, frame: Frame) -> Evaluated:
    """`a * 2`, `-a`, `a > b`: an operation on tensors where they live (PyTorch's invariant)."""
    operands = [getattr(node, name) for name in ("left", "right", "expression") if hasattr(node, name)]
    if isinstance(node, cst.Comparison):
        operands = [node.left] + [c.comparator for c in node.comparisons]
    values = []
    for operand in operands:
        value, state = evaluate(operand, state, frame)
        values.append(value)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo) and isinstance(
            node.left, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        # `"loss %s" % t`: the host formats what it is given
        return HOST_NUMBER, calls.formatted_on_host(host_math.PERCENT_FORMATTING, values[1:], frame.site(node), state,
                                                    frame)
    decided = _none_test(node, values)
    if decided is not None:
        return decided, state
    # an operand that is memory on some path only (D-20) is read there: each memory it may be
    buffers = [b for v in values for b in ((v,) if v.is_buffer else v.either)]
    if isinstance(node, cst.Comparison) and all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in node.comparisons):
        return HOST_NUMBER, state  # `x is None`: the host compares references, no kernel runs
    if _looked_up(node, values):
        return HOST_NUMBER, state  # `key in table`: the container's own lookup, by hash; no kernel runs
    if not buffers and isinstance(node, cst.Comparison) and rare_test(node, periodic=True):
        return replace(HOST_NUMBER, target=PERIODIC), state  # `step % freq == 0`: true every N steps
    if _configuration(node, operands, values, frame):
        return replace(UNKNOWN, target=OPTION), state
    if not buffers:
        listed = _concatenated(node, values) or _repeated(node, values)
        if listed is not None:
            return listed, state
        slot = _slot(node)
        if slot is not None:
            # a host number that is a ring slot of a loop counter (`k % 2`), as a name holds it
            return AbsValue(ValueKind.HOST_NUMBER, target=f"{_SLOT}{slot.symbol} {slot.modulus} {slot.offset}"), state
        # arithmetic on numbers the host has is a number the host has (`2 * n / 32`)
        numbers = all(v.kind is ValueKind.HOST_NUMBER for v in values)
        return (HOST_NUMBER if numbers and not isinstance(node, cst.Comparison) else UNKNOWN), state
    pointers = [v for v in buffers if v.framework in POINTER_FRAMEWORKS or v.framework == cuda_python.RAW_ADDRESS]
    if isinstance(node, cst.Comparison) and len(pointers) == len(buffers):
        return HOST_NUMBER, state  # addresses compared on the host (`a.data.ptr == b.data.ptr`)
    pointer = pointers[0] if pointers else None
    if pointer is not None and isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        return pointer, state  # pointer arithmetic (`mem + offset`): an address into the same memory, no kernel
    if pointers and len(pointers) == len(buffers) and not isinstance(node, cst.UnaryOperation):
        return HOST_NUMBER, state  # an address is a Python int: `ptr % 256` is the host's arithmetic, no kernel
    operator = Arguments((), {}, None, node)  # type: ignore[arg-type]
    result, state = torch_calls.run_operation(buffers, None, False, operator, state, frame)  # (PyTorch's invariant)
    return masks.of_operator(node, values, result), state


def _configuration(node: cst.BaseExpression, operands: list, values: list[AbsValue], frame: Frame) -> bool:
    """An option compared with a constant is an option itself, the same on every call."""
    if not isinstance(node, cst.Comparison) or not any(v.target == OPTION for v in values):
        return False
    return all(v.target == OPTION or written_constant(o) or _module_member(o, frame) for o, v in zip(operands, values))


def _boolean(node: cst.BooleanOperation, state: State, frame: Frame) -> Evaluated:
    """Of streams, one of two (D-14); an `or` with an option, an `and` of options: an option."""
    left, after_left = evaluate(node.left, state, frame)
    right, state = evaluate(node.right, after_left, frame)
    if isinstance(node.operator, cst.Or) and left.kind is right.kind is ValueKind.STREAM:
        # `stream or torch.cuda.current_stream()`: the stream given, else the other (a stream is
        # true, None false): one of two streams (D-14); the right side ran on one path only
        return replace(left, may_be_none=False).join(right), after_left.join(state)
    if isinstance(node.operator, cst.And) and PERIODIC in (left.target, right.target):
        return replace(HOST_NUMBER, target=PERIODIC), state  # true at most every N steps
    options = [v.target == OPTION and v.kind is ValueKind.UNKNOWN for v in (left, right)]
    if any(options) if isinstance(node.operator, cst.Or) else all(options):
        return replace(UNKNOWN, target=OPTION), state
    given = all(o or _as_given(v) for o, v in zip(options, (left, right)))  # (`a or b` of arguments: kept, an option)
    return (replace(UNKNOWN, target=OF_ARGUMENTS) if given else UNKNOWN), state


def _as_given(value: AbsValue) -> bool:
    identity = value.identity
    return value.kind is ValueKind.UNKNOWN and (value.target == OF_ARGUMENTS or identity is not None
                                                and identity.root.kind is RootKind.PARAM and not identity.steps)


def _module_member(node: cst.BaseExpression, frame: Frame) -> bool:
    """`Clipping.NORM`, `torch.inf`: an attribute of a name the module binds at its top, not of a local value."""
    if not isinstance(node, cst.Attribute):
        return False
    root = node.value
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and (root.value in frame.imports or root.value in frame.local_functions)


def _none_test(node: cst.BaseExpression, values: list[AbsValue]) -> Optional[AbsValue]:
    """`x is None` decided by what `x` is known to be (a value of a known kind is never None), else undecided (D-5)."""
    if not (isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and len(values) == 2):
        return None
    operator, value = node.comparisons[0].operator, values[0]
    if not isinstance(operator, (cst.Is, cst.IsNot)) or values[1].kind is not ValueKind.NONE:
        return None
    is_none = value.kind is ValueKind.NONE
    if not is_none and (value.kind is ValueKind.UNKNOWN or value.may_be_none):
        return None
    return TRUE if is_none == isinstance(operator, cst.Is) else FALSE


YIELDED = "<yielded>"  # the name the generator's consumer holds the last item by (no Python name)


def _yield(node: cst.Yield, state: State, frame: Frame) -> Evaluated:
    """Where a generator yields its caller runs: the current streams entering it as a context manager makes. What it
    yields (each item of `yield from`) is an item of the generator its call returns."""
    item = NONE
    if isinstance(node.value, cst.From):
        value, state = evaluate(node.value.item, state, frame)
        item = value.iterated()
    elif isinstance(node.value, cst.BaseExpression):
        item, state = evaluate(node.value, state, frame)
    item = state.with_items(item)
    frame.found.items = item if frame.found.items is None else frame.found.items.join(item)
    state = state.bind(YIELDED, item)  # (the consumer holds what it was given: a later rebinding releases nothing)
    if frame.found.yielded is None:
        frame.found.yielded = state.current
    return UNKNOWN, state


def _formatted(node: cst.FormattedString, state: State, frame: Frame) -> Evaluated:
    """`f"loss {t}"`: the host formats what its fields hold; `f"cuda:{rank}"` names a device, as "cuda:0" does."""
    memory = _device_named(node, frame.numbering.loop_bound)
    if memory is not None:
        return AbsValue(ValueKind.DEVICE, "torch", memory), state
    values = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringExpression):
            value, state = evaluate(part.expression, state, frame)
            values.append(value)
    return HOST_NUMBER, calls.formatted_on_host(host_math.F_STRING, values, frame.site(node), state, frame)


def _device_named(node: cst.FormattedString, per_pass: frozenset[str]) -> Optional[Memory]:
    """`f"cuda:{local_rank}"`: one device of a kind, as "cuda:0" is; not one whose index a loop or comprehension
    changes per pass (`f"cuda:{d}"` for each `d`: tensors on several devices, read one by one)."""
    head = node.parts[0] if node.parts else None
    if not isinstance(head, cst.FormattedStringText) or not head.value.endswith(":"):
        return None
    if any(isinstance(n, cst.Name) and n.value in per_pass for part in node.parts[1:]
           if isinstance(part, cst.FormattedStringExpression) for n in walk(part.expression, ())):
        return None
    return memory_of_device_string(head.value)


def _string(node: cst.SimpleString, state: State, frame: Frame) -> Evaluated:
    """A device string ("cuda:0", "cpu") is a device; any other string a host value."""
    memory = memory_of_device_string(node.raw_value) if node.prefix in ("", "r", "u") else None
    return (AbsValue(ValueKind.DEVICE, "torch", memory) if memory is not None else HOST_NUMBER), state


def _named_expr(node: cst.NamedExpr, state: State, frame: Frame) -> Evaluated:
    """`(batch := ready.get())`: the value, bound to the name as an assignment binds it (Python only allows a name)."""
    value, state = evaluate(node.value, state, frame)
    return value, state.bind(node.target.value, value) if isinstance(node.target, cst.Name) else state


_HANDLERS: dict[type, Callable[..., Evaluated]] = {
    cst.Name: _name,
    cst.Attribute: _attribute,
    cst.Lambda: _lambda,
    cst.Subscript: subscript,
    cst.Call: _call,
    cst.Tuple: _display,
    cst.List: _display,
    cst.IfExp: _ternary,
    cst.Dict: _display,
    cst.ListComp: _comprehension,
    cst.SetComp: _comprehension,
    cst.GeneratorExp: _comprehension,
    cst.DictComp: _comprehension,
    cst.Yield: _yield,
    cst.BinaryOperation: _operator,
    cst.UnaryOperation: _operator,
    cst.Comparison: _operator,
    cst.BooleanOperation: _boolean,
    cst.Integer: lambda node, state, frame: (ZERO if node.value == "0" else HOST_NUMBER, state),
    cst.Float: lambda node, state, frame: (HOST_NUMBER, state),
    cst.SimpleString: _string,
    cst.FormattedString: _formatted,
    cst.NamedExpr: _named_expr,
}
