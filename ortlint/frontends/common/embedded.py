"""Foreign code embedded in C and C++, made opaque before parsing (same length).

Emscripten's `EM_ASM(code, args...)` / `EM_ASM_INT` / `EM_ASM_PTR` / `MAIN_THREAD_EM_ASM*` take
JavaScript as their first argument, and `EM_JS(ret, name, (params), { body })` defines a
JavaScript function; MSVC's `__asm { ... }` holds assembly. Read as C++, the JavaScript's
`new Uint8Array(n)` was an allocation that leaked. None of it is C or C++:

* the code argument of an `EM_ASM*` invocation becomes blanks with a `0` in front, so the call
  keeps its C++ arguments (what it is given is handed to an unknown function, as for any call);
* an `EM_JS(...)` invocation becomes blanks (it declares a function defined in JavaScript);
* an `__asm { ... }` / `_asm { ... }` block becomes blanks. (GNU `asm("...")` is a string the
  grammar already reads as one.)

Newlines are kept, so every offset, line and column stays where it was.
"""
from __future__ import annotations

import re

_EM_ASM = re.compile(rb"\b(?:MAIN_THREAD_(?:ASYNC_)?)?EM_ASM\w*[ \t]*\(")
_EM_JS = re.compile(rb"\bEM_(?:JS|ASYNC_JS)[ \t]*\(")
_MS_ASM = re.compile(rb"\b_{1,2}asm[ \t\r\n]*\{")
_OPEN = {ord("("): ord(")"), ord("{"): ord("}"), ord("["): ord("]")}
_QUOTES = (ord("'"), ord('"'), ord("`"))
_CLOSERS = (ord(")"), ord("}"), ord("]"))
_SLASH = ord("/")
_BACKSLASH = ord("\\")
# Where a quoted text may end: its quote or a line end (not for a template literal), past a backslash
_STRING_STOPS = {ord('"'): re.compile(rb'[\\"\n]'), ord("'"): re.compile(rb"[\\'\n]"), ord("`"): re.compile(rb"[\\`]")}
_SPECIAL = re.compile(rb"[()\[\]{}'\"`/]")  # the bytes `_closing` acts on
_MAX_SCAN = 1 << 18  # a code block longer than this is left alone (an unclosed bracket)


def blank_embedded_code(data: bytes) -> bytes:
    """`data` with embedded JavaScript and MSVC assembly made blanks (see the module docstring)."""
    if b"EM_" not in data and b"asm" not in data:
        return data
    out: bytearray | None = None
    for m in _EM_ASM.finditer(data):
        start = _skip_blanks(data, m.end())
        if start < len(data) and data[start] in _OPEN:
            end = _closing(data, start)
            if end is not None:
                out = out if out is not None else bytearray(data)
                _blank(out, start, end + 1)
                out[start] = ord("0")
    for m in _EM_JS.finditer(data):
        end = _closing(data, m.end() - 1)
        if end is not None:
            out = out if out is not None else bytearray(data)
            _blank(out, m.start(), end + 1)
    for m in _MS_ASM.finditer(data):
        end = _closing(data, m.end() - 1)
        if end is not None:
            out = out if out is not None else bytearray(data)
            _blank(out, m.start(), end + 1)
    return bytes(out) if out is not None else data


def _skip_blanks(data: bytes, at: int) -> int:
    while at < len(data) and data[at] in b" \t\r\n":
        at += 1
    return at


def closing_bracket(data: bytes, open_at: int) -> int | None:
    """The offset of the bracket closing the one at `open_at` (brackets inside quotes, C++ raw
    strings and comments do not count; `;` may stand between), or None."""
    return _closing(data, open_at)


def _closing(data: bytes, open_at: int) -> int | None:
    """The offset of the bracket closing the one at `open_at` (brackets inside quotes and
    comments do not count), or None. The scan jumps from one byte that matters (a bracket, a
    quote, a `/`) to the next: a byte-by-byte loop cost a tenth of a macro-heavy file's parse."""
    stack = [_OPEN[data[open_at]]]
    i, end = open_at + 1, min(len(data), open_at + _MAX_SCAN)
    search = _SPECIAL.search
    while i < end:
        m = search(data, i, end)
        if m is None:
            return None
        i = m.start()
        ch = data[i]
        if ch in _QUOTES:
            i = _string_end(data, i, end)
        elif ch == _SLASH and data[i + 1:i + 2] == b"/":
            newline = data.find(b"\n", i, end)
            i = end if newline < 0 else newline
        elif ch == _SLASH and data[i + 1:i + 2] == b"*":
            close = data.find(b"*/", i + 2, end)
            i = end if close < 0 else close + 1
        elif ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in _CLOSERS:
            if ch != stack.pop():
                return None
            if not stack:
                return i
        i += 1
    return None


def _string_end(data: bytes, start: int, end: int) -> int:
    if data[start] == ord('"') and data[start - 1:start] == b"R":  # `R"delim( ... )delim"`
        paren = data.find(b"(", start, min(end, start + 18))
        if paren > 0:
            close = data.find(b")" + data[start + 1:paren] + b'"', paren, end)
            return end if close < 0 else close + paren - start
    quote, i = data[start], start + 1
    search = _STRING_STOPS[quote].search  # (to the next backslash, quote or line end)
    while i < end:
        m = search(data, i, end)
        if m is None:
            return end
        i = m.start()
        if data[i] == _BACKSLASH:
            i += 2
            continue
        return i
    return end


def _blank(out: bytearray, start: int, end: int) -> None:
    for i in range(start, end):
        if out[i] not in (0x0A, 0x0D):
            out[i] = 0x20
