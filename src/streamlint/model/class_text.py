"""Cheap text tests over a class's source: which of its methods assign which `self.<attr>`.

The analysis asks "which methods set `self.x`?" before analysing them for the value.
Generating each method's code from the tree for that test cost ~7% of a cold run on
PyTorch's sources (and forced lazily parsed bodies, lazy_parse.py); one pass over the
class's text answers it for every attribute at once. The answer is a filter only: a
method it names is then analysed, so a hit in a comment or a string costs time, not
precision. Where the class cannot be read from the text with confidence (two classes
of one name, a method the text does not show), the caller falls back to the tree.
"""
from __future__ import annotations

import re
from typing import Iterable, Iterator, Optional

_ASSIGN = re.compile(r"self\.(\w+) =")
_DEF = re.compile(r"(?:async\s+)?def\s+(\w+)")
_QUOTES = ('"""', "'''")


_CLASS = re.compile(r"^([ \t]*)class[ \t]+(\w+)", re.MULTILINE)


def class_starts(text: str) -> dict[str, list[tuple[int, int]]]:
    """Every `class` statement of `text`: name -> (offset, indentation) of each, in one
    pass (a module asks about many classes)."""
    starts: dict[str, list[tuple[int, int]]] = {}
    for match in _CLASS.finditer(text):
        starts.setdefault(match.group(2), []).append((match.start(), len(match.group(1))))
    return starts


def method_assignments(text: str, starts: dict[str, list[tuple[int, int]]], class_name: str,
                       methods: Iterable[str]) -> Optional[dict[str, frozenset[str]]]:
    """For the one class `class_name` of `text` (`starts`: class_starts(text)): method
    name -> the attributes its text assigns as `self.<attr> =` (nested functions count
    for their method). None when the text has no single class of that name or does not
    show every one of `methods`."""
    where = starts.get(class_name, ())
    if len(where) != 1:
        return None
    method_indent: Optional[int] = None
    current: Optional[str] = None
    found: dict[str, set[str]] = {}
    for line, indent in _body_lines(text, *where[0]):
        if indent is not None:
            if method_indent is None:
                method_indent = indent
            if indent <= method_indent:
                match = _DEF.match(line.lstrip())
                current = match.group(1) if match else None
                if current is not None:
                    found.setdefault(current, set())
        if current is not None:
            found[current].update(_ASSIGN.findall(line))
    if any(name not in found for name in methods):
        return None
    return {name: frozenset(attrs) for name, attrs in found.items()}


def body_text(text: str, starts: dict[str, list[tuple[int, int]]], class_name: str) -> Optional[str]:
    """The text of the one class `class_name`'s body; None when there is no single one."""
    where = starts.get(class_name, ())
    if len(where) != 1:
        return None
    return "\n".join(line for line, _ in _body_lines(text, *where[0]))


def _body_lines(text: str, start: int, class_indent: int) -> Iterator[tuple[str, Optional[int]]]:
    """(line, its indentation) for the lines of the class body at `start`, after the
    header (which may span lines), up to the first line indented no deeper than the
    class. Lines inside a multi-line string, and blank or comment lines, have None."""
    in_header, quote = True, ""
    for line in _lines_from(text, start):
        if quote:  # inside a multi-line string: its lines' indentation means nothing
            quote = "" if line.count(quote) % 2 else quote
            yield line, None
            continue
        code = line.split("#", 1)[0].rstrip()
        quote = next((q for q in _QUOTES if code.count(q) % 2), "")
        if in_header:
            in_header = not code.endswith(":")
            continue
        stripped = code.lstrip()
        if not stripped:
            yield line, None
            continue
        indent = len(code) - len(stripped)
        if indent <= class_indent:
            return  # the class ends
        yield line, indent


def _lines_from(text: str, start: int) -> Iterator[str]:
    """The lines of `text` from `start`, made one at a time (a class ends long before
    the text does)."""
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        yield text[start:end]
        start = end + 1
