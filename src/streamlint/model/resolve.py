"""Which file a module name denotes, seen from a checked file; every path looked at is noted for the result cache,
and what is found is remembered until `forget()` (once per run)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import libcst as cst

from streamlint import reads
from streamlint.model import api
from streamlint.model.syntax.import_roots import added_import_roots
from streamlint.model.syntax.names import imports_module
from streamlint.model.syntax.prefilter import imported_modules, may_add_import_roots, may_import


def canonical_name(path: Path) -> str:
    """A module's dotted name from the top of its package (a package's `__init__.py`: the package), through the
    folders above it that the package's own modules import it through (a top-level namespace package, PEP 420:
    `basicsr/models/` without `basicsr/__init__.py`, whose modules write `from basicsr.models.base import X`)."""
    path = path.resolve()
    parts = [] if path.name == "__init__.py" else [path.stem]
    folder = path.parent
    while in_package(folder) and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    inside = folder != path.parent  # (a module of a package: its top may sit in a namespace folder)
    while inside and folder.name.isidentifier() and folder.parent != folder:
        top, name = folder / parts[0], folder.name
        if not per_run(("imported through", str(top), name), lambda top=top, name=name: _imported_through(top, name)):
            break
        parts.insert(0, name)
        folder = folder.parent
    return ".".join(parts) or path.parent.name


def _imported_through(package: Path, namespace: str) -> bool:
    """Do the modules of `package` import it as a module of the namespace folder above it (`namespace.package`)?"""
    prefix = f"{namespace}.{package.name}"
    try:
        files = sorted(package.glob("*.py"))[:_MOST_READ_FOR_NAME]
    except OSError:
        return False
    for file in files:
        try:
            data = file.read_bytes()
        except OSError:
            continue
        if may_import(data, prefix):
            reads.note_read(str(file), data)
            try:
                if imports_module(cst.parse_module(data), prefix):
                    return True
            except Exception:  # (a module that does not parse says nothing)
                continue
    return False


# The modules of a package read to learn what it is imported as (the first that shows it decides).
_MOST_READ_FOR_NAME = 64


def in_package(folder: Path) -> bool:
    """A folder of a package: it has an `__init__.py`, or it is a namespace portion inside one (PEP 420: a folder
    named as a module, without `__init__.py`, whose parent is a folder of a package: `pkg/worker/layers/`)."""
    return per_run(("package", folder), lambda: (folder / "__init__.py").is_file() or (
        folder.name.isidentifier() and folder.parent != folder and in_package(folder.parent)))


def forget() -> None:
    _per_run.clear()


# What is made of the project's files once per run, by key (per_run): resolutions, listings, roots.
_per_run: dict = {}


def per_run(key, make):
    """`make()`, once per run for `key` (files may change between runs in one process)."""
    if key not in _per_run:
        _per_run[key] = make()
    return _per_run[key]


def module_file(from_path: str, dotted: str) -> Optional[Path]:
    """The file a module name denotes, seen from `from_path` (relative or absolute)."""
    if not from_path or from_path == "-":
        return None
    root = dotted.lstrip(".").split(".", 1)[0]
    if not dotted.startswith(".") and (root in sys.stdlib_module_names or api.framework_of(dotted)):
        return None
    roots = per_run(("roots", from_path), lambda: _added_roots(from_path)) if not dotted.startswith(".") else ()
    found, probes = per_run(("module", os.path.dirname(from_path), roots, dotted), lambda: _probed(from_path, dotted, roots))
    for path, exists in probes:  # noted on every call: each checked file needs its own
        reads.note(path, reads.PRESENT if exists else reads.ABSENT)
    return found


def _added_roots(from_path: str) -> tuple[Path, ...]:
    """The folders the file itself puts on `sys.path` (`sys.path.append('droid_slam')` in a script at the root)."""
    try:
        data = Path(from_path).read_bytes()
    except OSError:
        return ()
    if not may_add_import_roots(data):
        return ()
    try:
        steps = added_import_roots(cst.parse_module(data))
    except Exception:  # (a file that does not parse adds nothing)
        return ()
    here = Path(from_path).resolve().parent
    return tuple(dict.fromkeys(Path(os.path.normpath(here.joinpath(*s))) for s in steps))


def _probed(from_path: str, dotted: str, roots: tuple[Path, ...] = ()
            ) -> tuple[Optional[Path], tuple[tuple[str, bool], ...]]:
    """(the file, the paths probed on the way): relative to the file, else beside it (scripts), in the folders the
    file adds to `sys.path`, from the top of its package, or from the project's root (numpy, as the frameworks and
    the standard library: none)."""
    probes: list[tuple[str, bool]] = []
    here = Path(from_path).resolve().parent
    level = len(dotted) - len(dotted.lstrip("."))
    parts = [p for p in dotted.lstrip(".").split(".") if p]
    bases: tuple = ()
    if level:
        base = here
        for _ in range(level - 1):
            base = base.parent
        bases = (base,)
    elif parts and parts[0] != "numpy":
        top, between = here, []
        while (_is_file(top / "__init__.py", probes) or in_package(top)) and top.parent != top:
            top = top.parent
            between.append(top)
        # (the folders between: a script of `examples/ppo/` run from `examples/` imports `utils.x` from there)
        # (`src.utils.x` imported inside `src/`, a folder without `__init__.py` the program runs from above: a
        # namespace package named from its parent, PEP 420)
        named_top = (top.parent,) if parts[0] == top.name and top.parent != top else ()
        bases = tuple(dict.fromkeys((here, *roots, *between, top, *named_top, *_project_root(top))))
    found = next((file for base in bases if (file := _find(base, parts, probes)) is not None), None)
    return found, tuple(probes)


_ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def _project_root(start: Path) -> tuple[Path, ...]:
    """The nearest directory at or above `start` that holds a project marker, if any."""
    return per_run(("root", start), lambda: next(((base,) for base in (start, *start.parents)
                                                  if any((base / m).exists() for m in _ROOT_MARKERS)), ()))


def enclosing_package_files(path: str, most: int, most_in_root: int) -> tuple[str, ...]:
    """The files of the largest package around `path` with at most `most`, and the root's scripts (at most
    `most_in_root`) when the whole top package is within the bound (deeper call trees pass the budget)."""
    here = Path(path).resolve()
    # (a package's files share one answer; in a folder of scripts each module's program starts from itself)
    key = here.parent if in_package(here.parent) else here
    return per_run(("enclosing", key, most, most_in_root), lambda: _enclosing(here, most, most_in_root))


def _enclosing(here: Path, most: int, most_in_root: int) -> tuple[str, ...]:
    found: tuple[str, ...] = ()
    top = here.parent
    while in_package(top) and top.parent != top:
        top = top.parent
    root = next(iter(_project_root(top)), None)  # (the nearest marked directory at or above the top package)
    folder, whole = here.parent, here.parent == root  # (a root script: the root is its whole package)
    while in_package(folder):
        listed = _listing(folder, most)
        if listed is None:
            break
        found = listed
        whole = not in_package(folder.parent) or folder.parent == folder
        if whole:
            break
        folder = folder.parent
    if not in_package(here.parent) and root is not None and here.parent != root:
        # (a folder of scripts, no package: its modules import each other by plain name, and a root script that puts
        # the folder on `sys.path` imports them so)
        return _importers(here, root, most, most_in_root)
    if whole and root is not None and not (root / "__init__.py").is_file():
        scripts = per_run(("listing", str(root)), lambda: _listing(root, most_in_root, packages=False)) or ()
        found = found + tuple(f for f in scripts if f not in found)
        if in_package(here.parent):  # (a package's callers: a root script's program is the root's scripts)
            found = found + tuple(f for f in per_run(("script folders", str(root)),
                                                     lambda: _script_folders(root, most_in_root)) if f not in found)
    return found


def _script_folders(root: Path, most: int) -> tuple[str, ...]:
    """The scripts of the root's folders that are no package (`scripts/image_train.py` beside the package it
    imports): the project's own entry points, whose call sites tell what the package's functions and classes are
    handed. Not test modules (pytest's `test_*.py`, `*_test.py`): a test's arguments are no steady caller's. At most
    `most` in all, the first folders by name."""
    found: list[str] = []
    try:
        folders = sorted(d for d in root.iterdir() if d.is_dir() and not d.name.startswith((".", "_"))
                         and not in_package(d))
    except OSError:
        return ()
    for folder in folders:
        listed = _listing(folder, most, packages=False) or ()
        names = [f for f in listed if not _test_module(Path(f).name)]
        if len(found) + len(names) > most:
            break
        found.extend(names)
    return tuple(found)


def _test_module(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def _importers(here: Path, root: Path, most: int, most_in_root: int) -> tuple[str, ...]:
    """The modules of the program the module at `here`, in a folder of scripts, is part of: of that folder and the
    root's scripts, those its imports by plain name connect it with, either way (`demo.py` imports `droid`, which
    imports `factor_graph` and `depth_video`): its callers, theirs, and the objects they hand it."""
    candidates = [*(_listing(here.parent, most, packages=False) or ()),
                  *(per_run(("listing", str(root)), lambda: _listing(root, most_in_root, packages=False)) or ())]
    by_name: dict[str, list[str]] = {}
    for file in candidates:
        by_name.setdefault(Path(file).stem, []).append(file)
    edges: dict[str, set[str]] = {file: set() for file in candidates}
    for file in candidates:
        for name in per_run(("plain imports", file), lambda file=file: _plain_imports(Path(file))):
            for other in by_name.get(name, ()):
                if other != file:
                    edges[file].add(other)
                    edges[other].add(file)
    start = str(here)
    chosen, todo = [start], [start]
    while todo:
        for other in sorted(edges.get(todo.pop(), ())):
            if other not in chosen:
                chosen.append(other)
                todo.append(other)
    return tuple(chosen)


def _plain_imports(file: Path) -> frozenset[str]:
    """The top names of the modules the file imports absolutely (`from factor_graph import X`: `factor_graph`)."""
    try:
        data = file.read_bytes()
    except OSError:
        return frozenset()
    reads.note_read(str(file), data)
    return frozenset(dotted.split(".", 1)[0] for dots, dotted in imported_modules(data) if not dots)


def _listing(top: Path, most: int, packages: bool = True) -> Optional[tuple[str, ...]]:
    """The Python files of the folder `top` (and of its subpackages, with `packages`); None past `most`."""
    found: list[str] = []
    for folder, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if packages and in_package(Path(folder) / d))
        found.extend(str(Path(folder) / n) for n in sorted(names) if n.endswith(".py"))
        if len(found) > most:
            return None
    return tuple(found)


def _find(base: Path, parts: list[str], probes: list[tuple[str, bool]]) -> Optional[Path]:
    candidate = base.joinpath(*parts)
    paths = (candidate.with_suffix(".py"), candidate / "__init__.py") if parts else (base / "__init__.py",)
    return next((path for path in paths if _is_file(path, probes)), None)


def _is_file(path: Path, probes: list[tuple[str, bool]]) -> bool:
    exists = path.is_file()
    probes.append((str(path), exists))
    return exists
