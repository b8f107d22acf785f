"""Wrap flagged statements in `record_function` ranges, keeping every line where it was.

A flagged simple statement becomes a one-line `with` on the same line:

    d = h_in[i].to("cuda", non_blocking=True)
    with _streamlint_rf("SL301:17"): d = h_in[i].to("cuda", non_blocking=True)

A finding in a compound statement's header (`if loss > 0:`, `while x.any():`) wraps the
flagged expression instead: `if _streamlint_truth("SL502:30", lambda: loss > 0):` (the
truth value is taken inside the range, since that is where the sync happens), or
`_streamlint_call(label, lambda: expr)` elsewhere. Line numbers do not change, so
tracebacks, the rule's rows and the trace's labels all agree. The three names are put
in builtins by the harness; the instrumented text is only ever run there.

Statements a message refers to ("written on `s1` at line 47") are wrapped too, as
`SL401:48:ref:47`, so the hazard checks can find the other side of a race.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from streamlint.diagnostics import Diagnostic
from streamlint.runtime.labels import Label

RANGE_FN, CALL_FN, TRUTH_FN = "_streamlint_rf", "_streamlint_call", "_streamlint_truth"
_LINE_REF = re.compile(r"\blines? (\d+)\b")
HAZARD_PREFIX = "SL4"


@dataclass(frozen=True)
class Target:
    row: int
    column: int  # 1-based, as in Diagnostic
    end_row: int
    end_column: int
    label: str


def targets_for(diagnostics: Iterable[Diagnostic], source_lines: int | None = None) -> list[Target]:
    """One target per finding, plus one per line its message refers to (hazards)."""
    out: list[Target] = []
    for d in diagnostics:
        if d.code == "SL000":
            continue
        out.append(Target(d.row, d.column, d.end_row, d.end_column, str(Label(d.code, d.row))))
        if not d.code.startswith(HAZARD_PREFIX):
            continue
        for ref in sorted({int(m) for m in _LINE_REF.findall(d.message)}):
            if ref != d.row and (source_lines is None or 1 <= ref <= source_lines):
                out.append(Target(ref, 0, ref, 0, str(Label(d.code, d.row, ref))))
    return out


@dataclass
class Result:
    source: str
    wrapped: dict[str, int]  # label -> row of the statement or expression wrapped
    skipped: dict[str, str]  # label -> why it could not be wrapped


def instrument(source: str, targets: Sequence[Target]) -> Result:
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    plan = _Planner(positions, targets)
    wrapper.visit(plan)
    transformer = _Wrapper(plan)
    new = wrapper.module.visit(transformer)
    skipped = {t.label: "no statement or expression found at that position"
               for t in targets if t.label not in plan.placed}  # fmt: skip
    skipped.update(plan.refused)
    return Result(new.code, {label: row for label, row in plan.placed.items()}, skipped)


def _contains(rng: CodeRange, row: int, column: int) -> bool:
    start = (rng.start.line, rng.start.column + 1)
    end = (rng.end.line, rng.end.column + 1)
    return start <= (row, column) <= end


class _Planner(cst.CSTVisitor):
    """Decides which node each target wraps: the simple statement line that holds it,
    else (a compound statement's header) the expression that starts at its position."""

    def __init__(self, positions, targets: Sequence[Target]) -> None:
        self.positions = positions
        self.targets = list(targets)
        self.statements: dict[cst.SimpleStatementLine, list[str]] = {}
        self.expressions: dict[cst.BaseExpression, list[tuple[str, bool]]] = {}
        self.placed: dict[str, int] = {}
        self.refused: dict[str, str] = {}
        self._tests: set[int] = set()
        self._headers: list[tuple[CodeRange, cst.CSTNode]] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        rng = self.positions[node]
        for t in self.targets:
            if t.label in self.placed:
                continue
            hit = (rng.start.line <= t.row <= rng.end.line) if t.column == 0 else _contains(rng, t.row, t.column)
            if hit:
                if any(isinstance(s, cst.ImportFrom) and s.module and getattr(s.module, "value", "") == "__future__"
                       for s in node.body):  # fmt: skip
                    self.refused[t.label] = "a __future__ import cannot be wrapped"
                    continue
                self.statements.setdefault(node, []).append(t.label)
                self.placed[t.label] = rng.start.line

    def visit_If(self, node: cst.If) -> None:
        self._tests.add(id(node.test))

    def visit_While(self, node: cst.While) -> None:
        self._tests.add(id(node.test))

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if not isinstance(original_node, cst.BaseExpression):
            return
        rng = self.positions.get(original_node)
        if rng is None:
            return
        for t in self.targets:
            if t.label in self.placed or t.column == 0:
                continue
            if (rng.start.line, rng.start.column + 1) != (t.row, t.column):
                continue
            if (rng.end.line, rng.end.column + 1) != (t.end_row, t.end_column):
                continue
            if _has_async_or_yield(original_node):
                self.refused[t.label] = "the expression awaits or yields"
                continue
            is_test = id(original_node) in self._tests
            self.expressions.setdefault(original_node, []).append((t.label, is_test))
            self.placed[t.label] = rng.start.line


def _has_async_or_yield(node: cst.CSTNode) -> bool:
    found = False

    class Finder(cst.CSTVisitor):
        def visit_Await(self, n: cst.Await) -> None:
            nonlocal found
            found = True

        def visit_Yield(self, n: cst.Yield) -> None:
            nonlocal found
            found = True

    node.visit(Finder())
    return found


def _label_call(fn: str, label: str, *rest: cst.Arg) -> cst.Call:
    return cst.Call(cst.Name(fn), [cst.Arg(cst.SimpleString(repr(label))), *rest])


class _Wrapper(cst.CSTTransformer):
    def __init__(self, plan: _Planner) -> None:
        self.plan = plan

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine):
        labels = self.plan.statements.get(original)
        if not labels:
            return updated
        items = [cst.WithItem(_label_call(RANGE_FN, label)) for label in labels]
        body = cst.SimpleStatementSuite(body=updated.body, trailing_whitespace=updated.trailing_whitespace)
        return cst.With(items=items, body=body, leading_lines=updated.leading_lines)

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        updated = super().on_leave(original, updated)
        wraps = self.plan.expressions.get(original) if isinstance(original, cst.BaseExpression) else None
        if not wraps or not isinstance(updated, cst.BaseExpression):
            return updated
        expr = updated
        for label, is_test in wraps:
            thunk = cst.Lambda(params=cst.Parameters(), body=expr.with_changes(lpar=[], rpar=[]))
            expr = _label_call(TRUTH_FN if is_test else CALL_FN, label, cst.Arg(thunk))
        return expr
