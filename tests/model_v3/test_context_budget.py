"""The one budget of contexts per function (solver.MAX_CONTEXTS): past it, what callers tell of their arguments is
dropped, but a closure's cells stay. A closure's cells are its enclosing walk's own names (the buffers, events and
streams a double-buffered pipeline closes over), as many as that walk's contexts, which the budget already bounds;
dropped, the closure's work goes unseen under the enclosing walk's later contexts (its event records with it, so a
wait for them orders everything). An argument passed for a parameter whose default is a value (`device="cpu"`)
stays as passed, untold: the default says nothing of a call that passes one."""

import libcst as cst

from streamlint.model.domain.paths import CELL
from streamlint.model.domain.values import PASSED_UNTOLD, AbsValue, Memory, ValueKind
from streamlint.model.interproc.program import Program, unit_of
from streamlint.model.interproc.solver import MAX_CONTEXTS, Solver
from streamlint.model.transfer.frame import CallContext


def _solver() -> Solver:
    return Solver(Program(unit_of("m", cst.parse_module("def f():\n    def g(i, device='cpu'):\n        pass\n"))))


def _pinned(n: int) -> AbsValue:
    return AbsValue(ValueKind.BUFFER, "numpy", Memory.PINNED if n % 2 else Memory.PAGEABLE, rank=n)


def test_past_the_budget_a_closures_cells_stay_and_what_callers_tell_goes():
    solver = _solver()
    for n in range(MAX_CONTEXTS):
        assert solver._within_budget(solver.program.function("m.f.g"), CallContext(((f"{CELL}buf", _pinned(n)),))) is not None
    past = CallContext(((f"{CELL}buf", _pinned(MAX_CONTEXTS)), ("i", _pinned(0))), hot="m.f")
    kept = solver._within_budget(solver.program.function("m.f.g"), past)
    assert dict(kept.args) == {f"{CELL}buf": _pinned(MAX_CONTEXTS)}
    assert kept.hot == "m.f"


def test_within_the_budget_the_context_is_kept_whole():
    solver = _solver()
    context = CallContext(((f"{CELL}buf", _pinned(1)), ("i", _pinned(2))))
    assert solver._within_budget(solver.program.function("m.f.g"), context) == context


def test_past_the_budget_a_passed_device_still_hides_the_default():
    solver = _solver()
    for n in range(MAX_CONTEXTS):
        solver._within_budget(solver.program.function("m.f.g"), CallContext((("i", _pinned(n)),)))
    past = CallContext((("device", AbsValue(ValueKind.DEVICE, "torch", Memory.DEVICE)), ("i", _pinned(0))))
    kept = solver._within_budget(solver.program.function("m.f.g"), past)
    assert dict(kept.args) == {"device": PASSED_UNTOLD}
