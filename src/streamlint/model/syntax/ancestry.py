"""Where a node sits in its module's tree (its parents, built once per module; the loops around it), and the same
questions asked of a subtree without the parents."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from streamlint.model.syntax.children import SCOPES, child_nodes, walk

LOOPS = (cst.For, cst.While)


# The last module's parents (each rule of a file asks for its module's Ancestry: built once)
_last: tuple = (None, {})


class Ancestry:
    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._built: Optional[dict[int, cst.CSTNode]] = None

    @property
    def _parents(self) -> dict[int, cst.CSTNode]:
        """Built on the first question (a walk of the whole module; a rule with no candidate asks none)."""
        global _last
        if self._built is None:
            if _last[0] is self.module:
                self._built = _last[1]
            else:
                self._built = {}
                stack: list[cst.CSTNode] = [self.module]
                while stack:
                    current = stack.pop()
                    for child in child_nodes(current):
                        self._built[id(child)] = current
                        stack.append(child)
                _last = (self.module, self._built)
        return self._built

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self._parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self._parents.get(id(node))
        while current is not None:
            yield current
            current = self._parents.get(id(current))

    def loops_around(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The `for`/`while` statements of its own function around it, outermost first (not a `for`'s header)."""
        found = []
        child = node
        for current in self.ancestors(node):
            if isinstance(current, SCOPES):
                break
            if isinstance(current, cst.For) and child is current.body:
                found.append(current)
            elif isinstance(current, cst.While) and child in (current.body, current.test):
                found.append(current)
            child = current
        return found[::-1]

    def every_pass(self, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
        """Whether `node` runs on every pass of `loop` that reaches it in order: not in a branch of a test inside the
        loop (a test's own condition runs), not past the first operand of `and`/`or`, not in an exception
        handler, a nested loop or a comprehension."""
        child = node
        for current in self.ancestors(node):
            if current is loop:  # (in its body, or a `while` test; a `for` header runs once)
                return child is current.body or (isinstance(current, cst.While) and child is current.test)
            if not _always_runs(current, child):
                return False
            child = current
        return False

    def leaves_after(self, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
        """Does every pass of `loop` that reaches `node` leave the loop after it: a `return`, a `raise`, or a `break`
        of that loop later in a block around it (a loop that tries its items until one works: `node` runs once), or the
        `return` or `raise` that `node` is part of (an error message's values)?"""
        child = node
        for current in self.ancestors(node):
            if current is loop or isinstance(current, SCOPES):
                return False
            if isinstance(current, (cst.Return, cst.Raise)):
                return True
            if isinstance(current, cst.IndentedBlock):
                later = current.body[next((i for i, s in enumerate(current.body) if s is child), len(current.body)) + 1:]
                # (a `break` leaves the innermost loop around it: `loop`'s only when no other lies between)
                innermost = next((a for a in self.ancestors(current) if isinstance(a, (cst.For, cst.While))), None)
                exits = (cst.Return, cst.Raise, cst.Break) if innermost is loop else (cst.Return, cst.Raise)
                if any(isinstance(s, cst.SimpleStatementLine) and any(isinstance(p, exits) for p in s.body) for s in later):
                    return True
            child = current
        return False

    def inside(self, node: cst.CSTNode, ancestor: cst.CSTNode) -> bool:
        return node is ancestor or any(a is ancestor for a in self.ancestors(node))

    def exclusive(self, node: cst.CSTNode, other: cst.CSTNode) -> bool:
        """Are the two on different sides of one test (an `if` and its `else`, or a later `elif`): no pass runs both?"""
        child = node
        for current in self.ancestors(node):
            if self.inside(other, current):
                if isinstance(current, (cst.If, cst.IfExp)) and child is not current.test:
                    own_side = current.body if child is current.body else current.orelse
                    return not self.inside(other, current.test) and not self.inside(other, own_side)
                return False
            child = current
        return False

    def runs_whenever(self, node: cst.CSTNode, later: cst.CSTNode) -> bool:
        """Does `node` run whenever `later` does, in the same pass: between it and the first node around both, no side
        of a test it alone is on (an `if`'s test runs before either side), no right operand of `and`/`or`, handler,
        loop, comprehension or nested function? (Which comes first in the text is the caller's to ask.)"""
        child = node
        for current in self.ancestors(node):
            if self.inside(later, current):
                if isinstance(current, (cst.If, cst.IfExp, cst.While)):
                    return child is current.test or (isinstance(current, cst.While) and child is current.body)
                if isinstance(current, cst.BooleanOperation):
                    return child is current.left
                return not isinstance(current, (cst.For, cst.BaseComp, cst.ExceptHandler)) or (
                    isinstance(current, cst.For) and child is current.body)
            if not _always_runs(current, child):
                return False
            child = current
        return False


def _always_runs(current: cst.CSTNode, child: cst.CSTNode) -> bool:
    """Does `child` run whenever the node `current` around it does: not a side of a test (its condition runs), not the
    right operand of `and`/`or`, nor in a handler, a loop, a comprehension or a nested function?"""
    if isinstance(current, SCOPES + (cst.For, cst.While, cst.ExceptHandler, cst.BaseComp)):
        return False
    if isinstance(current, (cst.If, cst.IfExp)) and child is not current.test:
        return False
    return not (isinstance(current, cst.BooleanOperation) and child is current.right)


def comprehension_of(node: cst.CSTNode, ancestry: Ancestry) -> Optional[cst.CSTNode]:
    """The innermost comprehension around the node in its function (its first iterable is not in it: Python
    evaluates that once, before the first element: `[f(x) for x in t.tolist()]` reads `t` once)."""
    below, child = None, node
    for current in ancestry.ancestors(node):
        if isinstance(current, SCOPES):
            return None
        if isinstance(current, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)) \
                and not (child is current.for_in and below is current.for_in.iter):
            return current
        below, child = child, current
    return None


def outermost_loop(scope: cst.CSTNode, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    """The outermost `for`/`while` of `scope` (nested functions apart) that holds `node`."""
    stack: list[tuple[cst.CSTNode, Optional[cst.CSTNode]]] = [(scope, None)]
    while stack:
        current, loop = stack.pop()
        if current is node:
            return loop
        if current is not scope and isinstance(current, SCOPES):
            continue
        inner = loop if loop is not None or not isinstance(current, LOOPS) else current
        stack.extend((child, inner) for child in child_nodes(current))
    return None


def holds(outer: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Is `node` inside `outer`?"""
    return any(current is node for current in walk(outer, ()))


def loop_counters(loop: cst.CSTNode) -> frozenset[str]:
    """The names a `for` loop counts its iterations with: its target name, or `enumerate`'s count."""
    if not isinstance(loop, cst.For):
        return frozenset()
    if isinstance(loop.target, cst.Name):
        return frozenset({loop.target.value})
    counted = (isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Name)
               and loop.iter.func.value == "enumerate")
    if counted and isinstance(loop.target, cst.Tuple) and isinstance(loop.target.elements[0].value, cst.Name):
        return frozenset({loop.target.elements[0].value.value})
    return frozenset()
