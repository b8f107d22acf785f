"""A node's child nodes from its dataclass fields (libcst's `children` is ten times slower), whitespace apart."""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

import libcst as cst

_FIELDS: dict[type, tuple[str, ...]] = {}
_BLANK = ("whitespace", "lpar", "rpar", "leading_lines", "lines_after_decorators", "header", "footer", "comma",
          "semicolon", "newline")


_KINDS: dict[type, int] = {}  # a field value's type -> _NODE, _SEQUENCE or 0 (node classes are ABCs: slow isinstance)
_NODE, _SEQUENCE = 1, 2


def _kind(of: type) -> int:
    kind = _KINDS.get(of)
    if kind is None:
        kind = _KINDS[of] = _NODE if issubclass(of, cst.CSTNode) else _SEQUENCE if issubclass(of, (list, tuple)) else 0
    return kind


# id(node) -> (node, its child nodes): the model walks a function's nodes several times (numbering, stores, tests,
# spellings), and reading fields is most of a walk's cost. The entry keeps its node alive, so an id is never reused
# while cached; cleared per checked file (forget) and past a bound (a huge module).
_CHILDREN: dict[int, tuple] = {}
MAX_CACHED_NODES = 400_000


def child_nodes(node: cst.CSTNode) -> tuple:
    entry = _CHILDREN.get(id(node))
    if entry is not None and entry[0] is node:
        return entry[1]
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(f.name for f in dataclasses.fields(node) if not f.name.startswith(_BLANK))
    found = []
    for name in names:
        value = getattr(node, name)
        kind = _kind(type(value))
        if kind == _NODE:
            found.append(value)
        elif kind == _SEQUENCE:
            found.extend(v for v in value if _kind(type(v)) == _NODE)
    if len(_CHILDREN) >= MAX_CACHED_NODES:
        _CHILDREN.clear()
    parts = _CHILDREN[id(node)] = (node, tuple(found))
    return parts[1]


def forget() -> None:
    """Drop the cached child lists (the trees they keep alive): a new checked file."""
    _CHILDREN.clear()


SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def walk(node: cst.CSTNode, skip: tuple = SCOPES, parts: Callable = child_nodes) -> Iterator[cst.CSTNode]:
    """The node and the nodes under it (`parts` of each), but not the insides of nodes of the types `skip` names."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        if current is node or type(current) not in skip:
            todo.extend(parts(current))
