"""Applying a summary counts against the file's time budget: a walk busy applying large summaries at many calls
stops at its deadline like one busy with statements (the budget is checked cooperatively, deadline.tick)."""

import pytest

from streamlint import deadline
from streamlint.model.domain.paths import Path, Root
from streamlint.model.domain.state import State
from streamlint.model.domain.streams import StreamRef
from streamlint.model.summary.apply import Binding, apply
from streamlint.model.summary.effects import Effect, EffectKind
from streamlint.model.summary.function_summary import FunctionSummary


def _summary(accesses: int) -> FunctionSummary:
    buffer = Path(Root.param(0, "buf"))
    effects = tuple(Effect(EffectKind.ACCESS, f"m.g#{i}", buffer, StreamRef.ambient("torch"), write=bool(i % 2))
                    for i in range(accesses))
    return FunctionSummary("m.g", ("buf",), effects)


def test_applying_a_summary_past_the_deadline_stops():
    with deadline.bounded(0.0), pytest.raises(deadline.AnalysisTimeout):
        apply(_summary(4 * deadline.CHECK_EVERY), State(), Binding("m.f#1", ()))


def test_applying_within_the_budget_completes():
    with deadline.bounded(None):
        applied = apply(_summary(4 * deadline.CHECK_EVERY), State(), Binding("m.f#1", ()))
    assert applied.returns is not None
