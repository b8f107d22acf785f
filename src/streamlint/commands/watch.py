"""`check --watch`: check, then poll the checked files and the configs that apply to
them, and check again whenever one of them changes, appears or goes (ruff's `--watch`;
polling needs no file-system events, so it works the same on every platform and in
containers). Ctrl-C ends it with exit 0.

The loop takes its pause and its number of rounds as parameters, so that a test runs
a bounded loop and changes a file between two polls instead of waiting."""

from __future__ import annotations

import os
import time
from typing import Callable, Optional, Sequence, TextIO

from streamlint.commands.exit import EXIT_CLEAN, UsageError
from streamlint.config import ConfigError, SettingsResolver
from streamlint.discovery import discover

# Seconds between two looks at the files.
POLL_SECONDS = 0.5

# path -> (modification time in ns, size); None for a path that cannot be read.
Snapshot = dict[str, Optional[tuple[int, int]]]


def snapshot(paths: Sequence[str], resolver: SettingsResolver, *, force_exclude: bool = False) -> Snapshot:
    """What the next check would read: the files discovery finds, and their configs."""
    found = discover(list(paths), resolver, force_exclude=force_exclude)
    watched = {str(path) for path, _ in found.files}
    watched |= {str(settings.config_file) for _, settings in found.files if settings.config_file}
    return {path: _stamp(path) for path in sorted(watched)}


def run(
    check_once: Callable[[], int],
    look: Callable[[], Snapshot],
    err: TextIO,
    *,
    pause: Callable[[float], None] = time.sleep,
    rounds: Optional[int] = None,
) -> int:
    """Check, then check again after each change; `rounds` bounds the polls (tests).
    A configuration broken while watching is reported and watched until it is fixed."""
    seen = _safely(look, err) or {}
    _safely(check_once, err)
    _watching(err)
    polls = 0
    try:
        while rounds is None or polls < rounds:
            pause(POLL_SECONDS)
            polls += 1
            now = _safely(look, err, quiet=True)
            if now is None:  # the config does not load: check (and say why) once it changes
                now = {"(configuration)": None}
            if now != seen:
                changed = sorted(p for p in set(now) | set(seen) if now.get(p) != seen.get(p))
                err.write(f"streamlint: {_names(changed)} changed; checking again\n")
                seen = now
                _safely(check_once, err)
                _watching(err)
    except KeyboardInterrupt:
        err.write("\n")
    return EXIT_CLEAN


def _safely(step: Callable, err: TextIO, *, quiet: bool = False):
    """`step()`, or None when the configuration or an option is wrong (said on `err`)."""
    try:
        return step()
    except (ConfigError, UsageError) as problem:
        if not quiet:
            err.write(f"streamlint: error: {problem}\n")
        return None


def _watching(err: TextIO) -> None:
    err.write("streamlint: watching for changes (Ctrl-C ends)\n")
    err.flush()


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:3])
    return shown + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _stamp(path: str) -> Optional[tuple[int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)
