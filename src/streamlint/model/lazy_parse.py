"""Parse another module of the project with its functions' bodies left for later.

A module read for its summaries (project.py) is walked at its top level: imports,
assignments, class bodies, and the names, parameters and decorators of its functions.
A body is needed only when an importer calls that function (or a text test reads it),
about one function in twelve on PyTorch's sources. So the bodies of the functions the
top-level walk defines (module-level functions and methods, not nested ones) are cut
from the text before libcst parses it, each replaced by one `pass` at its indentation,
and a body is parsed the first time anything reads it (`node.body.body`, code
generation, a visitor). The tree then equals, node for node, the one
`libcst.parse_module` makes (tests/test_lazy_parse.py checks PyTorch-like and tricky
layouts); only the nodes of the bodies are made later.

Whatever this module cannot cut exactly (a body on its header's line, comments after a
body that sit deeper than it and so belong to a block inside it, a body that ends a
file without a last newline, odd line endings, text Python's own parser refuses) is
parsed at once, and a text with nothing to cut is parsed whole (`cut_bodies` returns
None). One difference remains in principle: a body that Python parses and libcst cannot
used to make the whole module unreadable (no summaries); now libcst's error is raised
when that body is read.
"""

from __future__ import annotations

import ast
import warnings
from typing import Any, NamedTuple, Optional, Sequence

import libcst as cst

# IndentedBlock's own slots: the lazy block fills them itself.
_SLOTS = {name: cst.IndentedBlock.__dict__[name] for name in ("header", "indent", "body", "footer")}
# Compound statements and the fields that hold their blocks (the top-level walk's reach).
_BLOCKS: dict[type, tuple[str, ...]] = {
    cst.If: ("body", "orelse"), cst.Else: ("body",), cst.For: ("body", "orelse"),
    cst.While: ("body", "orelse"), cst.Try: ("body", "handlers", "orelse", "finalbody"),
    cst.TryStar: ("body", "handlers", "orelse", "finalbody"), cst.ExceptHandler: ("body",),
    cst.ExceptStarHandler: ("body",), cst.Finally: ("body",), cst.With: ("body",), cst.ClassDef: ("body",),
    cst.Match: ("cases",), cst.MatchCase: ("body",),
}  # fmt: skip


class _Region(NamedTuple):
    first: int  # 0-based lines of the body: its leading comments through its last statement
    last: int
    indent: str  # the body's indentation


class _LazyBlock(cst.IndentedBlock):
    """A function's body whose statements are parsed on first use. Reading `body` (as
    everything that walks, prints or visits the block does) parses them; the other
    fields come from the cut text's parse, where they are the same."""

    __slots__ = ("_pending",)  # (the module's default indentation, the body's text) until parsed

    @property  # type: ignore[override]
    def body(self) -> Sequence[cst.BaseStatement]:
        pending = getattr(self, "_pending", None)
        if pending is not None:
            _SLOTS["body"].__set__(self, _parse_body(*pending))
            object.__setattr__(self, "_pending", None)
        return _SLOTS["body"].__get__(self)

    @body.setter
    def body(self, value: Sequence[cst.BaseStatement]) -> None:  # (libcst's constructor and clones)
        _SLOTS["body"].__set__(self, value)
        object.__setattr__(self, "_pending", None)


# Visitors and code that dispatch on the class name see an IndentedBlock.
_LazyBlock.__name__ = _LazyBlock.__qualname__ = "IndentedBlock"


class Cut(NamedTuple):
    """A text with function bodies cut out, to parse, and how to put them back."""

    text: str  # what to give libcst
    lines: list[str]  # the original's lines
    regions: dict[tuple[str, int], Optional[_Region]]

    def attach(self, module: cst.Module) -> Optional[cst.Module]:
        """The parsed cut text with its bodies back, lazily; None when the two parsers
        disagree about the functions (the caller then parses the original whole)."""
        defs = _top_level_defs(module.body, [])
        if defs is None or [d.name.value for d in defs] != [name for name, _ in self.regions]:
            return None
        for node, region in zip(defs, self.regions.values()):
            if region is None:
                continue
            stub = node.body
            if not _is_stub(stub):
                return None
            lazy = object.__new__(_LazyBlock)
            for name in ("header", "indent", "footer"):
                _SLOTS[name].__set__(lazy, getattr(stub, name))
            body_text = "\n".join(self.lines[region.first : region.last + 1]) + "\n"
            object.__setattr__(lazy, "_pending", (module.default_indent, body_text))
            object.__setattr__(node, "body", lazy)  # (a tree just made, seen by no one yet)
        return module


