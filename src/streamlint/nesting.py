"""The guard that runs before any parser: a text nested deeper than Python allows.

CPython refuses more than 200 nested brackets. libcst's native parser does not raise on
absurd nesting: it overflows the C stack (a segfault, at ~1,500 brackets or ~6,000
chained operators on an 8 MiB stack) and slows quadratically on long chains. Nesting
without brackets needs a long run of text between commas at one bracket level, so:
the bracket depth is checked first; CPython's parser referees a text with such a long
run; and the checker runs on a thread with a large stack (isolation.py), for margin.
"""

from __future__ import annotations

import ast
import re

MAX_BRACKET_DEPTH = 200
# The longest run in PyTorch's sources is ~430 (strings and comments count as one char).
LONG_RUN = 4096

_STRINGS_AND_COMMENTS = re.compile(
    r"#[^\n]*"
    r'|"""(?:\\.|[^\\])*?"""'
    r"|'''(?:\\.|[^\\])*?'''"
    r'|"(?:\\.|[^"\\\n])*"'
    r"|'(?:\\.|[^'\\\n])*'",
    re.S,
)
_STRUCTURE = re.compile(r"[()\[\]{},;]|\\?\r?\n")


def nesting_problem(text: str) -> tuple[str, int, int] | None:
    """(message, row, column) when the text nests deeper than Python allows, else None."""
    openers = text.count("(") + text.count("[") + text.count("{")
    if openers <= MAX_BRACKET_DEPTH and len(text) <= LONG_RUN:
        return None  # too small to nest deeply: the common case costs three counts
    # Strings and comments become one space (plus NULs that keep their line count).
    stripped = _STRINGS_AND_COMMENTS.sub(lambda m: " " + "\0" * m.group().count("\n"), text)
    # run[d]: length of the open run at bracket depth d (its own text, not that of the
    # brackets inside it); outer[d]: the runs enclosing it, which nest with it.
    run, outer, pos, suspect = [0], [0], 0, None
    for match in _STRUCTURE.finditer(stripped):
        char, at = match.group(), match.start()
        run[-1] += at - pos
        pos = match.end()
        if char in "([{":
            if len(run) > MAX_BRACKET_DEPTH:
                row, column = _stripped_position(stripped, at)
                return "SyntaxError: too many nested parentheses", row, column
            run[-1] += 1
            outer.append(outer[-1] + run[-1])
            run.append(0)
            continue
        if char[-1] == "\n" and (len(run) > 1 or char[0] == "\\"):
            continue  # a line break inside a statement
        # A closing bracket, a comma, a semicolon or the end of a statement ends a run.
        if outer[-1] + run[-1] > LONG_RUN and suspect is None:
            suspect = at
        if char in ")]}":
            if len(run) > 1:
                run.pop()
                outer.pop()
            run[-1] += 1
        else:
            run[-1] = 0
    if outer[-1] + run[-1] + len(stripped) - pos > LONG_RUN and suspect is None:
        suspect = len(stripped)
    if suspect is None:
        return None
    try:
        ast.parse(text)  # C speed, and it raises rather than crashes on deep nesting
    except (RecursionError, MemoryError):
        row, _ = _stripped_position(stripped, suspect)
        return "file too deeply nested to parse (Python refuses it too)", row, 1
    except (SyntaxError, ValueError):
        pass  # may be newer syntax than this interpreter's; libcst decides
    return None


def _stripped_position(stripped: str, at: int) -> tuple[int, int]:
    row = stripped.count("\n", 0, at) + stripped.count("\0", 0, at) + 1
    line_start = max(stripped.rfind("\n", 0, at), stripped.rfind("\0", 0, at)) + 1
    return row, at - line_start + 1  # the column is exact unless a string precedes it
