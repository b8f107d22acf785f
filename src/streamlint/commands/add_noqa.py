"""`check --add-noqa`: suppress every current finding in its file, so that a code base
adopts streamlint today and its findings are fixed one by one later (ruff's
`--add-noqa`). The comments are written by `suppression.add_noqa` (and, into the
cells of a notebook, by `suppression.notebook_noqa`)."""

from __future__ import annotations

from typing import Sequence, TextIO

from streamlint.commands.exit import EXIT_CLEAN, EXIT_ERROR
from streamlint.commands.report import plural
from streamlint.diagnostics import Diagnostic
from streamlint.engine.lint import FileResult
from streamlint.source import SourceKind
from streamlint.suppression.add_noqa import SKIPPED, add_noqa_to_file
from streamlint.suppression.notebook_noqa import add_noqa_to_notebook


def run(
    results: Sequence[FileResult], err: TextIO, *, quiet: bool = False, reason: str = ""
) -> tuple[list[Diagnostic], int]:
    """Suppress every finding of `results` in its file. Returns the findings that
    remain (SL000, SL900) and EXIT_ERROR if a file could not be written."""
    added = files = 0
    status = EXIT_CLEAN
    for result in results:
        todo = [d for d in result.diagnostics if d.code not in SKIPPED]
        if not todo:
            continue
        write = add_noqa_to_notebook if SourceKind.of(result.path) is SourceKind.NOTEBOOK else add_noqa_to_file
        try:
            count = write(result.path, todo, reason)
        except OSError as error:
            err.write(f"streamlint: error: cannot edit {result.path}: {error.strerror or error}\n")
            status = EXIT_ERROR
            continue
        added += count
        files += 1 if count else 0
    if not quiet:
        err.write(f"streamlint: added {plural(added, 'noqa code')} in {plural(files, 'file')}\n")
    left = sorted(d for r in results for d in r.diagnostics if d.code in SKIPPED)
    return left, status
