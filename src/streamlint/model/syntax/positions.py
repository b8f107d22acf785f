"""Lines and columns of the index's calls, definitions and imported names, in source order.

libcst's PositionProvider costs about 1.8 times the parse itself on a large file (measured on
CPython's `_pydecimal.py`, 6,425 lines: parse 0.35 s, positions 0.63 s), so the places come
from Python's own parser instead (about 0.15 times the parse): its calls, `def`/`class`
statements and imported names, sorted in source order, are the same nodes the index's walk
meets in the same order. Where Python's parser cannot read the text (syntax newer than the
running Python), where the two count columns differently (form feeds) or where the counts
disagree, the index falls back to PositionProvider.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

_NEWLINE = re.compile(r"\r\n|\r|\n")  # the tokenizer's line ends (str.splitlines knows more)


@dataclass
class Places:
    """(line, column) pairs, 1-based, columns in characters, each list in source order."""

    calls: list[tuple[int, int]] = field(default_factory=list)
    defs: list[tuple[int, int]] = field(default_factory=list)  # `def` and `class` statements
    imports: list[tuple[int, int]] = field(default_factory=list)  # each imported name, `*` too


def places_from_ast(source: str) -> Places | None:
    """The places by Python's parser; None when it cannot parse the text, or when the text has a
    form feed (libcst does not count one that starts a line as a column; Python does)."""
    if "\f" in source:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    calls: list[tuple[int, int, int, int]] = []
    defs: list[tuple[int, int]] = []
    imports: list[tuple[int, int]] = []
    _collect(tree, calls, defs, imports)
    calls.sort()
    defs.sort()
    imports.sort()
    to_chars = _CharColumns(source)
    return Places(
        calls=[to_chars(line, col) for line, col, _, _ in calls],
        defs=[to_chars(line, col) for line, col in defs],
        imports=[to_chars(line, col) for line, col in imports],
    )


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NOT_NODES = frozenset({"ctx", "op", "ops", "type_comment", "kind"})  # fields that hold no calls or names
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def _collect(tree: ast.AST, calls: list, defs: list, imports: list) -> None:
    """Every call, definition and imported name of the tree, in no particular order. An explicit
    stack is about four times faster than `ast.walk` (no generators, and no visits of the shared
    `Load`/`Store` and operator singletons)."""
    stack: list[object] = [tree]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Call:
            # An outer call starts where its callee's call starts: the longer one comes first.
            calls.append((node.lineno, node.col_offset, -node.end_lineno, -node.end_col_offset))  # type: ignore
        elif kind is ast.alias:
            imports.append((node.lineno, node.col_offset))  # type: ignore
        elif kind in _DEFS:
            defs.append((node.lineno, node.col_offset))  # type: ignore
        names = _NODE_FIELDS.get(kind)
        for name in names if names is not None else _node_fields(kind):
            value = getattr(node, name)
            if type(value) is list:
                stack.extend(value)  # strings (`global a`) and None (`{**d}`) too: they have no fields
            elif isinstance(value, ast.AST):
                stack.append(value)


def _node_fields(kind: type) -> tuple[str, ...]:
    names = tuple(f for f in kind._fields if f not in _NOT_NODES) if issubclass(kind, ast.AST) else ()
    _NODE_FIELDS[kind] = names
    return names


class _CharColumns:
    """Python's parser counts columns in UTF-8 bytes; the index counts characters."""

    def __init__(self, source: str) -> None:
        self.lines: list[bytes] | None = None if source.isascii() else [
            line.encode("utf-8", "surrogatepass") for line in _NEWLINE.split(source)
        ]

    def __call__(self, line: int, byte_column: int) -> tuple[int, int]:
        if self.lines is None:
            return line, byte_column + 1
        text = self.lines[line - 1][:byte_column]
        return line, len(text.decode("utf-8", "surrogatepass")) + 1


def places_from_libcst(module: cst.Module) -> Places:
    """The places by libcst's PositionProvider (the slow, always available way)."""
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    calls: list[tuple[int, int, int, int]] = []
    places = Places()
    for node, where in positions.items():
        start = (where.start.line, where.start.column + 1)
        if isinstance(node, cst.Call):
            calls.append((*start, -where.end.line, -where.end.column))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            places.defs.append(start)
        elif isinstance(node, (cst.ImportAlias, cst.ImportStar)):
            places.imports.append(start)
    calls.sort()
    places.calls = [(line, col) for line, col, _, _ in calls]
    places.defs.sort()
    places.imports.sort()
    return places
