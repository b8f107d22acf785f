"""The state of one walk over a module: the function being walked, the nesting of the node
being visited, and what has been gathered so far. The node handlers are in syntax/visitors.py.

Each function (and the module body) keeps counters of the calls, definitions (`def` and
`class`), loops, tests and imports met in it: their ordinals are the `Site` ordinals. Calls,
definitions and imports are numbered in source order, and their places (lines, columns) are
consumed in that order. Loops and tests are numbered as the walk enters them: a `while` takes
its loop, then its test; a comprehension numbers all its `for` and `if` clauses, outermost
first, before its element (written first, run innermost) is walked.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Callable, Optional, Sequence

import libcst as cst

from streamlint.model.syntax.positions import Places
from streamlint.model.syntax.types import CallSite, ClassIndex, FunctionIndex, ImportIndex, Nesting, Param, Site

# The module body's own site: it is no definition, so its ordinal is -1.
MODULE_SITE = Site(function="", ordinal=-1, line=1, column=1)

# Fields that never hold code: whitespace, brackets, commas and operators.
_NOT_CODE = frozenset({
    "lpar", "rpar", "lbracket", "rbracket", "lbrace", "rbrace", "comma", "semicolon", "leading_lines",
    "lines_after_decorators", "header", "footer", "indent", "equal", "colon", "dot", "operator",
    "first_colon", "second_colon", "trailing_whitespace", "leading_whitespace", "asynchronous",
    "posonly_ind", "newline", "default_newline", "default_indent", "encoding", "has_trailing_newline",
})
_CODE_FIELDS: dict[type, tuple[str, ...]] = {}

Handler = Callable[["Walk", cst.CSTNode], None]


def _code_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that may hold code; none for values that are not nodes
    (strings, None, libcst's `MaybeSentinel`)."""
    names = _CODE_FIELDS.get(kind)
    if names is None:
        names = _CODE_FIELDS[kind] = tuple(
            f.name for f in fields(kind) if f.name not in _NOT_CODE and not f.name.startswith("whitespace")
        ) if issubclass(kind, cst.CSTNode) else ()
    return names


class Frame:
    """What the walk gathers for one function (or the module body) while inside it."""

    def __init__(self, qualname: str, receiver: str) -> None:
        self.qualname = qualname
        self.receiver = receiver  # the method's first parameter ("" outside methods)
        self.counts = {"call": 0, "def": 0, "loop": 0, "test": 0, "import": 0}
        self.calls: list[CallSite] = []
        self.reads: set[str] = set()
        self.stores: set[str] = set()
        self.returns = 0
        self.generator = False
        self.nested: list[str] = []

    def next(self, kind: str) -> int:
        ordinal = self.counts[kind]
        self.counts[kind] = ordinal + 1
        return ordinal

    def index(self, header: "DefHeader") -> FunctionIndex:
        return FunctionIndex(
            qualname=self.qualname, name=header.name, site=header.site, params=header.params,
            decorators=header.decorators, class_qualname=header.class_qualname, is_async=header.is_async,
            is_generator=self.generator, calls=tuple(self.calls), self_reads=tuple(sorted(self.reads)),
            self_stores=tuple(sorted(self.stores)), returns=self.returns, nested=tuple(self.nested),
        )


class DefHeader:
    """What a `def` statement says about its function before the body is walked."""

    def __init__(
        self, name: str, site: Site, params: tuple[Param, ...], decorators: tuple[str, ...],
        class_qualname: Optional[str], is_async: bool,
    ) -> None:
        self.name, self.site, self.params = name, site, params
        self.decorators, self.class_qualname, self.is_async = decorators, class_qualname, is_async


MODULE_HEADER = DefHeader("", MODULE_SITE, (), (), None, False)


