"""Suppression comments: `# noqa[: codes]`, `# streamlint: ignore[codes]` on a line, and
`# streamlint: ignore-file[codes]` on a line of its own anywhere in the file (ruff's rule
for `# ruff: noqa`: after a module docstring or the imports too; after code on the same
line it suppresses nothing, and SL900 says so).

Comments are found with `tokenize`, so text inside strings never counts. Every form
takes codes or prefixes (`SL4`); no codes means all codes. As in ruff, codes after
`noqa` without a colon make a bare noqa, and a colon followed by no code suppresses
nothing (both are reported by SL900), and so does a lower-case code (`# noqa: sl103`:
ruff too reads it as an invalid list; SL900 names the upper-case spelling). A comment
suppresses a finding on the finding's line or on the last line of the statement that
holds it (where formatters leave trailing comments). SL000 is never suppressed.
"""

from __future__ import annotations

import enum
import io
import re
import tokenize
from dataclasses import dataclass, field, replace
from typing import Iterable, Optional

from streamlint.diagnostics import Diagnostic
from streamlint.selection import SOURCE_ERROR, matches, normalize
from streamlint.source import split_lines

_CODE_LIST = r"[A-Za-z]+[0-9]+(?:[,\s]+[A-Za-z]+[0-9]+)*"
_NOQA = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODE_LIST})?)?", re.IGNORECASE)
NOQA = _NOQA  # for tools that write such comments (the language server's quick fix)
_DIRECTIVE = re.compile(
    r"#\s*streamlint:\s*(?P<kind>ignore-file|ignore)\b(?:\[(?P<codes>[^\]]*)\])?",
    re.IGNORECASE,
)
_NOQA_CODE = re.compile(r"[A-Za-z]+[0-9]+")
_CODES_WITHOUT_COLON = re.compile(rf"\s+(?P<codes>{_CODE_LIST})\b")
_DIRECTIVE_CODE = re.compile(r"[^,\s]+")


@dataclass(frozen=True)
class Code:
    """One code or prefix of a directive as written; columns are 0-based on its line."""

    text: str
    selector: str  # normalized (upper case)
    start: int
    end: int


class Malformed(enum.Enum):
    MISSING_COLON = "missing-colon"
    NO_CODES = "no-codes"
    LOWER_CASE = "lower-case"  # `noqa: sl103`: as in ruff, an invalid list suppresses nothing
    NOT_OWN_LINE = "not-own-line"  # `x = 1  # streamlint: ignore-file`: a file's comment after code


@dataclass(frozen=True)
class Directive:
    """One effective suppression as written, for the tools that report or edit them
    (SL900, `--add-noqa`). Columns are 0-based character offsets on the line."""

    kind: str  # "noqa", "ignore" or "ignore-file"
    row: int
    start: int
    end: int
    codes: tuple[Code, ...] | None  # None: no codes, so every code
    codes_start: int  # where the code list is (or would be) written
    codes_end: int
    # A noqa comment written wrong, as ruff reads it (reported by SL900):
    # MISSING_COLON, codes without the colon ("noqa SL103"; codes_start/end then span
    # them), is a bare noqa that suppresses every code; NO_CODES, a colon followed by
    # no code ("noqa:"), LOWER_CASE, a code not in upper case ("noqa: sl103"), and
    # NOT_OWN_LINE, an ignore-file after code on its line, suppress nothing.
    malformed: Optional[Malformed] = None


@dataclass
class Suppressions:
    # row -> selectors suppressed on that row (None: all)
    lines: dict[int, frozenset[str] | None] = field(default_factory=dict)
    file: frozenset[str] | None = frozenset()
    # row -> last row of the logical line (statement) that row belongs to
    statement_end: dict[int, int] = field(default_factory=dict)
    directives: list[Directive] = field(default_factory=list)
    # row -> (column, text) of the comment on that row
    comments: dict[int, tuple[int, str]] = field(default_factory=dict)
    # rows that end in code or a comment (not inside a string or after a backslash),
    # where a trailing comment may be added
    line_ends: set[int] = field(default_factory=set)

    def suppresses(self, diag: Diagnostic) -> bool:
        if diag.code == SOURCE_ERROR:
            return False
        if _covers(self.file, diag.code):
            return True
        return any(
            row in self.lines and _covers(self.lines[row], diag.code) for row in self.rows(diag)
        )

    def rows(self, diag: Diagnostic) -> set[int]:
        """The rows whose comments can suppress `diag`."""
        return {diag.noqa_row, self.statement_end.get(diag.end_row, diag.end_row)}


def parse(text: str) -> Suppressions:
    """Every suppression comment in `text` (cheap when there is none)."""
    if "noqa" not in text.lower() and "streamlint:" not in text:
        return Suppressions()
    return scan(text)


def scan(text: str) -> Suppressions:
    """Like `parse`, and always fills the layout (statement ends, comments, line ends)."""
    found = Suppressions()
    last_code_row = 0  # the last row that holds code (a comment there trails it)
    line_start = None  # first row of the current logical line
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                found.comments[tok.start[0]] = (tok.start[1], tok.string)
                _add_comment(found, tok.string, tok.start, own_line=tok.start[0] != last_code_row)
            elif tok.type in (tokenize.NL, tokenize.NEWLINE):
                found.line_ends.add(tok.start[0])
            elif tok.type not in (tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT):
                last_code_row = tok.end[0]
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


