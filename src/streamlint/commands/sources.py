"""The lines of checked files, for showing source under a finding and for baseline
fingerprints: read back from disk (or stdin's text), a notebook's by cell."""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Optional

from streamlint.notebooks.cells import cell_lines
from streamlint.source import SourceFile, read_bytes, split_lines

# (filename, notebook cell or None) -> its lines, None when they cannot be shown.
SourceLoader = Callable[[str, Optional[int]], Optional[list]]


def loader(stdin_name: str, stdin_text: str | None) -> SourceLoader:
    @lru_cache(maxsize=64)
    def load(filename: str, cell: int | None = None) -> list[str] | None:
        if stdin_text is not None and filename == stdin_name:
            text: object = stdin_text
        else:
            try:
                text = SourceFile(filename, read_bytes(filename)).text()
            except OSError:
                return None
        if not isinstance(text, str):
            return None
        if cell is not None:  # a notebook's finding: the lines of its cell
            return cell_lines(text, cell)
        return split_lines(text)

    return load
