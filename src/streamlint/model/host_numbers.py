"""Python numbers the host computes: shapes, lengths, loop counters, literals.

`int(cp.ceil(n / 32))` sends `n / 32` to the GPU, runs a kernel on it and waits for the
stream to read the answer back, when `math.ceil(n / 32)` needs no device at all. Such a
round trip is only certain when every input is a number the host already has, so the
test is strict: numeric literals, `x.shape` / `x.ndim` / `x.size` / `len(...)` and
arithmetic on them, and names the function's own text shows to hold such numbers (bound
from them, a `range()` loop counter, or used as a dimension of an allocation's shape).
Names with no such evidence (parameters, attributes set elsewhere) are not numbers here.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from streamlint.model.walk_common import dotted_name

# Attributes of arrays and tensors that are Python numbers or tuples of them.
_NUMBER_ATTRIBUTES = frozenset({"shape", "ndim", "size", "itemsize", "nbytes"})
# Builtins and math functions whose result is a host number when their arguments are.
_NUMBER_CALLS = frozenset({"int", "float", "round", "abs", "min", "max", "divmod", "pow"})
# Calls whose result is a host number whatever the argument (a length, a count).
_ALWAYS_NUMBER_CALLS = frozenset({"len"})
# Allocations and reshapes whose shape arguments are host numbers.
_SHAPE_TAKERS = frozenset({"zeros", "empty", "ones", "full", "reshape", "view", "zeros_like", "empty_like",
                           "ones_like", "full_like", "random", "rand", "randn", "arange", "linspace"})


def _dotted(expr: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` as text, when the expression is only names and attributes."""
    return dotted_name(expr) or None


def is_number(expr: cst.BaseExpression, known: frozenset[str]) -> bool:
    """Is `expr` a host number (or a tuple of them) by the evidence above?"""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return is_number(expr.expression, known)
    if isinstance(expr, cst.BinaryOperation):
        return is_number(expr.left, known) and is_number(expr.right, known)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return bool(expr.elements) and all(is_number(e.value, known) for e in expr.elements)
    if isinstance(expr, cst.Attribute) and expr.attr.value in _NUMBER_ATTRIBUTES:
        return True
    if isinstance(expr, cst.Subscript):
        return isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape"
    if isinstance(expr, (cst.Name, cst.Attribute)):
        return _dotted(expr) in known
    if isinstance(expr, cst.Call):
        name = _dotted(expr.func) or ""
        if name in _ALWAYS_NUMBER_CALLS:
            return True
        if name in _NUMBER_CALLS or name.startswith("math."):
            return bool(expr.args) and all(is_number(a.value, known) for a in expr.args)
    return False


def known_numbers(function: cst.CSTNode) -> frozenset[str]:
    """Names (and `self.x` attributes) the body shows to hold host numbers: every
    binding of the name in the body is one (`first = 0` on one branch and
    `first = a.min()` on another is no number)."""
    known: set[str] = set()
    other: set[str] = set()  # bound somewhere to what is not known to be a number
    for stmt in _statements(function):
        if isinstance(stmt, cst.Assign):
            value = stmt.value
            for assign_target in stmt.targets:
                target = assign_target.target
                if isinstance(target, (cst.Tuple, cst.List)):
                    names = [n for e in target.elements if (n := _dotted(e.value))]
                    shape = isinstance(value, cst.Attribute) and value.attr.value == "shape"
                    (known if shape else other).update(names)
                elif (name := _dotted(target)) is not None:
                    (known if is_number(value, frozenset(known - other)) else other).add(name)
        elif isinstance(stmt, (cst.AugAssign, cst.AnnAssign)):
            name = _dotted(stmt.target)
            value = stmt.value
            if name is not None and not (value is not None and is_number(value, frozenset(known - other))):
                other.add(name)
        elif isinstance(stmt, cst.For):
            names = {n for n in [_dotted(stmt.target)] if n} if _is_range(stmt.iter) else set()
            known.update(names)
            if not names:
                other.update(_target_names(stmt.target))
        elif isinstance(stmt, cst.Call):
            known.update(_shape_dimensions(stmt))
    return frozenset(known - other)


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _target_names(e.value)}
    name = _dotted(target)
    return {name} if name else set()


def _is_range(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Call) and _dotted(expr.func) == "range"


def _shape_dimensions(call: cst.Call) -> Iterator[str]:
    """`cp.zeros([ntheta, self.nz, self.n])`, `range(self.n)`: the names used as sizes."""
    name = _dotted(call.func) or ""
    last = name.rsplit(".", 1)[-1]
    if name == "range":
        args = [a.value for a in call.args]
    elif last in _SHAPE_TAKERS and call.args and call.args[0].keyword is None:
        first = call.args[0].value
        args = [e.value for e in first.elements] if isinstance(first, (cst.Tuple, cst.List)) else []
    else:
        return
    for arg in args:
        if (dotted := _dotted(arg)) is not None:
            yield dotted


def _statements(function: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Assignments, `for` loops and calls of the body, in the text's order (nested
    functions and classes are other bodies)."""
    stack: list[cst.CSTNode] = [function.body] if isinstance(function, cst.FunctionDef) else []
    out: list[cst.CSTNode] = []
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.Call)):
            out.append(node)
        stack.extend(reversed(list(node.children)))
    return iter(out)
