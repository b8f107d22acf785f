"""What the analysis of one file read of other files: the dependencies of its result.

`model/interproc/modules.py` and `model/resolve.py` note every path it looks at while resolving and reading the checked
file's imports; the engine collects the notes per file so that the result cache can
tell when a change elsewhere (a helper module edited, added or removed) invalidates it.

A note is one of: the content hash of a file that was read (kept as its syntax note,
streamlint/syntax_notes.py, for a module the analysis read: a comment added keeps it), PRESENT for a file whose
existence mattered but whose text was not read, ABSENT for a path that was looked for
and not found, or a *summary note* for a module whose summaries the analysis used:
`HASH/DIGEST/NAME,NAME...`, the content hash, a digest of what the analysis used from
the module (the values and function summaries the names gave it, positions left out:
model/interproc/digests.py), and the names it looked up there. A result with a summary
note stays valid after the module's text changes as long as the same names still give
the same digest (mypy's interface-hash early cutoff), so a comment or an edit that
keeps the summary leaves the importers fresh. The digest is made only when it is needed:
a run that stores a result writes DEFERRED in its place and the cache keeps the module's
text (cache/texts.py); the run that finds the module changed makes the digest of the
names under the kept text and under the new one and compares them. A cold run thus
solves no module for digests.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from typing import Callable, Iterator, NamedTuple, Optional

from streamlint import syntax_notes

PRESENT = ""
ABSENT = None
DEFERRED = "~"  # the digest of a summary note, made from the kept text when a run needs it

Note = Optional[str]

# One file is checked at a time per process (on the checker's own thread), so a
# module-level recorder is enough.
_notes: Optional[dict[str, Note]] = None
# path -> the names the analysis used of the module there.
_uses: Optional[dict[str, set[str]]] = None
SEPARATOR = "/"


class SummaryNote(NamedTuple):
    content: str
    digest: str
    names: tuple[str, ...]


def summary_note(content: str, digest: str, names: "tuple[str, ...] | list[str]") -> str:
    return SEPARATOR.join((content, digest, ",".join(names)))


def parse_summary_note(note: Note) -> Optional[SummaryNote]:
    """The parts of a summary note; None for any other note."""
    if not note or SEPARATOR not in note:
        return None
    parts = note.split(SEPARATOR)
    if len(parts) != 3 or not parts[0] or not parts[1]:
        return None
    names = tuple(parts[2].split(",")) if parts[2] else ()
    return SummaryNote(parts[0], parts[1], names)


def combine(digests: "list[tuple[str, str]]") -> str:
    """One digest of the (name, digest) pairs of a module's uses, in name order."""
    text = "\n".join(f"{name}={digest}" for name, digest in sorted(digests))
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def content_hash(data: bytes) -> str:
    """The hash the cache keys contents by (blake2b: fast, and collisions are not a concern)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def note_read(path: str, data: bytes, content: str = "") -> None:
    """Record that the analysis read the module at `path`, of content hash `content` (made from
    `data` when not given)."""
    if _notes is None:
        return
    note(path, content or content_hash(data))


def note(path: str, what: Note) -> None:
    """Record that the analysis depended on `path` (a hash wins over PRESENT)."""
    if _notes is None:
        return
    if what == PRESENT and _notes.get(path):
        return
    _notes[path] = what


def use(path: str, name: str) -> None:
    """Record that the analysis used `name` of the module at `path`."""
    if _uses is None:
        return
    _uses.setdefault(path, set()).add(name)


@contextmanager
def recording(digests: bool = True) -> Iterator[dict[str, Note]]:
    """Collect the notes made inside the block into the yielded dict. Modules whose
    summaries were used get summary notes (see `finish`) when the block ends; without
    `digests` (no cache will keep the result) uses are not recorded."""
    global _notes, _uses
    outer, _notes = _notes, {}
    outer_uses, _uses = _uses, ({} if digests else None)
    notes, uses = _notes, _uses
    try:
        yield notes
    finally:
        _notes, _uses = outer, outer_uses
    if uses is not None:
        finish(notes, uses)


def finish(notes: dict[str, Note], uses: dict[str, set[str]]) -> None:
    """Turn the content hash of each module whose names were used into a summary note (its digest
    DEFERRED: made by the run that finds the module changed)."""
    for path, names in uses.items():
        content = notes.get(path)
        if not content or SEPARATOR in content:
            continue  # not read (ABSENT/PRESENT): the plain note decides
        notes[path] = summary_note(content, DEFERRED, sorted(names))


def strict(notes: dict[str, Note], mentioned: Callable[[str], bool]) -> dict[str, Note]:
    """The notes with summary notes back to content hashes for the modules `mentioned`
    says a result names (a message that points at a line of the module must be made
    again when the module's lines move); for the other modules read, the content hash
    becomes the syntax note (a comment or a blank line added keeps the result; its syntax hash
    made by the run that finds the content changed, from the text the cache keeps)."""
    out: dict[str, Note] = {}
    for path, note in notes.items():
        parsed = parse_summary_note(note)
        if mentioned(path):
            out[path] = parsed.content if parsed is not None else note
        elif parsed is not None:
            out[path] = summary_note(syntax_notes.of_content(parsed.content), parsed.digest, parsed.names)
        else:
            out[path] = syntax_notes.of_content(note) if note else note
    return out
