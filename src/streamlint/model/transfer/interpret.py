"""One walk of one function under one calling context, to its summary and the conflicts it
finds on streams it knows itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from streamlint.model.domain.order import AccessEvent, Conflict
from streamlint.model.domain.paths import Path, Root
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef, StreamRefKind
from streamlint.model.domain.values import UNKNOWN, AbsValue, ValueKind
from streamlint.model.summary.function_summary import FunctionSummary, bounded
from streamlint.model.transfer.annotations import annotated
from streamlint.model.transfer.frame import CallContext, Frame
from streamlint.model.transfer.nodes import is_kind, preorder
from streamlint.model.domain.paths import RootKind
from streamlint.model.transfer.statements import leave, release_if_dropped, run_block

# Walks done so far, per (function, context): the guard-rail test asserts each is 1.
WALKS: dict[tuple[str, CallContext], int] = {}


@dataclass(frozen=True)
class Walked:
    summary: FunctionSummary
    conflicts: tuple[Conflict, ...]
    handed_out: tuple[Conflict, ...] = ()  # returned memory another stream may still write


# Nodes that can perform work, and so have a site: calls, operators, stores.
_NUMBERED = (cst.Call, cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Del, cst.BinaryOperation, cst.UnaryOperation,
             cst.Comparison, cst.Subscript, cst.Return)


_NESTED = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_IS_NUMBERED: dict[type, bool] = {}
_IS_NESTED: dict[type, bool] = {}


def call_ordinals(function: cst.CSTNode) -> dict[int, int]:
    """Each node that can perform work, numbered in a fixed order (nested functions apart)."""
    ordinals: dict[int, int] = {}
    for node in preorder(function, lambda n: not is_kind(n, _NESTED, _IS_NESTED)):
        if is_kind(node, _NUMBERED, _IS_NUMBERED):
            ordinals[id(node)] = len(ordinals)
    return ordinals


def walk_function(node: "cst.FunctionDef | cst.Module", frame: Frame, context: CallContext) -> Walked:
    """One walk of a function (or of a module's top level, a function without parameters)."""
    key = (frame.qualname, context)
    WALKS[key] = WALKS.get(key, 0) + 1
    if not frame.call_ordinals:
        frame.call_ordinals = call_ordinals(node)
    frame.chosen = context.chosen
    params = _parameters(node) if isinstance(node, cst.FunctionDef) else ()
    state = State()
    declared = _annotations(node, frame) if isinstance(node, cst.FunctionDef) else {}
    for index, name in enumerate(params):
        value = _parameter_value(index, name, frame, context, params, declared.get(name))
        state = state.bind(name, value)
        state = _made_by_the_caller(state, frame, value)
    for attr, value in context.receiver_state:
        state = state.store(Path(Root.self_()).attr(attr), value)
        state = _made_before_the_call(state, frame, value)
    if isinstance(node, cst.Module):
        body = node.body
    else:
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else node.body.body
    end = run_block(body, state, frame)
    if end.reachable:
        leave(end, frame)
    if frame.found.exit_state is not None:
        _release_locals(frame.found.exit_state, frame, node)
    effects, truncated = bounded(tuple(frame.found.effects))
    summary = FunctionSummary(
        frame.qualname, params, effects, frame.found.returned or UNKNOWN, _self_stores(frame.found.exit_state, context.receiver_state),
        tuple(sorted((param, tuple(sorted(tags))) for param, tags in frame.found.evidence.items())),
        context.hot, _entered(frame.found.yielded), truncated,
    )
    return Walked(summary, tuple(frame.found.conflicts), tuple(frame.found.handed_out))


def _parameters(node: cst.FunctionDef) -> tuple[str, ...]:
    p = node.params
    names = [x.name.value for x in (*p.posonly_params, *p.params)]
    if isinstance(p.star_arg, cst.Param):
        names.append(p.star_arg.name.value)
    names += [x.name.value for x in p.kwonly_params]
    if p.star_kwarg is not None:
        names.append(p.star_kwarg.name.value)
    return tuple(names)


def _annotations(node: cst.FunctionDef, frame: Frame) -> dict[str, AbsValue]:
    p = node.params
    found = {}
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        value = annotated(param, frame.imports)
        if value is not None:
            found[param.name.value] = value
    return found


def _made_by_the_caller(state: State, frame: Frame, value: AbsValue) -> State:
    """A parameter's memory was produced by the caller, on the caller's current stream (PyTorch's
    invariant): an assumption of the walk, not an effect of the function, so it is in the entry
    order only and never in the summary."""
    identity = value.identity
    if identity is None or identity.root.kind is not RootKind.PARAM:
        return state
    made = AccessEvent(identity, True, StreamRef.ambient("torch"), f"{frame.qualname}#entry", assumed=True)
    return state.with_order(state.order.add(made))


def _made_before_the_call(state: State, frame: Frame, value: AbsValue) -> State:
    """The object's tensors (`self.grad_data`) were made before this call, as a parameter was:
    on the caller's current stream (the same entry assumption, never an effect of the summary)."""
    identity = value.identity
    if identity is None or identity.root.kind is not RootKind.SELF:
        return state
    if not (value.kind is ValueKind.UNKNOWN or (value.is_buffer and value.framework in ("torch", ""))):
        return state
    made = AccessEvent(identity, True, StreamRef.ambient("torch"), f"{frame.qualname}#entry", assumed=True)
    return state.with_order(state.order.add(made))


def _parameter_value(index: int, name: str, frame: Frame, context: CallContext, params: tuple[str, ...],
                     declared: Optional[AbsValue] = None) -> AbsValue:
    if frame.class_name and index == 0:
        receiver = context.receiver or AbsValue()
        return AbsValue(receiver.kind, receiver.framework, receiver.memory, Path(Root.self_()), None,
                        False, None, receiver.target)
    given: Optional[AbsValue] = context.arg(name)
    if given is None:
        position = index - (1 if frame.class_name else 0)
        given = context.arg(str(position))
    identity = Path(Root.param(index, name))
    given = given if given is not None and given.kind is not ValueKind.UNKNOWN else declared
    if given is None:
        return AbsValue(identity=identity)
    stream = given.stream if given.kind is ValueKind.STREAM else None
    if given.kind is ValueKind.STREAM and given.stream is None:
        stream = StreamRef.at(identity)
    return AbsValue(given.kind, given.framework, given.memory, identity, stream, given.may_be_none, given.element, given.target)


def _self_stores(exit_state: Optional[State], entry: tuple) -> tuple[tuple[str, AbsValue], ...]:
    """What `self.<attr>` holds when the function returns, for each attribute it changed."""
    if exit_state is None:
        return ()
    found, before = [], dict(entry)
    for path, value in exit_state.heap:
        if path.root.kind is RootKind.SELF and len(path.steps) == 1 and isinstance(path.steps[0], str):
            if before.get(path.steps[0]) != value:
                found.append((path.steps[0], value))
    return tuple(sorted(found, key=lambda item: item[0]))


def _release_locals(exit_state: State, frame: Frame, node: cst.CSTNode) -> None:
    """At return, memory only the function's names held goes back to the allocator."""
    returned = frame.found.returned or UNKNOWN
    state = exit_state
    for name, value in exit_state.names:
        kept = value.identity is not None and (returned.identity == value.identity or value.identity in returned.members
                                                or (returned.element is not None and returned.element.identity == value.identity))
        if not kept:
            state = release_if_dropped(value, state.bind(name, UNKNOWN), frame, node)


def _entered(yielded: Optional[tuple]) -> tuple:
    """The streams a generator makes current where it yields (the ones it changed)."""
    if not yielded:
        return ()
    return tuple((framework, stream) for framework, stream in yielded if stream.kind is not StreamRefKind.AMBIENT)
