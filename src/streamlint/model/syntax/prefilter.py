"""`may_call`: a module that does not spell a name cannot call it by that name. A substring
test, so that a module that cannot is never parsed; it may say yes more often than the full
query, never less (tested)."""

from __future__ import annotations


def may_call(data: bytes, names: frozenset[str]) -> bool:
    """False only when none of `names` is spelled anywhere in the module's bytes: it cannot call
    a function, method or class by one of those names (the caller search's first cut)."""
    return any(name.encode() in data for name in names)
