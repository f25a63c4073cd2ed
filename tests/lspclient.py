"""A minimal Language Server Protocol client, as an editor talks to `ortlint server`: JSON-RPC
messages with Content-Length headers over the server's standard input and output."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


class LspClient:
    def __init__(self, cwd: Path, env: dict[str, str] | None = None, command: list[str] | None = None):
        command = command or [sys.executable, "-m", "ortlint", "server", "--stdio"]
        self.proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.notifications: list[dict] = []
        self._next = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            self.messages.put(json.loads(out.read(length)))

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 120) -> Any:
        self._next += 1
        ident = self._next
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self.messages.get(timeout=max(deadline - time.monotonic(), 0.01))
            if message.get("id") == ident and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message.get("result")
            self._handle(message)

    def _handle(self, message: dict) -> None:
        if "method" in message and "id" in message:  # a request from the server: no client feature
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        else:
            self.notifications.append(message)

    def wait_diagnostics(self, uri: str, timeout: float = 120) -> list[dict]:
        """The next publishDiagnostics for `uri`."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.messages.get(timeout=max(deadline - time.monotonic(), 0.01))
            self._handle(message)
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri:
                return message["params"]["diagnostics"]

    def close(self) -> int:
        try:
            self.request("shutdown", None, timeout=30)
            self.notify("exit", None)
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def apply_text_edits(text: str, edits: list[dict]) -> str:
    """Apply LSP TextEdits (UTF-16 positions) to `text`, last first."""
    lines = text.splitlines(keepends=True)

    def offset(pos: dict) -> int:
        line, character = pos["line"], pos["character"]
        if line >= len(lines):
            return len(text)
        prefix = lines[line].encode("utf-16-le")[:character * 2].decode("utf-16-le")
        return sum(len(x) for x in lines[:line]) + len(prefix)

    spans = sorted(((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text
