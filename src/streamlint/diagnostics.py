"""The one record every output format renders."""

from __future__ import annotations

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

    @property
    def url(self) -> str | None:
        return None if self.code == "SL000" else DOCS_URL.format(code=self.code)


def sort_key(diag: Diagnostic) -> tuple:
    """Report order: by file, then cell (the field order cannot say this, since `cell`
    is not part of a diagnostic's identity), then position."""
    return (diag.filename, diag.cell or 0, diag.row, diag.column, diag.code, diag.message)
