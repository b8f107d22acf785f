"""A parameter's class from the methods the body calls on it ("methods that exist for one
kind of object only"), among the classes of the project modules the file imports.

`def inter_allreduce(comm, buf_a, buf_b): ... buf_a.from_device(...); buf_a.buffer(n)`
in a module that imports `_memory_utility`, where only `DeviceMemory` defines both
`from_device` and `buffer`: `buf_a` is a `DeviceMemory`, and its methods' summaries apply.

Bounded: only parameters the body calls two or more distinct methods on, only modules the
file imports by name, and a module is parsed only when its text defines every one of those
methods (`def name(`) and has a GPU word (the prefilter's). A match must be unique, or
the parameter stays unknown.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import libcst as cst

from streamlint.model import project, reads
from streamlint.model.prefilter import PREFILTER_KEYS
from streamlint.model.values import Instance, QualRef, Value

if TYPE_CHECKING:
    from streamlint.model.analysis import FileAnalyzer

MIN_METHODS = 2


def methods_called(node: cst.FunctionDef, params: Iterable[str]) -> dict[str, set[str]]:
    """For each parameter, the methods the body calls on it (`p.m(...)`)."""
    wanted = set(params)
    found: dict[str, set[str]] = {}

    class _Visitor(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in wanted:
                if not func.attr.value.startswith("__"):
                    found.setdefault(func.value.value, set()).add(func.attr.value)

    node.body.visit(_Visitor())
    return {p: ms for p, ms in found.items() if len(ms) >= MIN_METHODS}


_CALL = re.compile(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\(")
_DEF = re.compile(rb"\bdef\s+([A-Za-z_]\w*)\s*\(")


def receivers(analyzer: "FileAnalyzer", min_methods: int = MIN_METHODS) -> frozenset[str]:
    """Names the file's text calls two or more methods on that imported project modules
    with a GPU word define: the only parameters `methods_called` need visit a body for
    (a text test per file instead of a walk per function)."""
    if not analyzer.path or not analyzer.text:
        return frozenset()
    defined: set[str] = set()
    for path in _imported_module_files(analyzer):
        text = _text(path)
        if any(key in text for key in PREFILTER_KEYS):
            defined.update(m.decode() for m in _DEF.findall(text))
    if not defined:
        return frozenset()
    calls: dict[str, set[str]] = {}
    for name, method in _CALL.findall(analyzer.text):
        if method in defined:
            calls.setdefault(name, set()).add(method)
    return frozenset(name for name, methods in calls.items() if len(methods) >= min_methods)


def classes_of(analyzer: "FileAnalyzer", params: dict[str, set[str]]) -> dict[str, Value]:
    """The parameters whose methods only one class of an imported project module defines."""
    if not params or not analyzer.path:
        return {}
    modules = _imported_module_files(analyzer)
    out: dict[str, Value] = {}
    for param, methods in params.items():
        matches = []
        for path in modules:
            text = _text(path)
            if not all(f"def {m}(".encode() in text for m in methods):
                continue
            if not any(key in text for key in PREFILTER_KEYS):
                continue  # no GPU word: its classes hold no device memory or streams
            other = project.analyzer_for(path, analyzer.depth + 1, type(analyzer))
            if other is None:
                continue
            for name, cls in other.classes.items():
                if methods <= set(cls.methods):
                    matches.append(Instance(name, home=other))
        if len(matches) == 1:
            out[param] = matches[0]
    return out


def may_define_gpu_class(path: Path, name: str, given_gpu_values: bool = False) -> bool:
    """The module's text defines class `name`, and the class's own text has a GPU word
    (the prefilter's), or its constructor is given GPU values: the test before an
    instance of it is typed by parsing the module (most classes hold no GPU state)."""
    try:
        stat = path.stat()
    except OSError:
        reads.note(str(path), reads.ABSENT)
        return False
    key = (str(path), stat.st_mtime_ns, stat.st_size, name, given_gpu_values)
    known = _GPU_CLASSES.get(key)
    if known is not None:
        reads.note(str(path), known[1])  # (what the cached result depends on, as when read)
        return known[0]
    text = _text(path)
    answer = _gpu_class(text, name, given_gpu_values)
    if len(_GPU_CLASSES) > _MAX_REMEMBERED:
        _GPU_CLASSES.clear()
    _GPU_CLASSES[key] = (answer, reads.content_hash(text))
    return answer


# (path, mtime, size, class, given GPU values) -> (answer, content hash): the text tests of
# `may_define_gpu_class`, asked for every capitalised call into another module.
_GPU_CLASSES: dict[tuple, tuple[bool, str]] = {}
_MAX_REMEMBERED = 4096


def _gpu_class(text: bytes, name: str, given_gpu_values: bool) -> bool:
    found = re.search(rb"^([ \t]*)class[ \t]+" + re.escape(name.encode()) + rb"\b", text, re.MULTILINE)
    if found is None:
        return False
    body = text if given_gpu_values else _block(text, found.start(), len(found.group(1)))
    return any(key in body for key in PREFILTER_KEYS)


def _block(text: bytes, start: int, indent: int) -> bytes:
    """The text of the statement at `start` (a class), up to the next line indented no
    deeper than it (after the header, which may span lines)."""
    lines = text[start:].split(b"\n")
    in_header = True
    end = len(lines)
    for i, line in enumerate(lines):
        code = line.split(b"#", 1)[0].rstrip()
        if in_header:
            in_header = not code.endswith(b":")
            continue
        if code.strip() and len(code) - len(code.lstrip()) <= indent:
            end = i
            break
    return b"\n".join(lines[:end])


def _imported_module_files(analyzer: "FileAnalyzer") -> list[Path]:
    files: list[Path] = []
    own = Path(analyzer.path).resolve()
    for value in analyzer.module_vars().values():
        if not isinstance(value, QualRef) or value.qualname.startswith("<"):
            continue
        path = project.module_file(analyzer.path, value.qualname)
        if path is not None and path != own and path not in files:
            files.append(path)
    return files


def _text(path: Path) -> bytes:
    """The module's text, recorded as a dependency of the cached result (a method added
    there can change a match). Read each time: a long-lived process sees edits."""
    try:
        data = path.read_bytes()
    except OSError:
        reads.note(str(path), reads.ABSENT)
        return b""
    reads.note(str(path), reads.content_hash(data))
    return data
