"""The pygls server: documents in, diagnostics and code actions out.

Analysis runs in a thread, one run at a time; a change waits for the editor to pause
(`debounce`, 0.3 s by default) and an open or a save runs at once. Every run publishes the
diagnostics of every open document: a change in one file can change another's findings
through the summaries of the functions it defines."""
from __future__ import annotations

import asyncio
import logging
import os
import sys
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from .convert import Lines, actions_for, diagnostic, uri_of
from .session import ClientSettings, RunResult, Workspace

log = logging.getLogger("ortlint.server")


def path_of(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return os.path.abspath(unquote(parsed.path))


class OrtlintServer(LanguageServer):
    """The server's state: the workspace, the last findings, the pending analysis."""

    def __init__(self) -> None:
        super().__init__("ortlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.ws: Workspace | None = None
        self.last = RunResult({}, [])
        self.published: set[str] = set()
        self._pending: asyncio.TimerHandle | None = None
        self._lock: asyncio.Lock | None = None
        self._dirty = False

    def workspace_for(self) -> Workspace:
        if self.ws is None:
            self.ws = Workspace(os.getcwd())
        return self.ws

    # -- scheduling --------------------------------------------------------------------------

    def schedule(self, delay: float) -> None:
        """Analyze after `delay` seconds unless something newer comes first."""
        loop = asyncio.get_running_loop()
        if self._pending is not None:
            self._pending.cancel()
        self._pending = loop.call_later(delay, lambda: asyncio.ensure_future(self.analyze()))

    async def analyze(self) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        self._dirty = True
        async with self._lock:
            if not self._dirty:  # a run that started after the request already saw its text
                return
            self._dirty = False
            ws = self.workspace_for()
            if not ws.documents:
                return
            result = await asyncio.to_thread(ws.run)
            self.last = result
            if result.error:
                self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"ortlint: {result.error}"))
            self.publish(ws)

    def publish(self, ws: Workspace) -> None:
        for path in list(ws.documents):
            data = ws.read(path) or b""
            lines = Lines(data)
            diagnostics = [diagnostic(f, lines) for f in self.last.findings.get(path, [])]
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri_of(path),
                                                                                  diagnostics=diagnostics))
            self.published.add(path)


server = OrtlintServer()


@server.feature(types.INITIALIZE)
def initialize(ls: OrtlintServer, params: types.InitializeParams) -> None:
    root = None
    if params.workspace_folders:
        root = path_of(params.workspace_folders[0].uri)
    if root is None and params.root_uri:
        root = path_of(params.root_uri)
    root = root or os.getcwd()
    if os.path.isdir(root):
        os.chdir(root)  # configuration files and relative paths are read from the project's folder
    ls.ws = Workspace(root, ClientSettings.from_json(params.initialization_options))


@server.feature(types.INITIALIZED)
async def initialized(ls: OrtlintServer, _params: types.InitializedParams) -> None:
    caps = ls.client_capabilities.workspace
    if caps is not None and caps.configuration:
        await _pull_configuration(ls)


async def _pull_configuration(ls: OrtlintServer) -> None:
    try:
        items = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="ortlint")]))
    except Exception as exc:  # noqa: BLE001 - a client that cannot answer keeps the defaults
        log.info("workspace/configuration failed: %s", exc)
        return
    if items:
        ls.workspace_for().client = ClientSettings.from_json(items[0])


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: OrtlintServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and settings.get("ortlint") is not None:
        ls.workspace_for().client = ClientSettings.from_json(settings)
    else:
        await _pull_configuration(ls)
    ls.workspace_for()._policy = None
    ls.schedule(0)


def _document_path(ls: OrtlintServer, uri: str) -> str | None:
    path = path_of(uri)
    if path is None or not ls.workspace_for().is_analyzable(path):
        return None
    return path


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: OrtlintServer, params: types.DidOpenTextDocumentParams) -> None:
    path = _document_path(ls, params.text_document.uri)
    if path is not None:
        ls.workspace_for().open(path, params.text_document.text)
        ls.schedule(0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: OrtlintServer, params: types.DidChangeTextDocumentParams) -> None:
    path = _document_path(ls, params.text_document.uri)
    if path is None:
        return
    document = ls.workspace.get_text_document(params.text_document.uri)  # pygls applied the changes
    ls.workspace_for().open(path, document.source)
    ls.schedule(ls.workspace_for().client.debounce)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=True))
async def did_save(ls: OrtlintServer, params: types.DidSaveTextDocumentParams) -> None:
    path = _document_path(ls, params.text_document.uri)
    if path is None:
        return
    if params.text is not None:
        ls.workspace_for().open(path, params.text)
    ls.schedule(0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: OrtlintServer, params: types.DidCloseTextDocumentParams) -> None:
    path = path_of(params.text_document.uri)
    if path is None:
        return
    ls.workspace_for().close(path)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
def code_action(ls: OrtlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    path = path_of(params.text_document.uri)
    if path is None:
        return []
    data = ls.workspace_for().read(path) or b""
    return actions_for(ls.last.findings.get(path, []), params.text_document.uri, data, params.range)


def serve() -> None:
    """Serve over standard input and output until the client says exit.

    The protocol gets private copies of the two descriptors: the worker processes that parse
    and analyze are forked while a thread blocks reading the protocol, and a forked child
    closes `sys.stdin` (multiprocessing does), which would wait forever for the lock that
    thread holds; and nothing a worker or a library prints may reach the client's stream, so
    descriptor 1 goes to standard error."""
    logging.basicConfig(level=logging.WARNING)
    protocol_in = os.fdopen(os.dup(0), "rb")
    protocol_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr
    server.start_io(protocol_in, protocol_out)
