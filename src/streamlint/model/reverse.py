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

Not seen: callers deeper in other packages, and callers added since the result was
cached in a directory whose other files did not change (the cache notes the files read).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Optional

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
