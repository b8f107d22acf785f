"""One walk of one function under one calling context: its summary and the conflicts it finds itself."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import reduce
from typing import Optional

import libcst as cst

from streamlint.model.api import cupy as cupy_api
from streamlint.model.api import python_std
from streamlint.model.api.facts import LEGACY_BY_DEFAULT
from streamlint.model.api.op_kinds import OpKind
from streamlint.model.domain.order import HOST, AccessEvent, Conflict, ConflictKind
from streamlint.model.domain.paths import Index, Path, Root
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import ITEMS_ONLY, UNKNOWN, AbsValue, ValueKind
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.summary.function_summary import FunctionSummary, bounded
from streamlint.model.transfer import annotations
from streamlint.model.transfer.annotations import annotated, defaulted
from streamlint.model.transfer.calls import FRAMEWORK_METHODS
from streamlint.model.transfer.frame import CELL, SIDE_STREAM_FACT, CallContext, Frame
from streamlint.model.transfer.names import dotted, qualified
from streamlint.model.transfer.nodes import is_kind, own_nodes
from streamlint.model.syntax.children import child_nodes
from streamlint.model.domain.paths import IndexKind, RootKind
from streamlint.model.transfer.statements import leave, release_if_dropped, run_block
from streamlint.model.syntax.tests import assigned_once, loop_bound, never_rebound, fill_cursors

# Walks done so far, per (function, context): the guard-rail test asserts each is 1.
WALKS: dict[tuple[str, CallContext], int] = {}


@dataclass(frozen=True)
class Walked:
    summary: FunctionSummary
    conflicts: tuple[Conflict, ...]
    handed_out: tuple[Conflict, ...] = ()  # returned memory another stream may still write
    # a join that names another stream: (the conflict left, the wait's site, its waiter, what it waited on)
    misjoined: tuple[tuple[Conflict, str, StreamRef, StreamRef], ...] = ()
    left_on_self: tuple[AccessEvent, ...] = ()  # writes on `self` left in flight for the caller
    # everything the walk did, before the summary's budget (D-32): the function's own findings read these
    effects: tuple[Effect, ...] = ()
    untold: tuple = ()  # what stayed unknown where it mattered (Gathered.untold), for `readings/untold.py`
    # the function's own text told what its callers hand it (D-14, `_told_by_a_test`): callers out of sight
    told_by_itself: bool = False


# Nodes that can perform work, and so have a site: calls, operators, stores.
_NUMBERED = (cst.Call, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Del, cst.BinaryOperation, cst.UnaryOperation,
             cst.Comparison, cst.Subscript, cst.Return)
_IS_NUMBERED: dict[type, bool] = {}


def call_ordinals(function: cst.CSTNode, nodes: Optional[list[cst.CSTNode]] = None) -> dict[int, int]:
    """Each node that can perform work, numbered in a fixed order (`nodes`: its `own_nodes` if read)."""
    ordinals: dict[int, int] = {}
    loops, formats, yields, decorated = [], [], [], []
    for node in own_nodes(function) if nodes is None else nodes:
        if is_kind(node, _NUMBERED, _IS_NUMBERED):
            ordinals[id(node)] = len(ordinals)
        elif type(node) is cst.For:  # (no subclass: faster than an ABC's isinstance)
            loops.append(node)
        elif type(node) is cst.FormattedString:
            formats.append(node)
        elif type(node) is cst.Yield:
            yields.append(node)
        elif type(node) is cst.FunctionDef and node is not function and node.decorators:
            decorated.append(node)
    # a `for` header stores its target each iteration (what the last one held is dropped there); an
    # f-string reads what it formats; a `yield` hands an item to the consumer; a nested function's decorators run
    # here, and their application is a call at the `def` (numbered last: the other sites keep their numbers)
    for node in loops + formats + yields:
        ordinals[id(node)] = len(ordinals)
    for node in decorated:
        for decorator in node.decorators:
            for part in own_nodes(decorator.decorator):
                if is_kind(part, _NUMBERED, _IS_NUMBERED):
                    ordinals[id(part)] = len(ordinals)
        ordinals[id(node)] = len(ordinals)
    return ordinals


def walk_function(node: "cst.FunctionDef | cst.Module", frame: Frame, context: CallContext) -> Walked:
    """One walk of a function (or of a module's top level, a function without parameters)."""
    key = (frame.qualname, context)
    WALKS[key] = WALKS.get(key, 0) + 1
    if not frame.numbering.call_ordinals:
        frame.numbering.call_ordinals = call_ordinals(node, frame.numbering.once("nodes", lambda: own_nodes(node)))
    frame.context = context
    params, declared = (), {}
    if isinstance(node, cst.FunctionDef):
        params = _parameters(node)
        frame.numbering.params = frozenset(params)
        frame.numbering.fixed = frame.numbering.once("fixed", lambda: never_rebound(node, _body_nodes(node, frame)))
        frame.numbering.cursors = frame.numbering.once("cursors", lambda: fill_cursors(_body_nodes(node, frame)))
        frame.numbering.latched = frame.numbering.once("latched", lambda: _receiver_latches(node, frame))
        frame.numbering.settled = frame.numbering.fixed | frame.numbering.latched | frame.numbering.once(
            "assigned_once", lambda: assigned_once(_body_nodes(node, frame)))
        declared = _annotations(node, frame)
    frame.numbering.loop_bound = frame.numbering.once("loop_bound", lambda: loop_bound(
        _body_nodes(node, frame) if isinstance(node, cst.FunctionDef) else frame.numbering.once("nodes", lambda: own_nodes(node))))
    state = State()
    for framework in context.entered:  # the caller's `with s:` is the current stream here too
        state = state.with_current(framework, StreamRef.ambient(framework))
    if context.thread:  # a thread of its own starts on PyTorch's default stream too (the others' start there always)
        state = state.with_current("torch", StreamRef.legacy())
    entered = context
    context = frame.context = _told_by_a_test(node, frame, context)
    if frame.free_receiver:
        state = state.bind(frame.free_receiver, _receiver_value(context))
    cells = [key for key, _ in context.args if key.startswith(CELL)]  # a closure's cells: parameters too (D-21)
    seeded: dict = {}  # (the items the callers stored under keys written out in the objects they hand in)
    producer = _producer(params, context)
    keywords = node.params.star_kwarg.name.value \
        if isinstance(node, cst.FunctionDef) and isinstance(node.params.star_kwarg, cst.Param) else None
    for index, key in [*enumerate(cells, start=len(params)), *enumerate(params)]:
        value = _parameter_value(index, key, frame, context, declared.get(key))
        if key == keywords and value.kind is ValueKind.UNKNOWN:
            value = _extra_keywords(value, params, context)
        state = _made_before(state.bind(key.removeprefix(CELL), value), frame, value, producer, RootKind.PARAM)
        for path, item in _keyed_items(index, key, frame, context, value):
            state = state.store(path, item)
            seeded[path] = item
    named: dict[str, AbsValue] = {}  # (a caller's container whose items were only named here: no store of this call)
    for attr, value in context.receiver_state:
        value = value.mapped(_made_by_an_earlier_call(frame.qualname))
        if value.kind is ValueKind.CONTAINER and value.identity is not None and value.element is not None \
                and not value.positions:
            value = named[attr] = replace(value, element=_items_named(value.element, value.identity))
        state = state.store(Path(Root.self_()).attr(attr), value)
        state = _made_before(state, frame, value, StreamRef.ambient("torch"), RootKind.SELF)
    for pending in context.receiver_pending:
        state = state.with_order(state.order.add(pending))
    end = run_block(node.body if isinstance(node, cst.Module) else node.body.body, state, frame)
    if end.reachable:
        leave(end, frame)
    if frame.found.exit_state is not None:
        _release_locals(frame.found.exit_state, frame, node)
        _released_by_producers(frame.found.exit_state, frame, node)
    own = tuple(frame.found.effects)
    effects, truncated = bounded(own)
    summary = FunctionSummary(
        frame.qualname, signature(node) if isinstance(node, cst.FunctionDef) else (), effects,
        _returned(node, frame), _self_stores(frame.found.exit_state, context.receiver_state, named),
        tuple(sorted((param, tuple(sorted(tags))) for param, tags in frame.found.evidence.items())), bool(context.hot),
        tuple((f, s) for f, s in frame.found.yielded or () if s.kind is not StreamRefKind.AMBIENT),  # (streams it set)
        truncated, tuple(sorted((a, v) for a, v in frame.found.holder_stores.items() if v is not None)),
        _param_stores(frame), _param_keys(frame.found.exit_state, seeded),
    )
    earlier_calls = frozenset(context.receiver_pending)
    # (what another call left in flight meets this call's work only at the boundary placements)
    # (a host read of host memory another method's copy fills is placed here: the host waits for no stream)
    conflicts = [c for c in frame.found.conflicts if (c.earlier not in earlier_calls or _host_reads_copy(c))
                 and not _after_the_callers_work(c, frame.found.exit_state, producer, context)]
    return Walked(summary, tuple(conflicts), tuple(frame.found.handed_out),
                  misjoined(frame.found.exit_state, own, earlier_calls), left_on_self(frame.found.exit_state, own), own,
                  tuple(frame.found.untold), context != entered)


def _returned(node: "cst.FunctionDef | cst.Module", frame: Frame) -> AbsValue:
    """What a call returns: a generator function's call, a generator of what it yields (its body's work is taken to
    run where the generator is made, before its items are used); else the join of its returns."""
    returned = _returned_as_computed(node, frame)
    if returned.kind is not ValueKind.HOST_NUMBER and isinstance(node, cst.FunctionDef) \
            and annotations.returns_host_number(node, frame.imports):
        return AbsValue(ValueKind.HOST_NUMBER)  # (`-> int`: its signature says the host has the result)
    return returned


def _returned_as_computed(node: "cst.FunctionDef | cst.Module", frame: Frame) -> AbsValue:
    items = frame.found.items
    if items is None or not isinstance(node, cst.FunctionDef) or any(
            qualified(dotted(d.decorator) or "", frame.imports) in python_std.CONTEXT_MANAGER_DECORATORS
            for d in node.decorators):
        return frame.found.returned or UNKNOWN
    return AbsValue(ValueKind.CONTAINER, element=items)


def _unjoined(exit_state: State, effects: tuple[Effect, ...] = (), earlier_calls: frozenset = frozenset()):
    """Side-stream writes pending at the end that the entry's current stream does not follow."""
    for pending in exit_state.order.pending:
        access = pending.access
        if not access.write or access.assumed or access.untold or pending.done or access.stream == HOST:
            continue
        current = StreamRef.ambient(access.stream.framework or "torch")
        if not access.stream.distinct_from(current):
            continue
        if not pending.ordered_before(current) or (effects and _only_through_default(effects, access, current,
                                                                                        access in earlier_calls)):
            yield access, current


def _only_through_default(effects: tuple[Effect, ...], access: AccessEvent, current: StreamRef,
                          before_entry: bool) -> bool:
    made = _made_at(effects, access, before_entry)
    if made is None or current.framework != "torch":
        return False
    after = effects[made + 1:]
    joined = any(e.kind is EffectKind.WAIT_STREAM and e.stream.kind is StreamRefKind.LEGACY and e.other == access.stream
                 for e in after)
    own = any(e.kind in (EffectKind.WAIT_STREAM, EffectKind.WAIT_EVENT) and e.stream == current for e in after)
    return joined and not own


def _made_at(effects: tuple[Effect, ...], access: AccessEvent, before_entry: bool) -> Optional[int]:
    """Where in `effects` the access was made (-1: before the call)."""
    if before_entry:
        return -1
    return next((i for i, e in enumerate(effects) if e.kind is EffectKind.ACCESS and e.write and e.path == access.path
                 and e.stream in (access.stream, access.either)), None)  # (on one of two streams: D-14)


def _host_reads_copy(conflict) -> bool:
    return conflict.later.stream == HOST and not conflict.later.write and conflict.earlier.host_memory


def left_on_self(exit_state: Optional[State], effects: tuple[Effect, ...] = ()) -> tuple[AccessEvent, ...]:
    """Writes on `self` a method leaves in flight on a side stream the caller's current stream does not follow, and
    copies from the device into host memory the host has not waited for (on any stream: the host follows none)."""
    if exit_state is None:
        return ()
    kept = exit_state.kept_on_self()
    found = []
    copies_back = {e.site for e in effects if e.kind is EffectKind.OPERATION and e.operation.op == OpKind.COPY_D2H.value}
    into_host = [p.access for p in exit_state.order.pending if p.access.write and p.access.host_memory
                 and not p.done and p.access.stream != HOST and p.access.site in copies_back]
    for access in dict.fromkeys([a for a, _ in _unjoined(exit_state)] + into_host):
        path = access.path
        if path.root.kind is not RootKind.SELF:
            held = kept.get(Path(path.root))
            path = Path(held.root, held.steps + path.steps) if held is not None else path
        stream = access.stream  # (named the same way by the object's other methods: made, or held on `self`)
        named = stream.context_free or (stream.kind is StreamRefKind.PATH and stream.path is not None
                                        and stream.path.root.kind in (RootKind.SELF, RootKind.FRESH))
        if path.root.kind is RootKind.SELF and (named or access in into_host):
            found.append(replace(access, path=path))
    return tuple(found)


def misjoined(exit_state: Optional[State], effects: tuple[Effect, ...], earlier_calls: frozenset = frozenset()) -> tuple:
    """Side-stream work left unjoined although a wait for another stream was made: the wrong join."""
    if exit_state is None:
        return ()
    found = []
    for access, current in _unjoined(exit_state, effects, earlier_calls):
        join = _join_after(effects, access, current, access in earlier_calls)
        if join is not None:
            caller = AccessEvent(access.path, False, current, join[0])
            found.append((Conflict(ConflictKind.READ_AFTER_WRITE, access, caller), *join))
    return tuple(found)


def _join_after(effects: tuple[Effect, ...], access: AccessEvent, current: StreamRef,
                before_entry: bool) -> Optional[tuple[str, StreamRef, StreamRef]]:
    """The first wait after `access` by `current` (or the default stream) for another stream."""
    made = _made_at(effects, access, before_entry)
    if made is None:
        return None
    recorded = {e.path: e.stream for e in effects[:made + 1] if e.kind is EffectKind.RECORD_EVENT}
    for index in range(made + 1, len(effects)):
        effect = effects[index]
        if effect.kind is EffectKind.RECORD_EVENT:
            recorded[effect.path] = effect.stream
        if effect.kind not in (EffectKind.WAIT_STREAM, EffectKind.WAIT_EVENT):
            continue
        waited = effect.other if effect.kind is EffectKind.WAIT_STREAM else recorded.get(effect.path)
        if waited is None or not waited.known:
            continue
        # (unless the function queues work on that stream later: then the wait is the join that work needs)
        into_default = effect.stream.kind is StreamRefKind.LEGACY and current.framework == "torch" \
            and not any(e.kind is EffectKind.ACCESS and e.stream == effect.stream for e in effects[index + 1:])
        if (effect.stream == current and waited != access.stream) or (into_default and waited == access.stream):
            return effect.site, effect.stream, waited
    return None


def _after_the_callers_work(conflict: Conflict, exit_state: Optional[State], work: StreamRef,
                            context: CallContext) -> bool:
    """A use of the callers' memory ordered after their work: a blocking stream of a legacy-by-default framework waits
    for it (CUDA's implicit sync), or the function orders it with the work stream they hand in, both ways."""
    later = conflict.later.stream
    if not conflict.earlier.assumed:
        return False
    if later.blocking and later.framework in LEGACY_BY_DEFAULT and later.framework not in context.entered \
            and (later.kind is StreamRefKind.CREATED or (later.kind is StreamRefKind.PATH and later.fresh)):
        return True
    if work.kind is not StreamRefKind.PATH or exit_state is None or conflict.earlier.stream != work:
        return False
    pending = [p for p in exit_state.order.pending if p.access == conflict.later]
    return bool(pending) and all(p.ordered_before(work) for p in pending)


def signature(node: cst.FunctionDef) -> tuple[str, ...]:
    """The parameters as a call binds them (FunctionSummary.params): `*args` or a bare "*" ends the positional ones."""
    p = node.params
    star = f"*{p.star_arg.name.value}" if isinstance(p.star_arg, cst.Param) else "*" if p.kwonly_params else ""
    names = [x.name.value for x in (*p.posonly_params, *p.params)] + ([star] if star else [])
    names += [x.name.value for x in p.kwonly_params]
    return tuple(names) + ((f"**{p.star_kwarg.name.value}",) if p.star_kwarg is not None else ())


def _receiver_latches(node: cst.FunctionDef, frame: Frame) -> frozenset[str]:
    """The latches of the method's class, as its body spells them (`self.is_initialized`)."""
    params = (*node.params.posonly_params, *node.params.params)
    if frame.program is None or not params:
        return frozenset()
    return frozenset(f"{params[0].name.value}.{attr}" for attr in frame.program.latches(frame.qualname))


def _parameters(node: cst.FunctionDef) -> tuple[str, ...]:
    """The parameters' names, in the order a call binds them."""
    return tuple(name.lstrip("*") for name in signature(node) if name != "*")


def _annotations(node: cst.FunctionDef, frame: Frame) -> dict[str, AbsValue]:
    p = node.params
    found = {}
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        passed = frame.context.arg(param.name.value) is not None  # (the caller's value, not the default)
        value = annotated(param, frame.imports) or (None if passed else defaulted(param, frame.imports))
        if value is not None:
            found[param.name.value] = value
    if frame.program is None:
        return found
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        cls = _annotated_class(param, frame) if param.name.value not in found else None
        if cls is not None:
            found[param.name.value] = AbsValue(ValueKind.OBJECT, target=cls)  # `trainer: Trainer`
    for name, methods in _parameter_uses(node, frame)[0].items():
        cls = frame.program.class_defining(frame.module, methods) if len(methods) >= MIN_METHODS else None
        if cls is None and not methods & FRAMEWORK_METHODS:  # the one hierarchy whose classes define them
            cls = frame.program.hierarchy_of(frame.module, methods)
        if cls is not None and name not in found:
            found[name] = AbsValue(ValueKind.OBJECT, target=cls)  # only that class has those methods
    return found


def _annotated_class(param: cst.Param, frame: Frame) -> Optional[str]:
    """The project class a parameter's annotation names (`trainer: Trainer`, `"Trainer"` not read), or None."""
    name = dotted(param.annotation.annotation) if param.annotation is not None else None
    if name is None:
        return None
    cls = qualified(name, frame.imports) or f"{frame.module}.{name}"
    # (an enumeration's members are constants: an argument of one kept on `self` is configuration, an option)
    return cls if frame.program.is_class(cls) and not frame.program.is_enumeration(cls) else None


# Methods called on a parameter that tell its class: a unique project class defining them all.
MIN_METHODS = 2


def _body_nodes(node: cst.FunctionDef, frame: Frame) -> list[cst.CSTNode]:
    """The function's own nodes under its body (read once per function)."""
    def read() -> list[cst.CSTNode]:
        nodes = frame.numbering.once("nodes", lambda: own_nodes(node))
        start = next(i for i, n in enumerate(nodes) if n is node.body)
        parts = {id(part) for part in child_nodes(node)}
        end = next((i for i in range(start + 1, len(nodes)) if id(nodes[i]) in parts), len(nodes))
        return nodes[start:end]
    return frame.numbering.once("body", read)


def _told_by_a_test(node: "cst.FunctionDef | cst.Module", frame: Frame, context: CallContext) -> CallContext:
    """A lone parameter tested against a named stream is the work stream the callers hand in (D-14)."""
    if context.work_stream or not isinstance(node, cst.FunctionDef):
        return context
    tested = sorted(name for name in _parameter_uses(node, frame)[1] if context.arg(name) is None)
    if len(tested) != 1:
        return context
    args = tuple(sorted((*context.args, (tested[0], AbsValue(ValueKind.STREAM, cupy_api.F))), key=lambda a: a[0]))
    return replace(context, args=args, work_stream=tested[0])


def _parameter_uses(node: cst.FunctionDef, frame: Frame) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """Once per function: the methods called on each named parameter, and the parameters compared with a stream
    the framework names (`if stream != cupy.cuda.Stream.null:`)."""
    def read() -> tuple[dict[str, frozenset[str]], frozenset[str]]:
        p = node.params
        named = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)} - {"self", "cls"}
        params = set(_parameters(node)) - {"self", "cls"}
        methods: dict[str, set[str]] = {}
        compared = set()
        for n in _body_nodes(node, frame):
            if type(n) is cst.Call and isinstance(n.func, cst.Attribute) and isinstance(n.func.value, cst.Name) \
                    and n.func.value.value in named:
                methods.setdefault(n.func.value.value, set()).add(n.func.attr.value)
            elif type(n) is cst.Comparison and isinstance(n.left, cst.Name) and n.left.value in params \
                    and any(qualified(dotted(c.comparator) or "", frame.imports) in cupy_api.STREAM_CONSTANTS
                            for c in n.comparisons):
                compared.add(n.left.value)
        return {name: frozenset(m) for name, m in methods.items()}, frozenset(compared)
    return frame.numbering.once("uses", read)


