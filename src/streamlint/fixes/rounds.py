"""Rounds of fixing one text, each verified against every rule (fixes/verify.py).

A round applies every applicable fix that does not overlap another. When its result
is wrong, the round is undone and each of its fixes is tried alone: a fix wrong alone
is refused (named, with what it would have done) and the others are kept; fixes that
are right alone but wrong together are taken one by one, in order, as long as the
result stays right. A refused fix is never offered again in later rounds, and one
refusal never costs the file its other fixes. Refusals name positions in the file as
read, whatever earlier rounds moved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from streamlint.diagnostics import Diagnostic
from streamlint.fixes import apply, verify
from streamlint.fixes.apply import FixOutcome
from streamlint.fixes.model import Edit
from streamlint.fixes.verify import Linted

# At most this many rounds of fixing (a fix may reveal another).
MAX_PASSES = 8


@dataclass
class _Trial:
    text: str
    linted: Optional[Linted]
    problem: Optional[str]


class FixRounds:
    def __init__(self, relint: Callable[[str], Linted], unsafe: bool) -> None:
        self.relint = relint
        self.unsafe = unsafe
        # The rounds applied so far, each as (its text, its result, the edits back):
        # a refused fix is named where it is in the file as read.
        self.history: list[tuple[str, str, list[Edit]]] = []

    def locate(self, row: int, column: int) -> tuple[int, int]:
        for before, after, back in reversed(self.history):
            row, column = apply.map_position(after, before, back, row, column)
        return row, column

    def run(self, text: str, linted: Linted) -> FixOutcome:
        current, found = text, linted
        applied: list[Diagnostic] = []
        refused: list[str] = []
        refused_at: set[tuple] = set()  # (code, row, column) in `current`
        for _ in range(MAX_PASSES):
            candidates = [d for d in found.shown if _key(d) not in refused_at]
            chosen, edits = apply.choose(candidates, self.unsafe)
            if not chosen:
                break
            trial = self._try(current, found, chosen, edits)
            if trial.problem is not None:
                chosen, edits, trial, why = self._blame(current, found, chosen)
                refused += [reason for _, reason in why]
                refused_at |= {_key(d) for d, _ in why}
                if not chosen:
                    continue  # every fix of the round was refused: the next round has the rest
            assert trial.linted is not None
            applied.extend(chosen)
            refused_at = {(code, *apply.map_position(current, trial.text, edits, row, column))
                          for code, row, column in refused_at}
            self.history.append((current, trial.text, apply.inverse_edits(current, trial.text, edits)))
            current, found = trial.text, trial.linted
        return FixOutcome(current, applied, found.shown, refused=refused)

    def _try(self, text: str, before: Linted, chosen: Sequence[Diagnostic], edits: Sequence[Edit]) -> _Trial:
        try:
            candidate = apply.apply_edits(text, edits)
        except ValueError as err:
            return _Trial(text, None, f"the fixes could not be applied: {err}")
        after = self.relint(candidate)
        return _Trial(candidate, after, verify.problem(text, candidate, before, chosen, edits, after, self.locate))

    def _blame(self, text: str, before: Linted, chosen: Sequence[Diagnostic]):
        """(the fixes kept, their edits, their trial, [(refused fix, why)])."""
        why: list[tuple[Diagnostic, str]] = []
        alone: dict[int, _Trial] = {}
        for diag in chosen:
            subset, edits = apply.choose([diag], self.unsafe)
            trial = self._try(text, before, subset, edits)
            if trial.problem is not None:
                why.append((diag, trial.problem))
            alone[id(diag)] = trial
        wrong = {id(d) for d, _ in why}
        kept = [d for d in chosen if id(d) not in wrong]
        if len(kept) == 1:
            return kept, apply.choose(kept, self.unsafe)[1], alone[id(kept[0])], why
        if kept and why:  # the usual case: the refused ones were the trouble
            edits = apply.choose(kept, self.unsafe)[1]
            trial = self._try(text, before, kept, edits)
            if trial.problem is None:
                return kept, edits, trial, why
        taken: list[Diagnostic] = []
        best: Optional[tuple] = None
        for diag in kept:  # right alone: together, as long as the result stays right
            subset, edits = apply.choose([*taken, diag], self.unsafe)
            trial = alone[id(diag)] if not taken else self._try(text, before, subset, edits)
            if trial.problem is None:
                taken.append(diag)
                best = (edits, trial)
            else:
                named = verify.describe_fix(diag, self.locate)
                why.append((diag, f"{named} is right alone but not with the others: {trial.problem}"))
        if best is None:
            return [], [], None, why
        return taken, best[0], best[1], why


def _key(diag: Diagnostic) -> tuple:
    return (diag.code, diag.row, diag.column)
