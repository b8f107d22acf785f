"""Line numbers inside a notebook finding's message, made cell-relative.

Rules write "before line 13" counting the rows of the virtual module (all code cells
joined); the location of a notebook finding says `cell 4:5:9`. So each `line N` of a
message is moved into its cell: "line 5" when that is the finding's own cell, else
"line 2 of cell 3", as a reader of the notebook counts.
"""

from __future__ import annotations

import re

from streamlint.notebooks.cells import VirtualModule

_LINE = re.compile(r"\bline (\d+)\b")
# "lines 15, 18, 19", "lines 16 and 19": each number of the list
_LINES = re.compile(r"\blines (\d+(?:(?:, | and )\d+)+)\b")
_NUMBER = re.compile(r"\d+")


def to_cell_message(message: str, module: VirtualModule, cell: int) -> str:
    def located(number: int) -> str:
        at, row = module.locate(number)
        return f"{row}" if at == cell else f"{row} of cell {at}"

    def relative(match: re.Match) -> str:
        return f"line {located(int(match.group(1)))}"

    def relative_list(match: re.Match) -> str:
        return "lines " + _NUMBER.sub(lambda m: located(int(m.group(0))), match.group(1))

    if "line" not in message:
        return message
    return _LINE.sub(relative, _LINES.sub(relative_list, message))
