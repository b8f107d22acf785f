"""Apply fixes to a source text, and check that they did what they claim.

`fix_source` lints, applies every applicable fix whose edits do not overlap another's,
and lints again, up to a few passes. After each pass the fixed text must parse and each
fixed finding must be gone from where its code moved to; otherwise the original text is
returned unchanged with an error saying which fix failed (nothing is written for that
file). A second `fix_source` on the result therefore finds nothing to apply.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from streamlint.diagnostics import Diagnostic
from streamlint.fixes.model import Edit
from streamlint.selection import SOURCE_ERROR

if TYPE_CHECKING:
    from streamlint.config import Settings
    from streamlint.rules import Rule

MAX_PASSES = 8
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class FixOutcome:
    source: str  # the fixed text, or the original when nothing applied or a fix failed
    applied: list[Diagnostic] = field(default_factory=list)  # the findings fixed
    remaining: list[Diagnostic] = field(default_factory=list)  # findings in `source`
    error: Optional[str] = None  # why the fixes were not applied, if they failed

    @property
    def changed(self) -> bool:
        return bool(self.applied) and self.error is None


def line_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in _LINE_BREAK.finditer(text))
    return starts


def offset(starts: Sequence[int], text: str, row: int, column: int) -> int:
    """Character offset of a 1-based (row, column); clamped to the text."""
    if row > len(starts):
        return len(text)
    return min(starts[max(row, 1) - 1] + max(column, 1) - 1, len(text))


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits (the caller has checked they do not overlap)."""
    starts = line_starts(text)
    spans = sorted(
        ((offset(starts, text, e.row, e.column), offset(starts, text, e.end_row, e.end_column), e.content)
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
    old_starts = line_starts(old)
    at = offset(old_starts, old, row, column)
    shift = 0
    for e in edits:
        start = offset(old_starts, old, e.row, e.column)
        end = offset(old_starts, old, e.end_row, e.end_column)
        if end <= at and not (start == end == at):
            shift += len(e.content) - (end - start)  # wholly before (or an insertion before)
        elif start == end == at:
            shift += len(e.content)  # inserted right before the position
        elif start < at < end:
            at = start  # inside a replaced span
    new_at = at + shift
    new_starts = line_starts(new)
    new_row = max(i for i, s in enumerate(new_starts) if s <= new_at) + 1 if new_starts else 1
    return new_row, new_at - new_starts[new_row - 1] + 1


def fix_source(
    text: str,
    filename: str,
    settings: "Settings",
    *,
    unsafe: bool = False,
    rules: Optional[Sequence[type["Rule"]]] = None,
) -> FixOutcome:
    from streamlint import engine  # the engine imports the rules; keep this module light

    current = text
    applied: list[Diagnostic] = []
    diagnostics = engine.lint_text(current, filename, settings, rules=rules)
    for _ in range(MAX_PASSES):
        chosen, edits = choose(diagnostics, unsafe)
        if not chosen:
            break
        try:
            candidate = apply_edits(current, edits)
        except ValueError as err:
            return FixOutcome(text, [], _refresh(text, filename, settings, rules), f"fixes could not be applied: {err}")
        after = engine.lint_text(candidate, filename, settings, rules=rules)
        problem = _verify(current, candidate, diagnostics, chosen, edits, after)
        if problem is not None:
            return FixOutcome(text, [], _refresh(text, filename, settings, rules), problem)
        applied.extend(chosen)
        current, diagnostics = candidate, after
    return FixOutcome(current, applied, diagnostics)


def _refresh(text: str, filename: str, settings: "Settings", rules) -> list[Diagnostic]:
    from streamlint import engine

    return engine.lint_text(text, filename, settings, rules=rules)


def _verify(
    old: str,
    new: str,
    before: Sequence[Diagnostic],
    chosen: Sequence[Diagnostic],
    edits: Sequence[Edit],
    after: Sequence[Diagnostic],
) -> Optional[str]:
    """None if the new text parses and every fixed finding is gone; else what failed.
    Findings are matched by code and position (moved with the edits); several findings
    of one code at one position are counted, so fixing one of two is seen."""
    broken = next((d for d in after if d.code == SOURCE_ERROR), None)
    if broken is not None:
        return f"the fixes would make the file unparsable ({broken.message} at {broken.row}:{broken.column})"
    if new == old:
        return "the fixes did not change the text"
    # Per rule, the fixed findings are gone: fewer findings by at least as many...
    left = Counter(d.code for d in before)
    left.subtract(d.code for d in chosen)
    now = Counter(d.code for d in after)
    for diag in chosen:
        if now[diag.code] > left[diag.code]:
            return (
                f"the fix for {diag.code} at {diag.row}:{diag.column} ({diag.fix.message if diag.fix else ''}) "
                "did not remove the finding"
            )
    # ... and none is still where the fixed one moved to.
    where = {id(d): (d.code, *map_position(old, new, edits, d.row, d.column)) for d in before}
    expected = Counter(where[id(d)] for d in before)
    expected.subtract(where[id(d)] for d in chosen)
    found = Counter((d.code, d.row, d.column) for d in after)
    for diag in chosen:
        key = where[id(diag)]
        if found[key] > expected[key]:
            return (
                f"the fix for {diag.code} at {diag.row}:{diag.column} ({diag.fix.message if diag.fix else ''}) "
                "did not remove the finding"
            )
    return None
