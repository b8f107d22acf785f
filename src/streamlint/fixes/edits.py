"""Turn libcst transformations into text edits at the analysed nodes' positions.

A rule that has a fix builds new nodes (`node.with_changes(...)`, parsed snippets) and
asks a `FixBuilder` for the edits: the new node's code over the old node's span, or new
statements inserted before a statement with its indentation. Whatever cannot be placed
exactly (a statement inside a one-line `if x: y`, a node without a position) gives no
fix rather than a guess.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

import libcst as cst

from streamlint.fixes.model import Applicability, Edit, Fix

if TYPE_CHECKING:
    from streamlint.model.analysis import FileAnalysis

_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*\Z")


def is_pasteable(label: str) -> bool:
    """A label that is code naming one value: `s`, `self.copy_stream`."""
    return bool(_NAME.match(label or ""))


class FixBuilder:
    """Edits for one analysed file. The parent map is built on first use only."""

    def __init__(self, analysis: "FileAnalysis") -> None:
        self.analysis = analysis
        self.module = analysis.module
        self._parents: Optional[dict[int, cst.CSTNode]] = None
        self._lines: Optional[list[str]] = None

    # -- structure -------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        if self._parents is None:
            self._parents = {}
            stack: list[cst.CSTNode] = [self.module]
            while stack:
                current = stack.pop()
                for child in current.children:
                    self._parents[id(child)] = current
                    stack.append(child)
        return self._parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def statement_of(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The statement line (or compound statement) holding `node`, if new lines can be
        inserted before it: not when it is the body of a one-line compound statement."""
        for current in [node, *self.ancestors(node)]:
            if isinstance(current, cst.SimpleStatementLine):
                return current
            if isinstance(current, cst.BaseSmallStatement):
                continue
            if isinstance(current, cst.SimpleStatementSuite):
                return None  # `for x in y: stmt`: no line of its own
            if isinstance(current, cst.BaseCompoundStatement) and current is not node:
                # The node is in the header (`for x in f(y):`, `with g():`): before it.
                return current
        return None

    # -- text ------------------------------------------------------------------------
    def line(self, row: int) -> str:
        if self._lines is None:
            self._lines = re.split(r"\r\n|\r|\n", self.analysis.source)
        return self._lines[row - 1] if 0 < row <= len(self._lines) else ""

    def newline(self) -> str:
        return self.module.default_newline

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    # -- edits -----------------------------------------------------------------------
    def replace(self, old: cst.CSTNode, new: cst.CSTNode) -> Optional[Edit]:
        """The new node's code over the old node's span (expressions and small nodes)."""
        rng = self.analysis.position(old)
        if rng is None:
            return None
        return Edit(rng.start.line, rng.start.column + 1, rng.end.line, rng.end.column + 1, self.code(new))

    def insert_before(self, statement: cst.CSTNode, lines: Sequence[str]) -> Optional[Edit]:
        """New statement lines before `statement`, at its indentation."""
        rng = self.analysis.position(statement)
        if rng is None:
            return None
        row, column = rng.start.line, rng.start.column
        indent = self.line(row)[:column]
        if indent.strip():
            return None  # something precedes the statement on its line (`a; b`, `if x: b`)
        text = "".join(f"{line}{self.newline()}{indent}" for line in lines)
        return Edit(row, column + 1, row, column + 1, text)

    def insert_after(self, statement: cst.CSTNode, lines: Sequence[str]) -> Optional[Edit]:
        """New statement lines after a one-line statement, at its indentation."""
        if not isinstance(statement, cst.SimpleStatementLine):
            return None
        rng = self.analysis.position(statement)
        if rng is None or rng.start.line != rng.end.line:
            return None
        row, column = rng.start.line, rng.start.column
        indent = self.line(row)[:column]
        if indent.strip():
            return None
        end = len(self.line(row)) + 1  # after any trailing comment
        text = "".join(f"{self.newline()}{indent}{line}" for line in lines)
        return Edit(row, end, row, end, text)

    def delete_statement(self, statement: cst.CSTNode) -> Optional[Edit]:
        """Remove a one-line statement and its line break."""
        if not isinstance(statement, cst.SimpleStatementLine) or self._alone_in_block(statement):
            return None
        rng = self.analysis.position(statement)
        if rng is None or rng.start.line != rng.end.line:
            return None
        if self.line(rng.start.line)[: rng.start.column].strip():
            return None
        return Edit(rng.start.line, 1, rng.start.line + 1, 1, "")

    def _alone_in_block(self, statement: cst.CSTNode) -> bool:
        block = self.parent(statement)
        body = getattr(block, "body", None)
        return isinstance(body, (list, tuple)) and len(body) == 1

    def indent_unit(self) -> str:
        return self.module.default_indent


def make_fix(message: str, applicability: Applicability, edits: Sequence[Optional[Edit]]) -> Optional[Fix]:
    """A Fix, or None when any edit could not be placed (all or nothing)."""
    if not edits or any(e is None for e in edits):
        return None
    return Fix(message, applicability, tuple(sorted(edits)))  # type: ignore[arg-type]


def keyword_arg(name: str, value: str) -> cst.Arg:
    return cst.Arg(
        value=cst.parse_expression(value),
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def with_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """`f(a)` -> `f(a, name=value)`; an existing `name=` keyword is replaced."""
    args = list(call.args)
    for i, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == name:
            args[i] = arg.with_changes(value=cst.parse_expression(value))
            return call.with_changes(args=args)
    new = keyword_arg(name, value)
    if args:
        last = args[-1]
        if last.comma is cst.MaybeSentinel.DEFAULT or isinstance(last.comma, cst.MaybeSentinel):
            args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args.append(new)
        else:  # a trailing comma (maybe before a line break): keep the layout
            before = args[-2].comma if len(args) > 1 else None
            between = before.whitespace_after if isinstance(before, cst.Comma) else call.whitespace_before_args
            args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=between))
            args.append(new.with_changes(comma=last.comma))
    else:
        args.append(new)
    return call.with_changes(args=args)
