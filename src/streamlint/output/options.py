"""What an output format may use beyond the diagnostics (its own module, so that the
formats and the registry in `__init__.py` can both import it without a cycle)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, NamedTuple, Sequence

if TYPE_CHECKING:
    from streamlint.diagnostics import Diagnostic

# (filename, notebook cell or None) -> the source lines (None when they cannot be
# shown), for --show-source and the full format.
SourceLoader = Callable[[str, "int | None"], "list[str] | None"]


class FixList(NamedTuple):
    """`--show-fixes`: the fixes to list under the findings, before the summary line
    (as ruff), headed "Fixed N errors:" (or, without --fix, "Can fix N errors:")."""

    fixes: "Sequence[Diagnostic]"
    verb: str = "Fixed"


@dataclass(frozen=True)
class Options:
    """Each format reads what it needs."""

    show_source: bool = False
    quiet: bool = False
    source: SourceLoader | None = None
    unsafe_fixes: bool = False
    color: bool = False  # ANSI styles (a terminal without NO_COLOR)
    fixed: int = 0  # findings this run fixed (--fix), for the summary line
    fix_list: FixList | None = None  # --show-fixes (the human formats list them)
