"""Which GPU frameworks a module mentions, from its imports and its dotted names."""

from __future__ import annotations

from collections.abc import Iterable

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

# Roots that name a framework even when no import in the module binds them (a notebook
# cell, or a name imported by an earlier file of the same script). `cuda` is left out: an
# unbound `cuda.jit` is far more often numba's `cuda` than cuda-python.
UNBOUND_ROOTS: frozenset[str] = frozenset({"torch", "cupy", "cupyx", "numba"})

# The words every framework's spelling contains: a text without any of them cannot
# mention a framework (syntax/prefilter.py; tested against `frameworks_of`).
FRAMEWORK_WORDS: tuple[str, ...] = ("torch", "cupy", "numba", "cuda")


def framework_of(module: str) -> str:
    """The framework a fully qualified dotted name belongs to, "" when none."""
    while module:
        found = FRAMEWORK_MODULES.get(module)
        if found is not None:
            return found
        module = module.rpartition(".")[0]
    return ""


def frameworks_of(
    imported: Iterable[str], bindings: dict[str, str], dotted_roots: Iterable[tuple[str, str]]
) -> frozenset[str]:
    """Frameworks named by the fully qualified imported modules, and by the dotted names
    `root.attr` (`root` resolved through the module's import `bindings`)."""
    found = {framework_of(name) for name in imported}
    for root, attr in dotted_roots:
        resolved = bindings.get(root)
        if resolved is None:
            if root not in UNBOUND_ROOTS:
                continue
            resolved = root
        found.add(framework_of(f"{resolved}.{attr}"))
    found.discard("")
    return frozenset(found)
