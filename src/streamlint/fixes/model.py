"""What a fix is: edits to the checked text and how safe it is to apply them."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Applicability(str, enum.Enum):
    """ruff's levels. SAFE keeps the program's behaviour and is applied by `--fix`;
    UNSAFE may change timing, memory use or what a reader of the data sees, and is
    applied only with `--unsafe-fixes`."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Edit:
    """Replace the text from (row, column) up to (end_row, end_column) with `content`.

    Rows are 1-based; columns are 1-based and count characters (code points), as in
    `Diagnostic`. An insertion has start == end.
    """

    row: int
    column: int
    end_row: int
    end_column: int
    content: str


@dataclass(frozen=True)
class Fix:
    message: str  # what the fix does, e.g. "Pass `non_blocking=True`"
    applicability: Applicability
    edits: tuple[Edit, ...]

    def applies(self, unsafe: bool) -> bool:
        return self.applicability is Applicability.SAFE or unsafe
