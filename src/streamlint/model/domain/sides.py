"""The sides of tests work runs under ("<test>:1" the body, "<test>:0" the other; configuration tests: D-18)."""

from __future__ import annotations

from typing import Iterable


def exclusive(a: Iterable[str], b: Iterable[str]) -> bool:
    """Work on two sides of one test, or in bodies of two tests of one configuration value against other constants."""
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
    """The sides of a branch that name a configuration value (a later test of it takes them again)."""
    return frozenset(tag for tag in branch if not tag.rsplit(":", 1)[0].rpartition("?")[2].isdigit())
