"""The language server's fix-all source action, preferred quick fixes and notebook
documents, driven by pygls' real client (helpers from tests/test_lsp.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import SL501_SNIPPET
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec
from test_lsp import SOURCE, actions_at, apply, open_doc, start, stop

pytestmark = pytest.mark.slow  # each test starts the language server in a subprocess

FIX_ALL = "source.fixAll.streamlint"
STALE = "y = 1  # noqa: SL103\n"  # SL900: a suppression with nothing to suppress
TOP = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))


def test_fix_all_applies_the_safe_fixes_only(tmp_path):
    asyncio.run(_fix_all(tmp_path))


async def _fix_all(tmp_path: Path) -> None:
    text = SOURCE + STALE
    path = tmp_path / "upload.py"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    session = await start(tmp_path)
    try:
        open_doc(session, uri, text)
        found = {d.code: d for d in await session.diagnostics(uri, 1)}
        assert set(found) == {"SL201", "SL900"}

        # Quick fixes: a safe fix is preferred, an unsafe one and a noqa are not.
        unsafe, noqa = await actions_at(session, uri, found["SL201"].range)
        assert unsafe.title.endswith("(unsafe)") and not unsafe.is_preferred
        assert noqa.title == "Disable SL201 for this line" and not noqa.is_preferred
        safe = (await actions_at(session, uri, found["SL900"].range))[0]
        assert safe.kind == types.CodeActionKind.QuickFix and safe.is_preferred

        # No fix-all among the quick fixes, nor when only quick fixes are asked for.
        assert all(a.kind != FIX_ALL for a in await actions_at(session, uri, found["SL201"].range))
        assert await actions_at(session, uri, TOP, only=["quickfix"]) == []

        # Asked for by kind (or a parent kind), it applies the safe fix, not the unsafe one.
        for only in (["source.fixAll"], ["source"], [FIX_ALL]):
            [action] = await actions_at(session, uri, TOP, only=only)
            assert action.kind == FIX_ALL and action.title == "streamlint: Fix all auto-fixable problems"
        fixed = apply(text, action.edit, codec)
        assert fixed == SOURCE + "y = 1\n"
        assert action.edit.document_changes[0].text_document.version == 1

        # With only unsafe fixes left there is nothing to fix all.
        open_doc(session, (tmp_path / "clean.py").as_uri(), SOURCE)
        assert [d.code for d in await session.diagnostics((tmp_path / "clean.py").as_uri(), 1)] == ["SL201"]
        assert await actions_at(session, (tmp_path / "clean.py").as_uri(), TOP, only=["source.fixAll"]) == []
    finally:
        await stop(session)


# ---- notebook documents ----

IMPORTS, LOOP = SL501_SNIPPET.split("\n", 1)  # "import torch" / the loop that makes streams


def _cell(nb: Path, n: int) -> str:
    return f"vscode-notebook-cell:{nb.as_posix()}#C{n}"


def _open_notebook(session, nb: Path, sources: list[tuple[types.NotebookCellKind, str]]) -> list[str]:
    uris = [_cell(nb, i) for i in range(len(sources))]
    cells = [types.NotebookCell(kind=kind, document=uri) for uri, (kind, _) in zip(uris, sources)]
    items = [
        types.TextDocumentItem(uri=uri, language_id="python" if kind == types.NotebookCellKind.Code else "markdown",
                               version=1, text=text)
        for uri, (kind, text) in zip(uris, sources)
    ]  # fmt: skip
    session.client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(uri=nb.as_uri(), notebook_type="jupyter-notebook", version=1,
                                                 cells=cells),
        cell_text_documents=items,
    ))  # fmt: skip
    return uris


def test_notebook_cells_get_their_findings(tmp_path):
    asyncio.run(_notebook(tmp_path))


async def _notebook(tmp_path: Path) -> None:
    nb = tmp_path / "train.ipynb"
    nb.write_text("{}", encoding="utf-8")  # the path's configuration; the text comes from the editor
    session = await start(tmp_path, notebooks=True)
    code, markdown = types.NotebookCellKind.Code, types.NotebookCellKind.Markup
    try:
        first, notes, loop, stale = _open_notebook(
            session, nb, [(code, IMPORTS), (markdown, "# Streams"), (code, LOOP), (code, STALE)]
        )
        # Published per cell, in order; a clean cell gets an empty list.
        assert await session.diagnostics(first, 1) == []
        # The loop's cell is linted with the import of the first cell (one module).
        [diag] = await session.diagnostics(loop, 1)
        assert diag.code == "SL501"
        # Rows are the cell's own: `s = torch.cuda.Stream()` is the loop cell's second line.
        assert (diag.range.start.line, diag.range.start.character) == (1, 8)
        fix, noqa = await actions_at(session, loop, diag.range)
        assert fix.title.endswith("(SL501) (unsafe)") and noqa.title == "Disable SL501 for this line"
        # The fix edits the cell, in the cell's own coordinates.
        fixed = apply(LOOP, fix.edit, PositionCodec(types.PositionEncodingKind.Utf16))
        assert fixed.index("torch.cuda.Stream()") < fixed.index("for i in range(30):")
        assert fix.edit.document_changes[0].text_document.uri == loop
        # Unsafe only: the fix-all action has nothing to do in this cell; in the next
        # cell it removes the stale suppression.
        assert await actions_at(session, loop, TOP, only=["source.fixAll"]) == []
        [sl900] = await session.diagnostics(stale, 1)
        assert sl900.code == "SL900"
        [fix_all] = await actions_at(session, stale, TOP, only=["source.fixAll"])
        assert apply(STALE, fix_all.edit, PositionCodec(types.PositionEncodingKind.Utf16)) == "y = 1\n"

        # Editing the cell (the stream made once, before the loop) clears the finding.
        hoisted = "s = torch.cuda.Stream()\n" + LOOP.replace("    s = torch.cuda.Stream()\n", "")
        session.client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=nb.as_uri()),
            change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
                types.NotebookDocumentCellContentChanges(
                    document=types.VersionedTextDocumentIdentifier(uri=loop, version=2),
                    changes=[types.TextDocumentContentChangeWholeDocument(text=hoisted)],
                )
            ])),
        ))  # fmt: skip
        assert await session.diagnostics(loop, 2) == []

        # Closing the notebook clears what was published for its cells.
        session.client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=nb.as_uri()),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in (first, notes, loop, stale)],
        ))  # fmt: skip
        assert await session.diagnostics(loop, None) == []
        assert session.messages == []
    finally:
        await stop(session)
