"""`streamlint server`: a Language Server over stdio (pygls).

Diagnostics are published on open, change and save, for Python files and for notebooks
sent as notebook documents (per cell); each finding's fix is offered as a quick fix
(unsafe ones too, labelled; safe ones preferred), with "Disable SLxxx for this line"
beside it, and `source.fixAll.streamlint` applies every safe fix at once.
Linting runs on one worker thread, off the event loop, so the server keeps answering
while a large file is analysed; the analysis keeps process-wide state (recursion limit,
GC, the cache of other modules), so never two at once. A lint whose document has
changed by the time it would run is skipped, and its result is published only if the
document is still at the version that was linted.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import PurePath

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from streamlint import __version__
from streamlint.config import ConfigError, SettingsResolver
from streamlint.diagnostics import Diagnostic
from streamlint.lsp import convert, fix_all, notebooks
from streamlint.lsp.linting import fix_document, is_python, lint_document
from streamlint.selection import SOURCE_ERROR

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Linted:
    """A document's findings at one version, with the text they were computed on."""

    version: int | None
    text: str
    findings: tuple[tuple[Diagnostic, types.Diagnostic], ...]


class StreamlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "streamlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=notebooks.SYNC_OPTIONS,
        )  # fmt: skip
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="streamlint-lint")
        self.linted: dict[str, Linted] = {}
        self.wanted: dict[str, int | None] = {}  # uri -> the version to lint next
        self.languages: dict[str, str] = {}  # uri -> languageId at open
        self.config_errors: set[str] = set()  # already shown to the user

    async def refresh(self, uri: str) -> Linted | None:
        """Lint the document's current text and publish; None when it was skipped. A
        notebook cell is linted with its whole notebook."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:
            await self.refresh_notebook(notebook.uri)
            return self.linted.get(uri)
        if uri not in self.languages or not is_python(uri, self.languages[uri]):
            return None
        document = self.workspace.get_text_document(uri)
        version, text = document.version, document.source
        self.wanted[uri] = version

        def work() -> list[Diagnostic] | None:
            if self.wanted.get(uri) != version:
                return None  # a newer version is queued behind this one
            return lint_document(uri, text, SettingsResolver())

        found = await self.run_lint(uri, work)
        if found is None or self.wanted.get(uri) != version:
            return None
        return self.publish(uri, version, text, found, document.position_codec)

    async def refresh_notebook(self, uri: str) -> None:
        """Lint a notebook document (all its cells as one file) and publish per cell."""
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            return
        version = notebook.version
        text = notebooks.to_ipynb(notebook, self.workspace)
        cells = {cell: self.workspace.get_text_document(cell) for cell in notebooks.cell_uris(notebook)}
        seen = {cell: (doc.version, doc.source, doc.position_codec) for cell, doc in cells.items()}
        self.wanted[uri] = version

        def work() -> list[Diagnostic] | None:
            if self.wanted.get(uri) != version:
                return None
            return lint_document(uri, text, SettingsResolver(), notebook=True)

        found = await self.run_lint(uri, work)
        if found is None or self.wanted.get(uri) != version:
            return None
        for cell, diagnostics in notebooks.by_cell(notebook, found).items():
            cell_version, source, codec = seen[cell]
            self.publish(cell, cell_version, source, diagnostics, codec)

    async def run_lint(self, uri: str, work) -> list[Diagnostic] | None:
        """`work` on the lint thread; a configuration error or a bug is shown, not raised."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self.worker, work)
        except ConfigError as err:
            self._show_config_error(str(err))
        except Exception as err:  # a bug: say so, keep serving
            log.exception("linting %s failed", uri)
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error, message=f"streamlint: internal error: {type(err).__name__}: {err}"
            ))  # fmt: skip
        return []

    def publish(self, uri: str, version: int | None, text: str, found, codec) -> Linted:
        lines = convert.lines_of(text)
        linted = Linted(version, text, tuple((d, convert.to_lsp(d, lines, codec)) for d in found))
        self.linted[uri] = linted
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=[lsp for _, lsp in linted.findings]
        ))  # fmt: skip
        return linted

    def forget(self, uri: str) -> None:
        for table in (self.linted, self.wanted, self.languages):
            table.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def _show_config_error(self, message: str) -> None:
        if message not in self.config_errors:  # once, not on every keystroke
            self.config_errors.add(message)
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error, message=f"streamlint: configuration error: {message}"
            ))  # fmt: skip

    def document_changes(self) -> bool:
        capabilities = self.client_capabilities.workspace
        edit = capabilities.workspace_edit if capabilities else None
        return bool(edit and edit.document_changes)


server = StreamlintServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: StreamlintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.languages[params.text_document.uri] = params.text_document.language_id
    await ls.refresh(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: StreamlintServer, params: types.DidChangeTextDocumentParams) -> None:
    await ls.refresh(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: StreamlintServer, params: types.DidSaveTextDocumentParams) -> None:
    uri = params.text_document.uri
    if PurePath(uri).name == "pyproject.toml":  # the configuration may have changed
        ls.config_errors.clear()
        await asyncio.gather(*(ls.refresh(open_uri) for open_uri in list(ls.languages)))
    else:
        await ls.refresh(uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: StreamlintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget(params.text_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
async def notebook_did_open(ls: StreamlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
    await ls.refresh_notebook(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
async def notebook_did_change(ls: StreamlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
    structure = params.change.cells.structure if params.change.cells else None
    for closed in (structure.did_close or []) if structure else []:
        ls.forget(closed.uri)  # a deleted cell's findings go with it
    await ls.refresh_notebook(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
async def notebook_did_save(ls: StreamlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
    await ls.refresh_notebook(params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: StreamlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.wanted.pop(params.notebook_document.uri, None)
    for cell in params.cell_text_documents:
        ls.forget(cell.uri)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, fix_all.KIND]),
)
async def code_action(ls: StreamlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    only = params.context.only
    quick, source = _wants(only, types.CodeActionKind.QuickFix.value), _wants(only, fix_all.KIND, listed=True)
    if not (quick or source):
        return []
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    linted = ls.linted.get(uri)
    if linted is None or linted.version != document.version:
        linted = await ls.refresh(uri)  # edits must apply to the text as it is now
    if linted is None:
        return []
    lines = convert.lines_of(linted.text)
    codec = document.position_codec
    edit_for = convert.EditWrapper(uri, linted.version, ls.document_changes())
    actions: list[types.CodeAction] = []
    for diag, lsp in linted.findings if quick else ():
        if diag.code == SOURCE_ERROR or not convert.overlaps(lsp.range, params.range):
            continue
        if diag.fix is not None:
            actions.append(convert.fix_action(diag, diag.fix, lsp, lines, codec, edit_for))
        actions.append(convert.noqa_action(diag, linted.text, lsp, lines, codec, edit_for))
    if source:
        fixed = await _fixed_text(ls, uri, linted)
        action = fix_all.action(linted.text, fixed, codec, edit_for)
        if action is not None and ls.linted.get(uri) is linted:  # still the same text
            actions.append(action)
    return actions


async def _fixed_text(ls: StreamlintServer, uri: str, linted: Linted) -> str | None:
    if ls.workspace.get_notebook_document(cell_uri=uri) is not None:
        # A cell's fixes were computed with the whole notebook: apply them as they are.
        return fix_all.apply_safe(linted.text, [d for d, _ in linted.findings])
    if not any(d.fix is not None for d, _ in linted.findings):
        return None  # nothing to fix: no need to lint again

    def work() -> str | None:
        return fix_document(uri, linted.text, SettingsResolver())

    try:
        return await asyncio.get_running_loop().run_in_executor(ls.worker, work)
    except Exception:  # a configuration error was shown when linting; offer nothing
        log.exception("fixing %s failed", uri)
        return None


def _wants(only: list | None, kind: str, *, listed: bool = False) -> bool:
    """Whether a request filtered by `only` asks for actions of `kind`: a kind also
    asks for its sub-kinds ("" for all). With no filter, quick fixes are wanted; the
    fix-all source action (`listed`) only when asked for by kind, as editors do for
    their "Source Action" menu and fix-on-save."""
    if not only:
        return not listed
    names = (str(getattr(k, "value", k)) for k in only)
    return any(kind == k or kind.startswith(f"{k}.") or not k for k in names)


@server.feature(types.SHUTDOWN)
def on_shutdown(ls: StreamlintServer, *args) -> None:
    ls.worker.shutdown(wait=False, cancel_futures=True)


def serve() -> None:
    """Serve over stdin/stdout until the client says exit."""
    server.start_io()
