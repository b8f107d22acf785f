"""Which statements surround a node: loops (a syntax query; no decision about streams here)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

_LOOPS = (cst.For, cst.While)


def outermost_loop(scope: cst.CSTNode, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The outermost `for`/`while` of `scope` (nested functions apart) that holds `node`."""
    stack: list[tuple[cst.CSTNode, Optional[cst.CSTNode]]] = [(scope, None)]
    while stack:
        current, loop = stack.pop()
        if current is node:
            return loop
        if current is not scope and isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        inner = loop if loop is not None or not isinstance(current, _LOOPS) else current
        stack.extend((child, inner) for child in current.children)
    return None


def holds(outer: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Is `node` inside `outer`?"""
    stack = [outer]
    while stack:
        current = stack.pop()
        if current is node:
            return True
        stack.extend(current.children)
    return False


def loop_counters(loop: cst.CSTNode) -> frozenset[str]:
    """The names a `for` loop counts its iterations with: its target name, or the count of
    `enumerate(...)` (`for i, x in enumerate(xs)`); none for a `while` loop."""
    if not isinstance(loop, cst.For):
        return frozenset()
    if isinstance(loop.target, cst.Name):
        return frozenset({loop.target.value})
    counted = isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Name) and loop.iter.func.value == "enumerate"
    if counted and isinstance(loop.target, cst.Tuple) and isinstance(loop.target.elements[0].value, cst.Name):
        return frozenset({loop.target.elements[0].value.value})
    return frozenset()
