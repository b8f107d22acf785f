"""Can a text mention a GPU framework at all? A substring test, so that a module that
cannot is never parsed. It may say yes more often than the index, never less (tested:
`may_use_gpu(text)` is true whenever `build_index(...).frameworks` is non-empty)."""

from __future__ import annotations

from streamlint.model.syntax.frameworks import FRAMEWORK_WORDS


def may_use_gpu(text: str) -> bool:
    """False only when no framework's name is spelled anywhere in the text."""
    return any(word in text for word in FRAMEWORK_WORDS)
