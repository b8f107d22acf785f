"""Whether a function's text spells the GPU: one of the words without which a file has no finding
(model/prefilter.py), a stream or event method of the fact tables, or a name its module binds to one
(`import cupy as cp`, `DEVICE = "cuda:0"`); the words and methods are given (interproc/gpu_vocabulary.py).
A method that spells none of them shows nothing of its receiver's state by its uses (D-38)."""

from __future__ import annotations

import libcst as cst

from streamlint.model.syntax.children import walk


def _spelled(text: str, words: tuple[str, ...]) -> bool:
    return any(word in text for word in words)


def module_vocabulary(tree: cst.Module, words: tuple[str, ...]) -> frozenset[str]:
    """The names the module's top level binds to something that spells the GPU: an import of it
    (`import cupy as cp`, `from numba import cuda as nc`) or an assignment of such a value; `words`:
    the GPU's words (a name spells one when it contains it)."""
    names: set[str] = set()
    for node in walk(tree):
        if type(node) in (cst.Import, cst.ImportFrom):
            module = node.module if type(node) is cst.ImportFrom else None  # type: ignore[attr-defined]
            base = cst.Module([]).code_for_node(module) if module is not None else ""
            for alias in node.names if not isinstance(node.names, cst.ImportStar) else ():  # type: ignore[attr-defined]
                target = base + "." + cst.Module([]).code_for_node(alias.name)
                if _spelled(target, words):
                    names.add(alias.evaluated_alias or alias.evaluated_name.split(".")[0])
        elif type(node) in (cst.Assign, cst.AnnAssign) and node.value is not None and spells(node.value, frozenset(), words):  # type: ignore
            targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]  # type: ignore
            names.update(t.value for t in targets if type(t) is cst.Name)  # type: ignore[attr-defined]
    return frozenset(names)


def spells(node: cst.CSTNode, names: frozenset[str], words: tuple[str, ...], skip: tuple = ()) -> bool:
    """Does any name, attribute, keyword or string under `node` (nested definitions included,
    but those of the types `skip` names) contain one of `words` or is one of `names`?"""
    for part in walk(node, skip=skip):
        kind = type(part)
        if kind is cst.Name:
            text = part.value  # type: ignore[attr-defined]
            if text in names or _spelled(text, words):
                return True
        elif kind is cst.SimpleString and _spelled(part.value, words):  # type: ignore[attr-defined]
            return True
        elif kind is cst.FormattedStringText and _spelled(part.value, words):  # type: ignore[attr-defined]
            return True
    return False

