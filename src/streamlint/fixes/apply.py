"""Apply fixes to a source text, and check that they did what they claim.

The pieces of the engine's `lint_fix` (engine/lint.py): choose the fixes that can go
together, apply their edits and map positions across them (fixes/verify.py checks
the result).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from streamlint.diagnostics import Diagnostic
from streamlint.fixes.model import Edit
from streamlint.source import LineIndex


@dataclass
class FixOutcome:
    source: str  # the fixed text, or the original when nothing applied or a fix failed
    applied: list[Diagnostic] = field(default_factory=list)  # the findings fixed
    remaining: list[Diagnostic] = field(default_factory=list)  # findings in `source`
    error: Optional[str] = None  # why no fix was applied (a notebook that cannot take them back)
    # Fixes that were not applied, each with why (fixes/verify.py): the others were.
    refused: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.applied) and self.error is None


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (the caller has checked they do not overlap)."""
    index = LineIndex(text)
    spans = sorted(
        ((index.offset(e.row, e.column), index.offset(e.end_row, e.end_column), e.content)
         for e in edits),
        key=lambda span: (span[0], span[1]),
    )
    out, pos = [], 0
    for start, end, content in spans:
        if start < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:start])
        out.append(content)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _overlaps(a: tuple, b: tuple) -> bool:
    (a0, a1), (b0, b1) = a, b
    if a0 == a1 and b0 == b1:
        return False  # two insertions at one point: both apply, in order
    return a0 < b1 and b0 < a1 or (a0 == a1 and b0 < a0 < b1) or (b0 == b1 and a0 < b0 < a1)


def choose(diagnostics: Sequence[Diagnostic], unsafe: bool) -> tuple[list[Diagnostic], list[Edit]]:
    """Fixes that can be applied together: in order of position, skipping any whose
    edits overlap an earlier chosen one's. Identical edits (two findings asking for the
    same inserted wait) are applied once."""
    chosen: list[Diagnostic] = []
    edits: list[Edit] = []
    taken: list[tuple] = []
    for diag in sorted(diagnostics):
        fix = diag.fix
        if fix is None or not fix.applies(unsafe):
            continue
        new = [e for e in fix.edits if e not in edits]
        spans = [((e.row, e.column), (e.end_row, e.end_column)) for e in new]
        if any(_overlaps(s, t) for s in spans for t in taken):
            continue
        chosen.append(diag)
        edits.extend(new)
        taken.extend(spans)
    return chosen, edits


def map_position(old: str, new: str, edits: Sequence[Edit], row: int, column: int) -> tuple[int, int]:
    """Where (row, column) of `old` is in `new` (the text after `edits`). A position
    inside a replaced span, or at its start, maps to the start of its replacement."""
    old_index = LineIndex(old)
    at = old_index.offset(row, column)
    shift = 0
    for e in edits:
        start = old_index.offset(e.row, e.column)
        end = old_index.offset(e.end_row, e.end_column)
        if end <= at and not (start == end == at):
            shift += len(e.content) - (end - start)  # wholly before (or an insertion before)
        elif start == end == at:
            shift += len(e.content)  # inserted right before the position
        elif start < at < end:
            at = start  # inside a replaced span
    return LineIndex(new).position(at + shift)


def inverse_edits(old: str, new: str, edits: Sequence[Edit]) -> list[Edit]:
    """The edits that turn `new` (the text after `edits`) back into `old`: with
    `map_position` they tell where a position of the fixed text was (a position in
    inserted text, at the insertion point)."""
    old_index, new_index = LineIndex(old), LineIndex(new)
    spans = sorted((old_index.offset(e.row, e.column), old_index.offset(e.end_row, e.end_column), e.content)
                   for e in edits)
    out, shift = [], 0
    for start, end, content in spans:
        begin = start + shift
        row, column = new_index.position(begin)
        end_row, end_column = new_index.position(begin + len(content))
        out.append(Edit(row, column, end_row, end_column, old[start:end]))
        shift += len(content) - (end - start)
    return out
