"""Dotted names of expressions and the qualified names they stand for through imports."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.api import normalize
from streamlint.model.syntax.names import dotted


def imports_of(module: cst.Module) -> dict[str, str]:
    """Name bound at module level by an import -> the qualified name it stands for, also by an
    import under a module-level `try:` or `if` (`try: import cupy as cp / except ImportError:`,
    `if TYPE_CHECKING:`): the module runs where the import succeeds, its names stand for it."""
    bound: dict[str, str] = {}
    _imports_in(module.body, bound)
    return bound


def _imports_in(body, bound: dict[str, str]) -> None:
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import):
                    _import(small, bound)
                elif isinstance(small, cst.ImportFrom):
                    _import_from(small, bound)
        for block in _blocks(statement):
            _imports_in(block, bound)


def import_targets(node: cst.Import | cst.ImportFrom) -> dict[str, str]:
    """The names one import statement binds -> what they stand for."""
    bound: dict[str, str] = {}
    if isinstance(node, cst.Import):
        _import(node, bound)
    else:
        _import_from(node, bound)
    return bound


def _blocks(statement: cst.BaseStatement) -> list:
    """The statement lists of a module-level `try:` (its body first: what the handlers bind
    when the import fails does not replace it) and of an `if` (each branch)."""
    if isinstance(statement, (cst.Try, cst.TryStar)):
        blocks = [h.body.body for h in statement.handlers]
        blocks += [b.body.body for b in (statement.orelse, statement.finalbody) if b is not None]
        return blocks + [statement.body.body]  # the body last: its imports win
    if isinstance(statement, cst.If):
        blocks = [statement.body.body]
        orelse = statement.orelse
        while isinstance(orelse, cst.If):
            blocks.append(orelse.body.body)
            orelse = orelse.orelse
        if orelse is not None:
            blocks.append(orelse.body.body)
        return blocks
    return []


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
    """`from m import x` is `m.x`; a relative import keeps its dots (`from ..m import x` is
    `..m.x`, `from . import m` is `.m`): the program names it from the importing module's
    package (interproc/program.py)."""
    module = dotted(node.module) if node.module is not None else None
    if isinstance(node.names, cst.ImportStar):
        return
    dots = "." * len(node.relative)
    if module is None and not dots:
        return
    for alias in node.names:
        name = dotted(alias.name)
        if name is None:
            continue
        local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
        if dots:
            bound[local] = dots + (f"{module}.{name}" if module else name)
        else:
            bound[local] = normalize(f"{module}.{name}")


def qualified(name: str, imports: dict[str, str]) -> Optional[str]:
    """The qualified name a dotted name stands for, when its first part was imported."""
    head, _, rest = name.partition(".")
    base = imports.get(head)
    if base is None:
        return None
    return normalize(f"{base}.{rest}" if rest else base)
