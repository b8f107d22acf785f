"""A checked file as the engine sees it: its kind (Python or notebook, decided once per
path), its bytes read safely, its text decoded, and one index of its lines.

Every module that maps between offsets, rows and columns (fixes, suppression comments,
notebooks, the lines the language server converts to UTF-16) uses `LineIndex`: lines break where
Python's tokenizer breaks them (\\n, \\r\\n and \\r), never at the form feeds and other
characters at which `str.splitlines` also breaks.
"""

from __future__ import annotations

import bisect
import enum
import os
import re
import stat
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from streamlint.diagnostics import Diagnostic
from streamlint.selection import SOURCE_ERROR

BOM = b"\xef\xbb\xbf"
LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_LONE_CR = re.compile(r"\r(?!\n)")


class SourceKind(enum.Enum):
    PYTHON = "python"
    NOTEBOOK = "notebook"

    @classmethod
    def of(cls, path: str | os.PathLike) -> SourceKind:
        """The kind of a file, by its name: the one place that tests for `.ipynb`."""
        return cls.NOTEBOOK if str(path).endswith(".ipynb") else cls.PYTHON


@dataclass(frozen=True)
class SourceFile:
    """A file's name, kind and raw bytes."""

    path: str
    data: bytes

    @cached_property
    def kind(self) -> SourceKind:
        return SourceKind.of(self.path)

    @property
    def bom(self) -> bytes:
        return BOM if self.data.startswith(BOM) else b""

    def text(self) -> str | Diagnostic:
        """The decoded text, or the SL000 diagnostic saying why there is none."""
        return decode(self.data, self.path)

    def encode(self, text: str) -> bytes:
        """`text` as this file's bytes (keeping its BOM), for writing back."""
        return self.bom + text.encode("utf-8", "surrogatepass")


class LineIndex:
    """Rows and columns of one text: 1-based rows, 1-based code-point columns."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]

    def __len__(self) -> int:
        return len(self.starts)

    def offset(self, row: int, column: int) -> int:
        """The character offset of (row, column), clamped to the text."""
        if row > len(self.starts):
            return len(self.text)
        return min(self.starts[max(row, 1) - 1] + max(column, 1) - 1, len(self.text))

    def position(self, offset: int) -> tuple[int, int]:
        """The (row, column) of a character offset."""
        row = bisect.bisect_right(self.starts, offset)
        return row, offset - self.starts[row - 1] + 1


def split_lines(text: str, *, keepends: bool = False) -> list[str]:
    """The lines as Python counts them; with `keepends`, each keeps its line break (and
    a text ending in a break has no empty last line)."""
    return _LINE.findall(text) if keepends else LINE_BREAK.split(text)


def universal_newlines(text: str) -> str:
    """The text with no lone CR (Python's third line break, which libcst and the
    tokenizer miscount): every break becomes the file's first CRLF or LF, so that fixes,
    generated in that style, match the file. Rows and columns do not change."""
    if "\r" not in text or not _LONE_CR.search(text):
        return text
    first = re.search(r"\r\n|\n", text)
    return LINE_BREAK.sub(first.group() if first else "\n", text)


def line_count(text: str) -> int:
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    return breaks + (1 if text and not text.endswith(("\n", "\r")) else 0)


def source_error(filename: str, message: str, row: int = 1, column: int = 1) -> Diagnostic:
    """The SL000 diagnostic of a file that cannot be checked."""
    row, column = max(row, 1), max(column, 1)
    return Diagnostic(filename, row, column, SOURCE_ERROR, message, row, column, row)


def decode(data: bytes, filename: str) -> str | Diagnostic:
    """The text of a source file, or the SL000 diagnostic saying why it has none."""
    nul = data.find(b"\0")
    if nul >= 0:
        row, column = _byte_position(data, nul)
        return source_error(filename, "file is not text (contains NUL bytes)", row, column)
    skip = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = skip + err.start
        row, column = _byte_position(data, offset)
        message = f"file is not valid UTF-8 (byte 0x{data[offset]:02x} at offset {offset})"
        return source_error(filename, message, row, column)


def read_bytes(path: str | os.PathLike) -> bytes:
    """A regular file's bytes. O_NONBLOCK so that opening a FIFO does not wait for a
    writer; anything but a regular file is refused (FIFOs and devices may never end)."""
    fd = os.open(Path(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(21, "is a directory")
            raise OSError(0, "not a regular file")
        return fh.read()


def _byte_position(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1
