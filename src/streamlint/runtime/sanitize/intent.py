"""Which kernel arguments a kernel writes, where the framework does not say.

Numba kernels: the static analysis's rule (model.analysis kernel_writes): a parameter is
written when it is the base of a subscript assignment (`y[i] = ...`, `y[i] += ...`), the
first argument of `cuda.atomic.*`, or passed on to a call (a device function may write
it); a local alias (`a = y`) counts as the parameter. Without the source, every array is
written. CuPy raw kernels: a pointer parameter declared `const` is read-only; any other
pointer is written.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from functools import lru_cache
from typing import Callable, Optional


def _base_name(node: ast.AST) -> Optional[str]:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def python_kernel_writes(source: str) -> Optional[frozenset[int]]:
    """Positions of the parameters the first function in `source` may write."""
    tree = ast.parse(textwrap.dedent(source))
    func = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is None:
        return None
    params = [a.arg for a in func.args.args]
    alias = {p: p for p in params}
    written: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in alias:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    alias[target.id] = alias[node.value.id]
    for node in ast.walk(func):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Subscript):
                written.add(_base_name(target) or "")
        if isinstance(node, ast.Call):
            for arg in node.args:
                # An array passed on by name (x[i] passes an element, a value).
                if not isinstance(arg, ast.Name):
                    continue
                name = arg.id
                func_name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if func_name in _PURE_READERS:
                    continue
                written.add(name)
    return frozenset(i for i, p in enumerate(params) if any(alias.get(w) == p for w in written))


# Calls in kernels that only read their array arguments.
_PURE_READERS = frozenset({"len", "range", "min", "max", "abs", "float", "int", "sqrt", "sin", "cos", "exp", "log",
                           "tanh", "grid", "gridsize"})  # fmt: skip


@lru_cache(maxsize=256)
def _numba_writes_cached(func: Callable) -> Optional[frozenset[int]]:
    try:
        return python_kernel_writes(inspect.getsource(func))
    except (OSError, TypeError, SyntaxError):
        return None


def numba_kernel_writes(py_func: Callable) -> Optional[frozenset[int]]:
    return _numba_writes_cached(py_func)


_SIGNATURE = r"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?{name}\s*\(([^)]*)\)"


def c_kernel_readonly(code: str, name: str) -> Optional[frozenset[int]]:
    """Positions of a CUDA C kernel's pointer parameters declared const (None: signature not found)."""
    m = re.search(_SIGNATURE.format(name=re.escape(name)), code)
    if m is None:
        return None
    params = [p.strip() for p in m.group(1).split(",") if p.strip()]
    return frozenset(i for i, p in enumerate(params) if "*" in p and re.search(r"\bconst\b", p.split("*")[0]))
