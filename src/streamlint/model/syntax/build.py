"""Build a module's syntax index in one walk over its libcst tree (syntax/walk.py,
syntax/visitors.py), with lines and columns from syntax/positions.py."""

from __future__ import annotations

import gc
import hashlib

import libcst as cst

from streamlint.model.syntax.frameworks import frameworks_of
from streamlint.model.syntax.positions import Places, places_from_ast, places_from_libcst
from streamlint.model.syntax.types import ImportIndex, ModuleIndex
from streamlint.model.syntax.visitors import HANDLERS
from streamlint.model.syntax.walk import Walk


def digest_of(source: str) -> str:
    """The index's key: sha256 of the source text."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def build_index(module: cst.Module, source: str) -> ModuleIndex:
    """The index of `module`, parsed from `source`."""
    # The index and Python's tree are acyclic: without a pause, the collector would rescan the
    # whole libcst tree again and again while they are built (a 32,000-line file: 2 s, not 0.1 s).
    paused = gc.isenabled()
    gc.disable()
    try:
        return _build(module, source)
    finally:
        if paused:
            gc.enable()


def _build(module: cst.Module, source: str) -> ModuleIndex:
    places = places_from_ast(source)
    walk = _walked(module, places) if places is not None else None
    if walk is None:  # Python's parser could not read it, or its places do not match the tree's
        walk = _walked(module, places_from_libcst(module))
        if walk is None:
            raise AssertionError("syntax index: the walk and libcst's positions disagree")
    return _index(walk, digest_of(source))


def _walked(module: cst.Module, places: Places) -> Walk | None:
    walk = Walk(module, places, HANDLERS)
    return walk if walk.run() else None


def _index(walk: Walk, digest: str) -> ModuleIndex:
    imported = [_imported_name(i) for i in walk.imports if i.level == 0]
    return ModuleIndex(
        digest=digest,
        functions=tuple(f for f in walk.functions if f is not None),
        classes=tuple(c.index() for c in walk.classes),
        imports=tuple(walk.imports),
        frameworks=frameworks_of(imported, walk.bindings, walk.dotted_roots),
    )


def _imported_name(entry: ImportIndex) -> str:
    if entry.name is None:
        return entry.module
    return f"{entry.module}.{entry.name}" if entry.module else entry.name
