"""Tensors a stage leaves on a shared holder together (`node.state.a`, `node.state.b`).

A function that records one of them on its current stream
(`node.state.a.record_stream(torch.cuda.current_stream())`) says, in its own text, that
the tensors one producer leaves on that holder were made on another stream: `record_stream`
on the current stream does something only for memory of another stream. Every tensor the
same producer left on the same holder, in the same way and on the same stream, comes from
there too; one this function uses on its current stream without recording it can have its
block handed to new work on the producer's stream when the holder is rebound (the
producer's next run) while this stream still reads it.

This module reads the text only: which holder attributes a function records
(`recorded_holder_attrs`) and, for the module, which attributes each function assigns to
each holder (`HolderAssigns`). The walk binds the reads (`flow.Walker.peer_value`) and
the ordering check reports (`ordering.OrderingMixin.peer_releases`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from streamlint.model.api import torch_api

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
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        base = dotted(expr.value)
        return None if base is None else f"{base}.{expr.attr.value}"
    return None


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


class _Own(cst.CSTVisitor):
    """Visits a function's own body, not the functions and classes it defines."""

    def __init__(self, root: cst.CSTNode) -> None:
        self.root = root

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.root

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def _read_holder_attr(expr: cst.BaseExpression) -> Optional[tuple[str, str]]:
    """`node.state.a` or `getattr(node.state, "a"[, default])`: (holder, attribute)."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "getattr" \
            and len(expr.args) in (2, 3) and isinstance(expr.args[1].value, cst.SimpleString):
        holder = dotted(expr.args[0].value)
        attr = expr.args[1].value.evaluated_value
        if holder is None or not isinstance(attr, str):
            return None
        expr = cst.Attribute(value=expr.args[0].value, attr=cst.Name(attr)) if attr.isidentifier() else expr
    return _holder_attr(expr)


def recorded_holder_attrs(function: cst.FunctionDef) -> list[tuple[str, str, cst.Call]]:
    """The holder attributes the function's own body calls `record_stream` on, with one
    argument, directly or through a local bound once to the attribute
    (`r = node.state.a` ... `r.record_stream(s)`): (holder, attribute, call)."""
    found: list[tuple[str, str, cst.Call]] = []
    aliases: dict[str, Optional[tuple[str, str]]] = {}
    records: list[cst.Call] = []

    class Finder(_Own):
        def visit_Assign(self, stmt: cst.Assign) -> None:
            for target in stmt.targets:
                if isinstance(target.target, cst.Name):
                    name = target.target.value
                    # (bound twice: not one attribute's alias)
                    aliases[name] = _read_holder_attr(stmt.value) if name not in aliases else None

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == RECORD_METHOD and len(node.args) == 1:
                records.append(node)

    function.visit(Finder(function))
    for node in records:
        receiver = node.func.value  # type: ignore[attr-defined]
        pair = aliases.get(receiver.value) if isinstance(receiver, cst.Name) else _holder_attr(receiver)
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
        owners, scope_of = self.by_function, self.scope_of
        scopes: list[int] = [id(module)]

        class Functions(cst.CSTVisitor):
            def visit_ClassDef(self, node: cst.ClassDef) -> None:
                scopes.append(id(node))

            def leave_ClassDef(self, node: cst.ClassDef) -> None:
                scopes.pop()

            def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
                scopes.pop()

            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                scope_of[id(node)] = scopes[-1]
                scopes.append(id(node))
                assigns: dict[str, dict[str, tuple]] = {}
                switches = [False]

                class Body(_Own):
                    def visit_Assign(self, stmt: cst.Assign) -> None:
                        if not isinstance(stmt.value, _MADE):
                            return
                        for target in stmt.targets:
                            pair = _holder_attr(target.target)
                            if pair is not None:
                                assigns.setdefault(pair[0], {}).setdefault(pair[1], (target.target, stmt.value))

                    def visit_WithItem(self, item: cst.WithItem) -> None:
                        if _switches_stream(item):
                            switches[0] = True

                node.visit(Body(node))
                if assigns and not switches[0]:
                    owners[id(node)] = (node.name.value, scope_of[id(node)], assigns)

        module.visit(Functions())

    def peers(self, function: cst.FunctionDef) -> dict[str, Peer]:
        """The holder attributes `function` should take as made on another stream: those
        another function of the same scope (a builder's stages, a class's methods, the
        module's functions) assigned together with one `function` records."""
        found: dict[str, Peer] = {}
        scope = self.scope_of.get(id(function))
        for holder, attr, call in recorded_holder_attrs(function):
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
