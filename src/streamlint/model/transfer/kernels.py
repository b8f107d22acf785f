"""Which array parameters a Numba `@cuda.jit` kernel's body stores into (the others are read)."""

from __future__ import annotations

import libcst as cst

from streamlint.model.api import numba_cuda
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
