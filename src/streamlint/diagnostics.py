"""The one record every output format renders."""

from __future__ import annotations

from dataclasses import dataclass

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

    @property
    def url(self) -> str | None:
        return None if self.code == "SL000" else DOCS_URL.format(code=self.code)
