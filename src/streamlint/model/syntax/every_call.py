"""The methods a method calls on its own receiver on every call (a template method: an environment's `step` calling
`self.pre_physics_step(actions)` and `self.post_physics_step()`, which subclasses define), and whether it hands the
call on to its base (`super().step(actions)`). A reading of the method's statements, before any walk."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from streamlint.model.syntax.children import walk


@dataclass(frozen=True)
class EveryCall:
    receiver_calls: frozenset[str]  # `self.m(...)` on every call: the names m
    super_calls: frozenset[str]  # `super().m(...)` on every call: the names m


def every_call(node: cst.FunctionDef) -> EveryCall:
    params = (*node.params.posonly_params, *node.params.params)
    receiver = params[0].name.value if params else ""
    own: set[str] = set()
    base: set[str] = set()
    if isinstance(node.body, cst.IndentedBlock) and receiver:
        _statements(node.body.body, receiver, own, base)
    return EveryCall(frozenset(own), frozenset(base))


def _statements(statements, receiver: str, own: set[str], base: set[str]) -> bool:
    """Collects the calls of statements that run whenever the block does; False once one may leave the block early
    (a `return` under a test: what follows runs only sometimes). A `raise` under a test leaves only on an error or
    at the end of the iteration (`raise StopIteration`): what follows runs on every usual call."""
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            _calls(statement, receiver, own, base)
            if any(isinstance(s, (cst.Return, cst.Raise)) for s in statement.body):
                return False
        elif isinstance(statement, (cst.With, cst.For, cst.While)):
            header = statement.items if isinstance(statement, cst.With) else \
                (statement.iter,) if isinstance(statement, cst.For) else (statement.test,)
            for part in header:
                _calls(part, receiver, own, base)
            if not _statements(statement.body.body, receiver, own, base):
                return False
        elif isinstance(statement, cst.Try):
            if not _statements(statement.body.body, receiver, own, base):
                return False
        elif isinstance(statement, cst.If):
            _calls(statement.test, receiver, own, base)
            if _may_leave(statement):
                return False
    return True


def _may_leave(statement: cst.If) -> bool:
    return any(isinstance(n, cst.Return) for n in walk(statement))


def _calls(node: cst.CSTNode, receiver: str, own: set[str], base: set[str]) -> None:
    for found in walk(node):
        if not isinstance(found, cst.Call) or not isinstance(found.func, cst.Attribute):
            continue
        target = found.func.value
        if isinstance(target, cst.Name) and target.value == receiver:
            own.add(found.func.attr.value)
        elif isinstance(target, cst.Call) and isinstance(target.func, cst.Name) and target.func.value == "super":
            base.add(found.func.attr.value)
