"""Class composition across calls: what one call of a public method leaves pending on `self`
meets what the next call of it does (RacerD's per-class pairs, ordered by the evidence that
a public method is called again: per step, per batch). Both calls are the method's summary
applied to one receiver; accesses to its arguments and its own allocations are other memory
in each call and drop out, so only `self`'s state can race."""

from __future__ import annotations

from streamlint.model.domain.order import Conflict
from streamlint.model.domain.paths import Path, Root
from streamlint.model.domain.state import State
from streamlint.model.domain.values import AbsValue, ValueKind
from streamlint.model.summary.apply import Binding, apply
from streamlint.model.summary.function_summary import FunctionSummary

FIRST, NEXT = "<a call>", "<the next call>"


def next_call_conflicts(summary: FunctionSummary, receiver_state: tuple) -> list[Conflict]:
    receiver = AbsValue(ValueKind.OBJECT, identity=Path(Root.self_()))
    state = State()
    for attr, value in receiver_state:
        if attr and not attr.startswith("<"):
            state = state.store(Path(Root.self_()).attr(attr), value)
    # the first call's own conflicts are its method's walk's to report: its missing waits are
    # not assumed here, so the next call meets all the last call left pending
    first = apply(summary, state, Binding(FIRST, (), receiver), reported=False)
    second = apply(summary, first.state, Binding(NEXT, (), receiver))
    return [c for c in second.conflicts if c.earlier.chain[:1] == (FIRST,) and c.later.chain[:1] == (NEXT,)]
