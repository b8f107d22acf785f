"""The attributes of `self` a class's methods write into in place (`self.pose.copy_(p)`, `self.buf[i] = v`,
`self.acc += x`, `torch.add(a, b, out=self.out)`): memory an object keeps whose values change after it is made."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.syntax.children import walk


def written_in_place(cls: cst.ClassDef, skip: str = "__init__") -> frozenset[str]:
    """The attributes of the receiver the class's methods (but `skip`) write into in place."""
    found: set[str] = set()
    for member in cls.body.body:  # type: ignore[union-attr]
        if type(member) is not cst.FunctionDef or not member.params.params or member.name.value == skip:
            continue
        receiver = member.params.params[0].name.value
        for node in walk(member.body, skip=()):
            found.update(_written(node, receiver))
    return frozenset(found)


def _written(node: cst.CSTNode, receiver: str) -> list[str]:
    if type(node) is cst.AugAssign:
        return [a for a in (_own(node.target, receiver),) if a]  # type: ignore[attr-defined]
    if type(node) is cst.Assign:
        return [a for t in node.targets if type(t.target) is cst.Subscript  # type: ignore[attr-defined]
                for a in (_own(t.target.value, receiver),) if a]  # type: ignore[attr-defined]
    if type(node) is cst.Call:
        func = node.func  # type: ignore[attr-defined]
        found = [a for arg in node.args if arg.keyword is not None and arg.keyword.value == "out"  # type: ignore
                 for a in (_own(arg.value, receiver),) if a]
        if type(func) is cst.Attribute and func.attr.value.endswith("_") and not func.attr.value.startswith("_"):
            own = _own(func.value, receiver)  # (`self.x.copy_(...)`, `self.x.zero_()`: a tensor's in-place method)
            found += [own] if own else []
        return found
    return []


def _own(node: cst.BaseExpression, receiver: str) -> Optional[str]:
    """`self.<attr>` or an item or view of it (`self.<attr>[i]`): the attribute's name."""
    while type(node) is cst.Subscript:
        node = node.value  # type: ignore[attr-defined]
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == receiver:  # type: ignore
        return node.attr.value  # type: ignore[attr-defined]
    return None
