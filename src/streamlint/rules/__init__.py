"""The rule registry: every module named `slNNN_*.py` in this package defines one rule.

Discovery is automatic so that adding a rule is adding a file (no hand-kept list).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from streamlint.rules.base import Finding, Rule

__all__ = ["Finding", "Rule", "all_rules", "rule_by_code", "rule_codes"]


@cache
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if not (info.name.startswith("sl") and info.name[2:5].isdigit()):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule:
                if value.__module__ == module.__name__:
                    found.append(value)
    return tuple(sorted(found, key=lambda r: r.code))


def rule_codes() -> tuple[str, ...]:
    """Every rule's code, sorted, from the module names alone (`sl101_...` is SL101).

    Importing a rule loads the stream model and libcst; selecting rules and keying the
    result cache need only the codes, so a run served from the cache imports neither.
    """
    return _codes_from_module_names()


@cache
def _codes_from_module_names() -> tuple[str, ...]:
    return tuple(
        sorted(
            f"SL{info.name[2:5]}"
            for info in pkgutil.iter_modules(__path__)
            if info.name.startswith("sl") and info.name[2:5].isdigit()
        )
    )


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code.upper():
            return rule
    return None
