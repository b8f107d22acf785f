"""Fast, deterministic walks over a libcst subtree, in field order (syntax/children.py)."""

from __future__ import annotations

from typing import Callable, Iterator

import libcst as cst

from streamlint.model.syntax.children import child_nodes


def is_kind(node: object, kinds: tuple[type, ...], cache: dict) -> bool:
    """`isinstance(node, kinds)`, answered once per node type (libcst's ABCs are slow to test)."""
    kind = type(node)
    known = cache.get(kind)
    if known is None:
        known = cache[kind] = issubclass(kind, kinds)
    return known


def preorder(node: cst.CSTNode, enter: Callable[[cst.CSTNode], bool]) -> Iterator[cst.CSTNode]:
    """Every node under `node`, parents first; one `enter` says False of is not walked into."""
    todo = [node]
    while todo:
        current = todo.pop()
        yield current
        if current is node or enter(current):
            todo.extend(reversed(child_nodes(current)))


_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_IS_SCOPE: dict[type, bool] = {}


def own_nodes(scope: cst.CSTNode) -> list[cst.CSTNode]:
    """A scope's nodes in preorder, not inside the functions, classes and lambdas it defines."""
    return list(preorder(scope, lambda n: not is_kind(n, _SCOPES, _IS_SCOPE)))
