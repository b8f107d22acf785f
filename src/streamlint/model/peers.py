"""Tensors a stage leaves on a shared holder together (`node.state.a`, `node.state.b`).

A function that records one of them on the stream it uses them on
(`node.state.a.record_stream(torch.cuda.current_stream())`) says, in its own text, that
the tensors one producer leaves on that holder were made on another stream: `record_stream`
on the current stream does something only for memory of another stream. Every tensor the
same producer left on the same holder, in the same way and on the same stream, comes from
there too; one this function uses on its current stream without recording it can have its
block handed to new work on the producer's stream when the holder is rebound (the
producer's next run) while this stream still reads it.

This module reads the text only: which holder attributes a function records
(`recorded_holder_attrs`) and, for the module, which attributes each function assigns to
each holder (`HolderAssigns`). The walk binds the reads (`flow.Walker.seed_peers`) and
the ordering check reports (`ordering.OrderingMixin.peer_releases`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from streamlint.model.api import torch_api
from streamlint.model.walk_common import dotted_name

RECORD_METHOD = "record_stream"


@dataclass(frozen=True)
class Peer:
    """A holder attribute the walk takes as a tensor made on the producer's stream."""

    path: str  # `node.layer_state.shared_output`
    anchor: str  # `node.layer_state.residual`: the one the function records
    record: cst.Call  # the anchor's `record_stream(...)` call
    made: cst.CSTNode  # the producer's assignment of `path`
    producer: str  # the producer's name


