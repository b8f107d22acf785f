"""Callers in other modules: how the project calls a function is evidence of what its
parameters are, also when the calls are in other files (a training script handing a
batch of CUDA tensors to a helper of its package).

The index is the reverse of import following (project.py) and as lazy: it is asked for
one function of the checked file at a time, only for functions whose parameters the
body gives no evidence about and whose findings would depend on it (analysis.py decides),
and it looks only where callers of a module usually are: the other modules of its
directory and the scripts in the project's root directory (bounded: MAX_FILES each).
A file there that spells `name(` is read for its summaries (the same analysis an import
makes, cached per process) and the call sites its functions make of `name` in the
checked module are returned, each as the values bound to the parameters.

The same directory is also where `hot_method_callers` looks for an `nn.Module`'s
`forward` that calls a method of a class of the checked module on every call (the
method is then a hot path, as `forward` is).

`method_call_sites` looks further, for the callers of a method of a class of the checked
module through objects the callers' walks cannot type: the whole top package and the
root's scripts (bounded: MAX_PACKAGE_FILES), the receiver's class decided by duck typing
(the classes whose method of that name accepts the call must be of one hierarchy).

`super_call_sites` finds the calls `super().method(...)` of direct subclasses in the
module's directory and its subpackages: typed by the caller's bases, no duck typing.

Not seen: callers deeper in other packages, and callers added since the result was
cached in a directory whose other files did not change (the cache notes the files read).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Optional

import libcst as cst

from streamlint.model import lazy_parse, project, reads, switches
from streamlint.model.walk_common import rare_test

if TYPE_CHECKING:
    from streamlint.model.analysis import FileAnalyzer

MAX_FILES = 64  # Python files looked at per directory (a directory with more is skipped)


def scope(path: str) -> list[str]:
    """The files where callers of the module at `path` are looked for."""
    here = Path(path).resolve()
    dirs = [here.parent]
    root = project.project_root(str(here))
    if root is not None and root != here.parent:
        dirs.append(root)
    own = str(here)
    return [f for d in dirs for f in project.python_files(d, MAX_FILES) if f != own]


def call_sites(path: str, name: str, analyzer_type: type["FileAnalyzer"]) -> list[dict]:
    """The arguments every call of the top-level function `name` of the module at
    `path` passes, in the modules of its scope (one dict per call site)."""
    here = Path(path).resolve()
    own = str(here)
    word = f"{name}(".encode()
    # A caller imports the function (`from .utils import (a, f)`) or calls it through
    # its module (`utils.f(`): a text test before anything is parsed.
    module = (here.parent.name if here.name == "__init__.py" else here.stem).encode()
    imported = re.compile(rb"\bimport\s+(?:\([^)]*|[^\n]*)\b" + re.escape(name.encode()) + rb"\b")
    sites: list[dict] = []
    for other in scope(path):
        try:
            data = Path(other).read_bytes()
        except OSError:
            continue
        if word not in data or module not in data or not (module + b"." + word in data or imported.search(data)):
            reads.note(other, reads.PRESENT)
            continue
        importer = project.analyzer_for(Path(other), 1, analyzer_type)
        if importer is None:
            continue
        sites.extend(_sites_in(importer, own, name))
    return sites


def _sites_in(importer: "FileAnalyzer", own: str, name: str) -> list[dict]:
    call = f"{name}("
    for function in list(importer.functions.values()):
        if function.record is None and lazy_parse.mentions(function.node, call, importer.code):
            importer.analyse(function)  # records the calls it makes (FileAnalyzer.calls_out)
    return [bound for (target, callee), found in importer.calls_out.items()
            if callee == name and _same_file(target, own) for bound in found]


def _same_file(a: Optional[str], b: str) -> bool:
    return bool(a) and os.path.realpath(a) == b


def hot_method_callers(path: str, class_name: str, methods: set[str],
                       analyzer_type: type["FileAnalyzer"]) -> dict[str, str]:
    """Methods of `class_name` (of the module at `path`) that a `forward` in another module
    of its directory calls on every call, through an attribute one of its methods binds to
    an instance of the class (`self.cache = CachedParamMgr(...)`, then
    `self.cache.prepare_ids(x)` in `forward`): method -> `Module.forward`. A structural
    reading of the caller (the instance's class is not followed into other modules)."""
    here = Path(path).resolve()
    made = f"{class_name}(".encode()
    found: dict[str, str] = {}
    for other in project.python_files(here.parent, MAX_FILES):
        if other == str(here):
            continue
        try:
            data = Path(other).read_bytes()
        except OSError:
            continue
        if made not in data or b"def forward" not in data or not any(f".{m}(".encode() in data for m in methods):
            reads.note(other, reads.PRESENT)
            continue
        importer = project.analyzer_for(Path(other), 1, analyzer_type)
        if importer is None:
            continue
        for cls in list(importer.classes.values()):
            if not importer.is_module_class(cls):
                continue
            body = cls.node.body.body if isinstance(cls.node.body, cst.IndentedBlock) else ()
            defs = {s.name.value: s for s in body if isinstance(s, cst.FunctionDef)}
            if "forward" not in defs:
                continue
            holders = _instance_attributes(cls.node, class_name)
            if not holders:
                continue
            config = importer.config_attributes(cls.name)
            for call in _steady_calls(defs["forward"].body.body, config):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value in methods \
                        and isinstance(func.value, cst.Attribute) and isinstance(func.value.value, cst.Name) \
                        and func.value.value.value == "self" and func.value.attr.value in holders:
                    found.setdefault(func.attr.value, f"{cls.name}.forward")
    return found


def _instance_attributes(cls: cst.ClassDef, class_name: str) -> set[str]:
    """`self.a` that a method binds to `ClassName(...)` (or `module.ClassName(...)`)."""
    found: set[str] = set()

    class _Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            if not isinstance(value, cst.Call):
                return
            func = value.func
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            if name != class_name:
                return
            for target in node.targets:
                t = target.target
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self":
                    found.add(t.attr.value)

    cls.body.visit(_Finder())
    return found


def _steady_calls(body, config: switches.Options):
    """Calls a body makes on every run: not in loops, nor under a rare test (an option
    switch aside), through `with` blocks and `try` bodies."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                value = getattr(small, "value", None)
                if isinstance(value, cst.Call):
                    yield value
        elif isinstance(stmt, (cst.With, cst.Try)):
            yield from _steady_calls(stmt.body.body, config)
        elif isinstance(stmt, cst.If):
            switch = switches.switch_test(stmt.test, config)
            if switch or not rare_test(stmt.test):
                yield from _steady_calls(stmt.body.body, config)
            if isinstance(stmt.orelse, cst.Else) and switches.switch_test(stmt.test, switches.Options(config.fixed)):
                # (the `else` of an option on by default runs only once a setter turns it off)
                yield from _steady_calls(stmt.orelse.body.body, config)


# ---------------------------------------------------------------------------------------
# Callers of a method, the receiver typed by duck typing.

MAX_PACKAGE_FILES = 256  # Python files of a top package looked at (a larger one is skipped)

def package_files(path: str) -> tuple[str, ...]:
    """The Python files of the top package that holds the module at `path` (see
    project.package_files) and the scripts of the project's root directory."""
    return project.package_files(path, MAX_PACKAGE_FILES, MAX_FILES)


class _Signature:
    """What a `def name(...)` header accepts, read from its text (the first parameter,
    `self`, left out). `known` is False when the text could not be read with confidence."""

    __slots__ = ("positional", "required", "keywords", "star", "starstar", "known")

    def __init__(self, header: str) -> None:
        self.known = True
        parts = _split_params(header)
        if parts is None or not parts:
            self.known = False
            parts = []
        names: list[str] = []
        required = 0
        keyword_only = False
        self.star = self.starstar = False
        self.keywords: set[str] = set()
        for part in parts[1:]:
            if part == "/":
                continue
            if part.startswith("**"):
                self.starstar = True
                continue
            if part.startswith("*"):
                self.star = self.star or part != "*"
                keyword_only = True
                continue
            name = part.split("=", 1)[0].split(":", 1)[0].strip()
            if not name.isidentifier():
                self.known = False
                continue
            self.keywords.add(name)
            if not keyword_only:
                names.append(name)
                if "=" not in part:
                    required += 1
        self.positional = names
        self.required = required

    def accepts(self, positional: int, keywords: frozenset[str]) -> bool:
        if not self.known:
            return True  # (cannot tell: it may be called)
        if positional > len(self.positional) and not self.star:
            return False
        if not self.starstar and not keywords <= self.keywords:
            return False
        given = set(self.positional[:positional]) | keywords
        return all(name in given for name in self.positional[:self.required])


def _split_params(header: str) -> Optional[list[str]]:
    """The parameters of `def f(...)` text after the `(`, split at top-level commas."""
    depth = 0
    parts: list[str] = []
    current: list[str] = []
    for ch in header:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                last = "".join(current).strip()
                if last:
                    parts.append(last)
                return parts
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        elif ch in "'\"#":
            return None  # (a string or comment in the header: not read)
        current.append(ch)
    return None


_CLASS_HEADER = re.compile(rb"^([ \t]*)class[ \t]+(\w+)[ \t]*(?:\(([^)]*)\))?[ \t]*:", re.MULTILINE)


def _classes_and_defs(text: bytes, method: str) -> tuple[dict[str, set[str]], list[tuple[Optional[str], str]]]:
    """The classes of a module's text with the names of their bases (the last part of a
    dotted base), and each `def method(` with its enclosing class (None: in no class;
    UNPLACED: below a class, not read as directly in it) and its header text."""
    bases: dict[str, set[str]] = {}
    headers = list(_CLASS_HEADER.finditer(text))
    for match in headers:
        names = {b.strip().rsplit(b".", 1)[-1].decode(errors="replace") for b in (match.group(3) or b"").split(b",")}
        bases.setdefault(match.group(2).decode(), set()).update(n for n in names if n.isidentifier() and "=" not in n)
    defs: list[tuple[Optional[str], str]] = []
    for found in re.finditer(rb"^([ \t]*)(?:async[ \t]+)?def[ \t]+" + re.escape(method.encode()) + rb"[ \t]*\(",
                             text, re.MULTILINE):
        indent = len(found.group(1))
        owner: Optional[str] = None
        for match in headers:
            if match.start() > found.start():
                break
            if len(match.group(1)) < indent:
                # (a `def` below a class that the text cannot place directly in it may still
                # be a method of some class: UNPLACED, of no known hierarchy)
                owner = match.group(2).decode() if _directly_in(text, match, found) else UNPLACED
        header = text[found.end():found.end() + 2000].decode(errors="replace")
        defs.append((owner, header))
    return bases, defs


UNPLACED = "<unplaced>"


def _directly_in(text: bytes, cls: "re.Match", found: "re.Match") -> bool:
    """The `def` at `found` is a method of the class at `cls` (indented once below it)."""
    body = text[cls.end():found.start()]
    indents = [len(line) - len(line.lstrip(b" \t")) for line in body.split(b"\n")[1:] if line.strip()
               and not line.strip().startswith(b"#")]
    return not indents or min(indents) == len(found.group(1))  # (none: the class's first statement)


def _ancestors(name: str, bases: dict[str, set[str]]) -> set[str]:
    """`name` and the project classes it derives from (by name)."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen or current not in bases:
            continue
        seen.add(current)
        todo.extend(bases[current])
    return seen


# (module, class, method, parameters, the package's texts) -> call sites (each the checked
# method's parameters bound to what the call passes), or None when a call may be another
# class's method.
_method_sites: dict[tuple, Optional[list[dict]]] = {}


def method_call_sites(path: str, class_name: str, method: str, params: list[str],
                      analyzer_type: type["FileAnalyzer"]) -> list[dict]:
    """The arguments the project's calls `x.method(...)` pass to the method `method` of
    `class_name` (of the module at `path`), where `x` is an object the caller's walk
    cannot type: duck typing decides it. Every class of the project (its top package,
    the root's scripts) whose `method` accepts the call's arguments must derive from a
    project class `class_name` derives from, or derive from it (one hierarchy): else the
    call may be another class's and no site counts. One dict per call site of the
    parameters (`params`, `self` left out) the call passes."""
    files = package_files(path)
    own = str(Path(path).resolve())
    if own not in files:
        return []
    word = f".{method}(".encode()
    bases: dict[str, set[str]] = {}
    defs: list[tuple[Optional[str], str]] = []
    callers: list[str] = []
    notes: dict[str, reads.Note] = {}
    for other, data in _texts(files, notes):
        found_bases, found_defs = _classes_and_defs(data, method) if b"class" in data else ({}, [])
        for name, names in found_bases.items():
            bases.setdefault(name, set()).update(names)
        defs.extend(found_defs)
        if word in data and other != own:
            callers.append(other)
    # (the texts read are the key: an edit anywhere in the package asks again)
    key = (own, class_name, method, tuple(params), tuple(sorted(notes.items(), key=lambda item: item[0])))
    if key not in _method_sites:
        if len(_method_sites) > _MAX_REMEMBERED:
            _method_sites.clear()
        _method_sites[key] = _sites_of_method(own, class_name, method, params, bases, defs, callers, analyzer_type)
    return _method_sites[key] or []


_MAX_REMEMBERED = 512


def _texts(files: Iterable[str], notes: dict) -> Iterator[tuple[str, bytes]]:
    """Each file's text, with what was read noted in `notes` (a content hash, or absent)
    and, once all are read, as the caller's dependencies (reads.note)."""
    for other in files:
        try:
            data = Path(other).read_bytes()
        except OSError:
            notes[other] = reads.ABSENT
            continue
        notes[other] = reads.content_hash(data)
        yield other, data
    for other, note in notes.items():
        reads.note(other, note)

_subtrees: dict[str, tuple[str, ...]] = {}


def subtree_files(path: str) -> tuple[str, ...]:
    """The Python files of the directory of the module at `path` and of its subpackages
    (where a subclass of its classes usually is: `runtime/engine.py` and
    `runtime/pipe/engine.py`); none when there are more than MAX_PACKAGE_FILES (listed
    once per process)."""
    top = Path(path).resolve().parent
    key = str(top)
    if key not in _subtrees:
        found: list[str] = []
        for folder, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if (Path(folder) / d / "__init__.py").is_file())
            found.extend(str(Path(folder) / n) for n in sorted(names) if n.endswith(".py"))
            if len(found) > MAX_PACKAGE_FILES:
                found = []
                break
        _subtrees[key] = tuple(found)
    return _subtrees[key]


# (module, class, method, parameters, the texts read) -> the sites of `super().method(...)`.
_super_sites: dict[tuple, list[dict]] = {}


def super_call_sites(path: str, class_name: str, method: str, params: list[str],
                     analyzer_type: type["FileAnalyzer"]) -> list[dict]:
    """The arguments the project's subclasses of `class_name` (of the module at `path`)
    pass to its method `method` through `super().method(...)` in other modules of the
    package (`class PipelineEngine(DeepSpeedEngine)` calling `super().backward(self.loss)`):
    the receiver is typed by the caller's bases, no duck typing. A subclass that defines
    its own `method` between them overrides it: only direct subclasses count (the last
    part of a dotted base, read from the texts). Looked for in the module's directory
    and its subpackages (`subtree_files`). One dict per call site, as
    `method_call_sites`; a `*args` call makes none count."""
    files = subtree_files(path)
    own = str(Path(path).resolve())
    if own not in files:
        return []
    word = f"super().{method}(".encode()
    bases: dict[str, set[str]] = {}
    defs: list[tuple[Optional[str], str]] = []
    callers: list[str] = []
    notes: dict[str, reads.Note] = {}
    for other, data in _texts(files, notes):
        if other == own or word in data:
            found_bases, found_defs = _classes_and_defs(data, method) if b"class" in data else ({}, [])
            if other == own:
                defs.extend(found_defs)
            for name, names in found_bases.items():
                bases.setdefault(name, set()).update(names)
            if word in data and other != own:
                callers.append(other)
    if not callers:
        return []
    key = (own, class_name, method, tuple(params), tuple(sorted(notes.items(), key=lambda item: item[0])))
    if key not in _super_sites:
        if len(_super_sites) > _MAX_REMEMBERED:
            _super_sites.clear()
        mine = next((_Signature(header) for owner, header in defs if owner == class_name), None)
        _super_sites[key] = _super_sites_of(class_name, method, params, mine, bases, callers, analyzer_type) \
            if mine is not None and mine.known else []
    return _super_sites[key]


def _super_sites_of(class_name: str, method: str, params: list[str], mine: "_Signature",
                    bases: dict[str, set[str]], callers: list[str],
                    analyzer_type: type["FileAnalyzer"]) -> list[dict]:
    sites: list[dict] = []
    for other in callers:
        importer = project.analyzer_for(Path(other), 1, analyzer_type)
        if importer is None:
            continue
        importer.method_call_args(method)
        for caller_class, args in importer.super_calls_out.get(method, []):
            if class_name not in bases.get(caller_class, set()):
                continue  # (a direct subclass only: a class between them may override it)
            if args is None:
                return []  # (`*args` at a call: cannot tell what it passes)
            positional, keywords = len(args.positional), frozenset(args.keywords)
            if not mine.accepts(positional, keywords):
                continue
            bound = {name: args.values.get(id(expr)) for name, expr in zip(mine.positional, args.positional)}
            bound.update({name: args.values.get(id(expr)) for name, expr in args.keywords.items() if name in params})
            sites.append({name: value for name, value in bound.items() if value is not None})
    return sites


def _sites_of_method(own: str, class_name: str, method: str, params: list[str], bases: dict[str, set[str]],
                     defs: list[tuple[Optional[str], str]], callers: list[str],
                     analyzer_type: type["FileAnalyzer"]) -> Optional[list[dict]]:
    family = _ancestors(class_name, bases)
    signatures: list[tuple[bool, _Signature]] = []
    mine: Optional[_Signature] = None
    for owner, header in defs:
        if owner is None:
            continue
        signature = _Signature(header)
        related = bool(_ancestors(owner, bases) & family)
        signatures.append((related, signature))
        if owner == class_name:
            mine = signature
    if mine is None or not mine.known or not callers:
        return None
    sites: list[dict] = []
    for other in callers:
        importer = project.analyzer_for(Path(other), 1, analyzer_type)
        if importer is None:
            continue
        for args in importer.method_call_args(method):
            if args is None:
                return None  # (`*args` at a call: cannot tell what it passes)
            positional, keywords = len(args.positional), frozenset(args.keywords)
            if not mine.accepts(positional, keywords):
                continue  # another class's method
            if any(not related and signature.accepts(positional, keywords) for related, signature in signatures):
                return None  # the receiver may be of a class of another hierarchy
            bound = {name: args.values.get(id(expr)) for name, expr in zip(mine.positional, args.positional)}
            bound.update({name: args.values.get(id(expr)) for name, expr in args.keywords.items() if name in params})
            sites.append({name: value for name, value in bound.items() if value is not None})
    return sites
