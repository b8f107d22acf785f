"""The folders a script puts on `sys.path` for its own imports (`sys.path.append('droid_slam')`,
`sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))`), as steps from the script's folder."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.syntax.children import walk
from streamlint.model.syntax.names import dotted

# A path written relative to the script's folder: the steps down from it ("..": up one), or the script itself (FILE).
Steps = tuple[str, ...]
FILE = "<file>"

# The path functions that keep or rename a path without moving it (the folder they name is the same one).
_SAME = frozenset({"abspath", "realpath", "normpath", "expanduser", "resolve", "absolute", "str", "fspath"})


def added_import_roots(module: cst.Module) -> tuple[Steps, ...]:
    """Each folder a `sys.path.append(p)` / `sys.path.insert(i, p)` / `sys.path.extend([p, ...])` of the module adds,
    where `p` is written from string constants and `__file__` (relative strings: from the folder the script is run
    from, taken to be its own). A path built from anything else (an environment variable, an argument) is left out."""
    found: list[Steps] = []
    for node in walk(module, skip=()):
        if type(node) is not cst.Call or dotted(node.func) not in _ADDERS:
            continue
        method = dotted(node.func).rsplit(".", 1)[1]  # type: ignore[union-attr]
        values = [a.value for a in node.args if a.keyword is None]
        if method == "insert":
            values = values[1:2]
        elif method == "extend":
            values = [e.value for v in values[:1] if type(v) in (cst.List, cst.Tuple) for e in v.elements]
        for value in values[:1] if method != "extend" else values:
            steps = _steps(value)
            if steps is not None and FILE not in steps and steps not in found:
                found.append(steps)
    return tuple(found)


_ADDERS = frozenset({"sys.path.append", "sys.path.insert", "sys.path.extend"})


def _steps(node: cst.BaseExpression) -> Optional[Steps]:
    """The folder an expression names, from the script's folder; None when something else decides it."""
    if type(node) is cst.SimpleString and not node.prefix.strip("rRuU"):  # type: ignore[attr-defined]
        text = node.raw_value  # type: ignore[attr-defined]
        return None if text.startswith(("/", "~")) or ":" in text else _joined((), text.split("/"))
    if type(node) is cst.Name and node.value == "__file__":  # type: ignore[attr-defined]
        return (FILE,)
    if type(node) is cst.Attribute:
        base = _steps(node.value)  # type: ignore[attr-defined]
        return _up(base) if base is not None and node.attr.value == "parent" else None  # type: ignore[attr-defined]
    if type(node) is cst.Subscript:  # `Path(__file__).parents[1]`
        return _parents(node)
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Divide:  # `Path(__file__).parent / "lib"`
        base, part = _steps(node.left), _literal(node.right)  # type: ignore[attr-defined]
        return _joined(base, part.split("/")) if base is not None and part is not None else None
    if type(node) is not cst.Call:
        return None
    return _called(node)


def _called(node: cst.Call) -> Optional[Steps]:
    name = dotted(node.func)
    if name is None and type(node.func) is cst.Attribute:  # `Path(__file__).resolve()`
        method = node.func.attr.value
        return _steps(node.func.value) if method in _SAME and not node.args else None
    last = (name or "").rsplit(".", 1)[-1]
    args = [a.value for a in node.args if a.keyword is None]
    if last in ("Path", "PurePath") or last in _SAME:
        return _steps(args[0]) if len(args) == 1 else None
    if last == "dirname" and len(args) == 1:
        base = _steps(args[0])
        return _up(base) if base is not None else None
    if last == "getcwd" and not args:
        return ()
    if last == "join" and args:
        base = _steps(args[0])
        parts = [_literal(a) for a in args[1:]]
        if base is None or any(p is None for p in parts):
            return None
        return _joined(base, [s for p in parts for s in p.split("/")])  # type: ignore[union-attr]
    return None


def _parents(node: cst.Subscript) -> Optional[Steps]:
    value = node.value
    if type(value) is not cst.Attribute or value.attr.value != "parents" or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    if type(index) is not cst.Index or type(index.value) is not cst.Integer:
        return None
    steps = _steps(value.value)
    for _ in range(int(index.value.value) + 1):
        steps = _up(steps) if steps is not None else None
    return steps


def _literal(node: cst.BaseExpression) -> Optional[str]:
    if type(node) is cst.SimpleString and not node.prefix.strip("rRuU"):  # type: ignore[attr-defined]
        return node.raw_value  # type: ignore[attr-defined]
    return None


def _up(steps: Steps) -> Steps:
    """The folder above: the script's own folder for the script, else one step back."""
    if steps and steps[-1] != "..":
        return steps[:-1]
    return steps + ("..",)


def _joined(base: Steps, parts: list[str]) -> Steps:
    steps = base
    for part in parts:
        if part in ("", "."):
            continue
        steps = _up(steps) if part == ".." else steps + (part,)
    return steps
