"""Methods that run the backward pass on a loss they are handed, on every path of every call
(`loss.backward()`, `scaler.scale(loss).backward()`: the `STEP_BACKWARD` calls of api/torch_modules.py):
a step of training, as hot as `forward` of an `nn.Module`. A structural reading, before any walk."""

from __future__ import annotations

from typing import Callable, Iterable

import libcst as cst

from streamlint.model.api import torch_api, torch_modules
from streamlint.model.syntax.children import child_nodes

# Methods that run once per object, whatever they call, and the words that name a one-off run of the step.
ONE_OFF_METHODS = frozenset({"__init__", "__new__", "__post_init__", "setup", "__enter__", "__exit__"})
ONE_OFF_PREFIXES = ("test", "warmup", "warm_up", "benchmark", "profile", "calibrat")


def runs_backward_every_call(node: cst.FunctionDef, params: Iterable[str], is_module: Callable[[str], bool],
                             qualname: Callable[[cst.BaseExpression], str]) -> bool:
    """Does the method run backward on a loss it is handed on every call? (`is_module`: an imported module's name)"""
    name = node.name.value
    if name in ONE_OFF_METHODS or name.lstrip("_").startswith(ONE_OFF_PREFIXES):
        return False
    # the loss is handed in, never defaulted (a parameter with a default is a setting)
    defaulted = {p.name.value for p in (*node.params.params, *node.params.kwonly_params) if p.default is not None}
    derived = {p for p in params if p not in ("self", "cls") and p not in defaulted}
    if not derived or not isinstance(node.body, cst.IndentedBlock):
        return False
    return _always(node.body.body, derived, is_module, qualname) is True


def _always(stmts, derived: set[str], is_module, qualname):
    """True: every path runs the backward pass; False: one leaves without it; None: they fall through."""
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Return, cst.Raise)):
                    return False
                if isinstance(small, cst.Expr) and _is_backward(small.value, derived, is_module, qualname):
                    return True
                _bind(small, derived, qualname)
        elif isinstance(stmt, (cst.With, cst.Try)):
            for item in stmt.items if isinstance(stmt, cst.With) else ():
                if item.asname is not None and _names(item.item) & derived:
                    derived |= _names(item.asname.name)
            found = _always(stmt.body.body, derived, is_module, qualname)
            if found is not None:
                return found
        elif isinstance(stmt, cst.If):
            found = _if_always(stmt, derived, is_module, qualname)
            if found is not None:
                return found
            derived |= _assigned_in(stmt, derived, qualname)
    return None  # (a loop's work is hot by the loop)


def _if_always(stmt: cst.If, derived: set[str], is_module, qualname):
    """An `if` chain: True when every branch (an `else` too) runs it, False when one leaves without it."""
    outcomes = []
    branch: object = stmt
    while isinstance(branch, cst.If):
        outcomes.append(_always(branch.body.body, set(derived), is_module, qualname))
        branch = branch.orelse
    outcomes.append(_always(branch.body.body, set(derived), is_module, qualname)
                    if isinstance(branch, cst.Else) else None)
    if all(o is True for o in outcomes):
        return True
    if any(o is False for o in outcomes):
        return False
    return None


def _is_backward(expr: cst.BaseExpression, derived: set[str], is_module, qualname) -> bool:
    """A backward call on a derived name (of a module: `torch.autograd.backward`, not `debug_api.backward`)."""
    if not isinstance(expr, cst.Call) or not _names(expr) & derived:
        return False
    func = expr.func
    backward = torch_modules.STEP_BACKWARD
    if isinstance(func, cst.Attribute) and torch_modules.TRAINING_STEP_CALLS.get(func.attr.value) == backward:
        root = func.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if not (isinstance(root, cst.Name) and is_module(root.value)):
            return True
    return torch_modules.TRAINING_STEP_FUNCTIONS.get(qualname(func)) == backward


def _bind(small: cst.BaseSmallStatement, derived: set[str], qualname) -> None:
    """`x = f(loss)`: x holds what came from the loss (not a creator's new tensor)."""
    if isinstance(small, cst.Assign) and _names(small.value) & derived and not _created(small.value, qualname):
        for target in small.targets:
            derived |= _names(target.target)
    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and small.value is not None \
            and _names(small.value) & derived:
        derived |= _names(small.target)


def _created(value: cst.BaseExpression, qualname) -> bool:
    """A fresh tensor of a creator (`torch.randn(...)`, `torch.zeros_like(x)`: api/torch_api.py)."""
    if not isinstance(value, cst.Call):
        return False
    module, _, name = qualname(value.func).rpartition(".")
    return module == "torch" and (name in torch_api.CREATORS or name in torch_api.LIKE_CREATORS)


def _assigned_in(stmt: cst.If, derived: set[str], qualname) -> set[str]:
    """Names bound from a derived name in the branches of an `if` that falls through: derived after it too."""
    found: set[str] = set()
    todo: list[cst.CSTNode] = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, cst.Assign):
            if _names(node.value) & derived and not _created(node.value, qualname):
                found.update(n for t in node.targets for n in _names(t.target))
        elif isinstance(node, cst.BaseExpression):
            continue  # (no statement inside an expression)
        else:
            todo.extend(child_nodes(node))
    return found


def _names(node: cst.CSTNode) -> set[str]:
    """The names an expression reads as data (not an attribute's own name, nor a function called by name)."""
    out: set[str] = set()
    todo = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, cst.Name):
            out.add(current.value)
        elif isinstance(current, cst.Attribute):
            todo.append(current.value)
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Name):
            todo.extend(arg.value for arg in current.args)
        else:
            todo.extend(child_nodes(current))
    return out
