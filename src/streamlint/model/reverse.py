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

Not seen: callers deeper in other packages, and callers added since the result was
cached in a directory whose other files did not change (the cache notes the files read).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from streamlint.model import lazy_parse, project, reads

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

