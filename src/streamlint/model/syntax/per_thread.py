"""The settings a module writes (environment variables, config attributes): per-thread default-stream switches."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from streamlint.model.syntax.children import walk


def settings(module: cst.Module) -> list[tuple[str, str]]:
    """(variable or attribute, value as written) of each setting (the caller matches `api.per_thread`)."""
    found = []
    for current in walk(module, ()):
        if isinstance(current, cst.Assign) and len(current.targets) == 1:
            name, value = _key(current.targets[0].target), _constant(current.value)
        elif isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) \
                and current.func.attr.value in ("setdefault", "update_config", "putenv") and len(current.args) >= 2:
            name, value = _constant(current.args[0].value), _constant(current.args[1].value)
        else:
            continue
        if name and value is not None:
            found.append((name, value))
    return found


def _key(target: cst.BaseExpression) -> str:
    """`os.environ["X"]` -> X; `numba.config.X`, `config.X` -> X."""
    if isinstance(target, cst.Subscript) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
        return _constant(target.slice[0].slice.value) or ""
    if isinstance(target, cst.Attribute):
        return target.attr.value
    return ""


def _constant(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value if isinstance(expr.evaluated_value, str) else None
    if isinstance(expr, (cst.Integer, cst.Name)):
        return expr.value
    return None
