"""`--add-noqa` for notebooks: the comments are added to the virtual module of the code
cells, which is then split back into cells and written in the file's own layout,
as fixes are."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Iterable

from streamlint.atomic_write import write_atomic
from streamlint.diagnostics import Diagnostic
from streamlint.notebooks import cells, layout
from streamlint.notebooks.fix import split_back, with_sources
from streamlint.notebooks.lint import syntax_error
from streamlint.source import SourceFile
from streamlint.suppression.add_noqa import add_noqa


def add_noqa_to_notebook(path: str | Path, diagnostics: Iterable[Diagnostic], reason: str = "") -> int:
    """Add the comments to the notebook in place; the number of codes added."""
    source = SourceFile(str(path), Path(path).read_bytes())
    text = source.text()
    if not isinstance(text, str):
        return 0
    try:
        notebook = cells.read(text)
    except cells.NotebookError:
        return 0
    module = cells.build(notebook, syntax_error)
    first_rows = {span.number: span.first_row for span in module.spans}
    virtual = [
        dataclasses.replace(
            d, row=first_rows[d.cell] + d.row - 1, end_row=first_rows[d.cell] + d.end_row - 1,
            noqa_row=first_rows[d.cell] + d.noqa_row - 1, cell=None, fix=None,
        )  # fmt: skip
        for d in diagnostics
        if d.cell in first_rows
    ]
    new_text, added = add_noqa(module.text, virtual, reason)
    if not added:
        return 0
    try:
        fixed = dict(notebook.data, cells=with_sources(notebook, split_back(module, new_text)))
        out = layout.dumps_like(text, notebook.data, fixed)
    except Exception:  # SplitError, LayoutError: leave the notebook as it is
        return 0
    write_atomic(path, source.encode(out))
    return added
