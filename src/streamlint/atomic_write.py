"""Replace a file's contents all at once: readers see the old file or the new one,
never half of it, and a crash midway leaves the old one in place."""

from __future__ import annotations

import os
import stat
import tempfile


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    target = os.path.realpath(path)  # through a symlink, not over it
    directory, name = os.path.split(target)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".streamlint-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(temp, mode)  # mkstemp creates 0600; keep the file's own permissions
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
