"""Dotted names of expressions and the qualified names they stand for through imports."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.api import normalize
from streamlint.model.syntax.names import dotted


def imports_of(module: cst.Module) -> dict[str, str]:
    """Name bound by a module-level import (also under `try:` or `if`) -> the qualified name."""
    bound: dict[str, str] = {}
    _imports_in(module.body, bound)
    return bound


def star_imports_of(module: cst.Module) -> list[str]:
    """The modules a module-level `from m import *` names (a relative one keeps its dots), in order; also under
    `try:` or `if` (`try: from .utils import *` / `except ImportError: from pkg.utils import *`), as imports are."""
    found: list[str] = []
    _stars_in(module.body, found)
    return found


def _stars_in(body, found: list[str]) -> None:
    for statement in body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
                name = dotted(small.module) if small.module is not None else ""
                found.append("." * len(small.relative) + (name or ""))
        for block in _blocks(statement):
            _stars_in(block, found)


def _imports_in(body, bound: dict[str, str]) -> None:
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    bound.update(import_targets(small))
        for block in _blocks(statement):
            _imports_in(block, bound)


def _blocks(statement: cst.BaseStatement) -> list:
    """The statement lists of a `try:` (its body last: its imports win) and of an `if` (each branch)."""
    if isinstance(statement, (cst.Try, cst.TryStar)):
        blocks = [h.body.body for h in statement.handlers]
        blocks += [b.body.body for b in (statement.orelse, statement.finalbody) if b is not None]
        return blocks + [statement.body.body]
    blocks = []
    while isinstance(statement, cst.If):
        blocks.append(statement.body.body)
        statement = statement.orelse
    return blocks + [statement.body.body] if isinstance(statement, cst.Else) else blocks


def import_targets(node: cst.Import | cst.ImportFrom) -> dict[str, str]:
    """The names one import binds -> what they stand for (a relative one keeps its dots)."""
    bound: dict[str, str] = {}
    if isinstance(node, cst.Import):
        for alias in node.names:
            name = dotted(alias.name)
            if name is not None and alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound[alias.asname.name.value] = normalize(name)
            elif name is not None:
                bound[name.split(".", 1)[0]] = name.split(".", 1)[0]
        return bound
    module = dotted(node.module) if node.module is not None else None
    dots = "." * len(node.relative)
    if isinstance(node.names, cst.ImportStar) or (module is None and not dots):
        return bound
    for alias in node.names:
        name = dotted(alias.name)
        if name is None:
            continue
        local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
        if dots:
            bound[local] = dots + (f"{module}.{name}" if module else name)
        else:
            bound[local] = normalize(f"{module}.{name}")
    return bound


def qualified(name: str, imports: dict[str, str]) -> Optional[str]:
    """The qualified name a dotted name stands for, when its first part was imported."""
    head, _, rest = name.partition(".")
    base = imports.get(head)
    if base is None:
        return None
    return normalize(f"{base}.{rest}" if rest else base)