def _work_stream(index: int, name: str, framework: str) -> StreamRef:
    """The stream the callers hand in for the work, at its parameter: a side stream of theirs."""
    return StreamRef(StreamRefKind.PATH, framework, Path(Root.param(index, name)), "", False, True)


def _producer(params: tuple[str, ...], context: CallContext) -> StreamRef:
    """Where the callers made the memory they pass: their current stream, or the work stream they hand in."""
    if context.work_stream not in params:
        return StreamRef.ambient("torch")
    given = context.arg(context.work_stream)
    return _work_stream(params.index(context.work_stream), context.work_stream, given.framework if given else "")


def _made_before(state: State, frame: Frame, value: AbsValue, producer: StreamRef, root: RootKind) -> State:
    """What a parameter or `self` holds was made on the caller's stream: an entry assumption."""
    identity = value.identity
    if identity is None or identity.root.kind is not root:
        return state
    if root is RootKind.SELF and value.kind is not ValueKind.UNKNOWN and not (value.is_buffer and value.stream is None):
        return state  # (what the walk knows the producer of, it orders by that)
    if root is RootKind.SELF and value.kind is ValueKind.UNKNOWN and value.stream is not None:
        producer = value.stream  # (kept under a stream the code chose: made there if a tensor)
    made = AccessEvent(identity, True, producer, f"{frame.qualname}#entry", assumed=True)
    return state.with_order(state.order.add(made))


