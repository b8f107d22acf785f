"""How a report names a file: relative to the working directory when it lies under
it, else absolute, whatever way the user typed it (`./a.py`, `../proj/a.py`), as ruff
prints paths."""

from __future__ import annotations

import os

STDIN = "-"


def display_path(filename: str, cwd: str | None = None) -> str:
    if not filename or filename == STDIN:
        return filename
    cwd = os.path.normpath(cwd or os.getcwd())
    absolute = os.path.normpath(os.path.join(cwd, filename))
    if absolute.startswith(cwd.rstrip(os.sep) + os.sep):
        return os.path.relpath(absolute, cwd)
    return absolute
