"""Notebook documents (LSP 3.17 notebook sync): an editor sends a notebook as cells,
each a text document of its own. The cells are put back together as .ipynb JSON and
linted as `streamlint check` lints the file (code cells as one module, so a stream made
in one cell is known in the next); each finding goes to its cell's document, with rows
counted within the cell, as the notebook linter reports them.
"""

from __future__ import annotations

import json
from typing import Sequence

from lsprotocol import types
from pygls.workspace import Workspace

from streamlint.diagnostics import Diagnostic

# Any notebook type (Jupyter, VS Code's interactive window, ...) with Python cells.
SYNC_OPTIONS = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook="*", cells=[types.NotebookCellLanguage(language="python")]
        )
    ],
    save=True,
)


def cell_uris(notebook: types.NotebookDocument) -> list[str]:
    return [cell.document for cell in notebook.cells]


def to_ipynb(notebook: types.NotebookDocument, workspace: Workspace) -> str:
    """The notebook's cells as nbformat 4 JSON, in order, markdown cells included (the
    linter numbers cells as ruff does, counting every cell)."""
    cells = []
    for cell in notebook.cells:
        source = workspace.get_text_document(cell.document).source
        if cell.kind == types.NotebookCellKind.Code:
            cells.append({"cell_type": "code", "execution_count": None, "metadata": {},
                          "outputs": [], "source": source})  # fmt: skip
        else:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": source})
    document = {
        "cells": cells,
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(document)


def by_cell(notebook: types.NotebookDocument, found: Sequence[Diagnostic]) -> dict[str, list[Diagnostic]]:
    """Every cell's URI with its findings ([] for a clean cell, so that its old ones
    are cleared). A finding without a cell (the notebook as a whole could not be read)
    goes to the first cell, where the user will see it."""
    uris = cell_uris(notebook)
    out: dict[str, list[Diagnostic]] = {uri: [] for uri in uris}
    for diag in found:
        index = (diag.cell or 1) - 1
        if uris and 0 <= index < len(uris):
            out[uris[index]].append(diag)
    return out