def _parameter_value(index: int, name: str, frame: Frame, context: CallContext,
                     declared: Optional[AbsValue]) -> AbsValue:
    own_receiver = bool(frame.class_name) and not frame.free_receiver
    if own_receiver and index == 0:
        return _receiver_value(context)
    given = context.arg(name) or context.arg(str(index - int(own_receiver)))  # (by name, else by position)
    identity = Path(Root.param(index, name))
    given = given if given is not None and given.kind is not ValueKind.UNKNOWN else declared
    if given is None:
        return AbsValue(identity=identity)
    stream = given.stream if given.kind is ValueKind.STREAM else None
    if given.kind is ValueKind.STREAM and (given.stream is None or given.stream == SIDE_STREAM_FACT):
        stream = _work_stream(index, name, given.framework) if context.work_stream == name \
            else replace(StreamRef.at(identity), fresh=True) if given.stream == SIDE_STREAM_FACT else StreamRef.at(identity)
    element = given.element  # (a stream in a container the caller passes: named by its place in the parameter)
    if element is not None and element.kind is ValueKind.STREAM and element.stream is None:
        element = replace(element, stream=StreamRef.at(identity.element(Index.any_())))
    element = _items_named(element, identity) if not given.positions else element
    value = AbsValue(given.kind, given.framework, given.memory, identity, stream, given.may_be_none, element,
                     given.target, loader_batch=given.loader_batch)
    if given.kind is ValueKind.CONTAINER and given.positions and not given.keys:
        return replace(value, positions=_items_at(given.positions, identity))
    carried = given.kind in (ValueKind.CALLABLE, ValueKind.OBJECT)  # (a closure's cells, an object's fields)
    return replace(value, positions=given.positions, keys=given.keys) if carried else value


