"""Other modules of the checked project: `from .staging import prefetch` resolves to the
summary of `prefetch` in staging.py, read from disk (parsed and analysed, never imported).

Analyses are cached per process by path and modification time. Resolution is lazy (on
the first call of an imported name), bounded in depth, and guarded against cycles.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import libcst as cst

from streamlint.model import api

if TYPE_CHECKING:
    from streamlint.engine import nesting_problem
    from streamlint.model.analysis import FileAnalyzer

MAX_DEPTH = 1  # the checked file's direct imports (their own imports stay unknown)
MAX_BYTES = 2_000_000
# A module that names none of the frameworks cannot return GPU values or do GPU work.
_FRAMEWORK_WORDS = (b"torch", b"cupy", b"numba", b"cuda")

_cache: dict[str, tuple[float, Optional["FileAnalyzer"]]] = {}
_in_progress: set[str] = set()


_resolved: dict[tuple[str, str], Optional[Path]] = {}


def module_file(from_path: str, dotted: str) -> Optional[Path]:
    """The file a module name denotes, seen from `from_path` (relative or absolute)."""
    if not from_path or from_path == "-":
        return None
    root = dotted.lstrip(".").split(".", 1)[0]
    if not dotted.startswith(".") and (root in sys.stdlib_module_names or api.framework_of(dotted)):
        return None
    key = (os.path.dirname(from_path), dotted)
    if key not in _resolved:
        _resolved[key] = _module_file(from_path, dotted)
    return _resolved[key]


def _module_file(from_path: str, dotted: str) -> Optional[Path]:
    here = Path(from_path).resolve().parent
    level = len(dotted) - len(dotted.lstrip("."))
    parts = [p for p in dotted.lstrip(".").split(".") if p]
    if level:
        base = here
        for _ in range(level - 1):
            base = base.parent
        return _find(base, parts)
    if not parts or api.framework_of(dotted) or parts[0] in ("numpy", "os", "sys", "typing"):
        return None
    # Absolute: beside the file (scripts), or from the top of its package.
    top = here
    while (top / "__init__.py").exists() and top.parent != top:
        top = top.parent
    for base in dict.fromkeys((here, top)):
        found = _find(base, parts)
        if found is not None:
            return found
    return None


def _find(base: Path, parts: list[str]) -> Optional[Path]:
    if not parts:
        init = base / "__init__.py"
        return init if init.is_file() else None
    candidate = base.joinpath(*parts)
    for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
        if path.is_file():
            return path
    return None


def analyzer_for(path: Path, depth: int) -> Optional["FileAnalyzer"]:
    from streamlint.engine import nesting_problem
    from streamlint.model.analysis import FileAnalyzer

    key = str(path)
    try:
        stat = path.stat()
    except OSError:
        return None
    cached = _cache.get(key)
    if cached is not None and cached[0] == stat.st_mtime:
        return cached[1]
    if key in _in_progress or depth > MAX_DEPTH or stat.st_size > MAX_BYTES:
        return None
    _in_progress.add(key)
    try:
        data = path.read_bytes()
        text = data.decode("utf-8") if any(k in data for k in _FRAMEWORK_WORDS) else None
        # The checked file's own guard: libcst's parser overflows the stack on absurd nesting.
        if text is None or nesting_problem(text) is not None:
            analyzer = None
        else:
            analyzer = FileAnalyzer(cst.parse_module(text), path=key, depth=depth, summaries_only=True)
            analyzer.run()
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError, RecursionError, ValueError):
        analyzer = None
    finally:
        _in_progress.discard(key)
    _cache[key] = (stat.st_mtime, analyzer)
    return analyzer


def clear() -> None:
    _cache.clear()
    _resolved.clear()
