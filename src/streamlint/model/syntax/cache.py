"""Indexes cached by the sha256 of the source: in memory (least recently used first out)
and, when the caller gives one, in a directory on disk (one `<sha256>.json` file each).
A module is parsed only when its index is in neither."""

from __future__ import annotations

import os
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Optional

import libcst as cst

from streamlint.model.syntax.build import build_index, digest_of
from streamlint.model.syntax.codec import dumps, loads
from streamlint.model.syntax.types import ModuleIndex

parse_module = cst.parse_module  # a module attribute, so that a test can see that no parse happens


class IndexCache:
    def __init__(self, directory: Optional[Path] = None, capacity: int = 512) -> None:
        self.directory = directory
        self.capacity = capacity
        self.memory: OrderedDict[str, ModuleIndex] = OrderedDict()

    def index_for(self, source: str, module: Optional[cst.Module] = None) -> ModuleIndex:
        """The index of `source` (`module`, when given, is its parsed tree)."""
        digest = digest_of(source)
        found = self.memory.get(digest)
        if found is not None:
            self.memory.move_to_end(digest)
            return found
        found = self._read(digest)
        if found is None:
            found = build_index(module if module is not None else parse_module(source), source)
            self._write(found)
        self._remember(found)
        return found

    def _remember(self, index: ModuleIndex) -> None:
        self.memory[index.digest] = index
        while len(self.memory) > self.capacity:
            self.memory.popitem(last=False)

    def _path(self, digest: str) -> Optional[Path]:
        return None if self.directory is None else self.directory / f"{digest}.json"

    def _read(self, digest: str) -> Optional[ModuleIndex]:
        path = self._path(digest)
        if path is None:
            return None
        try:
            found = loads(path.read_bytes())
        except (OSError, ValueError):  # absent, unreadable or of another format: a miss
            return None
        return found if found.digest == digest else None

    def _write(self, index: ModuleIndex) -> None:
        """Best effort: a cache that cannot be written only costs a parse next time."""
        path = self._path(index.digest)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(dumps(index))
            os.replace(temporary, path)  # atomic: a reader never sees half a file
        except OSError:
            Path(temporary).unlink(missing_ok=True)
