"""Syntax notes: what the result cache keeps of a module another file's analysis read
(streamlint/reads.py), `syn:<content hash>:<syntax hash>`. The syntax hash is the same for two texts
whose tokens are the same but for comments and line breaks between statements (a comment, a
blank line, a re-wrapped call), and whose raw text the model reads the same way (`parsed_at_all`):
an analysis that read one holds for the other, positions aside (reads.strict keeps the content
hash of a module a message names). No libcst here: the cache checks notes without the model.
"""

from __future__ import annotations

import hashlib
import io
import tokenize
from typing import Optional

from streamlint.nesting import nesting_problem

SYNTAX_PREFIX = "syn:"
# The syntax hash of a note made without tokenizing: made from the text the cache keeps
# (cache/texts.py) by the run that finds the content changed.
DEFERRED = "~"

# content hash -> its syntax note (a function of the bytes alone: kept for the process)
_syntax: dict[str, str] = {}
# A module larger than this is not read for its summaries (unknown: silence).
MAX_BYTES = 2_000_000
# A module that names none of the frameworks can still hand on a helper that does (a package's
# `__init__` re-exports): it is read when it imports anything.
RELEVANT = (b"torch", b"cupy", b"numba", b"cuda", b"mpi4py", b"import")


def parsed_at_all(data: bytes) -> bool:
    """Whether a module read is parsed (modules.py): small enough, naming a framework or
    importing anything, and nesting no deeper than libcst's native parser can (deeper would
    overflow its stack: a module we cannot see). Facts of the raw text that a comment can change:
    part of the syntax note."""
    if len(data) > MAX_BYTES or not any(word in data for word in RELEVANT):
        return False
    try:
        return nesting_problem(data.decode("utf-8")) is None
    except UnicodeDecodeError:
        return False


def known(content: str) -> Optional[str]:
    """The syntax note of the bytes of this content hash, when made in this process."""
    return _syntax.get(content)


def remember(note: str) -> None:
    """A syntax note read back from the result cache, for bytes of its content hash (a function
    of the bytes alone, the cache's entries made by this version)."""
    content, syntax = syntax_part(note)
    if syntax != DEFERRED:
        _syntax.setdefault(content, note)


def of_content(content: str) -> str:
    """The syntax note of the bytes of this content hash: the one made in this process, or one
    whose syntax hash is DEFERRED (no tokenizing now)."""
    return _syntax.get(content) or f"{SYNTAX_PREFIX}{content}:{DEFERRED}"


def syntax_of(data: bytes) -> str:
    """The syntax note of a module's bytes (made once per content in a process); the content hash
    alone when the text does not tokenize."""
    content = hashlib.blake2b(data, digest_size=16).hexdigest()  # (reads.content_hash)
    found = _syntax.get(content)
    if found is None:
        try:
            tokens = [f"{t.type}:{t.string}" for t in tokenize.tokenize(io.BytesIO(data).readline)
                      if t.type not in (tokenize.COMMENT, tokenize.NL)]
        except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, ValueError):
            found = content
        else:
            text = "\x00".join((str(parsed_at_all(data)), *tokens)).encode("utf-8", "surrogatepass")
            found = f"{SYNTAX_PREFIX}{content}:{hashlib.blake2b(text, digest_size=16).hexdigest()}"
        _syntax[content] = found
    return found


def syntax_part(note: str) -> tuple[str, str]:
    """(content hash, syntax hash) of a syntax note."""
    content, _, syntax = note[len(SYNTAX_PREFIX):].partition(":")
    return content, syntax
