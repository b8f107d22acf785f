"""A file's findings after its suppression comments, plus SL900 for the comments that
suppress nothing (found from the findings *before* suppression, so that a comment
counts as used exactly when it hides one)."""

from __future__ import annotations

from typing import Collection, Iterable

from streamlint import selection
from streamlint.diagnostics import Diagnostic
from streamlint.suppression import comments, unused


def apply_suppressions(
    found: Iterable[Diagnostic], text: str, filename: str, enabled: Collection[str], *, honour_comments: bool = True
) -> list[Diagnostic]:
    """The findings of the `enabled` rules that no comment suppresses, with SL900's
    when it is enabled; sorted. Without `honour_comments` (`--ignore-noqa`, as in
    ruff) every finding is kept and no comment is judged."""
    kept = [d for d in found if d.code in enabled or d.code == selection.SOURCE_ERROR]
    if not honour_comments:
        return sorted(d for d in kept if d.code != unused.CODE)
    if not kept and (unused.CODE not in enabled or not unused.could_report(text)):
        return []  # nothing to suppress, nothing SL900 could say: no need to tokenize
    parsed = comments.parse(text)
    shown = [d for d in kept if not parsed.suppresses(d)]
    if unused.CODE in enabled:
        known = selection.rule_codes()
        shown += unused.find(text, filename, kept, parsed, enabled, known)
    return sorted(shown)
