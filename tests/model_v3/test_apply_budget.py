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


def test_copies_of_one_operation_are_bounded():
    """A sync met through many call paths and test sides: at most MAX_VARIANTS copies, the last under no test; the
    accesses are untouched by this bound."""
    from streamlint.model.summary.function_summary import MAX_EFFECTS, MAX_VARIANTS, bounded

    copies = tuple(Effect(EffectKind.SYNC, "m.gc#3", stream=StreamRef.ambient("torch"), chain=(f"m.f{i}#1",),
                          branch=(f"m.f{i}?0:1",)) for i in range(MAX_EFFECTS + 50))
    kept, _ = bounded(copies)
    assert len(kept) == MAX_VARIANTS
    assert kept[-1].branch == () and all(e.branch for e in kept[:-1])
    few = copies[:10]
    assert bounded(few) == (few, False)  # (within the budget: every copy, as it was)
