"""What the analysis of one file read of other files: the dependencies of its result.

`model/project.py` notes every path it looks at while resolving and reading the checked
file's imports; the engine collects the notes per file so that the result cache can
tell when a change elsewhere (a helper module edited, added or removed) invalidates it.

A note is one of: the content hash of a file that was read, PRESENT for a file whose
existence mattered but whose text was not read, ABSENT for a path that was looked for
and not found.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from typing import Iterator, Optional

PRESENT = ""
ABSENT = None

Note = Optional[str]

# One file is checked at a time per process (on the checker's own thread), so a
# module-level recorder is enough.
_notes: Optional[dict[str, Note]] = None


def content_hash(data: bytes) -> str:
    """The hash the cache keys contents by (blake2b: fast, and collisions are not a concern)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def note(path: str, what: Note) -> None:
    """Record that the analysis depended on `path` (a hash wins over PRESENT)."""
    if _notes is None:
        return
    if what == PRESENT and _notes.get(path):
        return
    _notes[path] = what


@contextmanager
def recording() -> Iterator[dict[str, Note]]:
    """Collect the notes made inside the block into the yielded dict."""
    global _notes
    outer, _notes = _notes, {}
    try:
        yield _notes
    finally:
        _notes = outer
