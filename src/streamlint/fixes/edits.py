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
from streamlint.source import split_lines

if TYPE_CHECKING:
    from streamlint.checked_file import CheckedFile

_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*\Z")


def is_pasteable(label: str) -> bool:
    """A label that is code naming one value: `s`, `self.copy_stream`."""
    return bool(_NAME.match(label or ""))


class FixBuilder:
    """Edits for one analysed file. The parent map is built on first use only."""

    def __init__(self, analysis: "CheckedFile") -> None:
        self.analysis = analysis
        self.module = analysis.module
        self._parents: Optional[dict[int, cst.CSTNode]] = None
        self._lines: Optional[list[str]] = None

    # -- structure -------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        if self._parents is None:
            if self.analysis.parents is None:  # one map per file, for every rule's builder
                parents: dict[int, cst.CSTNode] = {}
                stack: list[cst.CSTNode] = [self.module]
                while stack:
                    current = stack.pop()
                    for child in current.children:
                        parents[id(child)] = current
                        stack.append(child)
                self.analysis.parents = parents
            self._parents = self.analysis.parents
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
            self._lines = split_lines(self.analysis.source)
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
        code = self.code(new)
        if rng.start.line != rng.end.line:
            # Rendered alone, a node loses its block's indentation on continuation lines
            # (libcst adds it while rendering the whole module): put it back, having
            # checked on the old node that this reproduces the source exactly.
            indent = re.match(r"[ \t]*", self.line(rng.start.line)).group()
            code = _lf(code)
            actual = "\n".join(
                [self.line(rng.start.line)[rng.start.column:]]
                + [self.line(r) for r in range(rng.start.line + 1, rng.end.line)]
                + [self.line(rng.end.line)[: rng.end.column]]
            )
            rendered = _lf(self.code(old))
            if _reindent(rendered, indent) == actual:
                code = _reindent(code, indent)
            elif rendered != actual:
                return None
            code = code.replace("\n", self.newline())
        return Edit(rng.start.line, rng.start.column + 1, rng.end.line, rng.end.column + 1, code)

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


def _lf(code: str) -> str:
    return re.sub(r"\r\n?", "\n", code)


def _reindent(code: str, indent: str) -> str:
    lines = split_lines(code)
    return "\n".join([lines[0]] + [indent + line if line.strip() else line for line in lines[1:]])


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
    for i, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == name:
            args = list(call.args)
            args[i] = arg.with_changes(value=cst.parse_expression(value))
            return call.with_changes(args=args)
    return append_arg(call, keyword_arg(name, value))


def append_arg(call: cst.Call, new: cst.Arg) -> cst.Call:
    """Add an argument at the end, keeping the call's layout: on the last argument's
    line, or on a line of its own when the arguments end with a comma and a line break."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new])
    last = args[-1]
    if isinstance(last.comma, cst.Comma):  # `f(a, b,)` or one argument per line
        before = args[-2].comma if len(args) > 1 else None
        between = before.whitespace_after if isinstance(before, cst.Comma) else call.whitespace_before_args
        args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=between))
        args.append(new.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg))
    else:  # `f(a, b)`, maybe with a line break before `)`: that stays after the new one
        args[-1] = last.with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
            whitespace_after_arg=cst.SimpleWhitespace(""),
        )
        args.append(new.with_changes(whitespace_after_arg=last.whitespace_after_arg))
    return call.with_changes(args=args)


def binding_pattern(name: str, *, imports: bool = False) -> "re.Pattern[str]":
    """A line that binds `name`: `name = ...` (annotated too), a `for` or `with ... as`
    target, and with `imports` an `import`. Text-level, so it errs towards "bound"."""
    name = re.escape(name)
    imported = rf"|import\s+(?:[\w.]+\s*,\s*)*{name}\b" if imports else ""
    return re.compile(
        rf"(?:^|[\s,(;])(?:{name}\s*(?::[^=\n]*)?=(?!=)|for\s+(?:[\w\s,(]*\b)?{name}\b[\w\s,)]*\bin\b"
        rf"|as\s+{name}\b{imported})"
    )


def bound_before(builder: FixBuilder, function: cst.CSTNode, label: str, row: int) -> bool:
    """Is the root name of `label` (`s` of `s`, `self` of `self.stream`) bound where
    code is inserted at `row`: a parameter of the function, or assigned, imported or a
    loop/`with` target on an earlier line of the function or at module level? A name
    bound only later would raise NameError at run time, so such a fix is not offered."""
    root = label.split(".", 1)[0]
    if isinstance(function, cst.FunctionDef):
        params = function.params
        names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
        names += [p.name.value for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
        if root in names:
            return True
        rng = builder.analysis.position(function)
        first = rng.start.line if rng else row
    else:
        first = 1
    binding = binding_pattern(root, imports=True)
    lines = [builder.line(r) for r in range(first, row)]
    if not isinstance(function, cst.FunctionDef):
        return any(binding.search(line) for line in lines)
    module_lines = [builder.line(r) for r in range(1, first)]
    top_level = (line for line in module_lines if line[:1] not in (" ", "\t"))
    return any(binding.search(line) for line in lines) or any(binding.search(line) for line in top_level)
