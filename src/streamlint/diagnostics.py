"""The one record every output format renders."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from streamlint.fixes.model import Fix

# Where a rule's documentation lives; `streamlint rule CODE` prints the same text.
DOCS_URL = "https://github.com/streamlint/streamlint/blob/main/docs/rules/{code}.md"


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding in one file. Rows are 1-based; columns are 1-based like ruff's."""

    filename: str
    row: int
    column: int
    code: str
    message: str
    end_row: int
    end_column: int
    noqa_row: int
    # Human-readable name of the rule (e.g. "default-stream-barrier"); "" for SL000.
    name: str = ""
    # The fix for this finding, if the rule has one (not part of identity or order).
    fix: Optional["Fix"] = field(default=None, compare=False)
    # For notebooks: the cell's 1-based number among all the notebook's cells (as ruff
    # counts, markdown included); rows are then within that cell. None for other files.
    cell: Optional[int] = field(default=None, compare=False)
    # A short line on what to do about it (the fix idiom), shown as ruff's `help:`;
    # None when the message says it all. Not part of identity or order.
    help: Optional[str] = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # a message and its help are one line each, whatever code they quote (a call written over lines)
        object.__setattr__(self, "message", one_line(self.message))
        if self.help is not None:
            object.__setattr__(self, "help", one_line(self.help))

    @property
    def url(self) -> str | None:
        return None if self.code == "SL000" else DOCS_URL.format(code=self.code)


_OPENING_BREAK = re.compile(r"([(\[{])\s*\n\s*")
_CLOSING_BREAK = re.compile(r"\s*\n\s*([)\]}])")
_BREAK = re.compile(r"\s*\n\s*")


def one_line(text: str) -> str:
    """Text with the line breaks of the code it quotes joined: `(\n    a - b\n).cpu` as `(a - b).cpu`."""
    if "\n" not in text:
        return text
    return _BREAK.sub(" ", _CLOSING_BREAK.sub(r"\1", _OPENING_BREAK.sub(r"\1", text)))


def sort_key(diag: Diagnostic) -> tuple:
    """Report order: by file, then cell (the field order cannot say this, since `cell`
    is not part of a diagnostic's identity), then position."""
    return (diag.filename, diag.cell or 0, diag.row, diag.column, diag.code, diag.message)
