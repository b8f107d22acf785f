"""Containers a class keeps on `self` whose entries its public methods hand to callers.

`state = self.saved.pop(tag); ...; return state` (a saved-tensor store's unpack),
`return self.slots.pop(k)`: what another method of the class stores in
`self.<attr>[key]` leaves the object through that method, to be used on the caller's
current stream and released when the caller drops it. Only `pop` hands ownership over:
`return self.cache[key]` (or `.get`) leaves the entry in the container, which releases
it only when the entry is replaced, not when the caller drops it. Read from the
methods' syntax only (no walk), once per class, and asked only where a method stores a
tensor it allocated on a side stream into such an attribute (ordering.py).

A method that calls `record_stream` hands out nothing here: it may record what it hands
out on the caller's stream.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

import libcst as cst

_TAKES = frozenset({"pop"})


@dataclass(frozen=True)
class HandOut:
    method: str  # the public method that hands entries out
    node: cst.Return  # its `return`


def _entry_of(expr: cst.BaseExpression) -> Optional[str]:
    """`self.X.pop(k)`: the attribute X."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _TAKES \
            and expr.args:
        base = expr.func.value
    else:
        return None
    if isinstance(base, cst.Attribute) and isinstance(base.value, cst.Name) and base.value.value == "self":
        return base.attr.value
    return None


class _Scan(cst.CSTVisitor):
    def __init__(self, top: cst.FunctionDef) -> None:
        self.top = top
        self.taken: dict[str, str] = {}  # local name -> attribute its entry came from
        self.returns: list[tuple[str, cst.Return]] = []
        self.records = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.top  # (nested functions hand out nothing of this method's)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        attr = _entry_of(node.value)
        if attr is not None and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.taken.setdefault(node.targets[0].target.value, attr)

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        if value is None:
            return
        attr = _entry_of(value)
        if attr is None and isinstance(value, cst.Name):
            attr = self.taken.get(value.value)
        if attr is not None:
            self.returns.append((attr, node))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "record_stream":
            self.records = True


def handed_out_entries(methods: Iterable[tuple[str, cst.FunctionDef]]) -> dict[str, HandOut]:
    """Attribute -> the public method (and its `return`) that hands its entries out."""
    found: dict[str, HandOut] = {}
    for name, node in methods:
        if name.startswith("_"):
            continue  # (a private helper's result stays inside the class)
        scan = _Scan(node)
        node.visit(scan)
        if scan.records:
            continue
        for attr, ret in scan.returns:
            found.setdefault(attr, HandOut(name, ret))
    return found
