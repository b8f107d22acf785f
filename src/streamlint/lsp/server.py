"""`streamlint server`: a Language Server over stdio (pygls).

Diagnostics are published on open, change and save; each finding's fix is offered as a
quick fix (unsafe ones too, labelled), with "Disable SLxxx for this line" beside it.
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
from streamlint.lsp import convert
from streamlint.lsp.linting import is_python, lint_document
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
        super().__init__("streamlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="streamlint-lint")
        self.linted: dict[str, Linted] = {}
        self.wanted: dict[str, int | None] = {}  # uri -> the version to lint next
        self.languages: dict[str, str] = {}  # uri -> languageId at open
        self.config_errors: set[str] = set()  # already shown to the user

    async def refresh(self, uri: str) -> Linted | None:
        """Lint the document's current text and publish; None when it was skipped."""
        if uri not in self.languages or not is_python(uri, self.languages[uri]):
            return None
        document = self.workspace.get_text_document(uri)
        version, text = document.version, document.source
        self.wanted[uri] = version

        def work() -> list[Diagnostic] | None:
            if self.wanted.get(uri) != version:
                return None  # a newer version is queued behind this one
            return lint_document(uri, text, SettingsResolver())

        try:
            found = await asyncio.get_running_loop().run_in_executor(self.worker, work)
        except ConfigError as err:
            self._show_config_error(str(err))
            found = []
        except Exception as err:  # a bug: say so, keep serving
            log.exception("linting %s failed", uri)
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error, message=f"streamlint: internal error: {type(err).__name__}: {err}"
            ))  # fmt: skip
            found = []
        if found is None or self.wanted.get(uri) != version:
            return None
        lines = convert.lines_of(text)
        codec = document.position_codec
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


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
)
async def code_action(ls: StreamlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    if not _wants_quick_fixes(params.context.only):
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
    for diag, lsp in linted.findings:
        if diag.code == SOURCE_ERROR or not convert.overlaps(lsp.range, params.range):
            continue
        if diag.fix is not None:
            actions.append(convert.fix_action(diag, diag.fix, lsp, lines, codec, edit_for))
        actions.append(convert.noqa_action(diag, linted.text, lsp, lines, codec, edit_for))
    return actions


def _wants_quick_fixes(only: list | None) -> bool:
    """`only` filters by kind; a kind also asks for its sub-kinds ("" asks for all)."""
    if not only:
        return True
    quickfix = types.CodeActionKind.QuickFix.value
    return any(quickfix == k or quickfix.startswith(f"{k}.") or not k for k in (str(getattr(k, "value", k)) for k in only))


@server.feature(types.SHUTDOWN)
def on_shutdown(ls: StreamlintServer, *args) -> None:
    ls.worker.shutdown(wait=False, cancel_futures=True)


def serve() -> None:
    """Serve over stdin/stdout until the client says exit."""
    server.start_io()
