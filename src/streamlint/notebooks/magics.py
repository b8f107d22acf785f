"""IPython syntax in code cells (`%magic`, `!shell`, `x = !ls`, `obj?`, `%%cell` magics),
turned into Python that parses, line for line, so that rows and columns stay true.

A cell that already parses is left alone (so a `%` inside a docstring is never touched).
Otherwise each escaped line becomes a placeholder at the same indentation, tagged so
that a fix written back can restore the original line. Cell magics whose body is
Python (`%%time`, `%%timeit`, ..., and `%%writefile name.py`, a script the notebook
writes) keep the body; any other cell magic (`%%bash`, ...) means the cell is not
Python and is skipped, as ruff does.
"""

from __future__ import annotations

import ast
import re
import warnings

from streamlint.source import split_lines

# Cell magics that run their body as Python in the notebook's namespace.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})

_ASSIGNED_ESCAPE = re.compile(r"^(?P<target>\s*[A-Za-z_][\w.\[\], ]*?)\s*=\s*(?:%{1,2}[A-Za-z_]|!)")
# `%name`, `%%name`, `!cmd` at the start of a line; not `% x` or `!= y` continuing an
# expression from the line above.
_ESCAPE = re.compile(r"\s*(?:%{1,2}[A-Za-z_]|!(?!=))")
# IPython's automagic runs `pip install x` (no `%`) as the %pip magic, and `cd ../data` as %cd (a path after
# it, never an operator: `cd = 3` is Python).
_AUTOMAGIC = re.compile(
    r"\s*(?:(?:pip|conda|mamba)\s+(?:install|uninstall|list|show|freeze|download|update|remove)\b"
    r"|cd(?:\s+(?![=(\[.,:+*/%<>!&|^]\s)[^\s=]\S*)?\s*$)"
)
_HELP = re.compile(r"^\s*(\?{1,2}\S.*|[\w.*\[\]]+\?{1,2})\s*$")


def parses(source: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. invalid escape sequences
            ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def cell_magic(source: str) -> str | None:
    """The line of the cell magic the cell starts with (`%%time`), or None. Comment
    lines may come first (Colab puts `# @title` form lines there)."""
    for line in split_lines(source):
        if line.strip() and not line.lstrip().startswith("#"):
            return line.strip() if line.startswith("%%") else None
    return None


def body_is_python(magic_line: str) -> bool:
    words = magic_line[2:].split()
    if not words:
        return False
    if words[0] == "writefile":
        return words[-1].endswith(".py")
    return words[0] in PYTHON_CELL_MAGICS


def to_python(source: str, tag: str) -> tuple[str, dict[int, str]] | None:
    """(Python text, {0-based line index: original line}) for a cell's source, or None
    when the cell is not Python. `tag` marks the placeholder lines: each becomes
    `<indent>pass  #<tag>` (or `#<tag>`), so it can be found after an edit."""
    magic = cell_magic(source)
    if magic is not None and not body_is_python(magic):
        return None
    if magic is None and parses(source):
        return source, {}
    lines = split_lines(source, keepends=True)
    replaced: dict[int, str] = {}
    continued = False  # the previous escaped line ended with a backslash
    seen_header = False
    for i, line in enumerate(lines):
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        if continued:
            lines[i] = f"#{tag}{ending}"
        elif magic is not None and not seen_header and body.startswith("%%"):
            seen_header = True  # the %%magic line itself
            lines[i] = f"#{tag}{ending}"
        elif _ESCAPE.match(body) or _AUTOMAGIC.match(body) or _HELP.match(body):
            indent = body[: len(body) - len(body.lstrip())]
            lines[i] = f"{indent}pass  #{tag}{ending}"
        elif (match := _ASSIGNED_ESCAPE.match(body)) is not None:
            lines[i] = f"{match.group('target').rstrip()} = None  #{tag}{ending}"
        else:
            continue
        replaced[i] = body
        continued = body.endswith("\\")
    return "".join(lines), replaced
