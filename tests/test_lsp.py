"""The language server, driven by pygls' real LSP client over stdio: `python -m
streamlint server` in a subprocess, real rules, real JSON-RPC."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.workspace.position_codec import PositionCodec

from streamlint.diagnostics import Diagnostic
from streamlint.fixes.model import Applicability, Edit, Fix
from streamlint.lsp import convert

pytestmark = pytest.mark.slow  # each test starts the language server in a subprocess

# Seconds to wait for one message (the first lint imports the model). Generous: on a
# loaded machine a lint takes many times its idle time, and the tests are about what
# the server says, not how fast.
TIMEOUT = 300

# SL201 on line 3; the emoji before the copy is one code point but two UTF-16 units.
SOURCE = (
    "import torch\n"
    "host = torch.empty(1024, pin_memory=True)\n"
    'tag = "\U0001f680"; gpu = host.to("cuda")\n'
)
FINDING_COLUMN = len('tag = "\U0001f680"; gpu = ')  # code points
UTF16_COLUMN = FINDING_COLUMN + 1


class Session:
    """A started client with the diagnostics the server published, per version."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()
        self.messages: list[str] = []

    async def diagnostics(self, uri: str, version: int, wait: float = TIMEOUT) -> list[types.Diagnostic]:
        while True:
            params = await asyncio.wait_for(self.published.get(), wait)
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)


async def start(cwd: Path, *, notebooks: bool = False) -> Session:
    client = LanguageClient("streamlint-tests", "1")
    session = Session(client)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        session.published.put_nowait(params)

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def on_message(params: types.ShowMessageParams) -> None:
        session.messages.append(params.message)

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    await client.start_io(sys.executable, "-m", "streamlint", "server", cwd=str(cwd), env=env)
    capabilities = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True)
        ),
        notebook_document=types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities()
        ) if notebooks else None,
    )
    result = await asyncio.wait_for(
        client.initialize_async(types.InitializeParams(
            capabilities=capabilities, root_uri=cwd.as_uri(), process_id=os.getpid()
        )), TIMEOUT,
    )  # fmt: skip
    assert result.server_info.name == "streamlint"
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf16
    client.initialized(types.InitializedParams())
    return session


async def stop(session: Session) -> None:
    await asyncio.wait_for(session.client.shutdown_async(None), TIMEOUT)
    session.client.exit(None)
    await asyncio.wait_for(session.client.stop(), TIMEOUT)


def open_doc(session: Session, uri: str, text: str) -> None:
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
    session.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))


def change(session: Session, uri: str, version: int, text: str) -> None:
    session.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
    ))  # fmt: skip


async def actions_at(session: Session, uri: str, rng: types.Range, only: list[str] | None = None) -> list[types.CodeAction]:
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
        context=types.CodeActionContext(diagnostics=[], only=only),
    )  # fmt: skip
    return list(await asyncio.wait_for(session.client.text_document_code_action_async(params), TIMEOUT) or [])


def apply(text: str, edit: types.WorkspaceEdit, codec: PositionCodec) -> str:
    """Apply a WorkspaceEdit as an editor would (positions in UTF-16 units)."""
    [change_] = edit.document_changes
    lines = convert.lines_of(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(pos: types.Position) -> int:
        server_pos = codec.position_from_client_units(lines, pos)
        return starts[server_pos.line] + server_pos.character

    for e in sorted(change_.edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[: offset(e.range.start)] + e.new_text + text[offset(e.range.end) :]
    return text


def test_a_real_client_session(tmp_path):
    asyncio.run(_session(tmp_path))


async def _session(tmp_path: Path) -> None:
    path = tmp_path / "upload.py"
    path.write_text(SOURCE, encoding="utf-8")
    uri = path.as_uri()
    session = await start(tmp_path)
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    try:
        open_doc(session, uri, SOURCE)
        [diag] = await session.diagnostics(uri, 1)
        assert diag.code == "SL201" and diag.source == "streamlint"
        assert diag.message.startswith("`host.to` copies to the GPU without `non_blocking=True`")
        assert diag.code_description.href.endswith("/SL201.md")
        assert diag.severity == types.DiagnosticSeverity.Warning
        # 0-based line, UTF-16 units: the emoji counts twice.
        assert (diag.range.start.line, diag.range.start.character) == (2, UTF16_COLUMN)
        assert (diag.range.end.line, diag.range.end.character) == (2, UTF16_COLUMN + len('host.to("cuda")'))

        actions = await actions_at(session, uri, diag.range)
        titles = [a.title for a in actions]
        assert titles == ["Pass `non_blocking=True` (SL201) (unsafe)", "Disable SL201 for this line"]
        fix, noqa = actions
        assert fix.kind == types.CodeActionKind.QuickFix and fix.diagnostics[0].code == "SL201"
        assert fix.edit.document_changes[0].text_document.version == 1
        fixed = apply(SOURCE, fix.edit, codec)
        assert fixed.endswith('tag = "\U0001f680"; gpu = host.to("cuda", non_blocking=True)\n')
        silenced = apply(SOURCE, noqa.edit, codec)
        assert silenced.endswith('host.to("cuda")  # noqa: SL201\n')

        # Nothing is offered away from the finding.
        elsewhere = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=3))
        assert await actions_at(session, uri, elsewhere) == []

        change(session, uri, 2, fixed)  # the fix applied: the finding is gone
        assert await session.diagnostics(uri, 2) == []
        change(session, uri, 3, SOURCE)  # and back
        assert [d.code for d in await session.diagnostics(uri, 3)] == ["SL201"]
        change(session, uri, 4, silenced)  # the noqa comment suppresses it
        assert await session.diagnostics(uri, 4) == []

        # Saving publishes again; a syntax error is one SL000 error, with no actions.
        change(session, uri, 5, SOURCE + "def broken(:\n")
        [error] = await session.diagnostics(uri, 5)
        assert error.code == "SL000" and error.severity == types.DiagnosticSeverity.Error
        assert await actions_at(session, uri, error.range) == []
        session.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)
        ))  # fmt: skip
        assert [d.code for d in await session.diagnostics(uri, 5)] == ["SL000"]
        assert session.messages == []
    finally:
        await stop(session)
    assert session.client._server.returncode == 0


