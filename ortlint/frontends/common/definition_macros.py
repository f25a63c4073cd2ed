"""Macros that write part of a function definition: its head or one of its braces.

ONNX Runtime defines its C API with them (and so do bindings that copy its style):

    ORT_API_STATUS_IMPL(OrtApis::CreateEnv, OrtLoggingLevel level, _Outptr_ OrtEnv** out) {
      API_IMPL_BEGIN
      ...
      API_IMPL_END
    }

`ORT_API_STATUS_IMPL(NAME, ...)` expands to `OrtStatusPtr NAME(__VA_ARGS__)`, `API_IMPL_BEGIN` to
`try {` and `API_IMPL_END` to `} catch (...) { ... }`. Unexpanded, tree-sitter reads neither the
head nor the braces, and the whole file after the first one was an unparsed region (a real
`onnxruntime_c_api.cc`: 27 such regions, 1 500 lines of the C API not analyzed).

Before parsing, every invocation of such a macro is rewritten in place, same length (every byte
offset, line and column stays): a head macro's name and `(` become the return type its body
writes, the commas up to the function's name blanks and the comma after it the parameter
list's `(`; an opening brace macro becomes `{` and a closing one `}`. The braces keep a block,
not the `try`/`catch` (whose handlers would not fit in the macro's name): an exception inside
leaves the function, as it does from code without one.

Which macros qualify is read from their bodies (the headers' `#define`s and the file's own),
after the policy's decorations are blanked: a variadic function-like macro whose body is
`TYPE P1 ... Pk NAME(__VA_ARGS__)` (`NAME` its last named parameter, the `Pi` the others in
order), and object-like macros whose body, with the object-like macros in it expanded, opens or
closes one brace more than it closes or opens.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from .declaration_macros import _brace_tokens, _in_function_bodies
from .source import _closing_paren, blank_decorations, line_start_invocations, line_start_matches

# `#define NAME body` without parameters: group 1 the name, group 2 the body (continued lines too).
_OBJECT_DEFINE = re.compile(rb"#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])[ \t]*((?:[^\n\\]|\\\r?\n|\\)*)")
_TYPE_TEXT = re.compile(r"^[A-Za-z_][\w:<>,*& ]*$")
_WORD = re.compile(r"[A-Za-z_]\w*")
_TIGHT_PARENS = re.compile(r"\s*([()])\s*")
_CONTINUATION = re.compile(r"\\\r?\n")
_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
MAX_DEPTH = 4  # object-like macros expanded inside one another (TENSOR_READ_API_BEGIN -> API_IMPL_BEGIN)
MAX_TEXT = 4096  # characters of an expansion looked at (a brace macro is a line or a few)


@dataclass(frozen=True)
class HeadShape:
    """A head macro: `literal` (the return type its body writes itself, may be empty), then its
    first `refs` arguments (written as they are), then the function's name, then the rest of
    the arguments as the parameter list."""

    literal: str
    refs: int


def head_shapes(macros: Iterable[tuple[str, list[str] | None, str, bool]],
                blank: Callable[[str], str]) -> dict[str, HeadShape]:
    """The head macros among (name, params, body, variadic); `blank` blanks decorations."""
    out: dict[str, HeadShape] = {}
    for name, params, body, variadic in macros:
        if params is None or not params or not variadic:
            continue
        words = blank(_one_line(body)).split()
        tail = f"{params[-1]}(__VA_ARGS__)"
        text = _TIGHT_PARENS.sub(r"\1", " ".join(words))  # `NAME ( __VA_ARGS__ )` from libclang's tokens
        if not text.endswith(tail):
            continue
        head = text[:-len(tail)].split()
        refs = params[:-1]
        if refs and head[len(head) - len(refs):] != refs:
            continue
        literal = " ".join(head[:len(head) - len(refs)])
        if any(w in params for w in _WORD.findall(literal)) or (literal and not _TYPE_TEXT.match(literal)):
            continue
        out[name] = HeadShape(literal, len(refs))
    return out


def brace_macros(object_macros: dict[str, str], blank: Callable[[str], str], names: Iterable[str],
                 function_bodies: dict[str, str] | None = None) -> dict[str, bytes]:
    """Those of `names` that open (`{`) or close (`}`) a block: object-like macros
    (`object_macros`: name -> body) and function-like ones (`function_bodies`, `API_IMPL_END(api)`)."""
    out: dict[str, bytes] = {}
    function_bodies = function_bodies or {}
    memo: dict[str, str | None] = {}
    for name in names:
        if name in object_macros:
            text = _expanded(name, object_macros, 0, memo)
        elif name in function_bodies:
            text = _one_line(function_bodies[name])
        else:
            continue
        if text is None or "{" not in text and "}" not in text:
            continue
        code = _STRINGS.sub("", blank(text))
        balance = code.count("{") - code.count("}")
        stripped = code.strip()
        if balance == 1 and (stripped.startswith(("try", "{")) or stripped.endswith("{") and "namespace" not in code):
            out[name] = b"{"
        elif balance == -1 and stripped.startswith("}"):
            out[name] = b"}"
    return out


_NAMESPACE_OPEN = re.compile(r"^namespace\b[\w:\s]*\{$")


def namespace_macros(object_macros: dict[str, str], blank: Callable[[str], str],
                     names: Iterable[str]) -> tuple[set[str], set[str]]:
    """Those of `names` (object-like) that open a namespace (`#define NS_BEGIN namespace a::b {`)
    and those that close one brace (`#define NS_END }`): unexpanded at file scope, tree-sitter
    reads the class or function after the opening one as the head of a function definition
    named after the macro, and the code inside is lost (`_blank_namespace_uses`)."""
    opens: set[str] = set()
    closes: set[str] = set()
    memo: dict[str, str | None] = {}
    for name in names:
        if name not in object_macros:
            continue
        text = _expanded(name, object_macros, 0, memo)
        if text is None or "{" not in text and "}" not in text:
            continue
        code = " ".join(_STRINGS.sub("", blank(text)).split())
        if _NAMESPACE_OPEN.match(code):
            opens.add(name)
        elif code == "}":
            closes.add(name)
    return opens, closes


def _blank_namespace_uses(data: bytes, opens: set[str], closes: set[str]) -> bytes:
    """The uses of namespace-opening and closing macros standing alone on their line at file or
    namespace scope, blanked (same length, lines kept) when they pair up: the declarations
    between them are read at file scope, without the namespace in their names (the text of the
    namespace need not fit where the macro's name was). Left as they are when the opening and
    closing uses do not pair up, or when none is outside a function body."""
    names = opens | closes
    pattern = re.compile(rb"(" + b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True))
                         + rb")(?!\w)")
    found = list(line_start_matches(pattern, data))
    uses = [m for m, in_code in zip(found, _in_function_bodies(data, [m.start(1) for m in found]))
            if not in_code and _next_significant(data, m.end(1), same_line=True) in (None, b"/", b";")]
    depth = 0
    for m in uses:
        depth += 1 if m.group(1).decode() in opens else -1
        if depth < 0:
            return data
    if depth != 0 or not uses:
        return data
    out = bytearray(data)
    for m in uses:
        out[m.start(1):m.end(1)] = b" " * (m.end(1) - m.start(1))
    return bytes(out)


def _expanded(name: str, macros: dict[str, str], depth: int, memo: dict[str, str | None] | None = None) -> str | None:
    """`name`'s body with the object-like macros in it expanded (None past MAX_DEPTH levels, or
    when the text grows past MAX_TEXT: a macro that cannot be a brace)."""
    memo = {} if memo is None else memo
    if name in memo:
        return memo[name]
    if depth > MAX_DEPTH:
        return None
    body = _one_line(macros[name])
    parts = []
    last = 0
    for m in _WORD.finditer(body):
        word = m.group(0)
        if word in macros and word != name:
            inner = _expanded(word, macros, depth + 1, memo)
            if inner is None:
                return None
            parts.append(body[last:m.start()])
            parts.append(inner)
            last = m.end()
    parts.append(body[last:])
    text = "".join(parts)
    if len(text) > MAX_TEXT:
        memo[name] = None
        return None
    memo[name] = text
    return text


def _one_line(body: str) -> str:
    """A `#define`'s body with its line continuations joined (`\\` then LF or CR LF)."""
    return _CONTINUATION.sub(" ", body)


