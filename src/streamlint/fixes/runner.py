"""Putting fixes out: as a unified diff (`--diff`), written to the file in one step
(`--fix`; only when the file did not change on disk since it was read, keeping its
BOM, line endings and permissions). `--show-fixes` lists them (output/text.py)."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Optional

from streamlint import atomic_write
from streamlint.source import split_lines


def unified_diff(old: str, new: str, name: str) -> str:
    lines = difflib.unified_diff(
        split_lines(old, keepends=True), split_lines(new, keepends=True), *_diff_names(name)
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

