"""What a rule is: metadata, its documentation (the class docstring), and a query."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterable, Optional

if TYPE_CHECKING:  # libcst only for the annotation: a fully cached run never loads it
    import libcst as cst

    from streamlint.checked_file import CheckedFile
    from streamlint.fixes.model import Fix


@dataclass(frozen=True)
class Finding:
    """A rule's answer: the node to point at, the message to show and, when the rule
    knows one, a fix."""

    node: cst.CSTNode
    message: str
    fix: Optional["Fix"] = None
    # The fix idiom in one short line (ruff's `help:`), so the message can stay short.
    help: Optional[str] = None


class Rule:
    """Base class. Subclasses set `code`, `name`, `summary` and document themselves.

    The class docstring is the rule's user documentation, in ruff's form:
    ``## What it does`` / ``## Why is this bad?`` / ``## Example`` / ``## Use instead``.
    `streamlint rule CODE`, SARIF and docs/rules/ all render that one text.
    """

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    # A meta rule checks streamlint's own comments rather than GPU code: it has no
    # query over the stream model (the engine runs it after suppression), no GPU
    # behaviour and so no runtime fixture pair.
    meta: ClassVar[bool] = False
    # "always" or "sometimes" when findings carry a fix (ruff's wording), "none" otherwise.
    fix_availability: ClassVar[str] = "none"

    def check(self, analysis: "CheckedFile") -> Iterable[Finding]:
        raise NotImplementedError

    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")
