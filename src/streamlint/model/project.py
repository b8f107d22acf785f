"""Other modules of the checked project: `from .staging import prefetch` resolves to the
summary of `prefetch` in staging.py, read from disk (parsed and analysed, never imported).

Resolution is lazy (on the first call of an imported name), bounded in depth, and
guarded against cycles. Analyses are kept per process, by path and modification time,
in a small LRU: each holds its module's syntax tree, so the bound is what keeps memory
flat on big trees. Every path looked at is noted (model/reads.py) so that a cached
result of the checked file can be invalidated when one of them changes.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Optional

from streamlint import memory
from streamlint.model import lazy_parse, reads, resolve
from streamlint.model.resolve import module_file, package_files, project_root, python_files  # noqa: F401  (the v2 modules' names)
from streamlint.nesting import nesting_problem

if TYPE_CHECKING:
    import libcst as cst

    from streamlint.model.analysis import FileAnalyzer

MAX_DEPTH = 3  # imports of imports, three modules away at most (beyond: unknown)
MAX_BYTES = 2_000_000
# The LRU's bounds. A summarised module costs about 35x its source in memory (its tree).
MAX_CACHED_MODULES = 128
MAX_CACHED_SOURCE_BYTES = 2_000_000
# A module that names none of the frameworks cannot return GPU values or do GPU work.
_FRAMEWORK_WORDS = (b"torch", b"cupy", b"numba", b"cuda", b"mpi4py")  # (mpi4py: CUDA-aware MPI reads device memory, api/mpi.py)


class _Summary(NamedTuple):
    mtime_ns: int
    size: int
    digest: str
    analyzer: Optional["FileAnalyzer"]


_cache: OrderedDict[str, _Summary] = OrderedDict()
# The text and tree of the latest summary parse: when the run then checks that very
# file (a touched helper: its importers' summary check, then its own check), the
# checker takes the tree instead of parsing the text again (checker.parse).
_recent: list[tuple[str, object]] = []
_cached_bytes = 0
_in_progress: set[str] = set()

def analyzer_for(path: Path, depth: int, analyzer_type: type["FileAnalyzer"]) -> Optional["FileAnalyzer"]:
    """The summary of the module at `path`, analysed by `analyzer_type` (passed in by
    the analysis, which imports this module: importing it here would be a cycle)."""
    key = str(path)
    try:
        stat = path.stat()
    except OSError:
        reads.note(key, reads.ABSENT)
        return None
    cached = _cache.get(key)
    if cached is not None and (cached.mtime_ns, cached.size) == (stat.st_mtime_ns, stat.st_size):
        _cache.move_to_end(key)
        reads.note(key, cached.digest)
        if cached.analyzer is not None and depth < cached.analyzer.depth:
            # First read deep in another chain of imports: from here it is nearer, and the
            # names it re-exports are followed as far as this depth allows.
            cached.analyzer.depth = depth
        return cached.analyzer
    if key in _in_progress or depth > MAX_DEPTH:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        reads.note(key, reads.ABSENT)
        return None
    digest = reads.content_hash(data)
    reads.note(key, digest)
    _in_progress.add(key)
    try:
        analyzer = _summarise(data, key, depth, analyzer_type)
    finally:
        _in_progress.discard(key)
    _remember(key, _Summary(stat.st_mtime_ns, len(data), digest, analyzer))
    return analyzer


def _summarise(
    data: bytes, key: str, depth: int, analyzer_type: type["FileAnalyzer"]
) -> Optional["FileAnalyzer"]:
    # lazy: libcst is loaded only when an imported module must be parsed.
    import libcst as cst

    if len(data) > MAX_BYTES:
        return None
    if not any(k in data for k in _FRAMEWORK_WORDS) and not (key.endswith("__init__.py") and b"import" in data):
        return None  # (a package's `__init__` may re-export a helper: read it for its imports)
    try:
        text = data.decode("utf-8")
        # The checked file's own guard: libcst's parser overflows the stack on absurd nesting.
        if nesting_problem(text) is not None:
            return None
        module = _parse(text)
        _recent[:] = [(text, module)]
        analyzer = analyzer_type(module, path=key, depth=depth, summaries_only=True, source=text)
        analyzer.text = text  # (for cheap text tests only: positions stay as they were)
        analyzer.run()
    except (UnicodeDecodeError, cst.ParserSyntaxError, RecursionError, ValueError):
        return None
    return analyzer


def _parse(text: str) -> cst.Module:
    """The module, its function bodies parsed when an importer's call needs them
    (lazy_parse.py): the memory reserved is for the text actually parsed now."""
    import libcst as cst

    cut = lazy_parse.cut_bodies(text)
    if cut is not None:
        with memory.parsing(len(cut.text)):
            module = cut.attach(cst.parse_module(cut.text))
        if module is not None:
            return module
    with memory.parsing(len(text)):
        return cst.parse_module(text)


def _remember(key: str, summary: _Summary) -> None:
    global _cached_bytes
    old = _cache.pop(key, None)
    if old is not None and old.analyzer is not None:
        _cached_bytes -= old.size
    _cache[key] = summary
    if summary.analyzer is None:
        return  # a miss costs no tree: only its entry
    _cached_bytes += summary.size
    while _cache and (len(_cache) > MAX_CACHED_MODULES or _cached_bytes > MAX_CACHED_SOURCE_BYTES):
        _, evicted = _cache.popitem(last=False)
        if evicted.analyzer is not None:
            _cached_bytes -= evicted.size


def recent_parse(text: str) -> Optional[object]:
    """The tree of the latest summary parse if it was of `text` (taken once)."""
    if _recent and _recent[0][0] == text:
        module = _recent[0][1]
        _recent.clear()
        return module
    _recent.clear()  # (a tree is kept at most until the next check)
    return None


def forget_resolutions() -> None:
    """Forget which file each import resolved to (files may have appeared or gone);
    the analyses stay, checked against each file's modification time."""
    resolve.forget()


