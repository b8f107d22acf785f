"""`--fix` / `--diff` over files: lint everything first (in parallel, as a normal run),
then fix only the files that have an applicable fix, one by one.

A file is written atomically (a temporary file in its directory, then `os.replace`),
keeping its BOM, line endings and permissions, and only if it did not change on disk
since it was read. A file whose fixes fail verification is left untouched and named.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence, TextIO

from streamlint import atomic_write, engine
from streamlint.config import Settings
from streamlint.diagnostics import Diagnostic, sort_key
from streamlint.fixes.apply import FixOutcome, fix_source

BOM = engine.BOM


@dataclass
class FixReport:
    diagnostics: list[Diagnostic] = field(default_factory=list)  # what remains
    applied: list[Diagnostic] = field(default_factory=list)  # what was (or would be) fixed
    changed_files: list[str] = field(default_factory=list)
    failed_files: list[str] = field(default_factory=list)


# path text -> (outcome of fixing it) for files that need something other than plain
# Python (notebooks); registered by those modules.
SpecialFixer = Callable[[Path, Settings, bool, bool, TextIO], "tuple[FixOutcome, bool]"]


def _fix_notebook(path: Path, settings: Settings, unsafe: bool, diff: bool, out: TextIO):
    from streamlint.notebooks.fix import run_for_fixer  # imported only when a notebook is fixed

    return run_for_fixer(path, settings, unsafe, diff, out)


SPECIAL: dict[str, SpecialFixer] = {engine.NOTEBOOK_SUFFIX: _fix_notebook}


def fix_files(
    results: Sequence[engine.FileResult],
    settings_for: Callable[[str], Settings],
    *,
    unsafe: bool,
    diff: bool,
    out: TextIO,
    err: TextIO,
) -> FixReport:
    report = FixReport()
    for result in results:
        fixable = [d for d in result.diagnostics if d.fix is not None and d.fix.applies(unsafe)]
        if not fixable:
            report.diagnostics.extend(result.diagnostics)
            continue
        path = Path(result.path)
        special = SPECIAL.get(path.suffix)
        if special is not None:
            outcome, changed = special(path, settings_for(result.path), unsafe, diff, out)
        else:
            outcome, changed = _fix_python(path, settings_for(result.path), unsafe, diff, out)
        if outcome.error is not None:
            err.write(f"streamlint: error: {result.path}: {outcome.error}; the file was left unchanged\n")
            report.failed_files.append(result.path)
        report.diagnostics.extend(outcome.remaining)
        report.applied.extend(outcome.applied if outcome.error is None else [])
        if changed:
            report.changed_files.append(result.path)
    report.diagnostics.sort(key=sort_key)
    return report


def _fix_python(path: Path, settings: Settings, unsafe: bool, diff: bool, out: TextIO) -> tuple[FixOutcome, bool]:
    try:
        data = path.read_bytes()
    except OSError as error:
        return FixOutcome("", [], [], f"cannot read file: {error.strerror or error}"), False
    text = engine.decode(data, str(path))
    if not isinstance(text, str):
        return FixOutcome("", [], [text], None), False
    outcome = fix_source(text, str(path), settings, unsafe=unsafe)
    if not outcome.changed:
        return outcome, False
    if diff:
        out.write(unified_diff(text, outcome.source, str(path)))
        return outcome, True
    bom = BOM if data.startswith(BOM) else b""
    problem = write_atomic(path, bom + outcome.source.encode("utf-8"), expected=data)
    if problem is not None:
        return FixOutcome(text, [], outcome.remaining, problem), False
    return outcome, True


def unified_diff(old: str, new: str, name: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), *_diff_names(name)
    )
    text = "".join(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n" for line in lines)
    return text


def _diff_names(name: str) -> tuple[str, str]:
    return (name, name) if os.path.isabs(name) else (f"a/{name}", f"b/{name}")


def write_atomic(path: Path, data: bytes, *, expected: Optional[bytes] = None) -> Optional[str]:
    """Replace `path` with `data` in one step; None on success, else why not. With
    `expected`, refuse when the file no longer holds those bytes (edited meanwhile)."""
    try:
        if expected is not None and path.read_bytes() != expected:
            return "the file changed on disk while it was being fixed"
        atomic_write.write_atomic(path, data)
    except OSError as error:
        return f"cannot write the fixed file: {error.strerror or error}"
    return None


def describe(applied: Sequence[Diagnostic], out: TextIO, *, verb: str = "Fixed") -> None:
    """--show-fixes: one line per fix."""
    if not applied:
        out.write(f"{verb} nothing.\n")
        return
    out.write(f"{verb} {len(applied)} finding{'s' if len(applied) != 1 else ''}:\n")
    from streamlint.output.text import location

    for diag in sorted(applied, key=sort_key):
        fix = diag.fix
        out.write(f"  {location(diag)}: {diag.code} [{fix.applicability.value}] {fix.message}\n")