def _add_comment(found: Suppressions, comment: str, start: tuple[int, int], own_line: bool) -> None:
    row, col = start
    for match in _NOQA.finditer(comment):
        codes = _spans(match, _NOQA_CODE, col)
        directive = _directive("noqa", row, col, match, codes or None)
        if match.group("codes") is None and match.group().endswith(":"):
            # As in ruff, a colon promises codes: with none, the comment suppresses nothing.
            found.directives.append(replace(directive, malformed=Malformed.NO_CODES))
            continue
        valid = _upper_case_prefix(codes)
        if codes and not valid:
            # As in ruff, `noqa: sl103` is not a list of codes: it suppresses nothing
            # (and the command warns on stderr, as ruff does: `invalid_noqa`).
            found.directives.append(replace(directive, malformed=Malformed.LOWER_CASE))
            continue
        if len(valid) < len(codes):
            # As in ruff, the list ends before the first code that is not one
            # (`noqa: SL103, sl201`: SL103; the rest reads as a reason).
            codes = valid
            directive = replace(directive, codes=codes, codes_end=codes[-1].end)
        # A bare noqa suppresses everything, as in flake8 and ruff.
        _merge_line(found, row, frozenset(c.selector for c in codes) if codes else None)
        bare = _CODES_WITHOUT_COLON.match(comment, match.end()) if match.group("codes") is None else None
        if bare is not None and not bare.group("codes").upper().startswith("SL"):
            bare = None  # `# noqa E501`: another tool's flake8-style comment, not ours to judge
        if bare is not None:  # the codes' span, for the report that asks for a colon
            start, end = col + bare.start("codes"), col + bare.end("codes")
            directive = replace(
                directive, malformed=Malformed.MISSING_COLON, codes_start=start, codes_end=end
            )
        found.directives.append(directive)
    for match in _DIRECTIVE.finditer(comment):
        codes = _spans(match, _DIRECTIVE_CODE, col)
        selectors = frozenset(c.selector for c in codes) if codes else None
        kind = match.group("kind").lower()
        directive = _directive(kind, row, col, match, codes or None)
        if kind == "ignore-file":
            if not own_line:  # after code: no effect, as ruff's file-level noqa (SL900 says so)
                found.directives.append(replace(directive, malformed=Malformed.NOT_OWN_LINE))
                continue
            found.file = None if selectors is None or found.file is None else found.file | selectors
        else:
            _merge_line(found, row, selectors)
        found.directives.append(directive)


def _upper_case_prefix(codes: tuple[Code, ...]) -> tuple[Code, ...]:
    for n, code in enumerate(codes):
        if code.text != code.selector:
            return codes[:n]
    return codes


# A `noqa:` whose list starts with a code not in upper case (`noqa: sl103`), on raw
# text: a superset test that spares tokenizing the files without one.
_MAYBE_INVALID = re.compile(r"(?i:noqa):\s*[A-Z]*[a-z]")
_OWN_CODE = re.compile(r"SL\d*")


def invalid_noqa(text: str) -> list[tuple[int, str]]:
    """(row, the codes as written) of each `# noqa:` in `text` whose list is no list
    of codes because its first code, one of streamlint's, is not in upper case
    (`# noqa: sl103`): as in ruff, such a comment suppresses nothing, and the command
    warns on stderr. Another tool's codes (`# noqa: e501`) are that tool's to judge."""
    if not _MAYBE_INVALID.search(text):
        return []
    lines = split_lines(text)
    return [
        (d.row, lines[d.row - 1][d.codes_start : d.codes_end])
        for d in parse(text).directives
        if d.malformed is Malformed.LOWER_CASE and any(_OWN_CODE.fullmatch(c.selector) for c in d.codes or ())
    ]


def _spans(match: re.Match, pattern: re.Pattern, col: int) -> tuple[Code, ...]:
    raw = match.group("codes")
    if not raw:
        return ()
    base = col + match.start("codes")
    return tuple(
        Code(m.group(), normalize(m.group()), base + m.start(), base + m.end())
        for m in pattern.finditer(raw)
    )


def _directive(
    kind: str, row: int, col: int, match: re.Match, codes: tuple[Code, ...] | None
) -> Directive:
    if match.group("codes") is not None:
        codes_start, codes_end = col + match.start("codes"), col + match.end("codes")
    else:
        codes_start = codes_end = col + match.end()
    return Directive(
        kind, row, col + match.start(), col + match.end(), codes, codes_start, codes_end
    )


def _merge_line(found: Suppressions, row: int, codes: frozenset[str] | None) -> None:
    if row in found.lines:
        old = found.lines[row]
        codes = None if old is None or codes is None else old | codes
    found.lines[row] = codes


def _covers(selectors: frozenset[str] | None, code: str) -> bool:
    if selectors is None:
        return True
    return any(matches(sel, code) for sel in selectors)
