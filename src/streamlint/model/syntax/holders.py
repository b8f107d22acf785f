"""The attributes a function stores on objects its parameters reach (`node.state.x = t`,
`chunk.routing.probs = p`): a syntax query over one function's body (nested functions and
classes excluded), so that a reader of `.x` on a holder no caller links can find the functions
that leave something there (the field producers of model-cases D-16)."""

from __future__ import annotations

import libcst as cst

from streamlint.model.syntax.hooks import _within


def holder_attributes(node: "cst.FunctionDef | cst.Module", receiver: str = "") -> frozenset[str]:
    """The attribute names assigned as `<p>.<...>.<a> = ...` (plain, annotated or augmented,
    in a tuple target too), `p` a parameter of the function other than its receiver."""
    if not isinstance(node, cst.FunctionDef):
        return frozenset()
    params = node.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)} - {receiver}
    found: set[str] = set()
    for statement in _within(node.body):
        for target in _targets(statement):
            if isinstance(target, cst.Attribute) and _root(target.value) in names:
                found.add(target.attr.value)
    return frozenset(found)


def _targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    if isinstance(node, cst.Assign):
        found = [t.target for t in node.targets]
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
        found = [node.target] if not isinstance(node, cst.AnnAssign) or node.value is not None else []
    else:
        return []
    flat: list[cst.BaseExpression] = []
    while found:
        target = found.pop()
        if isinstance(target, (cst.Tuple, cst.List)):
            found.extend(e.value for e in target.elements)
        else:
            flat.append(target)
    return flat


def _root(node: cst.BaseExpression) -> str:
    """`node` of `node.state` (a dotted holder), "" for anything else."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""
