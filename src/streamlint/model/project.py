"""Other modules of the checked project: `from .staging import prefetch` resolves to the
summary of `prefetch` in staging.py, read from disk (parsed and analysed, never imported).

Resolution is lazy (on the first call of an imported name), bounded in depth, and
guarded against cycles. Analyses are kept per process, by path and modification time,
in a small LRU: each holds its module's syntax tree, so the bound is what keeps memory
flat on big trees. Every path looked at is noted (model/reads.py) so that a cached
result of the checked file can be invalidated when one of them changes.
"""

from __future__ import annotations

import os
import re
import sys
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Optional

from streamlint import memory
from streamlint.model import api, lazy_parse, reads
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

# (directory of the importing file, dotted name) -> (file, the paths probed on the way).
Probes = tuple[tuple[str, bool], ...]
_resolved: dict[tuple[str, str], tuple[Optional[Path], Probes]] = {}


def module_file(from_path: str, dotted: str) -> Optional[Path]:
    """The file a module name denotes, seen from `from_path` (relative or absolute)."""
    if not from_path or from_path == "-":
        return None
    root = dotted.lstrip(".").split(".", 1)[0]
    if not dotted.startswith(".") and (root in sys.stdlib_module_names or api.framework_of(dotted)):
        return None
    key = (os.path.dirname(from_path), dotted)
    if key not in _resolved:
        probes: list[tuple[str, bool]] = []
        _resolved[key] = (_module_file(from_path, dotted, probes), tuple(probes))
    found, probes = _resolved[key]
    for path, exists in probes:  # noted on every call: each checked file needs its own
        reads.note(path, reads.PRESENT if exists else reads.ABSENT)
    return found


def _module_file(from_path: str, dotted: str, probes: list[tuple[str, bool]]) -> Optional[Path]:
    here = Path(from_path).resolve().parent
    level = len(dotted) - len(dotted.lstrip("."))
    parts = [p for p in dotted.lstrip(".").split(".") if p]
    if level:
        base = here
        for _ in range(level - 1):
            base = base.parent
        return _find(base, parts, probes)
    if not parts or api.framework_of(dotted) or parts[0] in ("numpy", "os", "sys", "typing"):
        return None
    # Absolute: beside the file (scripts), from the top of its package, or from the
    # project's root (`recipes/train.py` importing `mylib.utils`, both under the root).
    top = here
    while _is_file(top / "__init__.py", probes) and top.parent != top:
        top = top.parent
    for base in dict.fromkeys((here, top, *_project_root(top))):
        found = _find(base, parts, probes)
        if found is not None:
            return found
    return None


# directory -> its Python files, for reverse.py (listed once per run, like `_resolved`).
_listings: dict[str, tuple[str, ...]] = {}
_packages: dict[str, tuple[str, ...]] = {}  # (package_files)

_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_roots: dict[Path, tuple[Path, ...]] = {}


def _project_root(start: Path) -> tuple[Path, ...]:
    """The nearest directory at or above `start` that holds a project marker, if any."""
    if start not in _roots:
        found: tuple[Path, ...] = ()
        for base in (start, *start.parents):
            if any((base / marker).exists() for marker in _ROOT_MARKERS):
                found = (base,)
                break
        _roots[start] = found
    return _roots[start]


def project_root(path: str) -> Optional[Path]:
    """The root of the project that holds the file at `path`: the nearest directory at
    or above its top package with a project marker."""
    top = Path(path).resolve().parent
    while (top / "__init__.py").is_file() and top.parent != top:
        top = top.parent
    found = _project_root(top)
    return found[0] if found else None


def python_files(directory: Path, most: int) -> tuple[str, ...]:
    """The Python files of a directory, none if it has more than `most` (listed once
    per run, forgotten with the resolutions)."""
    key = str(directory)
    if key not in _listings:
        try:
            names = sorted(n for n in os.listdir(directory) if n.endswith(".py"))
        except OSError:
            names = []
        _listings[key] = tuple(str(directory / n) for n in names) if len(names) <= most else ()
    return _listings[key]


def package_files(path: str, most: int, most_in_root: int) -> tuple[str, ...]:
    """The Python files of the top package that holds the module at `path` (its
    subpackages included) and of the project's root directory (at most `most_in_root`):
    none if the package has more than `most` (listed once per run, forgotten with the
    resolutions)."""
    here = Path(path).resolve()
    top = here.parent
    while (top.parent / "__init__.py").is_file() and top.parent != top:
        top = top.parent
    key = f"{top}\0{most}\0{most_in_root}"
    if key not in _packages:
        found: list[str] = []
        if (top / "__init__.py").is_file():
            for folder, dirs, names in os.walk(top):
                dirs[:] = sorted(d for d in dirs if (Path(folder) / d / "__init__.py").is_file())
                found.extend(str(Path(folder) / n) for n in sorted(names) if n.endswith(".py"))
                if len(found) > most:
                    found = []
                    break
        root = project_root(str(here))
        if found and root is not None and root != top:
            found.extend(python_files(root, most_in_root))
        _packages[key] = tuple(found)
    return _packages[key]


def _find(base: Path, parts: list[str], probes: list[tuple[str, bool]]) -> Optional[Path]:
    if not parts:
        init = base / "__init__.py"
        return init if _is_file(init, probes) else None
    candidate = base.joinpath(*parts)
    for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
        if _is_file(path, probes):
            return path
    return None


def _is_file(path: Path, probes: list[tuple[str, bool]]) -> bool:
    exists = path.is_file()
    probes.append((str(path), exists))
    return exists


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
    _resolved.clear()
    _roots.clear()
    _listings.clear()
    _packages.clear()


def clear() -> None:
    global _cached_bytes
    _cache.clear()
    _resolved.clear()
    _roots.clear()
    _listings.clear()
    _packages.clear()
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
