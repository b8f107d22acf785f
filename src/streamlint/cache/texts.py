"""The texts of the modules whose summaries a kept result used, by content hash, compressed.

A result's summary note carries no digest when it is stored (streamlint/reads.py, DEFERRED):
the run that finds such a module changed makes the digest of the names the result used from
the text kept here and from the module's text now, and keeps the result when they are the same.
A text that is missing or damaged only costs a re-check. At most MAX_TEXTS are kept: past that,
the oldest are removed.
"""

from __future__ import annotations

import os
import zlib
from typing import Optional

from streamlint import reads
from streamlint.atomic_write import write_atomic

MAX_TEXTS = 20_000


class TextStore:
    def __init__(self, directory: str) -> None:
        self.directory = directory
        self._kept: dict[str, bool] = {}  # content hash -> kept here (this run's answers)
        self._new: dict[str, bytes] = {}  # content hash -> the text, to write on save

    def keep(self, path: str, content: str) -> bool:
        """Keep the text of the module at `path` if it still has the content hash `content`
        (False: it changed since it was read, or it cannot be read)."""
        if content not in self._kept:
            self._kept[content] = os.path.isfile(self._file(content)) or self._read_now(path, content)
        return self._kept[content]

    def text_of(self, content: str) -> Optional[bytes]:
        """The kept text of content hash `content`, or None."""
        if content in self._new:
            return self._new[content]
        try:
            with open(self._file(content), "rb") as fh:
                data = zlib.decompress(fh.read())
        except (OSError, zlib.error):
            return None
        return data if reads.content_hash(data) == content else None

    def save(self) -> None:
        """Write the texts kept this run (OSError to the caller), then trim to MAX_TEXTS."""
        if not self._new:
            return
        os.makedirs(self.directory, exist_ok=True)
        for content, data in sorted(self._new.items()):
            write_atomic(self._file(content), zlib.compress(data, 1), durable=False)
        self._new.clear()
        names = os.listdir(self.directory)
        if len(names) > MAX_TEXTS:
            files = sorted((os.path.join(self.directory, n) for n in names), key=_mtime)
            for file in files[: len(files) - MAX_TEXTS]:
                try:
                    os.remove(file)
                except OSError:
                    pass

    def _read_now(self, path: str, content: str) -> bool:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return False
        if reads.content_hash(data) != content:
            return False
        self._new[content] = data
        return True

    def _file(self, content: str) -> str:
        return os.path.join(self.directory, content + ".z")


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0
