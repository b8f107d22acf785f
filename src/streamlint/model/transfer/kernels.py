"""GPU kernels written in Python (Numba's `@cuda.jit`): which of their array parameters the
body stores into (`out[i] = ...`, `acc[i] += ...`); the others are read."""

from __future__ import annotations

import libcst as cst

from streamlint.model.transfer.nodes import preorder


def stored_parameters(kernel: cst.FunctionDef) -> frozenset[int]:
    p = kernel.params
    names = [x.name.value for x in (*p.posonly_params, *p.params)]
    stored: set[str] = set()
    for node in preorder(kernel.body, lambda n: True):
        targets = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                stored.add(target.value.value)
    return frozenset(i for i, name in enumerate(names) if name in stored)
