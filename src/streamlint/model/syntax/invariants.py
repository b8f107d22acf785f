"""Loop invariants of the text: a name a loop only reads from, so every pass finds the same data under it."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.syntax.children import walk

# Methods that change their receiver in place: Python's containers', and PyTorch's `_`-suffixed ones (`add_`).
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault",
                       "sort", "reverse", "discard", "add"})


def copied_root(copied: cst.BaseExpression) -> Optional[cst.Name]:
    """The name a copied expression reads its data from, through items, attributes and method calls on it
    (`batch["rgb"].squeeze(0)[idx]`: `batch`); None when it is anything else (a call's result, a literal)."""
    node = copied
    while True:
        if isinstance(node, cst.Name):
            return node
        if isinstance(node, (cst.Subscript, cst.Attribute)):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            return None


def unchanged_in(name: str, loop: cst.CSTNode) -> bool:
    """Does `loop` only read from `name`: never bind it (an assignment, the loop's own target, `with ... as`, a
    walrus, an augmented store), store into it (`name[i] = ...`, `name.x = ...`), hand it bare to a call (which may
    change it), or call a method on it that changes it in place (`name.append(...)`, `name.add_(...)`)?"""
    for node in walk(loop, skip=()):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(_rooted_at(t, name) for t in targets):
                return False
        elif isinstance(node, (cst.For, cst.CompFor)) and _rooted_at(node.target, name):
            return False
        elif isinstance(node, cst.AsName) and _rooted_at(node.name, name):
            return False
        elif isinstance(node, cst.NamedExpr) and _rooted_at(node.target, name):
            return False
        elif isinstance(node, cst.Call):
            if any(isinstance(a.value, cst.Name) and a.value.value == name for a in node.args):
                return False
            func = node.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name \
                    and (func.attr.value in _MUTATORS or func.attr.value.endswith("_")):
                return False
    return True


def _rooted_at(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_rooted_at(e.value, name) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _rooted_at(target.value, name)
    if isinstance(target, (cst.Subscript, cst.Attribute)):
        return _rooted_at(target.value, name)
    return False


def bound_in(name: str, function: cst.FunctionDef) -> bool:
    """Is `name` a parameter of `function` or a name its body binds (not a module, an import or a global)?"""
    params = function.params
    if any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
        return True
    for node in walk(function.body, skip=()):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(_binds(t, name) for t in targets):
                return True
        elif isinstance(node, (cst.For, cst.CompFor)) and _binds(node.target, name):
            return True
        elif isinstance(node, cst.AsName) and _binds(node.name, name):
            return True
    return False


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _binds(target.value, name)
    return False
