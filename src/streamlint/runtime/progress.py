"""A plain progress bar on stderr: redrawn in place on a terminal, one line per step
otherwise (logs, CI)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.started = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def line(self, what: str) -> str:
        filled = round(self.width * self.done / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.monotonic() - self.started
        return f"[{bar}] {self.done}/{self.total} {elapsed:5.0f}s {what}"

    def start(self, what: str) -> None:
        self._write(self.line(what + " ..."))

    def advance(self, what: str) -> None:
        self.done = min(self.done + 1, self.total)
        self._write(self.line(what))

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def _write(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
