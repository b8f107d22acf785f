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


def to_cell_message(message: str, module: VirtualModule, cell: int) -> str:
    def relative(match: re.Match) -> str:
        number, row = module.locate(int(match.group(1)))
        return f"line {row}" if number == cell else f"line {row} of cell {number}"

    return _LINE.sub(relative, message) if "line " in message else message
