"""A notebook's code cells as one virtual module, and its positions mapped back to cells.

The .ipynb is read with the standard library's json, so checking needs nothing beyond
the core install. The code cells are concatenated in order (a stream made in one cell
and used in another is one program, as when the notebook runs top to bottom), each
followed by a comment line that marks the boundary, so fixes can be split back.

Cells are numbered as ruff numbers them: 1-based among all cells, markdown included.
"""

from __future__ import annotations

import bisect
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from streamlint.notebooks import magics
from streamlint.source import LINE_BREAK, split_lines


class NotebookError(Exception):
    """The file is not a notebook we can read. Row and column are 1-based, in the file."""

    def __init__(self, message: str, row: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message, self.row, self.column = message, row, column


@dataclass(frozen=True)
class Notebook:
    data: dict[str, Any]  # the parsed JSON, as read

    @property
    def cells(self) -> list[dict[str, Any]]:
        return self.data["cells"]

    @property
    def is_python(self) -> bool:
        """False when the metadata names another kernel language (R, Julia, ...)."""
        metadata = self.data.get("metadata")
        for section, key in (("language_info", "name"), ("kernelspec", "language")):
            table = metadata.get(section) if isinstance(metadata, dict) else None
            value = table.get(key) if isinstance(table, dict) else None
            if isinstance(value, str) and value.strip():
                return value.strip().lower().startswith("python")
        return True

    def code_cells(self) -> list[tuple[int, str]]:
        """(cell number, source) of each code cell."""
        return [
            (number, cell_source(cell))
            for number, cell in enumerate(self.cells, start=1)
            if cell.get("cell_type") == "code"
        ]


def read(text: str) -> Notebook:
    """The notebook in `text`, or NotebookError saying why it is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise NotebookError(f"notebook is not valid JSON: {err.msg}", err.lineno, err.colno) from None
    except RecursionError:
        raise NotebookError("notebook is not valid JSON: nested too deeply") from None
    if isinstance(data, dict) and "worksheets" in data:
        raise NotebookError(
            "nbformat 3 notebooks are not supported; convert with "
            "`jupyter nbconvert --to notebook --nbformat 4`"
        )
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError('not a Jupyter notebook (no "cells" list)')
    for number, cell in enumerate(data["cells"], start=1):
        if not isinstance(cell, dict):
            raise NotebookError(f"cell {number} is not a JSON object")
        source = cell.get("source", "")
        if not (isinstance(source, str) or (
            isinstance(source, list) and all(isinstance(s, str) for s in source)
        )):  # fmt: skip
            raise NotebookError(f'cell {number}: "source" is not text or a list of lines')
    return Notebook(data)


def cell_source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


@dataclass(frozen=True)
class CellSpan:
    number: int  # the cell's 1-based number among all cells
    first_row: int  # the virtual row of the cell's first line
    rows: int  # how many lines the cell has
    final_newline: bool  # the cell's source ended with a line break


@dataclass
class VirtualModule:
    text: str
    spans: tuple[CellSpan, ...]
    tag: str  # marks boundary and placeholder lines
    # cell number -> {0-based line in the cell: the original line a placeholder replaced}
    placeholders: dict[int, dict[int, str]] = field(default_factory=dict)
    # (cell number, why it does not parse, row in the cell, column): cells left out
    broken: list[tuple[int, str, int, int]] = field(default_factory=list)

    def boundary(self, number: int) -> str:
        return f"#{self.tag} end of cell {number}"

    def locate(self, row: int, *, clamp: bool = True) -> tuple[int, int]:
        """(cell number, 1-based row in that cell) of a virtual row. The boundary line
        after a cell is row `rows + 1` of it (where an edit that deletes the cell's last
        line ends); with `clamp`, rows are pinned inside the cell."""
        spans = self.spans
        if not spans:
            return 1, 1
        i = max(bisect.bisect_right([s.first_row for s in spans], row) - 1, 0)
        span = spans[i]
        inside = max(row - span.first_row + 1, 1)
        return span.number, min(inside, max(span.rows, 1)) if clamp else inside


# A cell's text -> (message, row, column) when it does not parse, else None.
SyntaxCheck = Callable[[str], "tuple[str, int, int] | None"]


def build(notebook: Notebook, syntax_error: SyntaxCheck | None = None) -> VirtualModule:
    """The code cells that are Python, as one module. Cell magics other than those
    whose body is Python (`%%bash`, ...) leave their cell out, and so does a cell that
    `syntax_error` rejects (it goes to `broken`): Jupyter runs cells one by one, so one
    cell that does not parse (pseudo-code, an exercise's blank) spoils only itself."""
    tag = f"streamlint-{uuid.uuid4().hex[:12]}"
    parts: list[str] = []
    spans: list[CellSpan] = []
    placeholders: dict[int, dict[int, str]] = {}
    row = 1
    module = VirtualModule("", (), tag)
    for number, source in notebook.code_cells():
        converted = magics.to_python(source, tag)
        if converted is None:
            continue
        text, replaced = converted
        error = syntax_error(text) if syntax_error is not None else None
        if error is not None:
            module.broken.append((number, *error))
            continue
        if replaced:
            placeholders[number] = replaced
        final_newline = text.endswith(("\n", "\r"))
        if text and not final_newline:
            text += "\n"
        rows = len(LINE_BREAK.findall(text))
        spans.append(CellSpan(number, row, rows, final_newline))
        parts.append(text)
        parts.append(module.boundary(number) + "\n")
        row += rows + 1
    module.text = "".join(parts)
    module.spans = tuple(spans)
    module.placeholders = placeholders
    return module


def cell_lines(text: str, number: int) -> list[str] | None:
    """The lines of cell `number` of the notebook in `text` (for showing source)."""
    try:
        cells = read(text).cells
    except NotebookError:
        return None
    if not 1 <= number <= len(cells):
        return None
    return split_lines(cell_source(cells[number - 1]))
