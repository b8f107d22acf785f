"""Is a set of fixes right? The fixed text parses, each fixed finding is gone, and no
rule, whatever the selection, finds anything it did not find before.

Findings before and after are matched by code and position (moved with the edits),
else by code and message with its line numbers left out: a fix that inserts a line
moves every finding below it, and a message naming "line 13" then says "line 14".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from streamlint.diagnostics import Diagnostic
from streamlint.fixes.apply import inverse_edits, map_position
from streamlint.fixes.model import Edit
from streamlint.selection import SOURCE_ERROR


@dataclass(frozen=True)
class Linted:
    """One text's findings, linted once."""

    shown: list[Diagnostic]  # the selected rules', after suppression: reported, and fixed
    every: list[Diagnostic]  # every rule's, whatever the selection: a fix must add none


# Where a position of the text being fixed is in the file as read (fixes of earlier
# rounds moved it); the identity in the first round.
Locate = Callable[[int, int], "tuple[int, int]"]


def _same(row: int, column: int) -> tuple[int, int]:
    return row, column


def describe_fix(diag: Diagnostic, locate: Locate = _same) -> str:
    message = diag.fix.message if diag.fix is not None else ""
    row, column = locate(diag.row, diag.column)
    return f"the fix for {diag.code} at {row}:{column} ({message})"


def problem(
    old: str,
    new: str,
    before: Linted,
    chosen: Sequence[Diagnostic],
    edits: Sequence[Edit],
    after: Linted,
    locate: Locate = _same,
) -> Optional[str]:
    """None if the fixes in `chosen` (whose edits turned `old` into `new`) are right;
    else what is wrong, naming the fix when there is one. Positions in `old` are given
    as `locate` places them; a new finding's, where its code was before the edits."""
    who = describe_fix(chosen[0], locate) if len(chosen) == 1 else "the fixes"
    broken = next((d for d in after.every if d.code == SOURCE_ERROR), None)
    if broken is not None:
        return f"{who} would make the file unparsable ({broken.message} at {broken.row}:{broken.column})"
    if new == old:
        return f"{who} did not change the text"
    kept = not_removed(old, new, before.shown, chosen, edits, after.shown)
    if kept is not None:
        return f"{describe_fix(kept, locate)} did not remove the finding"
    added = new_findings(old, new, before.every, chosen, edits, after.every)
    if added:
        first = added[0]
        more = f" and {len(added) - 1} more" if len(added) > 1 else ""
        row, column = locate(*map_position(new, old, inverse_edits(old, new, edits), first.row, first.column))
        return f"{who} would add {first.code} at {row}:{column} ({first.message}){more}"
    return None


def not_removed(
    old: str, new: str, before: Sequence[Diagnostic], chosen: Sequence[Diagnostic],
    edits: Sequence[Edit], after: Sequence[Diagnostic],
) -> Optional[Diagnostic]:
    """A fixed finding still there: by count per rule, or still where it moved to.
    Several findings of one code at one position are counted, so fixing one of two is seen."""
    left = Counter(d.code for d in before)
    left.subtract(d.code for d in chosen)
    now = Counter(d.code for d in after)
    for diag in chosen:
        if now[diag.code] > left[diag.code]:
            return diag
    where = {id(d): (d.code, *map_position(old, new, edits, d.row, d.column)) for d in before}
    expected = Counter(where[id(d)] for d in before)
    expected.subtract(where[id(d)] for d in chosen)
    found = Counter((d.code, d.row, d.column) for d in after)
    for diag in chosen:
        key = where[id(diag)]
        if found[key] > expected[key]:
            return diag
    return None


def new_findings(
    old: str, new: str, before: Sequence[Diagnostic], chosen: Sequence[Diagnostic],
    edits: Sequence[Edit], after: Sequence[Diagnostic],
) -> list[Diagnostic]:
    """Findings of `after` that match none of `before` (less the fixed ones): first by
    code and moved position, then by code and message without line numbers."""
    fixed = Counter((d.code, d.row, d.column, d.message) for d in chosen)
    by_position: Counter = Counter()
    by_message: Counter = Counter()
    for d in before:
        key = (d.code, d.row, d.column, d.message)
        if fixed[key] > 0:
            fixed[key] -= 1
            continue
        by_position[(d.code, *map_position(old, new, edits, d.row, d.column))] += 1
        by_message[(d.code, normalised(d.message))] += 1
    unmatched = []
    for d in after:
        key = (d.code, d.row, d.column)
        if by_position[key] > 0:
            by_position[key] -= 1
            by_message[(d.code, normalised(d.message))] -= 1  # may go below zero: counts only
        else:
            unmatched.append(d)
    added = []
    for d in unmatched:
        key = (d.code, normalised(d.message))
        if by_message[key] > 0:
            by_message[key] -= 1
        else:
            added.append(d)
    return added


# "line 13", "lines 16 and 19", "at 12:5": positions a fix moves.
_LINE_NUMBERS = re.compile(r"\b(lines?|at) \d+(?::\d+)?(?:(?:, | and | or )\d+)*")


def normalised(message: str) -> str:
    return _LINE_NUMBERS.sub(lambda m: f"{m.group(1)} #", message)
