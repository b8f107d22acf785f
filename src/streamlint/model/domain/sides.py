"""The sides of tests a piece of work runs under (`Effect.branch`): "<test>:1" the body, "<test>:0"
the other side. A test named by a configuration value (an option of `self`, `<self>.attr`; a
parameter the function never rebinds, `f?name`, compared with a constant or not: `f?name==2`) is
taken the same way by every later test of that value in one call (D-18); a test named by its
ordinal (`f?3`) is taken once per walk."""

from __future__ import annotations

from typing import Iterable


def exclusive(a: Iterable[str], b: Iterable[str]) -> bool:
    """Work made on two sides of one test (the same test, another side), or in the bodies of two
    tests of one configuration value against different constants (`mode == 2`, `mode == 3`)."""
    if not a or not b:
        return False
    sides = dict(tag.rsplit(":", 1) for tag in a)
    compared = {test.partition("==")[0]: test for test, side in sides.items() if side == "1" and "==" in test}
    for test, side in (tag.rsplit(":", 1) for tag in b):
        if sides.get(test, side) != side:
            return True
        value, eq, _ = test.partition("==")
        if eq and side == "1" and compared.get(value, test) != test:
            return True
    return False


def configuration_sides(branch: Iterable[str]) -> frozenset[str]:
    """The sides of a branch that name a configuration value: those a later test of the same value
    takes again. The sides of tests named by their ordinal are never met again after the join."""
    return frozenset(tag for tag in branch if not tag.rsplit(":", 1)[0].rpartition("?")[2].isdigit())
