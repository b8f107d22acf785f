"""Configuration switches: `if` tests a class decides once, at construction.

`if self.overlap_comm:` on an attribute that only `__init__` sets is no rare branch
such as `if step % 100 == 0:` or `if debug:` in a loop: with the option on, the body
runs on every call. So a helper called under such a test is called on every call of
a hot caller (analysis.mark_hot_helpers), as it is with the option on.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from streamlint.model.walk_common import rare_test


@dataclass(frozen=True)
class Options:
    """A class's options: attributes only `__init__` sets (`fixed`), and flags `__init__`
    sets to `True` that a setter may turn off (`on`: their branch runs by default)."""

    fixed: frozenset[str] = frozenset()
    on: frozenset[str] = frozenset()


def config_attributes(cls: cst.ClassDef) -> Options:
    """The options of a class (see Options)."""
    in_init: set[str] = set()
    true_in_init: set[str] = set()
    elsewhere: set[str] = set()
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef):
            finder = _AssignedAttributes()
            stmt.body.visit(finder)
            if stmt.name.value == "__init__":
                in_init.update(finder.found)
                true_in_init.update(finder.true)
            else:
                elsewhere.update(finder.found)
    return Options(frozenset(in_init - elsewhere), frozenset(true_in_init & elsewhere))


def switch_test(test: cst.BaseExpression, config: Options) -> bool:
    """Does this test decide its branch by configuration alone (with `and`, some part
    may be an ordinary data test that is no rare test either)?"""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return switch_test(test.expression, Options(config.fixed))
    if isinstance(test, cst.Attribute):
        return _config_attribute(test, config.fixed | config.on)
    if isinstance(test, cst.BooleanOperation):
        if isinstance(test.operator, cst.Or):
            return switch_test(test.left, config) or switch_test(test.right, config)
        return _steady(test.left, config) and _steady(test.right, config) \
            and (switch_test(test.left, config) or switch_test(test.right, config))
    if isinstance(test, cst.Comparison):
        return _config_attribute(test.left, config.fixed) and all(_constant(c.comparator) for c in test.comparisons)
    return False


def steady_else(test: cst.BaseExpression, config: Options) -> bool:
    """An `elif` after a switch: steady when its own test is a switch or no rare test."""
    return _steady(test, config)


def _steady(test: cst.BaseExpression, config: Options) -> bool:
    return switch_test(test, config) or not rare_test(test)


def _config_attribute(expr: cst.BaseExpression, config: frozenset[str]) -> bool:
    return (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
            and expr.value.value == "self" and expr.attr.value in config)


def _constant(expr: cst.BaseExpression) -> bool:
    """A literal or a name not read from `self` (`0`, `None`, `"fp16"`, `Strategy.LFU`)."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)):
        return not (isinstance(expr, cst.Name) and expr.value == "self")
    if isinstance(expr, cst.Attribute):
        return _constant(expr.value)
    return False


class _AssignedAttributes(cst.CSTVisitor):
    """`self.x` targets of assignments (nested functions included)."""

    def __init__(self) -> None:
        self.found: set[str] = set()
        self.true: set[str] = set()  # ... set to the literal `True`

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == "True":
            for target in node.targets:
                t = target.target
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                    self.true.add(t.attr.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self":
            self.found.add(target.attr.value)


NO_OPTIONS = Options()