class ClassRecord:
    """A class being walked: its header, and its methods as they are met."""

    def __init__(self, qualname: str, name: str, site: Site, bases: tuple[str, ...], decorators: tuple[str, ...]):
        self.header = (qualname, name, site, bases, decorators)
        self.methods: list[str] = []
        self.stores: list[tuple[str, tuple[str, ...]]] = []

    def index(self) -> ClassIndex:
        qualname, name, site, bases, decorators = self.header
        return ClassIndex(qualname, name, site, bases, decorators, tuple(self.methods), tuple(self.stores))


class Walk:
    """One walk over one module: `run()`, then read `functions`, `classes`, `imports`."""

    def __init__(self, module: cst.Module, places: Places, handlers: dict[type, Handler]) -> None:
        self.module = module
        self.places = {"call": places.calls, "def": places.defs, "import": places.imports}
        self.used = {"call": 0, "def": 0, "import": 0}
        self.handlers = handlers
        self.frame = Frame("", "")
        self.nesting = Nesting()
        self.prefix = ""  # qualname prefix of the definitions met here ("C.", "f.<locals>.")
        self.klass: Optional[ClassRecord] = None  # the class whose body the walk is directly in
        self.functions: list[Optional[FunctionIndex]] = [None]  # the module body first
        self.classes: list[ClassRecord] = []
        self.imports: list[ImportIndex] = []
        self.bindings: dict[str, str] = {}  # a name an import binds -> the dotted name it stands for
        self.dotted_roots: set[tuple[str, str]] = set()  # (`a`, `b`) for each `a.b...` in the code

    def run(self) -> bool:
        """Walk the module; False when the places do not match the nodes the walk met."""
        self.visit_all(self.module.body)
        self.functions[0] = self.frame.index(MODULE_HEADER)
        return all(self.used[kind] == len(found) for kind, found in self.places.items())

    def visit(self, node: cst.CSTNode) -> None:
        # Exact type tests, not isinstance: libcst's node classes are ABCs, whose isinstance
        # costs about as much as the rest of the walk.
        kind = type(node)
        handler = self.handlers.get(kind)
        if handler is not None:
            handler(self, node)
            return
        names = _CODE_FIELDS.get(kind)
        for name in names if names is not None else _code_fields(kind):
            value = getattr(node, name)
            if type(value) is tuple or type(value) is list:
                self.visit_all(value)
            elif value is not None and type(value) is not str:  # (`Arg.star`, f-string quotes: text, no node)
                self.visit(value)

    def visit_all(self, nodes: Sequence[cst.CSTNode]) -> None:
        for node in nodes:
            self.visit(node)

    def visit_maybe(self, node: Optional[cst.CSTNode]) -> None:
        if node is not None:
            self.visit(node)

    def visit_under(self, nesting: Nesting, node: Optional[cst.CSTNode] | Sequence[cst.CSTNode]) -> None:
        """Visit under another nesting, then restore the current one."""
        outer, self.nesting = self.nesting, nesting
        if type(node) is list or type(node) is tuple:
            self.visit_all(node)  # type: ignore[arg-type]
        elif node is not None:
            self.visit(node)  # type: ignore[arg-type]
        self.nesting = outer

    def site(self, kind: str) -> Site:
        """The site of the next node of this kind in the current function."""
        found, used = self.places[kind], self.used[kind]
        line, column = found[used] if used < len(found) else (0, 0)
        self.used[kind] = used + 1
        return Site(self.frame.qualname, self.frame.next(kind), line, column)

    def in_loop(self, nesting: Nesting) -> Nesting:
        """`nesting` inside a new loop of the current function."""
        n = nesting
        return Nesting(n.loops + (self.frame.next("loop"),), n.tests, n.in_try, n.in_except, n.in_lambda)

    def under_test(self, nesting: Nesting) -> Nesting:
        """`nesting` under a new test of the current function."""
        n = nesting
        return Nesting(n.loops, n.tests + (self.frame.next("test"),), n.in_try, n.in_except, n.in_lambda)
