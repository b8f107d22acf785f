"""What a long run says while it works, on stderr: on a terminal, one line counting the
files done of the total, the time so far and the current rate, drawn after about a
second (a short run shows nothing), kept current by a timer thread while one large file
is analysed, and cleared at the end; with `verbose`, each file's name as its check
ends. Nothing at all when stderr is not a terminal and `verbose` is off, or with `-q`.

The clock is a parameter, so that tests drive it (through `tick`) instead of waiting."""

from __future__ import annotations

import collections
import contextlib
import threading
import time
from typing import Callable, Iterator, Optional, TextIO

# Seconds before the counter appears, and between two redraws of it.
SHOW_AFTER = 1.0
REDRAW_EVERY = 0.1
# The rate is taken over the files done in this many last seconds.
RATE_WINDOW = 5.0


class Progress:
    def __init__(
        self,
        total: int,
        stream: TextIO,
        *,
        counter: bool,
        verbose: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.done = 0
        self._stream = stream
        self._counter = counter
        self._verbose = verbose
        self._clock = clock
        self._start = clock()
        self._drawn_at: Optional[float] = None
        self._width = 0  # of the counter line on screen, 0 when none is
        self._recent: collections.deque[float] = collections.deque()
        self._lock = threading.Lock()  # the timer thread draws too
        self._stop = threading.Event()
        self._timer: Optional[threading.Thread] = None

    @classmethod
    def for_stream(cls, total: int, stream: TextIO, *, quiet: bool, verbose: bool) -> Optional[Progress]:
        """The progress a run shows on `stream`, or None when it shows none."""
        counter = not quiet and _is_terminal(stream)
        if not counter and not verbose:
            return None
        progress = cls(total, stream, counter=counter, verbose=verbose)
        if counter:
            progress.start_timer()
        return progress

    def start_timer(self) -> None:
        """Redraw the counter every REDRAW_EVERY seconds, files done or not."""
        self._timer = threading.Thread(target=self._run_timer, name="streamlint-progress", daemon=True)
        self._timer.start()

    def file_done(self, path: str) -> None:
        with self._lock:
            now = self._clock()
            self.done += 1
            self._recent.append(now)
            if self._verbose:
                self._clear()
                self._stream.write(f"streamlint: checked {path}\n")
            self._tick(now)
            self._stream.flush()

    @contextlib.contextmanager
    def still(self) -> Iterator[None]:
        """Nothing is written inside the block: a process forked while the timer thread
        writes would inherit stderr's lock held, and hang on its first write."""
        with self._lock:
            yield

    def tick(self) -> None:
        """Draw the counter if it is due (the timer thread calls this)."""
        with self._lock:
            self._tick(self._clock())
            self._stream.flush()

    def close(self) -> None:
        """Stop the timer and clear the counter line, if one is shown."""
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
        with self._lock:
            self._clear()
            self._stream.flush()

    def line(self, now: float) -> str:
        while self._recent and now - self._recent[0] > RATE_WINDOW:
            self._recent.popleft()
        span = min(now - self._start, RATE_WINDOW)
        rate = len(self._recent) / span if span > 0 else 0.0
        elapsed = int(now - self._start)
        return f"streamlint: {self.done}/{self.total} files checked in {elapsed} s, {rate:.1f} files/s"

    def _tick(self, now: float) -> None:
        if not self._counter or now - self._start < SHOW_AFTER:
            return
        if self._drawn_at is None or now - self._drawn_at >= REDRAW_EVERY:
            self._draw(now)

    def _run_timer(self) -> None:
        while not self._stop.wait(REDRAW_EVERY):
            try:
                self.tick()
            except (OSError, ValueError):  # the terminal went away: stop drawing
                return

    def _draw(self, now: float) -> None:
        text = self.line(now)
        pad = max(self._width - len(text), 0)
        self._stream.write("\r" + text + " " * pad)
        self._width = len(text)
        self._drawn_at = now

    def _clear(self) -> None:
        if self._width:
            self._stream.write("\r" + " " * self._width + "\r")
            self._width = 0


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or a stream without a file
        return False