def clear() -> None:
    global _cached_bytes
    _cache.clear()
    resolve.forget()
    _recent.clear()
    _cached_bytes = 0


_TEXT_HAS: dict[tuple, tuple[bool, str]] = {}


def text_has(path: Path, word: bytes) -> bool:
    """Does the module's text spell `word` (a test before parsing it for one question)?
    Cached by the file's size and time; the text is a dependency of the cached result."""
    try:
        stat = path.stat()
    except OSError:
        reads.note(str(path), reads.ABSENT)
        return False
    key = (str(path), stat.st_mtime_ns, stat.st_size, word)
    known = _TEXT_HAS.get(key)
    if known is None:
        try:
            data = path.read_bytes()
        except OSError:
            reads.note(str(path), reads.ABSENT)
            return False
        if len(_TEXT_HAS) > 4096:
            _TEXT_HAS.clear()
        known = _TEXT_HAS[key] = (word in data, reads.content_hash(data))
    reads.note(str(path), known[1])
    return known[0]


_SELF_ASSIGNED: dict[tuple, tuple[frozenset, str]] = {}
_SELF_ASSIGNMENT = re.compile(rb"self\.(\w+)\s*(?::[^=\n]*)?(?:[-+*/|&]?=)(?!=)([^\n]*)")
# Words an assigned expression must spell to give evidence of a device, a stream or GPU
# data (a framework call, a device, a stream, an accelerator abstraction).
_EVIDENCE_WORDS = (b"torch", b"cuda", b"cupy", b"cp.", b"numba", b"device", b"stream", b"Stream", b"Event",
                   b"accelerator")


def self_assigned(path: Path) -> frozenset:
    """The attributes the module's text assigns on `self` (`self.x =`, `self.x: T =`,
    `self.x +=`) from an expression that names a GPU framework, a device or a stream (the
    only values that are evidence when inherited): a test before parsing a base class's
    module for one attribute. Cached as `text_has` is."""
    try:
        stat = path.stat()
    except OSError:
        reads.note(str(path), reads.ABSENT)
        return frozenset()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    known = _SELF_ASSIGNED.get(key)
    if known is None:
        try:
            data = path.read_bytes()
        except OSError:
            reads.note(str(path), reads.ABSENT)
            return frozenset()
        if len(_SELF_ASSIGNED) > 4096:
            _SELF_ASSIGNED.clear()
        names = frozenset(name.decode("ascii", "replace") for name, value in _SELF_ASSIGNMENT.findall(data)
                          if any(word in value for word in _EVIDENCE_WORDS))
        known = _SELF_ASSIGNED[key] = (names, reads.content_hash(data))
    reads.note(str(path), known[1])
    return known[0]
