"""A module that does not spell a name cannot call it by that name: a substring test, never parsed (tested);
for many names over one module, the same test over the words it spells, each once."""

from __future__ import annotations

import re

_WORD = re.compile(rb"[A-Za-z0-9_]+")


def may_call(data: bytes, names: frozenset[str]) -> bool:
    """False only when none of `names` is spelled anywhere in the module's bytes."""
    return any(name.encode() in data for name in names)


def spelled_words(data: bytes) -> bytes:
    """The module's distinct runs of ASCII name characters, apart: an ASCII name is in the bytes
    exactly when it is in these (it lies within one run), and these are a fraction of the text."""
    return b"\x00".join(set(_WORD.findall(data)))