def _items_named(element: Optional[AbsValue], container: Path) -> Optional[AbsValue]:
    """Tensors a caller's container holds, named by their place in it (`for p in params: p.grad`): memory the body
    reaches through them, not values of no identity."""
    if element is None or not element.is_buffer or element.identity is not None:
        return element
    return replace(element, identity=container.element(Index.any_()))


def _extra_keywords(value: AbsValue, params: tuple[str, ...], context: CallContext) -> AbsValue:
    """`**kwargs`: a dict of the keywords the callers give that no named parameter takes, with the items of a dict they
    unpack whose keys the text does not show. Its items are iterated one by one, so where some are tensors, what the
    body does to an item is done to them (a number among them takes no GPU work)."""
    given = [v for key, v in context.args if not key.isdigit() and key not in params and not key.startswith(CELL)]
    tensors = [v for v in given if v.kind is not ValueKind.HOST_NUMBER]
    if not given or not tensors:
        return value
    return AbsValue(ValueKind.CONTAINER, identity=value.identity, element=reduce(AbsValue.join, tensors))


def _items_at(items: tuple[AbsValue, ...], identity: Path) -> tuple[AbsValue, ...]:
    """The items of a tuple the callers hand in (`*args`), each named by its place in the parameter."""
    found = []
    for i, item in enumerate(items):
        at = identity.element(Index.const_(i))
        stream = StreamRef.at(at) if item.kind is ValueKind.STREAM and (item.stream is None or item.stream == SIDE_STREAM_FACT) \
            else item.stream
        found.append(replace(item, identity=at, stream=stream))
    return tuple(found)


