"""streamlint's findings and fixes as LSP objects.

Our rows are 1-based and columns 1-based code points; LSP lines are 0-based and
characters count code units of the encoding agreed at initialize (UTF-16 unless the
client offers another): a character outside the Basic Multilingual Plane is one column
for us and two UTF-16 units. pygls' PositionCodec converts, given the document's lines
as they were when linted; lines break at \\n, \\r\\n and \\r only, as in the LSP.
"""

from __future__ import annotations

import io
import tokenize
from typing import Sequence

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from streamlint.diagnostics import Diagnostic
from streamlint.fixes.model import Applicability, Fix
from streamlint.output.advice import with_help
from streamlint.selection import SOURCE_ERROR
from streamlint.source import split_lines
from streamlint.suppression.comments import NOQA

SOURCE = "streamlint"


def lines_of(text: str) -> list[str]:
    return split_lines(text, keepends=True)


def position(lines: Sequence[str], codec: PositionCodec, row: int, column: int) -> types.Position:
    """The LSP position of our (1-based row, 1-based code-point column)."""
    return codec.position_to_client_units(
        lines, types.Position(line=max(row - 1, 0), character=max(column - 1, 0))
    )


def span(
    lines: Sequence[str], codec: PositionCodec, row: int, column: int, end_row: int, end_column: int
) -> types.Range:
    return types.Range(
        start=position(lines, codec, row, column), end=position(lines, codec, end_row, end_column)
    )


def to_lsp(diag: Diagnostic, lines: Sequence[str], codec: PositionCodec) -> types.Diagnostic:
    return types.Diagnostic(
        range=span(lines, codec, diag.row, diag.column, diag.end_row, diag.end_column),
        # The help on a line of its own: editors show the message as the diagnostic's text.
        message=with_help(diag.message, diag),
        severity=types.DiagnosticSeverity.Error if diag.code == SOURCE_ERROR else types.DiagnosticSeverity.Warning,
        code=diag.code,
        code_description=types.CodeDescription(href=diag.url) if diag.url else None,
        source=SOURCE,
    )


def fix_action(
    diag: Diagnostic, fix: Fix, lsp_diag: types.Diagnostic, lines: Sequence[str], codec: PositionCodec,
    edit_for: "EditWrapper",
) -> types.CodeAction:  # fmt: skip
    safe = fix.applicability is Applicability.SAFE
    edits = [
        types.TextEdit(range=span(lines, codec, e.row, e.column, e.end_row, e.end_column), new_text=e.content)
        for e in fix.edits
    ]
    return types.CodeAction(
        title=f"{fix.message} ({diag.code})" + ("" if safe else " (unsafe)"),
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp_diag],
        edit=edit_for(edits),
        is_preferred=safe,
    )


def noqa_action(
    diag: Diagnostic, text: str, lsp_diag: types.Diagnostic, lines: Sequence[str], codec: PositionCodec,
    edit_for: "EditWrapper",
) -> types.CodeAction:  # fmt: skip
    """A noqa comment for the finding's code on its line (the code added to the line's
    noqa list, if it has one), or on the statement's last line when the finding's line
    ends inside a string."""
    row = _comment_row(text, diag.noqa_row)
    line = lines[row - 1] if row - 1 < len(lines) else ""
    comment, comment_at = _comment(text, row)
    existing = next((m for m in NOQA.finditer(comment) if m.group("codes")), None)
    if existing is not None:  # the line has a noqa list: add the code to it
        column = comment_at + existing.end("codes") + 1
        new_text = f", {diag.code}"
    else:
        column = len(line.rstrip("\r\n")) + 1
        new_text = f"  # noqa: {diag.code}"
    at = position(lines, codec, row, column)
    return types.CodeAction(
        title=f"Disable {diag.code} for this line",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp_diag],
        edit=edit_for([types.TextEdit(range=types.Range(start=at, end=at), new_text=new_text)]),
    )


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return []


def _comment_row(text: str, row: int) -> int:
    """`row`, or the end of its statement when a string spans the end of `row`."""
    tokens = _tokens(text)
    if not any(t.type == tokenize.STRING and t.start[0] <= row < t.end[0] for t in tokens):
        return row
    after = (t for t in tokens if t.type == tokenize.NEWLINE and t.start[0] >= row)
    return next((t.start[0] for t in after), row)


def _comment(text: str, row: int) -> tuple[str, int]:
    """The comment that ends line `row` and its 0-based column ("" when none)."""
    for tok in _tokens(text):
        if tok.type == tokenize.COMMENT and tok.start[0] == row:
            return tok.string, tok.start[1]
    return "", 0


class EditWrapper:
    """Text edits for one document version as a WorkspaceEdit: versioned
    `documentChanges` when the client supports them, else plain `changes`."""

    def __init__(self, uri: str, version: int | None, document_changes: bool) -> None:
        self.uri, self.version, self.document_changes = uri, version, document_changes

    def __call__(self, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        if self.document_changes:
            doc = types.OptionalVersionedTextDocumentIdentifier(uri=self.uri, version=self.version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=doc, edits=edits)])
        return types.WorkspaceEdit(changes={self.uri: edits})


def overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return p.line, p.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)
