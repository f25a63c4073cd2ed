"""Reading source files robustly and neutralizing decoration macros before parsing."""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

from ..policy import Policy

MAX_BYTES = 16 * 1024 * 1024
# What tree-sitter may spend parsing one file (seconds; ORTLINT_PARSE_SECONDS overrides). Its error
# recovery can be superlinear on broken input; past the limit the file gets a "could not parse"
# notice instead of stalling the run.
PARSE_SECONDS = float(os.environ.get("ORTLINT_PARSE_SECONDS", "20"))
_CHUNK = 1 << 16


class ParseTimeout(Exception):
    """tree-sitter did not finish within PARSE_SECONDS."""
_SPACES = bytes(b if b == ord("\n") else ord(" ") for b in range(256))  # every byte but newline -> space


@dataclass
class SourceText:
    path: str
    data: bytes  # what the parser sees: decorations blanked, same length as the file
    original: bytes
    problem: str | None = None  # why the file cannot be analyzed at all

    @property
    def lines(self) -> int:
        return self.original.count(b"\n") + (1 if self.original and not self.original.endswith(b"\n") else 0)


def read_source(path: str, policy: Policy, data: bytes | None = None, blank: bool = True) -> SourceText:
    """Read a file as bytes; never raise. Binary or huge files come back with a `problem`.
    `blank=False`: no decoration blanking (Java parses the original bytes)."""
    if data is None:
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_BYTES + 1)
        except OSError as exc:
            return SourceText(path, b"", b"", problem=f"cannot read file: {exc.strerror or exc}")
    if len(data) > MAX_BYTES:
        return SourceText(path, b"", data[:0], problem=f"file is larger than {MAX_BYTES // (1024 * 1024)} MB; skipped")
    if b"\0" in data[:8192]:
        return SourceText(path, b"", data, problem="binary file (contains NUL bytes); skipped")
    return SourceText(path, blank_decorations(data, policy) if blank else data, data)


def blank_decorations(data: bytes, policy: Policy) -> bytes:
    """Replace known decoration macros (JNIEXPORT, _In_, ORT_API_CALL, ...) by spaces of the same
    length, so that tree-sitter sees plain C while every byte offset stays where it was."""
    pattern = _bytes_pattern(policy)
    if pattern is None:
        return data

    def spaces(m: re.Match[bytes]) -> bytes:
        return m.group(0).translate(_SPACES)

    return pattern.sub(spaces, data)


def _bytes_pattern(policy: Policy) -> re.Pattern[bytes] | None:
    cached = getattr(policy, "_blank_bytes", None)
    if cached is None:
        text = policy.blank_regex()
        cached = re.compile(text.pattern.encode()) if text is not None else re.compile(rb"(?!x)x")
        policy._blank_bytes = cached  # type: ignore[attr-defined]
    return cached


def parse_limited(parser: object, data: bytes, seconds: float | None = None) -> object:
    """`parser.parse(data)`, cancelled after `seconds` (default PARSE_SECONDS): raises
    ParseTimeout. tree-sitter checks its progress callback only when it reads through a
    callback, so the bytes are handed over in chunks (same tree, same offsets)."""
    limit = PARSE_SECONDS if seconds is None else seconds
    deadline = time.monotonic() + limit

    def read(offset: int, _point: object) -> bytes:
        return data[offset:offset + _CHUNK]

    def cancel(*_state: object) -> bool:
        return time.monotonic() > deadline

    try:
        return parser.parse(read, progress_callback=cancel)  # type: ignore[attr-defined]
    except ValueError as exc:  # py-tree-sitter reports a cancelled parse as "Parsing failed"
        if time.monotonic() > deadline:
            raise ParseTimeout(f"tree-sitter did not finish parsing within {limit:g} s; "
                               "could not parse this file, it is not analyzed") from exc
        raise