def _made_by_an_earlier_call(qualname: str):
    """The receiver state holds what earlier calls of this method stored (the class's composition joins every method's
    stores, its own too): memory its own call sites allocated there is an earlier call's, not what this call will
    allocate at those sites, as a loop's back edge ages the body's allocations."""
    own = qualname + "#"

    def aged(path: Path) -> Path:
        root = path.root
        if root.kind is not RootKind.FRESH or root.age or not any(site.startswith(own) for site in root.site.split("|")):
            return path
        return Path(replace(root, age=1), path.steps)
    return aged


def _receiver_value(context: CallContext) -> AbsValue:
    receiver = context.receiver or AbsValue()
    return AbsValue(receiver.kind, receiver.framework, receiver.memory, Path(Root.self_()), target=receiver.target)


def _param_stores(frame: Frame) -> tuple[tuple[str, AbsValue], ...]:
    """The items the function put in containers its parameters are (`out.append(t)`, `q.put(t)`), per parameter."""
    if frame.found.exit_state is None:
        return ()
    return tuple(sorted(frame.found.param_items.items()))


def _param_keys(exit_state: Optional[State], seeded: dict) -> tuple:
    """What it stored under keys written out in objects its parameters are (`batch["img"] = batch["img"].cuda()`):
    the caller's object holds it there after the call, as a store in the caller's own body would leave it."""
    if exit_state is None:
        return ()
    return tuple(sorted(((path.root.name, path.steps[0].const, value) for path, value in exit_state.heap
                         if path.root.kind is RootKind.PARAM and len(path.steps) == 1
                         and isinstance(path.steps[0], Index) and path.steps[0].kind is IndexKind.CONST
                         and (value.kind is not ValueKind.UNKNOWN or value.either) and seeded.get(path) != value),
                        key=lambda item: (item[0], str(item[1]))))


