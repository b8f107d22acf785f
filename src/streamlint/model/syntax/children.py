"""A node's child nodes, read from its dataclass fields (libcst's `children` visits every
field through a visitor: about ten times slower). Whitespace, comments, parentheses and
separators hold no code, so their fields are not read."""

from __future__ import annotations

import dataclasses

import libcst as cst

_FIELDS: dict[type, tuple[str, ...]] = {}
_BLANK = ("whitespace", "lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer", "comma",
          "semicolon", "newline")


def child_nodes(node: cst.CSTNode) -> list:
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(f.name for f in dataclasses.fields(node) if not f.name.startswith(_BLANK))
    found = []
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, cst.CSTNode))
    return found
