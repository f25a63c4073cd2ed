"""`ortlint server` end to end (issue 33): started over stdio as editors start it (the installed
`ortlint server` command; the other tests `python -m ortlint server --stdio`), a fixture is
opened and its diagnostics arrive (with the trace as related information); the text is changed
to fix it and an empty list arrives; code actions are asked for and one is applied."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.clihelpers import FIXTURES
from tests.lspclient import LspClient, apply_text_edits

pytest.importorskip("pygls")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    shutil.copyfile(FIXTURES / "c/fix_missing_release.c", tmp_path / "src/a.c")
    (tmp_path / "pyproject.toml").write_text("[tool.ortlint]\n")
    return tmp_path


def editor_command() -> list[str]:
    """`ortlint server`, the installed command, as docs/editors.md configures every editor."""
    script = Path(sys.executable).with_name("ortlint.exe" if os.name == "nt" else "ortlint")
    if not script.exists():
        pytest.skip("the ortlint command is not installed next to this Python")
    return [str(script), "server"]


def _start(project: Path, options: dict | None = None, command: list[str] | None = None) -> LspClient:
    client = LspClient(project, env={"XDG_CACHE_HOME": str(project / ".cache")}, command=command)
    result = client.request("initialize", {"processId": None, "rootUri": project.as_uri(), "capabilities": {},
                                           "initializationOptions": options or {}})
    assert result["capabilities"]["codeActionProvider"]
    assert result["serverInfo"]["name"] == "ortlint"
    client.notify("initialized", {})
    return client


def _open(client: LspClient, uri: str, text: str, language: str = "c") -> list[dict]:
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1,
                                                            "text": text}})
    return client.wait_diagnostics(uri)


def test_open_change_code_action_apply(project: Path) -> None:
    path = project / "src/a.c"
    uri = path.as_uri()
    text = path.read_text()
    client = _start(project, command=editor_command())
    try:
        diagnostics = _open(client, uri, text)
        assert sorted((d["code"], d["range"]["start"]["line"] + 1) for d in diagnostics) == \
            [("ORT001", 9), ("ORT001", 28), ("ORT001", 48), ("ORT001", 71)]
        leak = next(d for d in diagnostics if d["range"]["start"]["line"] == 27)
        assert leak["source"] == "ortlint" and leak["severity"] == 1
        assert [r["message"] for r in leak["relatedInformation"]][-1] == "When returning at line 37"
        assert all(r["location"]["uri"] == uri for r in leak["relatedInformation"])

        # code actions at the leak of `ro`: the fix first (preferred), then the suppression
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": leak["range"], "context": {"diagnostics": [leak]}})
        titles = [a["title"] for a in actions]
        assert titles == ["ortlint: Release `ro` with ReleaseRunOptions() before returning",
                          "ortlint: Suppress ORT001 on this line"]
        assert actions[0]["isPreferred"]
        fixed = apply_text_edits(text, actions[0]["edit"]["changes"][uri])
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": fixed}]})
        after = client.wait_diagnostics(uri)
        assert sorted(d["range"]["start"]["line"] + 1 for d in after) == [9, 49, 72]  # a line was inserted above

        # every remaining fix, through code actions as an editor applies them: nothing left
        text = fixed
        for version in range(3, 6):
            d = after[0]
            actions = client.request("textDocument/codeAction", {
                "textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}})
            text = apply_text_edits(text, actions[0]["edit"]["changes"][uri])
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                     "contentChanges": [{"text": text}]})
            after = client.wait_diagnostics(uri)
        assert after == []
        assert path.read_text() != text  # the server never writes the file: the editor does

        # a save of the fixed text: still nothing; closing clears the document's diagnostics
        path.write_text(text)
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}, "text": text})
        assert client.wait_diagnostics(uri) == []
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        assert client.wait_diagnostics(uri) == []
    finally:
        assert client.close() == 0


def test_suppression_action_and_unused_suppression_hint(project: Path) -> None:
    path = project / "src/a.c"
    uri = path.as_uri()
    text = path.read_text()
    client = _start(project, {"ortlint": {"select": ["ORT001", "ORT100"]}})
    try:
        diagnostics = _open(client, uri, text)
        first = min(diagnostics, key=lambda d: d["range"]["start"]["line"])
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": first["range"], "context": {"diagnostics": [first]}})
        suppress = next(a for a in actions if a["title"] == "ortlint: Suppress ORT001 on this line")
        silenced = apply_text_edits(text, suppress["edit"]["changes"][uri])
        assert "&session);  // expect: ORT001  // ortlint: ignore[ORT001]" in silenced
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                 "contentChanges": [{"text": silenced}]})
        assert len(client.wait_diagnostics(uri)) == len(diagnostics) - 1
        stale = silenced.replace("  return 0;\n}", "  return 0;  // ortlint: ignore[ORT002]\n}", 1)
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                                 "contentChanges": [{"text": stale}]})
        hints = [d for d in client.wait_diagnostics(uri) if d["code"] == "ORT100"]
        assert len(hints) == 1 and hints[0]["severity"] == 4 and hints[0]["tags"] == [1]
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": hints[0]["range"], "context": {"diagnostics": hints}})
        assert [a["title"] for a in actions] == ["ortlint: Remove the unused suppression"]
        assert apply_text_edits(stale, actions[0]["edit"]["changes"][uri]) == silenced
    finally:
        assert client.close() == 0


def test_any_registered_language_is_served(project: Path) -> None:
    """Java through the same server: the registry decides what is analyzed."""
    java = project / "src/Leak.java"
    java.write_text("import ai.onnxruntime.*;\nclass Leak {\n  void f(OrtEnvironment env, byte[] m) throws OrtException {\n"
                    "    OrtSession s = env.createSession(m);\n  }\n}\n")
    client = _start(project)
    try:
        diagnostics = _open(client, java.as_uri(), java.read_text(), "java")
        assert [d["code"] for d in diagnostics] == ["ORT010"]
    finally:
        assert client.close() == 0