def _keyed_items(index: int, name: str, frame: Frame, context: CallContext, value: AbsValue):
    """The items the callers stored under keys written out in the object they hand in (`batch["img"] = img.cuda()`,
    then `model(batch)`): stored at the parameter's keys, as the callers' stores left them."""
    if value.identity is None or value.kind in (ValueKind.CALLABLE, ValueKind.OBJECT):
        return ()
    given = context.arg(name) or context.arg(str(index - int(bool(frame.class_name) and not frame.free_receiver)))
    if given is None or not given.keys or len(given.keys) != len(given.positions):
        return ()
    items = tuple((value.identity.element(Index.const_(key)), replace(item, identity=value.identity.element(
        Index.const_(key))) if item.is_buffer and item.identity is None else item)
        for key, item in zip(given.keys, given.positions))
    # (and the weak slot, as the callers' stores left it: a read under a key not written out finds them)
    return items + ((value.identity.element(Index.any_()), reduce(AbsValue.join, (item for _, item in items))),)


def _self_stores(exit_state: Optional[State], entry: tuple, named: Optional[dict] = None) -> tuple[tuple[str, AbsValue], ...]:
    """What `self.<attr>` holds when the function returns, for each attribute it changed."""
    if exit_state is None:
        return ()
    found, before = {}, dict(entry)
    for path, value in exit_state.heap:
        if path.root.kind is RootKind.SELF and len(path.steps) == 1 and isinstance(path.steps[0], str):
            entry_value = before.get(path.steps[0])
            value = exit_state.with_items(value)  # (a container's items stored under keys not told)
            value = exit_state.items_told(path, value)
            # (what it held on entry, only known better now: a use showed it a host number)
            refined = (entry_value is None or entry_value.kind is ValueKind.UNKNOWN) \
                and value.kind is ValueKind.HOST_NUMBER and value.identity == path
            if entry_value != value and not refined and (named or {}).get(path.steps[0]) != value:
                found[path.steps[0]] = value
    for path, value in exit_state.heap:
        attr = path.steps[0] if path.root.kind is RootKind.SELF and len(path.steps) == 2 else None
        # (items put in a container kept there, or memory an object kept there keeps: `_kept_by`)
        if isinstance(attr, str) and path.steps[1] in (Index.any_(), Index.items()) and attr not in found and attr not in before \
                and Path(path.root, (attr,)) not in exit_state.heap and (value.kind is not ValueKind.UNKNOWN or value.either):
            if path.steps[1] == Index.items() and value.kind is ValueKind.CONTAINER and value.element is not None:
                value = value.element  # (the slot of what an object keeps holds them as a container's items)
            found[attr] = AbsValue(identity=Path(path.root, (attr,)), element=value, target=ITEMS_ONLY)
    return tuple(sorted(found.items(), key=lambda item: item[0]))


