"""Digests of what an importing file's analysis used from another module of the project,
for the result cache's early cutoff (model/reads.py): the importer's result stays valid
while every name it looked up there gives the same digest.

An importer reaches another module only through `FileAnalyzer.foreign(qualname)`, and
of what that returns it uses a function (called through `call_local`: its parameters,
its record's operations, what it returns and leaves on `self`, the stream context it
yields, and, for a small helper whose return value the caller specialises, its body)
or a Numba kernel (its name and which parameters its body writes). Any other value is
ignored by both callers, so it counts only as "something else".

Digests leave positions out: a syntax node is replaced by the order in which it is
first met (its identity, which the analysis compares, without its place in the file),
and so are object ids and per-process hashes used as sites (integers of 2**32 and
more). A comment, a docstring, blank lines or a body edit that does not change the
summary give the same digest.
"""

from __future__ import annotations

import dataclasses
import hashlib
from enum import Enum
from typing import TYPE_CHECKING, Any, Optional

import libcst as cst

from streamlint.model.values import UNKNOWN, Kernel, LocalFunction

if TYPE_CHECKING:
    from streamlint.model.analysis import FileAnalyzer

NOT_ANALYSED = "-"  # the module gave no analysis (no framework word, too big, unparsable)
_LARGE = 1 << 32
# The walker re-walks bodies of at most this many statements per call (analysis.py): for
# the return value (specialising), and under the caller's streams (a call in context).
_SPECIALIZE_MAX_STATEMENTS = 12
_CONTEXT_MAX_STATEMENTS = 40
BODY_SUFFIX = "#body"  # a name used as `helper#body`: its body was walked in the caller's context


def digest_of_use(analyzer: Optional["FileAnalyzer"], name: str) -> str:
    """The digest of what `name` of the module `analyzer` analysed gives an importer."""
    if analyzer is None:
        return NOT_ANALYSED
    if name.endswith(BODY_SUFFIX):
        # The caller walked this helper's body under its own streams (a call in context).
        value = analyzer.module_vars().get(name[: -len(BODY_SUFFIX)], UNKNOWN)
        function = analyzer.functions.get(value.site) if isinstance(value, LocalFunction) else None
        described = ("body", _body_shape(analyzer, function.node) if function is not None else None)
        return hashlib.blake2b(repr(described).encode("utf-8"), digest_size=12).hexdigest()
    value = analyzer.module_vars().get(name, UNKNOWN)
    canon = _Canon()
    if isinstance(value, LocalFunction):
        described = _function(analyzer, value, canon)
    elif isinstance(value, Kernel):
        writes = analyzer.kernel_writes(value)
        described = ("kernel", value.framework, value.label, canon.of(value.site),
                     None if writes is None else sorted(writes))
    else:
        described = ("other",)
    return hashlib.blake2b(repr(described).encode("utf-8"), digest_size=12).hexdigest()


def _function(analyzer: "FileAnalyzer", value: LocalFunction, canon: "_Canon") -> tuple:
    function = analyzer.functions.get(value.site)
    if function is None:
        return ("function", value.name, None)
    record = analyzer.analyse(function)
    ops = None if record is None else [canon.of(op) for op in record.ops]
    measures = None if record is None else record.measures
    body = function.node.body
    small = isinstance(body, cst.IndentedBlock) and len(body.body) <= _SPECIALIZE_MAX_STATEMENTS
    return (
        "function", value.name, value.owner, canon.of(value.site), tuple(function.params),
        function.class_name, function.context_manager, ops, measures,
        canon.of(function.returns), canon.of(function.yield_current), canon.of(function.self_attrs),
        sorted(canon.of(s) for s in function.created_streams), canon.of(function.closure),
        # A small helper with an unknown return value is walked again by the caller.
        _body_shape(analyzer, function.node) if small and function.returns is UNKNOWN else None,
    )


# Nodes that carry no meaning: layout, comments, brackets and punctuation.
_LAYOUT = (cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment,
           cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
           cst.RightCurlyBrace, cst.Comma, cst.Semicolon, cst.Colon)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _body_shape(analyzer: "FileAnalyzer", node: cst.FunctionDef) -> str:
    """The function's code without positions, layout, comments or its docstring: the
    syntax tree's node types and their names, strings and numbers, in order."""
    body = node.body
    statements = list(body.body) if isinstance(body, cst.IndentedBlock) else [body]
    if statements and _is_docstring(statements[0]):
        statements = statements[1:]
    out: list[str] = [node.name.value]
    stack: list[Any] = list(reversed([node.params, *statements]))
    while stack:
        n = stack.pop()
        tp = type(n)
        out.append(tp.__name__)
        names = _FIELDS.get(tp)
        if names is None:
            names = _FIELDS[tp] = tuple(f.name for f in dataclasses.fields(tp))
        children: list[Any] = []
        for name in names:
            value = getattr(n, name)
            if isinstance(value, cst.CSTNode):
                if not isinstance(value, _LAYOUT):
                    children.append(value)
            elif isinstance(value, (tuple, list)):
                children.extend(v for v in value if isinstance(v, cst.CSTNode) and not isinstance(v, _LAYOUT))
            elif isinstance(value, (str, int, float, bool)) and name not in ("indent", "whitespace"):
                out.append(f"{name}={value!r}")
        stack.extend(reversed(children))
    return hashlib.blake2b("\x00".join(out).encode("utf-8"), digest_size=16).hexdigest()


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


class _Canon:
    """Values, records and operations as plain nested tuples, without positions."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, int], int] = {}

    def _number(self, kind: str, key: int) -> str:
        n = self.ids.setdefault((kind, key), len(self.ids))
        return f"{kind}#{n}"

    def of(self, x: Any, depth: int = 0) -> Any:
        if depth > 40:
            return "..."
        if x is None or isinstance(x, (bool, str, float)):
            return x
        if isinstance(x, int):
            return self._number("id", x) if abs(x) >= _LARGE else x
        if isinstance(x, Enum):
            return f"{type(x).__name__}.{x.name}"
        if isinstance(x, cst.CSTNode):
            return self._number("node", id(x))
        if isinstance(x, (tuple, list)):
            return tuple(self.of(v, depth + 1) for v in x)
        if isinstance(x, dict):
            return tuple((self.of(k, depth + 1), self.of(v, depth + 1)) for k, v in x.items())
        if isinstance(x, (set, frozenset)):
            return tuple(sorted((self.of(v, depth + 1) for v in x), key=repr))
        if dataclasses.is_dataclass(x):
            return (type(x).__name__,) + tuple(
                (f.name, self._field(x, f.name, depth)) for f in dataclasses.fields(x)
            )
        slots = getattr(type(x), "__slots__", None)
        if slots:
            return (type(x).__name__,) + tuple((s, self.of(getattr(x, s, None), depth + 1)) for s in slots)
        # Another module's analysis (a helper's home) or any other object: its kind only.
        return type(x).__name__

    def _field(self, x: Any, name: str, depth: int) -> Any:
        value = getattr(x, name)
        if name == "home":
            return None if value is None else "home"
        return self.of(value, depth + 1)
