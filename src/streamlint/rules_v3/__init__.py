"""The rules as they read the v3 model, staged beside the v2 rules until the switch (issue 27):
the same codes, classes and documentation, deciding from `analysis.v3` and `model/readings/`.
Not registered: the product runs `streamlint.rules`. `scripts/v3_rule_diff.py` compares their
output with the pinned snapshots; the switch moves these modules over `streamlint/rules/`.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from streamlint.rules.base import Rule


@cache
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if not (info.name.startswith("sl") and info.name[2:5].isdigit()):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.__module__ == module.__name__:
                found.append(value)
    return tuple(sorted(found, key=lambda r: r.code))
