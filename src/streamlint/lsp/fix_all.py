"""`source.fixAll.streamlint`: every safe fix of a document in one code action, for
"Fix all" menus and editors' fix-on-save (`codeActionsOnSave`). Unsafe fixes are left
to the quick fixes, one at a time, where the user sees what each does."""

from __future__ import annotations

from typing import Sequence

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from streamlint.diagnostics import Diagnostic
from streamlint.fixes.apply import apply_edits, choose
from streamlint.lsp import convert

KIND = f"{types.CodeActionKind.SourceFixAll.value}.streamlint"
TITLE = "streamlint: Fix all auto-fixable problems"


def action(
    old: str, new: str | None, codec: PositionCodec, edit_for: convert.EditWrapper
) -> types.CodeAction | None:
    """The action replacing the whole document `old` by `new`; None when they agree."""
    if new is None or new == old:
        return None
    lines = convert.lines_of(old)
    replace = types.TextEdit(range=types.Range(start=types.Position(0, 0), end=end_of(lines, codec)), new_text=new)
    return types.CodeAction(title=TITLE, kind=KIND, edit=edit_for([replace]))


def end_of(lines: Sequence[str], codec: PositionCodec) -> types.Position:
    """The position just after the last character of the document."""
    if not lines:
        return types.Position(0, 0)
    last = lines[-1]
    if last.endswith(("\n", "\r")):
        return types.Position(len(lines), 0)
    return convert.position(lines, codec, len(lines), len(last) + 1)


def apply_safe(text: str, findings: Sequence[Diagnostic]) -> str | None:
    """`text` with the safe fixes among `findings` that do not overlap applied, in one
    pass (for a notebook cell, whose fixes were computed with the other cells)."""
    _, edits = choose(list(findings), unsafe=False)
    if not edits:
        return None
    try:
        return apply_edits(text, edits)
    except ValueError:  # overlapping edits: offer nothing rather than a broken text
        return None
