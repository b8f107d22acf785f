"""Fast access to a libcst node's children, for walks whose order does not matter.

libcst's `node.children` runs a visitor over the node to list them in visiting order
(~20 µs a node); reading the dataclass fields directly is about ten times faster. The
order is the fields' (not always the text's: `a if b else c`), so walks that need the
text's order keep `node.children`.
"""
from __future__ import annotations

from dataclasses import fields

import libcst as cst

_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The node's child nodes (the same set as `node.children`, in field order)."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(f.name for f in fields(node))  # type: ignore[arg-type]
    found: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(v for v in value if isinstance(v, cst.CSTNode))
    return found
