"""A module that does not spell a name cannot call it by that name: a substring test, never parsed (tested)."""

from __future__ import annotations


def may_call(data: bytes, names: frozenset[str]) -> bool:
    """False only when none of `names` is spelled anywhere in the module's bytes."""
    return any(name.encode() in data for name in names)
