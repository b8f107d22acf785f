"""Lint a notebook: its code cells as one module, findings reported per cell.

Rows (and fix edits) are moved from the virtual module into the cell that holds them,
and `Diagnostic.cell` names that cell; columns do not change. Suppression comments
work as in a .py file because the virtual module is what is linted.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Optional, Sequence

from streamlint import isolation
from streamlint.diagnostics import Diagnostic, sort_key
from streamlint.engine.lint import FileResult, lint_text
from streamlint.fixes.model import Fix
from streamlint.model.prefilter import may_have_findings
from streamlint.nesting import nesting_problem
from streamlint.notebooks import cells, magics
from streamlint.notebooks.messages import to_cell_message
from streamlint.rules import Rule
from streamlint.settings import Settings
from streamlint.source import decode, source_error


@dataclass
class LintedNotebook:
    """A notebook's result, with what fixing it needs: its code cells as one module
    and the findings in that module's rows (before they are moved into cells)."""

    result: FileResult
    notebook: Optional[cells.Notebook] = None
    module: Optional[cells.VirtualModule] = None
    virtual: list[Diagnostic] = field(default_factory=list)


def lint_notebook(
    data: bytes, filename: str, settings: Settings, *, rules: Sequence[type[Rule]] | None = None
) -> FileResult:
    """The FileResult of a .ipynb file's raw bytes; problems reading it are SL000."""
    return lint_cells(data, filename, settings, rules=rules).result


def lint_cells(
    data: bytes, filename: str, settings: Settings, *, rules: Sequence[type[Rule]] | None = None
) -> LintedNotebook:
    text = decode(data, filename)
    if isinstance(text, Diagnostic):
        return LintedNotebook(FileResult(filename, [text], analysed=False, lines=0))
    try:
        notebook = cells.read(text)
    except cells.NotebookError as err:
        diag = source_error(filename, err.message, err.row, err.column)
        return LintedNotebook(FileResult(filename, [diag], analysed=False, lines=0))
    if not notebook.is_python:
        return LintedNotebook(FileResult(filename, [], analysed=False, lines=0))
    code = "\n".join(source for _, source in notebook.code_cells())
    lines = code.count("\n") + 1 if code else 0
    encoded = code.encode("utf-8", "surrogatepass")
    if not (settings.named or settings.imports_gpu_module) and not may_have_findings(encoded, settings.assume_device):
        return LintedNotebook(FileResult(filename, [], analysed=False, lines=lines))
    module = cells.build(notebook, syntax_error)
    broken = [
        dataclasses.replace(source_error(filename, message, row, column), cell=number)
        for number, message, row, column in module.broken
    ]
    virtual: list[Diagnostic] = []
    try:
        virtual = lint_text(module.text, filename, settings, rules=rules)
        diagnostics = [to_cell(d, module) for d in virtual]
    except Exception as err:  # as for .py files: one SL000, never an aborted run
        message = f"internal error: {type(err).__name__}: {err}"
        diagnostics = [source_error(filename, message)]
    diagnostics = sorted(broken + diagnostics, key=sort_key)
    result = FileResult(filename, diagnostics, analysed=True, lines=lines)
    return LintedNotebook(result, notebook, module, virtual)


def syntax_error(text: str) -> tuple[str, int, int] | None:
    """(message, row, column) when a cell's text does not parse on its own."""
    problem = nesting_problem(text)  # before any parser sees absurd nesting
    if problem is not None:
        return problem
    if magics.parses(text):  # CPython's parser first: fast, and right nearly always
        return None
    # lazy: newer syntax than this Python is rare; only then is libcst loaded to decide.
    from streamlint import checker

    try:
        isolation.call_with_large_stack(checker.parse, text)
    except checker.SourceError as err:
        return err.message, err.row, err.column
    except RecursionError:
        return "cell too deeply nested to parse", 1, 1
    return None


def to_cell(diag: Diagnostic, module: cells.VirtualModule) -> Diagnostic:
    """`diag` with rows relative to the cell that holds its start."""
    cell, row = module.locate(diag.row)
    end_cell, end_row = module.locate(diag.end_row)
    end_column = diag.end_column
    if end_cell != cell:  # cannot end in another cell: stop at the end of the line
        end_row, end_column = row, diag.column + 1
    noqa_cell, noqa_row = module.locate(diag.noqa_row)
    fix = _fix_to_cell(diag.fix, module, cell) if diag.fix is not None else None
    return dataclasses.replace(
        diag,
        message=to_cell_message(diag.message, module, cell),
        help=to_cell_message(diag.help, module, cell) if diag.help else diag.help,
        row=row,
        end_row=end_row,
        end_column=end_column,
        noqa_row=noqa_row if noqa_cell == cell else row,
        cell=cell,
        fix=fix,
    )


def _fix_to_cell(fix: Fix, module: cells.VirtualModule, cell: int) -> Fix | None:
    edits = []
    for edit in fix.edits:
        start_cell, row = module.locate(edit.row, clamp=False)
        end_cell, end_row = module.locate(edit.end_row, clamp=False)
        if start_cell != cell or end_cell != cell:
            return None  # a fix that reaches into another cell is not offered
        edits.append(dataclasses.replace(edit, row=row, end_row=end_row))
    return dataclasses.replace(fix, edits=tuple(edits))

