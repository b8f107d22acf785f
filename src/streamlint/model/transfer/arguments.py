"""The evaluated arguments of one call, found by position or keyword as the fact tables say."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from streamlint.model.api.facts import Arg
from streamlint.model.domain.state import State
from streamlint.model.domain.values import AbsValue, truth

Handled = tuple[AbsValue, State]  # what a call evaluates to, and the state after it


@dataclass(frozen=True)
class Arguments:
    positional: tuple[tuple[AbsValue, cst.BaseExpression], ...]
    keywords: dict[str, tuple[AbsValue, cst.BaseExpression]]
    receiver: Optional[AbsValue]
    node: cst.Call
    spread: Optional[AbsValue] = None  # an item of a `*xs` whose count the text does not tell (each item past it)

    def value(self, where: Optional[Arg]) -> Optional[AbsValue]:
        found = self.located(where)
        return found[0] if found is not None else None

    def expression(self, where: Optional[Arg]) -> Optional[cst.BaseExpression]:
        found = self.located(where)
        return found[1] if found is not None else None

    def located(self, where: Optional[Arg]) -> Optional[tuple[AbsValue, cst.BaseExpression]]:
        if where is None:
            return None
        if where.kw is not None and where.kw in self.keywords:
            return self.keywords[where.kw]
        if where.pos is not None and where.pos < len(self.positional):
            return self.positional[where.pos]
        return None

    def values(self) -> list[AbsValue]:
        spread = [self.spread] if self.spread is not None else []
        return [v for v, _ in self.positional] + spread + [v for v, _ in self.keywords.values()]

    def flag(self, where: Optional[Arg], default: bool) -> Optional[bool]:
        """What a True/False argument (a literal, or a name the walk knows holds one) says; the default when absent."""
        found = self.located(where)
        return default if found is None else truth(found[0])

    def string_literal(self, where: Optional[Arg]) -> Optional[str]:
        expression = self.expression(where)
        if isinstance(expression, cst.SimpleString):
            return expression.raw_value
        return None
