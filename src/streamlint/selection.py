"""Which rules run: rule selectors (codes, prefixes, ALL) resolved the way ruff does.

A selector is `ALL`, a full code (`SL101`) or a prefix (`SL`, `SL1`, `SL10`). Settings
stack *layers* of selection (the config file's, then the command line's); inside a
layer the most specific matching selector decides, and `ignore` wins a tie.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

from streamlint import rules as registry

ALL = "ALL"
SOURCE_ERROR = "SL000"  # unreadable or unparsable file: always reported
SOURCE_ERROR_NAME = "source-error"

_SELECTOR = re.compile(r"SL\d{0,3}")


class SelectorError(ValueError):
    """A selector that names no rule (message says which and what would be valid)."""


@dataclass(frozen=True)
class RuleSelection:
    """One layer of rule selection. `select=None` keeps what earlier layers enabled."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return self.select is None and not self.extend_select and not self.ignore


def rule_codes() -> tuple[str, ...]:
    # Looked up through the module so tests can swap the registry for fake rules.
    return registry.rule_codes()


def known_codes() -> tuple[str, ...]:
    return (SOURCE_ERROR, *rule_codes())


def normalize(selector: str) -> str:
    return selector.strip().upper()


def validate(selector: str, codes: Iterable[str] | None = None) -> str:
    """The normalized selector, or SelectorError when it can match no known code."""
    sel = selector.strip()
    pool = tuple(codes) if codes is not None else known_codes()
    if sel != sel.upper():  # as in ruff: codes are upper case, `sl101` is no code
        raise SelectorError(
            f"unknown rule selector {selector!r}: rule codes are upper case "
            f"(did you mean {sel.upper()}?)"
        )
    if sel == ALL:
        return sel
    if _SELECTOR.fullmatch(sel) and any(code.startswith(sel) for code in pool):
        return sel
    hint = difflib.get_close_matches(sel, pool, n=1)
    extra = f"; did you mean {hint[0]}?" if hint else ""
    raise SelectorError(
        f"unknown rule selector {selector!r}: expected a rule code (like SL101), "
        f"a code prefix (like SL1) or ALL{extra}"
    )


def matches(selector: str, code: str) -> bool:
    return selector == ALL or code.startswith(selector)


def _specificity(selector: str) -> int:
    return 0 if selector == ALL else len(selector)


def _decide(layer: RuleSelection, code: str, before: bool) -> bool:
    best: tuple[int, bool] | None = None  # (specificity, enabled)
    enabling = (layer.select or ()) + layer.extend_select
    for sel in enabling:
        if matches(sel, code) and (best is None or _specificity(sel) > best[0]):
            best = (_specificity(sel), True)
    for sel in layer.ignore:
        if matches(sel, code) and (best is None or _specificity(sel) >= best[0]):
            best = (_specificity(sel), False)
    if best is not None:
        return best[1]
    return before if layer.select is None else False


@lru_cache(maxsize=256)
def enabled_codes(layers: tuple[RuleSelection, ...], codes: tuple[str, ...]) -> frozenset[str]:
    """The codes enabled after applying every layer in order (all codes start enabled)."""
    return frozenset(code for code in codes if _enabled(layers, code))


def _enabled(layers: Sequence[RuleSelection], code: str) -> bool:
    state = True
    for layer in layers:
        state = _decide(layer, code, state)
    return state


def is_ignored(selectors: Iterable[str], code: str) -> bool:
    return any(matches(sel, code) for sel in selectors)