def dotted(expr: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` as text, when the expression is only names and attributes."""
    return dotted_name(expr) or None


def _holder_attr(expr: cst.BaseExpression) -> Optional[tuple[str, str]]:
    """(`node.layer_state`, `residual`) of `node.layer_state.residual`: an attribute of an
    object other than `self` itself (whose state the class composition follows) and not a
    tensor's own attribute (`p.grad`, `p.data`)."""
    if not isinstance(expr, cst.Attribute):
        return None
    holder = dotted(expr.value)
    attr = expr.attr.value
    if holder is None or holder == "self" or attr in torch_api.TENSOR_ATTRIBUTES:
        return None
    if holder.rsplit(".", 1)[-1] in torch_api.TENSOR_ATTRIBUTES:
        return None
    return holder, attr


def _statements(body: cst.BaseSuite) -> Iterator[cst.CSTNode]:
    """The statements of a body in order, compound ones and those they hold, not the
    bodies of the functions and classes it defines (statements only: no expression walk)."""
    if isinstance(body, cst.IndentedBlock):
        yield from _flatten(body.body)


def _flatten(stmts) -> Iterator[cst.CSTNode]:
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine)):
            continue
        if isinstance(stmt, cst.If):
            yield from _statements(stmt.body)
            orelse = stmt.orelse
            while isinstance(orelse, cst.If):  # `elif`
                yield orelse
                yield from _statements(orelse.body)
                orelse = orelse.orelse
            if isinstance(orelse, cst.Else):
                yield from _statements(orelse.body)
            continue
        body = getattr(stmt, "body", None)
        if isinstance(body, cst.BaseSuite):
            yield from _statements(body)
        for handler in getattr(stmt, "handlers", ()):
            yield from _statements(handler.body)
        for part in (getattr(stmt, "orelse", None), getattr(stmt, "finalbody", None)):
            if isinstance(part, (cst.Else, cst.Finally)):
                yield from _statements(part.body)


def _assigns(body: cst.BaseSuite) -> Iterator[cst.Assign]:
    for stmt in _statements(body):
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    yield small


def _read_holder_attr(expr: cst.BaseExpression) -> Optional[tuple[str, str]]:
    """`node.state.a` or `getattr(node.state, "a"[, default])`: (holder, attribute)."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "getattr" \
            and len(expr.args) in (2, 3) and isinstance(expr.args[1].value, cst.SimpleString):
        holder = dotted(expr.args[0].value)
        attr = expr.args[1].value.evaluated_value
        if holder is None or not isinstance(attr, str) or not attr.isidentifier():
            return None
        if holder == "self" or attr in torch_api.TENSOR_ATTRIBUTES:
            return None
        return holder, attr
    return _holder_attr(expr)


def recorded_holder_attrs(function: cst.FunctionDef, records: list[cst.Call]) -> list[tuple[str, str, cst.Call]]:
    """Of the function's own `x.record_stream(s)` calls (`records`, from its walk), those on
    a holder attribute, directly or through a local bound once to the attribute
    (`r = node.state.a` ... `r.record_stream(s)`): (holder, attribute, call)."""
    found: list[tuple[str, str, cst.Call]] = []
    aliases: Optional[dict[str, Optional[tuple[str, str]]]] = None
    for node in records:
        if not (isinstance(node.func, cst.Attribute) and node.func.attr.value == RECORD_METHOD and len(node.args) == 1):
            continue
        receiver = node.func.value
        if isinstance(receiver, cst.Name):
            if aliases is None:
                aliases = {}
                for stmt in _assigns(function.body):
                    for target in stmt.targets:
                        if isinstance(target.target, cst.Name):
                            name = target.target.value
                            # (bound twice: not one attribute's alias)
                            aliases[name] = _read_holder_attr(stmt.value) if name not in aliases else None
            pair = aliases.get(receiver.value)
        else:
            pair = _holder_attr(receiver)
        if pair is not None:
            found.append((pair[0], pair[1], node))
    return found


# What a producer assigns that can be a tensor it made: a call's result, a name, an
# attribute, an element, arithmetic. Constants, containers and `None` are not.
_MADE = (cst.Call, cst.Name, cst.Attribute, cst.Subscript, cst.BinaryOperation)


def _made_alike(value: cst.BaseExpression, like: cst.BaseExpression) -> bool:
    """Whether the producer made `value` as a tensor the way it made the recorded one:
    by the same callable (`node.detach(a)`, `node.detach(b)`), or by a PyTorch function or
    a tensor method that returns a tensor (`torch.softmax(x)`, `x.detach()`)."""
    if not isinstance(value, cst.Call):
        return False
    func = dotted(value.func)
    if func is not None and isinstance(like, cst.Call) and func == dotted(like.func) and "." in func:
        return True
    if func is not None and func.startswith("torch.") and func.count(".") == 1:
        return func[6:] not in torch_api.NON_TENSOR_FUNCTIONS
    return isinstance(value.func, cst.Attribute) and value.func.attr.value in torch_api.TENSOR_PRESERVING


def _switches_stream(item: cst.WithItem) -> bool:
    """A `with` item that may make another stream current (`torch.cuda.stream(s)`,
    `self._stream_context(s)`): the producer's tensors may then come from two streams."""
    call = item.item
    if not isinstance(call, cst.Call):
        return False
    name = dotted(call.func) or ""
    return "stream" in name.rsplit(".", 1)[-1].lower()


class HolderAssigns:
    """For one module: per function (by id), the holder attributes its own body assigns
    what it made (`node.layer_state.residual = node.detach(h)`), in a body that does not
    switch streams. Built once per module, when a function first asks."""

    def __init__(self, module: cst.Module) -> None:
        # function id -> (its name, the id of the scope that defines it,
        #                 holder -> attr -> (assigned target, assigned value))
        self.by_function: dict[int, tuple[str, int, dict[str, dict[str, tuple]]]] = {}
        self.scope_of: dict[int, int] = {}  # function id -> the id of the scope that defines it
        self._scan(_flatten(module.body), id(module))

    def _scan(self, stmts: Iterator[cst.CSTNode], scope: int) -> None:
        for stmt in stmts:
            if isinstance(stmt, cst.ClassDef):
                self._scan(_statements(stmt.body), id(stmt))
            elif isinstance(stmt, cst.FunctionDef):
                self.scope_of[id(stmt)] = scope
                self._function(stmt, scope)
                self._scan(_statements(stmt.body), id(stmt))

    def _function(self, node: cst.FunctionDef, scope: int) -> None:
        assigns: dict[str, dict[str, tuple]] = {}
        for stmt in _statements(node.body):
            if isinstance(stmt, cst.With) and any(_switches_stream(item) for item in stmt.items):
                return
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and isinstance(small.value, _MADE):
                        for target in small.targets:
                            pair = _holder_attr(target.target)
                            if pair is not None:
                                assigns.setdefault(pair[0], {}).setdefault(pair[1], (target.target, small.value))
        if assigns:
            self.by_function[id(node)] = (node.name.value, scope, assigns)

    def peers(self, function: cst.FunctionDef, records: list[cst.Call]) -> dict[str, Peer]:
        """The holder attributes `function` should take as made on another stream: those
        another function of the same scope (a builder's stages, a class's methods, the
        module's functions) assigned together with one `function` records."""
        found: dict[str, Peer] = {}
        scope = self.scope_of.get(id(function))
        for holder, attr, call in recorded_holder_attrs(function, records):
            for owner, (producer, where, assigns) in self.by_function.items():
                if owner == id(function) or where != scope:
                    continue
                made = assigns.get(holder, {})
                if attr not in made or len(made) < 2:
                    continue
                anchor = f"{holder}.{attr}"
                like = made[attr][1]
                for other, (node, value) in made.items():
                    if other == attr or _made_alike(value, like):
                        path = f"{holder}.{other}"
                        found.setdefault(path, Peer(path, anchor, call, node, producer))
        return found
