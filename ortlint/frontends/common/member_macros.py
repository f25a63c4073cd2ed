"""Macro invocations standing alone on their line without a semicolon, where the parse failed.

`PROVIDER_DISALLOW_ALL(Logger)` or `DECLARE_COPY_MOVE(Type)` in a class body (or at namespace
scope) expands to whole member declarations, so its author writes no `;` after it. tree-sitter
cannot know that and error recovery drops the class: ONNX Runtime's provider_wrappedtypes.h
lost 56 class bodies to one such macro. When a parse has errors, every line that is only an
upper-case invocation (`NAME(args)`, nothing after it) and that error recovery skipped is
replaced by spaces of the same length before the retry (see c/frontend). Such a macro declares
members (deleted copies, generated accessors), never a resource this analysis follows. A
statement macro in a function body is expanded earlier when its definition is visible; one that
is not, or that opens or closes a block (`API_BEGIN()` ... `API_END()` around a JNI body: a try
and its catch), can be on an error line too and is blanked with the rest: its own effect is not
seen, the function around it is analyzed instead of being reported as unparsed."""
from __future__ import annotations

import re

from .conditionals import SPACES, Blanked

_BARE = re.compile(rb"^([ \t]*)[A-Z][A-Z0-9_]*[ \t]*\([^;{}\n]*\)[ \t]*(?://[^\n]*)?$", re.M)


def blank_member_macros(data: bytes, error_lines: set[int]) -> tuple[bytes, list[Blanked]]:
    """`data` with each bare upper-case invocation on an error line blanked, and the ranges."""
    if not error_lines:
        return data, []
    out: bytearray | None = None
    blanked: list[Blanked] = []
    line, offset = 0, 0
    for match in _BARE.finditer(data):
        line += data.count(b"\n", offset, match.start())
        offset = match.start()
        if line not in error_lines:
            continue
        if out is None:
            out = bytearray(data)
        begin, end = match.start() + len(match.group(1)), match.end()
        out[begin:end] = data[begin:end].translate(SPACES)
        column = len(match.group(1))
        blanked.append((begin, end, (line, column), (line, column + end - begin)))
    return (bytes(out), blanked) if out is not None else (data, [])