def _release_locals(exit_state: State, frame: Frame, node: cst.CSTNode) -> None:
    """At return, memory only the function's names held goes back to the allocator."""
    returned = frame.found.returned or UNKNOWN
    # (a generator's consumer holds every item it was given, of any iteration: its memory is not released here)
    yielded = _sites_held(frame.found.items) if frame.found.items is not None else set()
    state = exit_state
    for name, value in exit_state.names:
        kept = value.identity is not None and (returned.identity == value.identity or value.identity in returned.members
                                                or (returned.element is not None and returned.element.identity == value.identity)
                                                or _site_of(value.identity) in yielded)
        if not kept:
            state = release_if_dropped(value, state.bind(name, UNKNOWN), frame, node)


def _sites_held(value: AbsValue) -> set:
    """The allocations a value is or holds (a tuple's items, a container's members), whatever the iteration."""
    found = {_site_of(value.identity)} | {_site_of(member) for member in value.members}
    for part in (*value.positions, *value.either, *((value.element,) if value.element is not None else ())):
        found |= _sites_held(part)
    return found - {None}


def _site_of(identity: Optional[Path]) -> Optional[Root]:
    """The allocation a path is, whatever the iteration (a loop's earlier allocations are aged): None for another."""
    if identity is None or identity.steps or identity.root.kind is not RootKind.FRESH:
        return None
    return replace(identity.root, age=0)


def _released_by_producers(exit_state: State, frame: Frame, node: cst.CSTNode) -> None:
    """A producer's tensor read here, released at its next store: a use elsewhere races it (D-16)."""
    site = frame.site(node)
    for path, value in frame.found.produced.items():
        for made in (value.stream.paths if value.stream is not None else ()):
            unlike = frame.found.unlike.get(made)
            if made.kind is StreamRefKind.PRODUCED and unlike:
                release = AccessEvent(path, True, replace(made, unlike=tuple(sorted(unlike, key=repr))), site)
                frame.report(exit_state.order.told(path).release(release)[1])

