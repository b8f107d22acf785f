"""GPU kernels written in Python (Numba's `@cuda.jit`): which of their array parameters the
body stores into (`out[i] = ...`, `acc[i] += ...`); the others are read."""

from __future__ import annotations

import libcst as cst


def stored_parameters(kernel: cst.FunctionDef) -> frozenset[int]:
    p = kernel.params
    names = [x.name.value for x in (*p.posonly_params, *p.params)]
    stored: set[str] = set()
    todo: list[cst.CSTNode] = [kernel.body]
    while todo:
        node = todo.pop()
        targets = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                stored.add(target.value.value)
        todo.extend(node.children)
    return frozenset(i for i, name in enumerate(names) if name in stored)
