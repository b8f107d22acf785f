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
from typing import Any, Sequence, TextIO

from streamlint import engine
from streamlint.config import Settings
from streamlint.diagnostics import sort_key
from streamlint.fixes.apply import FixOutcome, fix_source
from streamlint.notebooks import cells, layout
from streamlint.notebooks.lint import lint_notebook, syntax_error, to_cell
from streamlint.notebooks.magics import split_lines


class SplitError(Exception):
    """The fixed module cannot be split back into the notebook's cells."""


def fix_notebook(
    path: Path | str, settings: Settings, *, unsafe: bool = False, rules: Sequence[type] | None = None
) -> FixOutcome:
    """The fixed notebook's JSON text in `source` (the original when nothing applied or
    a fix failed, with `error` saying why); `applied` and `remaining` are per cell.
    Nothing is written (`run_for_fixer`, the `--fix` runner's hook, writes)."""
    return _fix(Path(path), settings, unsafe, rules)[0]


def _fix(
    path: Path, settings: Settings, unsafe: bool, rules: Sequence[type] | None = None
) -> tuple[FixOutcome, bytes]:
    """The outcome, and the bytes it was computed from."""
    try:
        data = path.read_bytes()
    except OSError as err:
        return FixOutcome("", [], [], f"cannot read file: {err.strerror or err}"), b""
    text = engine.decode(data, str(path))
    if not isinstance(text, str):
        return FixOutcome("", [], [text]), data
    return fix_notebook_text(text, str(path), settings, unsafe=unsafe, rules=rules), data


def fix_notebook_text(
    text: str, filename: str, settings: Settings, *, unsafe: bool = False, rules: Sequence[type] | None = None
) -> FixOutcome:
    """`fix_notebook` for a notebook's JSON text (e.g. read from stdin)."""
    try:
        notebook = cells.read(text)
    except cells.NotebookError as err:
        return FixOutcome(text, [], [engine.source_error(filename, err.message, err.row, err.column)])
    current = lint_notebook(text.encode("utf-8", "surrogatepass"), filename, settings, rules=rules).diagnostics
    if not notebook.is_python or not any(d.fix is not None and d.fix.applies(unsafe) for d in current):
        return FixOutcome(text, [], current)
    module = cells.build(notebook, syntax_error)
    outcome = fix_source(module.text, filename, settings, unsafe=unsafe, rules=rules)
    if outcome.error is not None or not outcome.applied:
        return FixOutcome(text, [], current, outcome.error)
    try:
        fixed = dict(notebook.data, cells=with_sources(notebook, split_back(module, outcome.source)))
        new_text = layout.dumps_like(text, notebook.data, fixed)
    except (SplitError, layout.LayoutError) as err:
        return FixOutcome(text, [], current, str(err))
    problem = layout.validation_error(notebook.data, fixed)
    if problem is not None:
        return FixOutcome(text, [], current, f"the fixed notebook would not be valid: {problem}")
    applied = sorted((to_cell(d, module) for d in outcome.applied), key=sort_key)
    remaining = lint_notebook(new_text.encode("utf-8", "surrogatepass"), filename, settings, rules=rules)
    return FixOutcome(new_text, applied, remaining.diagnostics)


def split_back(module: cells.VirtualModule, fixed: str) -> dict[int, str]:
    """cell number -> new source, for each cell of the virtual module."""
    lines = split_lines(fixed)
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
        cell["source"] = new if isinstance(cell.get("source"), str) else new.splitlines(keepends=True)
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
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    return lines


def run_for_fixer(
    path: Path, settings: Settings, unsafe: bool, diff: bool, out: TextIO
) -> tuple[FixOutcome, bool]:
    """The `--fix` / `--diff` runner's hook for .ipynb files: (outcome, changed)."""
    from streamlint.fixes.runner import write_atomic

    outcome, original = _fix(path, settings, unsafe)
    if not outcome.changed:
        return outcome, False
    if diff:
        out.write(cell_diff(engine.decode(original, str(path)), outcome.source, str(path)))
        return outcome, True
    bom = engine.BOM if original.startswith(engine.BOM) else b""
    problem = write_atomic(path, bom + outcome.source.encode("utf-8"), expected=original)
    if problem is not None:
        current = lint_notebook(original, str(path), settings).diagnostics
        return FixOutcome(outcome.source, [], current, problem), False
    return outcome, True

