"""Which array parameters a Numba `@cuda.jit` kernel's or a Triton kernel's body stores into (the others are read)."""

from __future__ import annotations

import libcst as cst

import builtins
from typing import Callable

from streamlint.model.api import numba_cuda, triton
from streamlint.model.transfer.names import dotted
from streamlint.model.transfer.nodes import preorder


def stored_parameters(kernel: cst.FunctionDef) -> frozenset[int]:
    p = kernel.params
    names = [x.name.value for x in (*p.posonly_params, *p.params)]
    stored: set[str] = set()
    for node in preorder(kernel.body, lambda n: True):
        arrays = []
        if isinstance(node, cst.Assign):
            arrays = [t.target.value for t in node.targets if isinstance(t.target, cst.Subscript)]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and isinstance(node.target, cst.Subscript):
            arrays = [node.target.value]
        elif isinstance(node, cst.Call) and node.args and _atomic(node):
            first = node.args[0].value  # `cuda.atomic.add(counts, b, 1)` stores into `counts`
            arrays = [first.value if isinstance(first, cst.Subscript) else first]
        stored.update(a.value for a in arrays if isinstance(a, cst.Name))
    return frozenset(i for i, name in enumerate(names) if name in stored)


def _atomic(call: cst.Call) -> bool:
    """`cuda.atomic.add(...)` (any spelling ending in `atomic.<operation>`)."""
    name = dotted(call.func) or ""
    namespace, _, operation = name.rpartition(".")
    return namespace.rpartition(".")[2] == numba_cuda.ATOMIC_NAMESPACE and operation in numba_cuda.ATOMIC_OPERATIONS


def triton_stored_parameters(kernel: cst.FunctionDef, qualify: Callable[[cst.BaseExpression], str]) -> frozenset[int]:
    """The pointer parameters a Triton kernel writes through: those whose pointer (the parameter, arithmetic on it, a
    block pointer or descriptor made of it) reaches a store or an atomic of `triton.language`, a storing method, or a
    call the tables do not know (another jitted function: taken to write). `tl.load` gives a value, not a pointer."""
    p = kernel.params
    names = [x.name.value for x in (*p.posonly_params, *p.params)]
    derived = {name: {name} for name in names}  # a local name -> the parameters its pointer is made of
    statements = [n for n in preorder(kernel.body, lambda n: True) if isinstance(n, (cst.Assign, cst.AugAssign))]
    for _ in range(len(statements) + 1):  # (to a fixpoint: a loop's pointers advance by reassignment)
        grown = False
        for node in statements:
            made = _pointers_in(node.value, derived, qualify)
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for target in targets:
                for name in (n.value for n in preorder(target, lambda n: True) if isinstance(n, cst.Name)):
                    if not made <= derived.get(name, set()):
                        derived[name] = derived.get(name, set()) | made
                        grown = True
        if not grown:
            break
    stored: set[str] = set()
    for call in (n for n in preorder(kernel.body, lambda n: True) if isinstance(n, cst.Call)):
        stored |= _stored_by(call, derived, qualify)
    return frozenset(i for i, name in enumerate(names) if name in stored)


_BUILTINS = frozenset(dir(builtins))  # (`range(n)`, `min(a, b)` in a kernel: Python's, run at compile time)


def _pointers_in(expr: cst.BaseExpression, derived: dict, qualify) -> set:
    """The parameters whose pointers an expression carries: its names', except under `tl.load` (a value)."""
    if isinstance(expr, cst.Call) and qualify(expr.func) in triton.LOADS:
        return set()
    found: set = set()
    for node in preorder(expr, lambda n: not (isinstance(n, cst.Call) and qualify(n.func) in triton.LOADS)):
        if isinstance(node, cst.Name):
            found |= derived.get(node.value, set())
    return found


def _stored_by(call: cst.Call, derived: dict, qualify) -> set:
    name = qualify(call.func)
    if name in triton.LOADS or (name.startswith(triton.ROOT + ".") and name not in triton.STORES) \
            or name.removeprefix("builtins.") in _BUILTINS:
        return set()  # reads, or computes on values and pointers (`tl.arange`, `triton.cdiv`, `range(n)`)
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in triton.STORING_METHODS \
            and not name.startswith(triton.LANGUAGE + "."):
        return _pointers_in(call.func.value, derived, qualify)  # `desc.store(...)`: through the receiver
    if name in triton.STORES:
        target = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "pointer"),
                      call.args[0].value if call.args and call.args[0].keyword is None else None)
        return _pointers_in(target, derived, qualify) if target is not None else set()
    # a call nothing tells of (another jitted function, a library's device function): what it is handed may be written
    return set().union(*(_pointers_in(a.value, derived, qualify) for a in call.args)) if call.args else set()