def object_defines(data: bytes) -> dict[str, str]:
    """The file's own `#define NAME body` (object-like) macros."""
    if b"define" not in data:
        return {}
    return {m.group(1).decode(): m.group(2).decode("utf-8", "replace") for m in line_start_matches(_OBJECT_DEFINE, data)}


def rewrite(data: bytes, heads: dict[str, HeadShape], braces: dict[str, bytes]) -> bytes:
    """`data` with the invocations of `heads` and the uses of `braces` that start a line
    rewritten (see the module docstring); the same length, the same lines."""
    out: bytearray | None = None
    calls = line_start_invocations(data, heads) if heads else []
    for m, in_code in zip(calls, _in_function_bodies(data, [m.start(1) for m in calls])):
        shape = heads[m.group(1).decode()]
        if in_code:
            continue
        open_at = m.end() - 1
        end = _closing_paren(data, open_at)
        if end is None or len(shape.literal) >= open_at + 1 - m.start(1):  # (a blank must follow it)
            continue
        nxt = _next_significant(data, end)
        if nxt not in (b"{", b";"):
            continue
        commas = _top_level_commas(data, open_at + 1, end - 1)
        if len(commas) < shape.refs + 1:
            continue  # `NAME(args)` without parameters: left as it is
        if out is None:
            out = bytearray(data)
        out[m.start(1):open_at + 1] = shape.literal.encode().ljust(open_at + 1 - m.start(1))
        for c in commas[:shape.refs]:
            out[c] = ord(" ")
        out[commas[shape.refs]] = ord("(")
    if braces:
        with_braces = _rewrite_braces(bytes(out) if out is not None else data, braces)
        if with_braces is not None:
            return with_braces
    return bytes(out) if out is not None else data