def cut_bodies(text: str) -> Optional[Cut]:
    """The text with the bodies of the functions the top-level walk defines cut out;
    None when there is nothing to cut (parse the text whole)."""
    regions = _regions(text)
    if not regions or not any(regions.values()):
        return None
    lines = text.split("\n")
    kept: list[str] = []
    position = 0
    for region in regions.values():
        if region is None:
            continue
        kept.extend(lines[position : region.first])
        kept.append(region.indent + "pass")
        position = region.last + 1
    kept.extend(lines[position:])
    return Cut("\n".join(kept), lines, regions)


def parse_lazily(text: str) -> Optional[cst.Module]:
    """The module with lazily parsed function bodies; None when nothing was left for
    later (parse the text whole). Raises what libcst raises."""
    cut = cut_bodies(text)
    return cut.attach(cst.parse_module(cut.text)) if cut is not None else None


def _parse_body(default_indent: str, body_text: str) -> Sequence[cst.BaseStatement]:
    # The first block gives the little module the file's default indentation, so that
    # blocks inside the body record their indentation as they do in the file.
    wrapper = cst.parse_module(f"if 1:\n{default_indent}pass\nif 1:\n{body_text}")
    second = wrapper.body[1]
    assert isinstance(second, cst.If) and isinstance(second.body, cst.IndentedBlock)
    return second.body.body


def _regions(text: str) -> Optional[dict[tuple[str, int], Optional[_Region]]]:
    """(name, order) of each function the top-level walk defines, in the text's order,
    with the region to cut (None: parse that body at once); None: parse it all now."""
    if "\r" in text or "\f" in text or "\x0b" in text or text.startswith("\ufeff"):
        return None  # line endings and form feeds Python and libcst count differently
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (invalid escapes and the like: not ours to show)
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = text.split("\n")
    found: dict[tuple[str, int], Optional[_Region]] = {}
    for n, node in enumerate(_ast_top_level_defs(tree)):
        found[(node.name, n)] = _region(node, lines)
    return found


def _ast_top_level_defs(tree: ast.AST) -> list[Any]:
    out = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append(child)
            elif not isinstance(child, (ast.expr, ast.Lambda)):
                stack.append(child)
    out.sort(key=lambda d: (d.lineno, d.col_offset))
    return out


def _region(node: Any, lines: list[str]) -> Optional[_Region]:
    first_statement = node.body[0]
    decorators = getattr(first_statement, "decorator_list", None) or []
    start = min([first_statement.lineno, *(d.lineno for d in decorators)]) - 1
    indent = _indentation(lines[start])
    if decorators:
        if lines[start][len(indent) : len(indent) + 1] != "@":
            return None
    elif first_statement.col_offset != len(indent):
        return None  # the body is on the header's line (`def f(): return x`)
    first = start
    while first > 0 and _blank_or_comment(lines[first - 1]):
        first -= 1  # its leading comments belong to its first statement
    if first == 0 or lines[first - 1].rstrip(" \t").endswith("\\"):
        return None
    last = node.end_lineno - 1
    # Comment lines after the body up to the next code belong to the innermost block
    # at or above their indentation: one deeper than the body may be a block inside it.
    after = last + 1
    while after < len(lines) and _blank_or_comment(lines[after]):
        if not indent.startswith(_indentation(lines[after])):
            return None
        after += 1
    if after >= len(lines) and lines[-1]:
        return None  # the body ends a file without a last newline (kept differently)
    return _Region(first, last, indent)


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _blank_or_comment(line: str) -> bool:
    stripped = line.strip(" \t")
    return not stripped or stripped.startswith("#")


def _top_level_defs(statements: Sequence[cst.CSTNode], out: list[cst.FunctionDef]) -> Optional[list[cst.FunctionDef]]:
    """The functions the top-level walk defines, in the text's order (None: a compound
    statement this module does not know, so it cannot tell)."""
    for statement in statements:
        if isinstance(statement, cst.FunctionDef):
            out.append(statement)
        elif isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            continue
        elif isinstance(statement, cst.IndentedBlock):
            if _top_level_defs(statement.body, out) is None:
                return None
        else:
            fields = _BLOCKS.get(type(statement))
            if fields is None:
                return None
            for name in fields:
                value = getattr(statement, name)
                children = value if isinstance(value, (tuple, list)) else [value] if value is not None else []
                if _top_level_defs(children, out) is None:
                    return None
    return out


def _is_stub(block: cst.BaseSuite) -> bool:
    if not isinstance(block, cst.IndentedBlock) or len(block.body) != 1:
        return False
    line = block.body[0]
    return (isinstance(line, cst.SimpleStatementLine) and not line.leading_lines and len(line.body) == 1
            and isinstance(line.body[0], cst.Pass))


def mentions(node: cst.FunctionDef, text: str, code: "Any") -> bool:
    """Does the function's source contain `text`? Read from a body not parsed yet
    without parsing it; `code(node)` prints a parsed one."""
    pending = getattr(node.body, "_pending", None)
    if pending is not None:
        return text in pending[1]
    return text in code(node)
