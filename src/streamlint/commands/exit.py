"""Exit codes, as ruff's: 0 no findings, 1 findings (SL000 included), 2 usage,
configuration or internal error."""

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    """A bad argument, or a combination of them, found after parsing (exit 2)."""
