"""Fix a notebook: the virtual module of its code cells goes through the same verified
fix driver as a .py file, then is split back into cells at the boundary lines, IPython
lines are restored, and only the changed cells' sources are written back, in the
file's own JSON layout (see `layout`).
"""

from __future__ import annotations

import copy
import difflib
import json
from pathlib import Path
from typing import Any, Sequence

from streamlint.diagnostics import sort_key
from streamlint.engine.lint import FileResult, has_fix, lint_fix
from streamlint.fixes.apply import FixOutcome
from streamlint.notebooks import cells, layout
from streamlint.notebooks.lint import lint_cells, lint_notebook, to_cell
from streamlint.settings import Settings
from streamlint.source import SourceFile, read_bytes, split_lines


class SplitError(Exception):
    """The fixed module cannot be split back into the notebook's cells."""


def fix_notebook(
    path: Path | str, settings: Settings, *, unsafe: bool = False, rules: Sequence[type] | None = None
) -> FixOutcome:
    """The fixed notebook's JSON text in `source` (the original when nothing applied or
    a fix failed, with `error` saying why); `applied` and `remaining` are per cell.
    Nothing is written (the `fix` command writes)."""
    try:
        data = read_bytes(path)
    except OSError as err:
        return FixOutcome("", [], [], f"cannot read file: {err.strerror or err}")
    return fix_notebook_bytes(data, str(path), settings, unsafe=unsafe, rules=rules)


def lint_fix_notebook(
    source: SourceFile, settings: Settings, *, unsafe: bool, rules: Sequence[type] | None = None
) -> FileResult:
    """A notebook's result, fixed in the same pass as it is linted (the engine's
    `lint_fix` for notebooks)."""
    outcome, result = _lint_fix(source.data, source.path, settings, unsafe, rules)
    if outcome is None:
        return result
    return FileResult(source.path, outcome.remaining, True, result.lines, fixed=outcome, data=source.data)


def fix_notebook_text(
    text: str, filename: str, settings: Settings, *, unsafe: bool = False, rules: Sequence[type] | None = None
) -> FixOutcome:
    """`fix_notebook` for a notebook's JSON text (e.g. read from stdin)."""
    return fix_notebook_bytes(text.encode("utf-8", "surrogatepass"), filename, settings, unsafe=unsafe, rules=rules)


def fix_notebook_bytes(
    data: bytes, filename: str, settings: Settings, *, unsafe: bool = False, rules: Sequence[type] | None = None
) -> FixOutcome:
    outcome, result = _lint_fix(data, filename, settings, unsafe, rules)
    if outcome is not None:
        return outcome
    text = SourceFile(filename, data).text()
    return FixOutcome(text if isinstance(text, str) else "", [], result.diagnostics)


def _lint_fix(
    data: bytes, filename: str, settings: Settings, unsafe: bool, rules: Sequence[type] | None
) -> tuple[FixOutcome | None, FileResult]:
    """(the outcome, None when there was nothing to fix; the notebook's result)."""
    linted = lint_cells(data, filename, settings, rules=rules)
    current = linted.result.diagnostics
    module, notebook = linted.module, linted.notebook
    if module is None or notebook is None or not has_fix(current, unsafe):
        return None, linted.result
    text = SourceFile(filename, data).text()
    assert isinstance(text, str)  # it was read as a notebook
    outcome = lint_fix(module.text, filename, settings, unsafe=unsafe, rules=rules)
    if outcome.error is not None or not outcome.applied:
        return FixOutcome(text, [], current, outcome.error, outcome.refused), linted.result
    try:
        fixed = dict(notebook.data, cells=with_sources(notebook, split_back(module, outcome.source)))
        new_text = layout.dumps_like(text, notebook.data, fixed)
    except (SplitError, layout.LayoutError) as err:
        return FixOutcome(text, [], current, str(err)), linted.result
    problem = layout.validation_error(notebook.data, fixed)
    if problem is not None:
        return FixOutcome(text, [], current, f"the fixed notebook would not be valid: {problem}"), linted.result
    applied = sorted((to_cell(d, module) for d in outcome.applied), key=sort_key)
    remaining = lint_notebook(new_text.encode("utf-8", "surrogatepass"), filename, settings, rules=rules)
    return FixOutcome(new_text, applied, remaining.diagnostics, refused=outcome.refused), linted.result


def split_back(module: cells.VirtualModule, fixed: str) -> dict[int, str]:
    """cell number -> new source, for each cell of the virtual module."""
    lines = split_lines(fixed, keepends=True)
    out: dict[int, str] = {}
    at = 0
    for span in module.spans:
        boundary = module.boundary(span.number)
        try:
            end = next(i for i in range(at, len(lines)) if lines[i].rstrip("\r\n") == boundary)
        except StopIteration:
            raise SplitError("a fix crossed a cell boundary") from None
        out[span.number] = _restore(module, span, lines[at:end])
        at = end + 1
    if "".join(lines[at:]).strip():
        raise SplitError("a fix added code after the last cell")
    return out


def _restore(module: cells.VirtualModule, span: cells.CellSpan, lines: list[str]) -> str:
    """The cell's text with its IPython lines back in place of their placeholders."""
    originals = [line for _, line in sorted(module.placeholders.get(span.number, {}).items())]
    mark = f"#{module.tag}"
    at_marks = [i for i, line in enumerate(lines) if line.rstrip("\r\n").endswith(mark)]
    if len(at_marks) != len(originals):
        raise SplitError(f"a fix changed an IPython line of cell {span.number}")
    for i, original in zip(at_marks, originals):
        body = lines[i].rstrip("\r\n")
        lines[i] = original + lines[i][len(body):]
    text = "".join(lines)
    if not span.final_newline and text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    return text


def with_sources(notebook: cells.Notebook, sources: dict[int, str]) -> list[dict[str, Any]]:
    """The notebook's cells with the changed sources, each in its original form (one
    string, or a list of lines as Jupyter writes it)."""
    out = []
    for number, cell in enumerate(notebook.cells, start=1):
        new = sources.get(number)
        if new is None or new == cells.cell_source(cell):
            out.append(cell)
            continue
        cell = copy.copy(cell)
        cell["source"] = new if isinstance(cell.get("source"), str) else split_lines(new, keepends=True)
        out.append(cell)
    return out


def cell_diff(old_text: str, new_text: str, filename: str) -> str:
    """A unified diff per changed cell (`a/nb.ipynb:cell 3`), as ruff shows notebooks."""
    old_cells, new_cells = json.loads(old_text)["cells"], json.loads(new_text)["cells"]
    chunks = []
    for number, (old, new) in enumerate(zip(old_cells, new_cells), start=1):
        before, after = cells.cell_source(old), cells.cell_source(new)
        if before == after:
            continue
        names = (f"a/{filename}:cell {number}", f"b/{filename}:cell {number}")
        lines = difflib.unified_diff(
            _with_final_newline(before), _with_final_newline(after), *names
        )
        chunks.append("".join(lines))
    return "".join(chunks)


def _with_final_newline(text: str) -> list[str]:
    lines = split_lines(text, keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines
