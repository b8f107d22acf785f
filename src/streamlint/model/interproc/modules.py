"""The project modules a checked file's program reads: found by their dotted names as
model/resolve.py finds imports, parsed once per process (kept by path, size and modification
time in a bounded cache), and every read noted for the result cache (streamlint/reads.py).

Modules are named from the top of their package (`pkg/sub/mod.py` is "pkg.sub.mod"), so a
relative import and an absolute one of the same module give the same name, however far away
the importer sits.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import libcst as cst

from streamlint import reads
from streamlint.model import resolve
from streamlint.syntax_notes import parsed_at_all
from streamlint.model.syntax.default_device import sets_cuda_default
from streamlint.model.syntax.prefilter import may_call, may_call_by_name, may_set_default_device, spelled_words

# The parsed modules kept between checked files (a tree costs about 35x its source). A package and
# scripts past the bytes are parsed again for every checked file that reads them for its callers
# (sd-scripts, 3.1 MB: 412 parses for 11 files at 2 MB, 107 at 4 MB and above, 50 s of CPU then
# 19 s); on the torch tree 12 MB moved neither the time nor the peak memory (benchmarks/v3-speed-session22.md).
MAX_CACHED_MODULES = 320  # (a package of MAX_PACKAGE_FILES and the root scripts: read by every file of it)
MAX_CACHED_SOURCE_BYTES = 8_000_000


@dataclass(frozen=True)
class Source:
    tree: cst.Module
    package: str  # the package its relative imports start from
    path: str = ""
    text: bytes = b""  # its bytes, for the syntax layer's text prefilters (model/syntax/prefilter.py)
    content: str = ""  # the content hash of its bytes (reads.content_hash), made once when read
    # what is read off the tree alone, kept as long as the tree is (Program.unit: its ModuleUnit)
    derived: dict = field(default_factory=dict, compare=False, hash=False, repr=False)


@dataclass
class _Entry:
    mtime_ns: int
    size: int
    source: Optional[Source]
    content: str = ""  # its content hash (noted for every checked file that reads it)


_parsed: OrderedDict[str, _Entry] = OrderedDict()
_parsed_bytes = 0
# path -> [modification time, size, bytes, content hash, their name runs (b"" until asked twice)]: the
# package's modules asked whether they spell a checked module's names (_spells)
_words: OrderedDict[str, list] = OrderedDict()


def main_names(path: str) -> tuple[str, str]:
    """(the checked file's module name, its package)."""
    if not path or path == "-":
        return "__main__", ""
    file = Path(path)
    name = resolve.canonical_name(file)
    return name, name if file.name == "__init__.py" else name.rpartition(".")[0]


class ProjectModules:
    """Loads the modules the program of the file at `path` names (Program's loader)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __call__(self, name: str) -> Optional[Source]:
        if not self.path or self.path == "-":
            return None
        file = resolve.module_file(self.path, name)
        if file is None:
            return None
        return _read(file, name)


    def spells(self, name: str, words: frozenset[str]) -> bool:
        """Whether the module `name` is one of the project's whose text spells one of `words`
        (read as noted, not parsed): one that does not defines nothing by those names."""
        if not self.path or self.path == "-":
            return False
        file = resolve.module_file(self.path, name)
        return file is not None and _spells(str(file), words)

    def package(self, most: int, most_in_root: int, called: frozenset[str] = frozenset(),
                named: frozenset[str] = frozenset()) -> tuple[tuple[tuple[str, bytes], ...], tuple[str, ...]]:
        """The dotted names of the modules of the largest package around the checked file within
        the bound, and of the project's root scripts (resolve.enclosing_package_files): (those
        that spell one of `called` or `named`, each with its name runs or bytes; those of them that
        may call one of `called` by name or spell one of `named`: the others call none of them,
        syntax/prefilter.may_call_by_name)."""
        if not self.path or self.path == "-":
            return (), ()
        spelling, calling = [], []
        for file in resolve.enclosing_package_files(self.path, most, most_in_root):
            if _spells(file, called | named):  # (its bytes are then the newest kept; one parsed already costs nothing)
                _, _, data, _, words = _words[file]
                spelling.append((self._name_of(file), words or data))
                if file in _parsed or may_call_by_name(data, called, named, words):
                    calling.append(spelling[-1][0])
        return tuple(spelling), tuple(calling)


    def _name_of(self, file: str) -> str:
        """The name the checked file's program loads `file` by: its dotted name, or, for a script in a folder of
        scripts beside the package (`scripts/image_train.py`), the folder's name before it (a namespace folder
        under the project root, PEP 420), which the loader finds from any module of the project."""
        name = resolve.canonical_name(Path(file))
        if "." in name or resolve.module_file(self.path, name) is not None:
            return name
        spelled = f"{Path(file).parent.name}.{name}"
        return spelled if resolve.module_file(self.path, spelled) is not None else name

    def makes_cuda_default(self, most: int, most_in_root: int) -> bool:
        """Does a module of the checked file's program (its package and the root's scripts, or the folder of scripts
        its imports connect it with) make CUDA PyTorch's default device? The setting is the process's, whichever
        module runs it (a script's `__main__` before it calls its helpers)."""
        if not self.path or self.path == "-":
            return False
        files = (self.path, *resolve.enclosing_package_files(self.path, most, most_in_root))
        return any(_makes_cuda_default(file) for file in dict.fromkeys(files))


def _makes_cuda_default(file: str) -> bool:
    if not _spells(file, _DEFAULT_SETTERS):
        return False
    data = _words[file][2]
    if not may_set_default_device(data):
        return False
    try:
        return sets_cuda_default(cst.parse_module(data))
    except Exception:  # (a module that does not parse sets nothing)
        return False


_DEFAULT_SETTERS = frozenset({"set_default_tensor_type", "set_default_device"})


def _spells(file: str, names: frozenset[str]) -> bool:
    """Whether the module at `file` spells one of `names` (read as noted; not parsed). Its bytes are
    kept by path, size and modification time, and from its second question on (every checked file of
    a package asks of the others) the test scans its distinct name runs instead of its bytes."""
    try:
        stat = os.stat(file)
        entry = _words.get(file)
        if entry is None or entry[:2] != [stat.st_mtime_ns, stat.st_size]:
            data = Path(file).read_bytes()
            entry = _words[file] = [stat.st_mtime_ns, stat.st_size, data, reads.content_hash(data), b""]
            if len(_words) > MAX_CACHED_MODULES:
                _words.popitem(last=False)
        elif not entry[4]:
            entry[4] = spelled_words(entry[2])
    except OSError:
        reads.note(file, reads.ABSENT)
        return False
    _words.move_to_end(file)
    _, _, data, content, words = entry
    reads.note(file, content)
    return may_call(words if words and all(name.isascii() for name in names) else data, names)


def read_source(file: Path, name: str) -> Optional[Source]:
    """The parsed module at `file`, named `name` (noted as read)."""
    return _read(file, name)


def _read(file: Path, name: str) -> Optional[Source]:
    key = str(file)
    try:
        stat = file.stat()
    except OSError:
        reads.note(key, reads.ABSENT)
        return None
    entry = _parsed.get(key)
    if entry is None or (entry.mtime_ns, entry.size) != (stat.st_mtime_ns, stat.st_size):
        entry = _parse(file, stat, name)
        if entry is None:
            return None
    elif entry.source is not None:  # (read for an earlier checked file: noted for this one too)
        reads.note_read(key, entry.source.text, entry.content)
    else:
        reads.note(key, entry.content)
    _parsed.move_to_end(key)
    return entry.source


def _parse(file: Path, stat, name: str) -> Optional[_Entry]:
    key = str(file)
    try:
        data = file.read_bytes()
    except OSError:
        reads.note(key, reads.ABSENT)
        return None
    content = reads.content_hash(data)
    reads.note_read(key, data, content)
    source = None
    if parsed_at_all(data):
        try:
            tree = cst.parse_module(data.decode("utf-8"))
        except (UnicodeDecodeError, cst.ParserSyntaxError, RecursionError, ValueError):
            tree = None
        if tree is not None:
            package = name if file.name == "__init__.py" else name.rpartition(".")[0]
            source = Source(tree, package, key, data, content)
    entry = _Entry(stat.st_mtime_ns, stat.st_size, source, content)
    _remember(key, entry, len(data))
    return entry


def _remember(key: str, entry: _Entry, size: int) -> None:
    global _parsed_bytes
    old = _parsed.pop(key, None)
    if old is not None and old.source is not None:
        _parsed_bytes -= old.size
    _parsed[key] = entry
    if entry.source is None:
        return
    _parsed_bytes += size
    while _parsed and (len(_parsed) > MAX_CACHED_MODULES or _parsed_bytes > MAX_CACHED_SOURCE_BYTES):
        _, evicted = _parsed.popitem(last=False)
        if evicted.source is not None:
            _parsed_bytes -= evicted.size


def forget() -> None:
    global _parsed_bytes
    _parsed.clear()
    _words.clear()
    _parsed_bytes = 0
