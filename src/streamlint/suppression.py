"""Suppression comments: `# noqa[: codes]`, `# streamlint: ignore[codes]` on a line, and
`# streamlint: ignore-file[codes]` in the file's leading comment block.

Comments are found with `tokenize`, so text inside strings never counts. Every form
takes codes or prefixes (`SL4`); no codes means all codes. A comment
suppresses a finding on the finding's line or on the last line of the statement that
holds it (where formatters leave trailing comments). SL000 is never suppressed.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import Iterable

from streamlint.diagnostics import Diagnostic
from streamlint.selection import SOURCE_ERROR, matches, normalize

_CODE_LIST = r"[A-Za-z]+[0-9]+(?:[,\s]+[A-Za-z]+[0-9]+)*"
_NOQA = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODE_LIST})?)?", re.IGNORECASE)
NOQA = _NOQA  # for tools that write such comments (the language server's quick fix)
_DIRECTIVE = re.compile(
    r"#\s*streamlint:\s*(?P<kind>ignore-file|ignore)\b(?:\[(?P<codes>[^\]]*)\])?",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"[,\s]+")

@dataclass
class Suppressions:
    # row -> selectors suppressed on that row (None: all)
    lines: dict[int, frozenset[str] | None] = field(default_factory=dict)
    file: frozenset[str] | None = frozenset()
    # row -> last row of the logical line (statement) that row belongs to
    statement_end: dict[int, int] = field(default_factory=dict)

    def suppresses(self, diag: Diagnostic) -> bool:
        if diag.code == SOURCE_ERROR:
            return False
        if _covers(self.file, diag.code):
            return True
        rows = {diag.noqa_row, self.statement_end.get(diag.end_row, diag.end_row)}
        return any(row in self.lines and _covers(self.lines[row], diag.code) for row in rows)


def parse(text: str) -> Suppressions:
    """Every suppression comment in `text` (cheap when there is none)."""
    if "noqa" not in text.lower() and "streamlint:" not in text:
        return Suppressions()
    found = Suppressions()
    leading = True  # still in the leading comment block
    line_start = None  # first row of the current logical line
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                _add_comment(found, tok.string, tok.start[0], leading)
            elif tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER):
                pass
            else:
                leading = False
            if tok.type not in (tokenize.COMMENT, tokenize.NL) and line_start is None:
                line_start = tok.start[0]
            if tok.type == tokenize.NEWLINE and line_start is not None:
                for row in range(line_start, tok.start[0] + 1):
                    found.statement_end[row] = tok.start[0]
                line_start = None
            if tok.type in (tokenize.INDENT, tokenize.DEDENT):
                line_start = None
    except (tokenize.TokenError, SyntaxError):
        pass  # keep what was found before the bad token; the parser reports the error
    return found


def filter_diagnostics(diagnostics: Iterable[Diagnostic], text: str) -> list[Diagnostic]:
    diagnostics = list(diagnostics)
    if not diagnostics:
        return diagnostics
    found = parse(text)
    return [d for d in diagnostics if not found.suppresses(d)]


def _add_comment(found: Suppressions, comment: str, row: int, leading: bool) -> None:
    for match in _NOQA.finditer(comment):
        codes = match.group("codes")
        # `# noqa` and `# noqa:` with no codes suppress everything, as in flake8.
        _merge_line(found, row, frozenset(_codes(codes)) if codes else None)
    for match in _DIRECTIVE.finditer(comment):
        raw = match.group("codes")
        codes = frozenset(_codes(raw)) if raw and raw.strip() else None
        if match.group("kind").lower() == "ignore-file":
            if leading:
                found.file = None if codes is None or found.file is None else found.file | codes
        else:
            _merge_line(found, row, codes)


def _merge_line(found: Suppressions, row: int, codes: frozenset[str] | None) -> None:
    if row in found.lines:
        old = found.lines[row]
        codes = None if old is None or codes is None else old | codes
    found.lines[row] = codes


def _codes(raw: str) -> list[str]:
    return [normalize(c) for c in _SPLIT.split(raw) if c.strip()]


def _covers(selectors: frozenset[str] | None, code: str) -> bool:
    if selectors is None:
        return True
    return any(matches(sel, code) for sel in selectors)
