"""The functions a module registers with PyTorch as hooks (`t.register_hook(fn)`,
`module.register_forward_pre_hook(functools.partial(self._fetch, "fwd"))`): PyTorch calls them
on every backward or forward pass. A syntax query over the tree: the registration's argument
names the function (a module function by its name, a method as `self.<name>` in its class)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

_PARTIALS = frozenset({"partial", "functools.partial"})


def registered_hooks(tree: cst.Module, registrations: frozenset) -> frozenset[tuple[str, str]]:
    """(class name, function name) of each hook registered by a method named in `registrations`
    (the fact table's): ("", f) for a module function, (C, m) for `self.m` inside class C."""
    found: set[tuple[str, str]] = set()
    stack: list[tuple[cst.CSTNode, str]] = [(tree, "")]
    while stack:
        node, cls = stack.pop()
        if isinstance(node, cst.ClassDef):
            cls = node.name.value
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in registrations and node.args:
            named = _named(node.args[0].value, cls)
            if named is not None:
                found.add(named)
        stack.extend((child, cls) for child in node.children)
    return frozenset(found)


def _named(expr: cst.BaseExpression, cls: str) -> Optional[tuple[str, str]]:
    if isinstance(expr, cst.Call) and _dotted(expr.func) in _PARTIALS and expr.args:
        expr = expr.args[0].value  # `functools.partial(self._fetch, "fwd")`: the function it calls
    if isinstance(expr, cst.Name):
        return "", expr.value
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self" and cls:
        return cls, expr.attr.value
    return None


def _dotted(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Attribute):
        inner = _dotted(expr.value)
        return f"{inner}.{expr.attr.value}" if inner else ""
    return expr.value if isinstance(expr, cst.Name) else ""
