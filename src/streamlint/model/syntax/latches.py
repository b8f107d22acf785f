"""Latches: attributes a class starts `False` and only ever sets `True` (`self.is_initialized`), on the side of its own
test that found them unset, so once set they stay set."""

from __future__ import annotations

import libcst as cst

from streamlint.model.syntax.children import walk


def latches(tree: cst.Module) -> dict[str, frozenset[str]]:
    """Class name -> the attributes its methods store only as written booleans on their receiver, `False` nowhere
    but in `__init__` (or the class body) and `True` in some other method, on the side of a test of the class that
    found it unset (`if not self.ready: self._initialize()`, which sets it): a one-way flag set by the class's own
    flow, no now-and-then switch (a debug flag a caller turns on by a method stays a flag)."""
    found: dict[str, frozenset[str]] = {}
    for statement in tree.body:
        if type(statement) is cst.ClassDef:
            kept = _latched(statement)
            if kept:
                found[statement.name.value] = kept
    return found


def _latched(cls: cst.ClassDef) -> frozenset[str]:
    set_true: set[str] = set()
    other: set[str] = set()  # stored otherwise: a computed value, `False` after `__init__`, an augmented store
    setters: dict[str, set[str]] = {}  # attribute -> the methods that set it True
    tests: list[tuple[str, cst.If]] = []  # (receiver, an `if` of a method)
    for method in cls.body.body:
        if type(method) is not cst.FunctionDef:
            continue
        params = (*method.params.posonly_params, *method.params.params)
        if not params:
            continue
        receiver = params[0].name.value
        starting = method.name.value == "__init__"
        for node in walk(method, skip=()):
            if type(node) is cst.If:
                tests.append((receiver, node))
            for attr, value in _receiver_stores(node, receiver):
                if value == "True" and not starting:
                    set_true.add(attr)
                    setters.setdefault(attr, set()).add(method.name.value)
                elif value != "False" or not starting:
                    other.add(attr)
    candidates = set_true - other
    return frozenset(attr for attr in candidates
                     if any(_sets_when_unset(node, receiver, attr, setters[attr]) for receiver, node in tests))


def _sets_when_unset(node: cst.If, receiver: str, attr: str, setters: set[str]) -> bool:
    """Does the `if` test `not self.attr` (alone or with `and`) and set it on that side (itself, or by calling a
    method of the receiver that does)?"""
    if not _tests_unset(node.test, receiver, attr):
        return False
    for inner in walk(node.body, skip=()):
        if any(a == attr and v == "True" for a, v in _receiver_stores(inner, receiver)):
            return True
        if type(inner) is cst.Call and type(inner.func) is cst.Attribute and type(inner.func.value) is cst.Name \
                and inner.func.value.value == receiver and inner.func.attr.value in setters:
            return True
    return False


def _tests_unset(test: cst.BaseExpression, receiver: str, attr: str) -> bool:
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        return _tests_unset(test.left, receiver, attr) or _tests_unset(test.right, receiver, attr)
    if type(test) is not cst.UnaryOperation or type(test.operator) is not cst.Not:
        return False
    flag = test.expression
    return type(flag) is cst.Attribute and type(flag.value) is cst.Name and flag.value.value == receiver \
        and flag.attr.value == attr


def _receiver_stores(node: cst.CSTNode, receiver: str) -> list[tuple[str, str]]:
    """(attribute, the written constant or "") of each store on `receiver` the node makes."""
    if type(node) is cst.Assign:
        targets = [t.target for t in node.targets]
        value = node.value.value if type(node.value) is cst.Name else ""
    elif type(node) in (cst.AugAssign, cst.AnnAssign):
        targets, value = [node.target], ""
        if type(node) is cst.AnnAssign and type(node.value) is cst.Name:
            value = node.value.value
    else:
        return []
    found = []
    for target in targets:
        parts = target.elements if type(target) in (cst.Tuple, cst.List) else ()
        for t in (target, *(p.value for p in parts)):
            if type(t) is cst.Attribute and type(t.value) is cst.Name and t.value.value == receiver:
                found.append((t.attr.value, "" if parts else value))
    return found
