"""Can a text mention a GPU framework at all? A substring test, so that a module that
cannot is never parsed. It may say yes more often than the index, never less (tested:
`may_use_gpu(text)` is true whenever `build_index(...).frameworks` is non-empty). Likewise
`may_call`: a module that does not spell a name cannot call it by that name."""

from __future__ import annotations

from streamlint.model.syntax.frameworks import FRAMEWORK_WORDS


def may_use_gpu(text: str) -> bool:
    """False only when no framework's name is spelled anywhere in the text."""
    return any(word in text for word in FRAMEWORK_WORDS)


def may_call(data: bytes, names: frozenset[str]) -> bool:
    """False only when none of `names` is spelled anywhere in the module's bytes: it cannot call
    a function, method or class by one of those names (the caller search's first cut)."""
    return any(name.encode() in data for name in names)
