"""Which GPU framework a qualified name belongs to."""

from __future__ import annotations

# A module (or a dotted name that resolves to it, or to anything inside it) and the
# framework it belongs to. Plain `numba` is not a GPU framework: only `numba.cuda` is.
# `cuda`, `cuda.bindings` and `cuda.core` are cuda-python.
FRAMEWORK_MODULES: dict[str, str] = {
    "torch": "torch",
    "cupy": "cupy",
    "cupyx": "cupy",
    "numba.cuda": "numba",
    "cuda": "cuda",
}


def framework_of(module: str) -> str:
    """The framework a fully qualified dotted name belongs to, "" when none."""
    while module:
        found = FRAMEWORK_MODULES.get(module)
        if found is not None:
            return found
        module = module.rpartition(".")[0]
    return ""
