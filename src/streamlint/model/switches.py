"""Configuration switches: `if` tests a class decides once, at construction.

`if self.overlap_comm:` on an attribute that only `__init__` sets is no rare branch
such as `if step % 100 == 0:` or `if debug:` in a loop: with the option on, the body
runs on every call. So a helper called under such a test is called on every call of
a hot caller (analysis.mark_hot_helpers), as it is with the option on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

import libcst as cst

from streamlint.model.ops import HOST_SYNCS, OpKind
from streamlint.model.walk_common import rare_test


@dataclass(frozen=True)
class Options:
    """A class's options: attributes only `__init__` sets (`fixed`), and flags `__init__`
    sets to `True` that a setter may turn off (`on`: their branch runs by default)."""

    fixed: frozenset[str] = frozenset()
    on: frozenset[str] = frozenset()


def config_attributes(text: str) -> Options:
    """The options of a module's classes (see Options), read from its text line by line:
    which `def` each `self.x = ...` is in (by indentation). Classes are not told apart:
    an attribute some method outside `__init__` sets is no fixed option in any class
    (fewer switches, never more). A visitor over every method costs seconds on big trees."""
    in_init: set[str] = set()
    true_in_init: set[str] = set()
    elsewhere: set[str] = set()
    stack: list[tuple[int, str]] = []  # enclosing defs: (indentation, name)
    for line in text.splitlines():
        stripped = line.lstrip()
        if not stripped or stripped.startswith(("#", ")", "]", "}")):
            continue  # (a closing bracket is no statement: `) -> None:` ends a signature)
        indent = len(line) - len(stripped)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        header = _DEF.match(stripped)
        if header:
            stack.append((indent, header.group(1)))
            continue
        if not stack or "self." not in stripped:
            continue
        if stack[-1][1] != "__init__":
            # A container another method fills (`self.x[k] = v`, `self.x.append(v)`): its
            # size (`len(self.x) == 0`) is state, not an option.
            elsewhere.update(_SELF_FILLED.findall(stripped))
        operator = _ASSIGN.search(stripped)
        target = stripped[:operator.start()] if operator else ""
        if not target or "(" in target:
            continue  # no assignment (`f(x=1)`, `a == b`)
        names = set(_SELF_TARGET.findall(target))
        if stack[-1][1] == "__init__":
            in_init.update(names)
            if operator.group() == "=" and stripped[operator.end():].strip() == "True":
                true_in_init.update(names)
        else:
            elsewhere.update(names)
    return Options(frozenset(in_init - elsewhere), frozenset(true_in_init & elsewhere))


_DEF = re.compile(r"(?:async\s+)?def\s+(\w+)")
# The first assignment operator of a line (`=`, `+=`, ...; not `==`, `<=`, `!=`).
_ASSIGN = re.compile(r"(?:[-+*/%|&^@]|//|\*\*|<<|>>)?(?<![=!<>])=(?!=)")
# `self.x` as a target (`self.a, self.b = `, `self.x: int = `), not `self.x[k]` or `self.x.y`.
_SELF_TARGET = re.compile(r"\bself\.(\w+)\b(?!\s*[\[.])")
# `self.x` filled in place: a subscript store or a mutating method of a list, dict or set.
_SELF_FILLED = re.compile(
    r"\bself\.(\w+)\s*(?:\[[^\]]*\]\s*(?:[-+*/%|&^@]|//|\*\*|<<|>>)?=(?!=)"
    r"|\.(?:append|extend|insert|update|setdefault|add|clear|pop|popitem|remove|discard)\()")


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
        return _config_attribute(_measured(test.left), config.fixed) and all(_constant(c.comparator) for c in test.comparisons)
    return False


def _measured(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`len(self.groups) == 0` tests the option as `if not self.groups:` does: the
    container `len` measures stands for the test's left side."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len" \
            and len(expr.args) == 1 and not expr.args[0].star and expr.args[0].keyword is None:
        return expr.args[0].value
    return expr


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


def option_sides(test: cst.BaseExpression, config: Options) -> tuple[tuple, tuple]:
    """For a switch test (`self.overlap_comm`, `not self.reduce_scatter`, `self.a and
    self.b`): the options each side of the `if` runs under, as (attribute, its value
    there), the value None where that side does not tell it. Attributes only `__init__`
    sets; nothing for other tests."""
    if not switch_test(test, Options(config.fixed)):
        return (), ()
    return _sides(test, config.fixed)


def _sides(test: cst.BaseExpression, fixed: frozenset[str]) -> tuple[tuple, tuple]:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        then, other = _sides(test.expression, fixed)
        return other, then
    if _config_attribute(test, fixed):
        name = test.attr.value  # type: ignore[attr-defined]
        return ((name, True),), ((name, False),)
    if isinstance(test, cst.BooleanOperation):
        left, right = _sides(test.left, fixed), _sides(test.right, fixed)
        if isinstance(test.operator, cst.And):  # (the body: both true; the `else`: either false)
            return left[0] + right[0], tuple((a, None) for a, _ in left[1] + right[1])
        return tuple((a, None) for a, _ in left[0] + right[0]), left[1] + right[1]
    if isinstance(test, cst.Comparison) and _config_attribute(_measured(test.left), fixed):
        name = _measured(test.left).attr.value  # type: ignore[attr-defined]
        return ((name, None),), ((name, None),)
    return (), ()


def excluded(under: tuple, options: dict[str, bool]) -> bool:
    """Whether an operation run under these option sides (`under`) cannot run in a walk
    that follows `options`' values."""
    return any(value is not None and options.get(attr, value) != value for attr, value in under)