def _rewrite_braces(data: bytes, braces: dict[str, bytes]) -> bytes | None:
    """The uses of `braces` standing alone on their line in a function body (`API_IMPL_END` or
    `API_IMPL_END(api)`, a comment after it at most) replaced by their brace; None when there
    is none, or when the braces would not pair up (an opening macro without its closing one)."""
    pattern = re.compile(rb"(" + b"|".join(re.escape(n.encode()) for n in sorted(braces, key=len, reverse=True))
                         + rb")(?!\w)")
    uses = list(line_start_matches(pattern, data))
    out: bytearray | None = None
    for m, in_code in zip(uses, _in_function_bodies(data, [m.start(1) for m in uses])):
        end = m.end(1)
        after = _next_significant(data, end, same_line=True)
        if after == b"(":
            close = _closing_paren(data, data.index(b"(", end))
            if close is None:
                continue
            end = close
            after = _next_significant(data, end, same_line=True)
        if not in_code or after not in (None, b"/", b";"):
            continue  # something follows on the line: not a use standing for a brace
        if out is None:
            out = bytearray(data)
        text = data[m.start(1):end]
        out[m.start(1):end] = braces[m.group(1).decode()] + text[1:].translate(_KEEP_NEWLINES)
    if out is None:
        return None
    before = sum(1 if c == ord("{") else -1 for _at, c in _brace_tokens(data))
    after_rewrite = sum(1 if c == ord("{") else -1 for _at, c in _brace_tokens(bytes(out)))
    return bytes(out) if after_rewrite == before else None


_KEEP_NEWLINES = bytes(b if b in (ord("\n"), ord("\r")) else ord(" ") for b in range(256))


def _top_level_commas(data: bytes, start: int, end: int) -> list[int]:
    """Offsets of the commas of an argument list between parentheses at depth 0 (the
    preprocessor's split: `<` and `>` do not nest), strings and characters skipped."""
    out: list[int] = []
    depth = 0
    i = start
    while i < end:
        c = data[i]
        if c in b"\"'":
            close = data.find(bytes([c]), i + 1, end)
            while close > 0 and data[close - 1] == ord("\\") and data[close - 2] != ord("\\"):
                close = data.find(bytes([c]), close + 1, end)
            if close < 0:
                return out
            i = close
        elif c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
        elif c == ord(",") and depth == 0:
            out.append(i)
        i += 1
    return out


def _next_significant(data: bytes, pos: int, same_line: bool = False) -> bytes | None:
    """The first byte after `pos` that is not blank (nor a newline, unless `same_line`)."""
    blanks = b" \t\r" if same_line else b" \t\r\n"
    while pos < len(data) and data[pos] in blanks:
        pos += 1
    if pos >= len(data) or (same_line and data[pos] == ord("\n")):
        return None
    return data[pos:pos + 1]


def rewrite_definition_macros(data: bytes, visible_macros: dict, policy: object) -> bytes:
    """`rewrite` with the head and brace macros the file uses, from its headers' macros
    (`header_index.Visible.macros`) and its own `#define`s."""
    if not visible_macros and b"define" not in data:
        return data
    used = [name for name in visible_macros if name.encode() in data]
    own_objects = object_defines(data)
    if not used and not own_objects:
        return data

    def blank(text: str) -> str:
        return blank_decorations(text.encode(), policy).decode("utf-8", "replace")  # type: ignore[arg-type]

    from .source import scan_function_macros
    functions = [(name, found.params, found.body, found.variadic) for name in used
                 if (found := visible_macros[name]).params is not None]
    functions += [m for m in scan_function_macros(data) if m[0].encode() in data] if b"define" in data else []
    objects = {name: found.body for name, found in visible_macros.items() if found.params is None}
    objects.update(own_objects)
    function_bodies = {name: body for name, params, body, _variadic in functions}
    candidates = [name for name in objects if name in own_objects or name in used] + list(function_bodies)
    heads = head_shapes(functions, blank)
    braces = brace_macros(objects, blank, candidates, function_bodies)
    out = rewrite(data, heads, braces) if heads or braces else data
    opens, closes = namespace_macros(objects, blank, candidates)
    return _blank_namespace_uses(out, opens, closes) if opens else out
