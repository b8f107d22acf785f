"""Dotted names of expressions and the qualified names they stand for through imports."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.api import normalize


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """`a.b.c` for a chain of names and attributes, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


def imports_of(module: cst.Module) -> dict[str, str]:
    """Name bound at module level by an import -> the qualified name it stands for."""
    bound: dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                _import(small, bound)
            elif isinstance(small, cst.ImportFrom):
                _import_from(small, bound)
    return bound


def _import(node: cst.Import, bound: dict[str, str]) -> None:
    for alias in node.names:
        name = dotted(alias.name)
        if name is None:
            continue
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            bound[alias.asname.name.value] = normalize(name)
        else:
            root = name.split(".", 1)[0]
            bound[root] = root


def _import_from(node: cst.ImportFrom, bound: dict[str, str]) -> None:
    """`from m import x`; a relative import names modules beside the file (`from .m import x`
    is `m.x`, `from . import m` is `m`): the program's modules are named from the file's folder."""
    module = dotted(node.module) if node.module is not None else None
    if isinstance(node.names, cst.ImportStar):
        return
    if node.relative and module is None:
        for alias in node.names:
            name = dotted(alias.name)
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
            if name is not None and local is not None:
                bound[local] = name
        return
    if module is None:
        return
    for alias in node.names:
        name = dotted(alias.name)
        if name is None:
            continue
        local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
        bound[local] = normalize(f"{module}.{name}")


def qualified(name: str, imports: dict[str, str]) -> Optional[str]:
    """The qualified name a dotted name stands for, when its first part was imported."""
    head, _, rest = name.partition(".")
    base = imports.get(head)
    if base is None:
        return None
    return normalize(f"{base}.{rest}" if rest else base)