def option_truth(test: cst.BaseExpression, options: dict[str, bool]) -> Optional[bool]:
    """The truth of a test in a walk that follows one value of some options (`options`):
    None where it depends on anything else."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = option_truth(test.expression, options)
        return None if inner is None else not inner
    if isinstance(test, cst.Attribute) and isinstance(test.value, cst.Name) and test.value.value == "self":
        return options.get(test.attr.value)
    if isinstance(test, cst.BooleanOperation):
        left, right = option_truth(test.left, options), option_truth(test.right, options)
        decisive = isinstance(test.operator, cst.Or)  # (`or`: one true side decides; `and`: one false side)
        if left is decisive or right is decisive:
            return decisive
        if left is not None and right is not None:
            return not decisive
    return None


def option_worlds(ops: Iterable, limit: int) -> tuple:
    """Option values (one or two options) under which a walk's host syncs all drop out
    while its waits for other streams all stay (`reduce_scatter=False` with
    `contiguous_gradients=True`, not `overlap_comm=False`, which drops the side stream
    too): at most `limit` of them, fewest options first. Only syncs that run under an
    option test count; none when there is none."""
    syncs = [op.options for op in ops if (op.host_blocking or op.kind in HOST_SYNCS) and op.options]
    if not syncs:
        return ()
    waits = [op.options for op in ops if op.kind in (OpKind.WAIT_STREAM, OpKind.STREAM_WAIT_EVENT)]
    sides = sorted({(attr, not value) for under in syncs for attr, value in under if value is not None})
    sides = [side for side in sides if not any(excluded(under, dict((side,))) for under in waits)]
    sides = sides[:_SIDES_MAX]
    candidates = [(side,) for side in sides] + [
        (a, b) for i, a in enumerate(sides) for b in sides[i + 1:] if a[0] != b[0]]
    worlds = []
    for world in candidates:
        options = dict(world)
        if any(excluded(under, options) for under in waits):
            continue
        if all(excluded(under, options) for under in syncs):
            if not any(set(found) <= set(world) for found in worlds):
                worlds.append(world)
        if len(worlds) >= limit:
            break
    return tuple(worlds)


_SIDES_MAX = 6


NO_OPTIONS = Options()
