"""Ring counters: attributes a module advances by one around a ring of `n` slots, a ring buffer's index (D-25)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.syntax.children import child_nodes, walk


def ring_counters(tree: cst.Module) -> dict[str, int]:
    """Attribute name -> the ring's size, of every attribute the module advances so (on one size)."""
    found: dict[str, int] = {}
    for node in walk(tree, (), _statement_parts):
        if type(node) is cst.Assign:
            advanced = advance(node)
            if advanced is not None:
                attr, modulus = advanced
                found[attr] = modulus if found.get(attr, modulus) == modulus else 0
    return {attr: modulus for attr, modulus in found.items() if modulus}


_IS_EXPRESSION: dict[type, bool] = {}  # (a node type -> an expression's: libcst's ABCs are slow to test)


def _statement_parts(node: cst.CSTNode) -> list:
    """Its child nodes but expressions (an assignment is a statement's part, never an expression's)."""
    found = []
    for child in child_nodes(node):
        kind = type(child)
        expression = _IS_EXPRESSION.get(kind)
        if expression is None:
            expression = _IS_EXPRESSION[kind] = issubclass(kind, cst.BaseExpression)
        if not expression:
            found.append(child)
    return found


def advance(node: cst.Assign) -> Optional[tuple[str, int]]:
    """(attribute, ring size) of `x.a = 1 - x.a` (size 2) or `x.a = (x.a + 1) % n`; None else."""
    if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Attribute):
        return None
    target, value = node.targets[0].target, node.value
    modulus = 2
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Modulo) \
            and isinstance(value.right, cst.Integer):
        modulus, value = int(value.right.value, 0), value.left
        if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add)
                and _one(value.right) and value.left.deep_equals(target)) or modulus < 2:
            return None
        return target.attr.value, modulus
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Subtract) \
            and _one(value.left) and value.right.deep_equals(target):
        return target.attr.value, modulus
    return None


def _one(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Integer) and node.value == "1"