def test_configuration_applies_in_the_editor(tmp_path):
    asyncio.run(_configured(tmp_path))


async def _configured(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.streamlint]\nignore = ["SL201"]\nextend-exclude = ["gen"]\n')
    (tmp_path / "gen").mkdir()
    session = await start(tmp_path)
    try:
        open_doc(session, (tmp_path / "a.py").as_uri(), SOURCE)
        assert await session.diagnostics((tmp_path / "a.py").as_uri(), 1) == []
        open_doc(session, (tmp_path / "gen" / "b.py").as_uri(), SOURCE.replace("1024", "8"))
        assert await session.diagnostics((tmp_path / "gen" / "b.py").as_uri(), 1) == []
        # A broken configuration is shown once, not raised.
        (tmp_path / "pyproject.toml").write_text("[tool.streamlint]\nselect = 3\n")
        pyproject = (tmp_path / "pyproject.toml").as_uri()
        session.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=pyproject)
        ))  # fmt: skip
        assert await session.diagnostics((tmp_path / "a.py").as_uri(), 1) == []
        assert len(session.messages) == 1 and "configuration error" in session.messages[0]
    finally:
        await stop(session)


def test_the_server_answers_while_a_large_file_is_linted(tmp_path):
    asyncio.run(_responsive(tmp_path))


async def _responsive(tmp_path: Path) -> None:
    # About 10,000 lines of stream code: linting it takes a second or more.
    big = "import torch\n" + "".join(
        f"def f{i}(x):\n    s = torch.cuda.Stream()\n    with torch.cuda.stream(s):\n"
        f"        y = x.to('cuda')\n    torch.cuda.current_stream().wait_stream(s)\n    return y\n\n"
        for i in range(1500)
    )
    small, large = (tmp_path / "small.py").as_uri(), (tmp_path / "large.py").as_uri()
    # The test is about answering while linting, not about speed: the default per-file
    # bound (30 s) is the product's, and a loaded machine can miss it.
    (tmp_path / "pyproject.toml").write_text("[tool.streamlint]\ntimeout = 3600\n")
    session = await start(tmp_path)
    try:
        open_doc(session, small, SOURCE)
        [diag] = await session.diagnostics(small, 1)
        open_doc(session, large, big)
        # Answered from what is known about the small file while the large one is linted.
        actions = await actions_at(session, small, diag.range)
        assert len(actions) == 2 and session.published.empty()
        assert await session.diagnostics(large, 1, wait=3600) == []
    finally:
        await stop(session)


@pytest.mark.parametrize(
    ("encoding", "character"),
    [
        (types.PositionEncodingKind.Utf16, UTF16_COLUMN),
        (types.PositionEncodingKind.Utf32, FINDING_COLUMN),
        (types.PositionEncodingKind.Utf8, FINDING_COLUMN + 3),
    ],
)
def test_positions_in_each_encoding(encoding, character):
    diag = Diagnostic("a.py", 3, FINDING_COLUMN + 1, "SL201", "m", 3, FINDING_COLUMN + 16, 3)
    lsp = convert.to_lsp(diag, convert.lines_of(SOURCE), PositionCodec(encoding))
    assert (lsp.range.start.line, lsp.range.start.character) == (2, character)


def test_noqa_action_extends_an_existing_list_and_avoids_strings():
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    wrap = convert.EditWrapper("file:///a.py", 1, document_changes=True)
    text = 'x = f("a")  # noqa: SL101\ny = g("""\n""")\n'
    lines = convert.lines_of(text)
    first = Diagnostic("a.py", 1, 5, "SL201", "m", 1, 11, 1)
    edit = convert.noqa_action(first, text, None, lines, codec, wrap).edit
    assert apply(text, edit, codec).splitlines()[0] == 'x = f("a")  # noqa: SL101, SL201'
    second = Diagnostic("a.py", 2, 5, "SL201", "m", 3, 4, 2)  # line 2 ends inside a string
    edit = convert.noqa_action(second, text, None, lines, codec, wrap).edit
    assert apply(text, edit, codec).splitlines()[1:] == ['y = g("""', '""")  # noqa: SL201']


def test_fix_actions_say_when_they_are_safe():
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    wrap = convert.EditWrapper("file:///a.py", 7, document_changes=False)
    fix = Fix("Do it", Applicability.SAFE, (Edit(1, 1, 1, 1, "y = 1\n"),))
    diag = Diagnostic("a.py", 1, 1, "SL101", "m", 1, 2, 1, fix=fix)
    action = convert.fix_action(diag, fix, None, ["x = 1\n"], codec, wrap)
    assert action.title == "Do it (SL101)" and action.is_preferred
    assert action.edit.changes["file:///a.py"][0].new_text == "y = 1\n"


def test_server_without_pygls_says_how_to_install_it():
    code = "import sys; sys.modules['pygls'] = None\nfrom streamlint.cli import main\nsys.exit(main(['server']))"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert "pip install 'streamlint[lsp]'" in done.stderr
