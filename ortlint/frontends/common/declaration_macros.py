"""Macros invoked with a declaration or a type as an argument.

`ASSIGN_OR_RETURN(OrtValue* v, MakeValue(api));`, `ORT_ASSIGN_OR_RETURN(auto x, Foo());`,
`DECLARE_OR_RETURN(OrtSession*, session, call);`, `API_CALL_T(const Ep, this_, GetName, "")`:
a declaration or a type is not an expression, so tree-sitter reads such an invocation as an
ERROR (or as a declaration whose type is the macro) and the macro is never expanded: the
acquiring call inside is not in the IR and the hidden `return` is not seen.

Before parsing, the argument list of such an invocation of a macro the front end will expand is
blanked (same length, newlines kept: every offset, line and column stays), so tree-sitter reads
a plain call `NAME(      );`; the original argument text is kept by offset and the expansion
uses it (see FunctionLowering.expand_macro). Expansion is textual, so it reads the same whether
or not an argument was blanked.

For a `[[macro]]` shape with `acts = "declare-or-return"` (the definition is not visible),
the expansion needs the declared variable's name: `with_declared_name` supplies it. A macro
nothing describes, given a declaration and the expression of its value
(`OUTCOME_TRY(auto x, f());`), is read as that declaration (`declare_unknown_macro_arguments`).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from .embedded import closing_bracket
from .source import _BLANKS, _NEWLINE, _closing_paren, _starts_statement, line_start_invocations, line_start_matches

_SPACES = bytes(b if b in (ord("\n"), ord("\r")) else ord(" ") for b in range(256))

# A word that starts a declaration or a type and never an expression.
# `*_t` names are types by the C library's convention (`int8_t`, `size_t`), as in c_treesitter.
_DECL_KEYWORD = re.compile(r"^(?:auto|const|volatile|struct|enum|union|unsigned|signed|static|constexpr|"
                           r"int|char|short|long|float|double|bool|void|[A-Za-z_]\w*_t)\b(?!\s*[(.\-\[])")
# A (qualified, possibly templated) type name: `OrtValue`, `std::unique_ptr<Ort::Value>`.
_TYPE = r"[A-Za-z_][\w:]*(?:\s*<[^;{}()]*>)?"
# `T* name`, `T& name`, `T name`, `T *const name`: a declaration.
_DECLARATION = re.compile(rf"^{_TYPE}(?:\s*[*&]+\s*(?:const\s+)?|\s+)[A-Za-z_]\w*$")
# `T*`, `const T&`: a type alone.
_POINTER_TYPE = re.compile(rf"^{_TYPE}\s*[*&]+(?:\s*const)?$")
_LAST_NAME = re.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*$")


@functools.lru_cache(maxsize=8192)  # pure; asked for every argument of every candidate invocation
def is_declaration_or_type(arg: str) -> bool:
    """Is this macro argument a declaration (`OrtValue* v`, `auto x`) or a type (`OrtStatus*`,
    `const Ep`) rather than an expression? `a * b` reads as a declaration too: harmless, the
    expansion is textual and the same either way."""
    text = " ".join(arg.split())
    if not text:
        return False
    if _DECL_KEYWORD.match(text):
        return True
    return bool(_DECLARATION.match(text) or _POINTER_TYPE.match(text))


def declared_name(arg: str) -> str:
    """The variable a declaration argument declares (`OrtValue* v` -> `v`); an argument that is
    not a declaration (`*out`, `values[i]`) is the place assigned, as written."""
    text = " ".join(arg.split())
    if is_declaration_or_type(text):
        m = _LAST_NAME.search(text)
        if m is not None:
            return m.group(1)
    return text


def with_declared_name(args: list[str], declares: int) -> list[str] | None:
    """The arguments of a `declare-or-return` shape with the declared name inserted after the
    expression (the shape's parameters are `decl, expr, name`, then any rest); None when the
    invocation has too few arguments."""
    if len(args) < declares + 2:
        return None
    return args[:declares + 2] + [declared_name(args[declares])] + args[declares + 2:]


def statement_macros(bodies: dict[str, str], depth: int = 4) -> set[str]:
    """The names whose expansion is a statement: a body with a `;` or a `return`, a statement
    body (`do {...} while (0)`, `{...}`, `if ...`), an empty one (a `[[macro]]` shape), or a body
    that is an invocation of such a macro (`ASSIGN_OR_RETURN(l, r)` -> `ASSIGN_OR_RETURN_IMPL(...)`).
    Macros that expand to declarations of a struct (`ORT_API2_STATUS(Name, args)`) are not."""
    from .source import is_statement_body

    def direct(body: str) -> bool:
        return not body.strip() or ";" in body or is_statement_body(body)

    found = {name for name, body in bodies.items() if direct(body)}
    for _ in range(depth):
        more = {name for name, body in bodies.items() if name not in found
                and (m := _NAME_CALL.match(body.replace("\\\n", " ").strip())) is not None and m.group(1) in found}
        if not more:
            break
        found |= more
    return found


def mask_declaration_arguments(data: bytes, names: set[str] | frozenset[str]) -> tuple[bytes, dict[int, str]]:
    """Blank the argument lists of statement-level invocations of `names` (macros that will be
    expanded) that contain a declaration or a type. Returns the new text and, by the offset of
    each blanked `(`, the original argument list `( ... )`."""
    candidates = line_start_invocations(data, names)  # most files use none of them
    if not candidates:
        return data, {}
    masks: list[tuple[int, int, int, str]] = []  # (name, `(`, past `)`, argument text) of each to blank
    for m in candidates:
        line_start = data.rfind(b"\n", 0, m.start(1)) + 1
        if not _starts_statement(data, m.start(1)) or _continues_define(data, line_start):
            continue
        open_at = m.end() - 1
        end = _closing_paren(data, open_at)
        if end is None:
            continue
        text = data[open_at:end].decode("utf-8", "replace")
        if any(is_declaration_or_type(a) for a in _split(text)):
            masks.append((m.start(1), open_at, end, text))
    if not masks:  # (the brace scan below is the costly test: only for invocations that pass the others)
        return data, {}
    out: bytearray | None = None
    kept: dict[int, str] = {}
    in_code = _in_function_bodies(data, [start for start, _, _, _ in masks])
    for (_, open_at, end, text), code in zip(masks, in_code):
        if not code:
            continue
        if out is None:
            out = bytearray(data)
        out[open_at + 1:end - 1] = data[open_at + 1:end - 1].translate(_SPACES)
        kept[open_at] = text
    return (bytes(out) if out is not None else data), kept


# `NAME(` at a line start (line_start_matches), for `declare_unknown_macro_arguments`
_ANY_INVOCATION = re.compile(rb"([A-Za-z_]\w*)[ \t]*\(")
_NOT_MACROS = frozenset({"if", "for", "while", "switch", "return", "sizeof", "catch", "decltype", "alignof",
                         "static_assert", "typeid", "noexcept", "defined", "do", "else", "case"})


def declare_unknown_macro_arguments(data: bytes, known: set[str] | frozenset[str]) -> bytes:
    """`OUTCOME_TRY(auto x, MakeX());` where nothing describes OUTCOME_TRY: a macro whose first
    argument is a declaration and whose second is the expression giving it its value (the
    `ASSIGN_OR_RETURN` family) reads, to its users, as that declaration. Rewritten in place,
    same length, into it: `            auto x= MakeX() ;` (the macro's name and `(` blanked, the
    comma made `=`, the `)` blanked). A macro whose one argument is a statement
    (`EXPECT_ANY_THROW(const auto s = make(); );`) runs it: the argument becomes a block. Only for statements in function bodies of exactly two
    arguments, the first a declaration (`T name`, `auto name`, `const T &name`), ended by `;`;
    macros `known` (visible definitions, `[[macro]]` shapes) are expanded instead. Done when
    the parse has an error: the invocation always gives one."""
    candidates = []
    for m in line_start_matches(_ANY_INVOCATION, data):
        name = m.group(1).decode("ascii", "replace")
        if name in known or name in _NOT_MACROS or not _starts_statement(data, m.start(1)):
            continue
        open_at = m.end() - 1
        close = closing_bracket(data, open_at)  # (a statement argument has `;` in it)
        end = close + 1 if close is not None else None
        if end is None or data[end:end + 16].lstrip(b" \t")[:1] != b";":
            continue
        text = data[open_at:end].decode("utf-8", "replace")
        args = _split(text)
        if len(args) == 2 and args[1].strip() and _declares(args[0]):
            candidates.append((m.start(1), open_at, end, False))
        elif len(args) == 1 and _is_statement(args[0]):
            candidates.append((m.start(1), open_at, end, True))
    if not candidates:
        return data
    out = bytearray(data)
    for (start, open_at, end, block), code in zip(candidates, _in_function_bodies(data, [c[0] for c in candidates])):
        if not code:
            continue
        comma = None if block else _top_level_comma(data, open_at, end)
        if not block and comma is None:
            continue
        out[start:open_at + 1] = data[start:open_at + 1].translate(_SPACES)
        if block:  # `EXPECT_ANY_THROW(const auto s = make(); );`: code run in place, a block
            out[open_at] = ord("{")
            if data[open_at + 1:end - 1].rstrip().endswith(b";"):
                out[end - 1] = ord("}")
            else:  # `(auto s = make(1));` -> `{auto s = make(1);}`: the statement's `;` closes
                semicolon = data.index(b";", end)
                out[end - 1] = ord(";")
                out[semicolon] = ord("}")
        else:
            out[comma] = ord("=")
            out[end - 1] = ord(" ")
    return bytes(out)


def _is_statement(arg: str) -> bool:
    """A macro argument that is a statement, not an expression: it ends with `;`, or it is a
    declaration with its initializer (`const auto s = make()`)."""
    text = " ".join(arg.split())
    if text.endswith(";"):
        return True
    head, eq, rest = text.partition("=")
    return bool(eq) and not rest.startswith("=") and not head.endswith(("!", "<", ">")) and _declares(head)


def _declares(arg: str) -> bool:
    """Surely a declaration of a variable, not an expression: `auto x`, `const T &r`, `T x`
    (two names), `std::unique_ptr<T> p`, `ns::T *p`. Not `T *x` or `T &x` of plain names, which
    read as a product or a bitwise and as well (`CHECK(a * b, c)`)."""
    text = " ".join(arg.split())
    if not is_declaration_or_type(text) or _POINTER_TYPE.match(text) or _LAST_NAME.search(text) is None:
        return False
    if _DECL_KEYWORD.match(text):
        return len(text.replace("*", " ").replace("&", " ").split()) >= 2
    head = re.split(r"[*&]", text, maxsplit=1)
    if len(head) == 1:
        return len(text.split()) == 2  # `T x`
    return "<" in head[0] or "::" in head[0]  # `std::vector<T> *v`, `ns::T &r`


def _top_level_comma(data: bytes, open_at: int, end: int) -> int | None:
    """The offset of the first `,` at the top level of the argument list `data[open_at:end]`."""
    depth = 0
    i = open_at + 1
    while i < end - 1:
        c = data[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
        elif c in b"\"'":
            close = data.find(bytes([c]), i + 1, end)
            i = close if close > 0 else end
        elif c == ord(",") and depth == 0:
            return i
        i += 1
    return None


# What the brace scan skips: strings, characters, comments, preprocessor lines (a `#` that starts
# its line: _brace_tokens checks). No capture group: one at the start of an alternative keeps
# Python's re from jumping to the bytes that can start a match (4x slower).
_SKIPPED = re.compile(rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?(?:\*/|\Z)|#(?:[^\n\\]|\\.)*', re.S)
_BRACES = re.compile(rb"[{}]")
_CODE_OPENERS = (b")", b"]", b"else", b"do", b"try", b"noexcept", b"const", b"override", b"final", b"mutable")
# `auto f(...) -> Result<T> {` / `[&]() -> bool {`: a trailing return type before the body
# (on the line of the `{` or the one before it; no `/` after the arrow: not a comment's arrow)
_TRAILING_RETURN = re.compile(rb"\)[ \t\r\n\w&]*->[^;{}()=/\n]*(?:\n[ \t]*)?$")


def _in_function_bodies(data: bytes, positions: list[int]) -> list[bool]:
    """For each (ascending) position: is it inside a block of code (a `{` after `)`, `else`,
    `do`, `try`, `noexcept`, ... or nested in one), rather than at file, namespace or class
    scope, where a macro invocation is a declaration the lowering never visits?"""
    out: list[bool] = []
    stack: list[bool] = []
    it = iter(positions)
    nxt = next(it, None)
    for start, token in _brace_tokens(data):
        while nxt is not None and nxt < start:
            out.append(any(stack))
            nxt = next(it, None)
        if nxt is None:
            break
        if token == _OPEN_BRACE:
            before = data[max(0, start - 16):start].rstrip()
            stack.append(bool(stack and stack[-1]) or before.endswith(_CODE_OPENERS)
                         or _TRAILING_RETURN.search(data, max(0, start - 160), start) is not None)
        elif stack:
            stack.pop()
    while nxt is not None:
        out.append(any(stack))
        nxt = next(it, None)
    return out


def _brace_tokens(data: bytes) -> Iterator[tuple[int, int]]:
    """(offset, byte) of every `{` and `}` outside strings, characters, comments and
    preprocessor lines, in order. A `#` with anything but blanks before it on its line (or whose
    line began inside the previous skipped region) starts no preprocessor line: the search goes
    on after it. (What the scan anchored with `^[ \\t]*#`, re.M, found; unanchored, the regex
    jumps from candidate to candidate instead of being tried at every position.)"""
    pos = last = 0
    search, braces = _SKIPPED.search, _BRACES.finditer
    while True:
        m = search(data, pos)
        if m is None:
            break
        start = m.start()
        if data[start] == _HASH:
            line = start
            while line > pos and data[line - 1] in _BLANKS:
                line -= 1
            if line != 0 and data[line - 1] != _NEWLINE:
                pos = start + 1
                continue
            start = line
        for b in braces(data, last, start):
            yield b.start(), data[b.start()]
        pos = last = m.end()
    for b in braces(data, last):
        yield b.start(), data[b.start()]


_HASH = ord("#")
_OPEN_BRACE = ord("{")


def _split(text: str) -> list[str]:
    from .macro_args import split_macro_args  # the same splitting as the expansion's
    return split_macro_args(text)


def _continues_define(data: bytes, line_start: int) -> bool:
    """Is this line a continuation of a `#define` (the previous line ends with `\\`)?"""
    i = line_start - 1
    if i >= 0 and data[i] == ord("\n"):
        i -= 1
    if i >= 0 and data[i] == ord("\r"):
        i -= 1
    return i >= 0 and data[i] == ord("\\")


_MAX_EXPANSION = 1 << 16  # characters: `#define D(x) x x` nested does not grow without end
_NAME_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_LINE_OR_COUNTER = re.compile(r"\b__(?:LINE|COUNTER)__\b")


def expand_text(text: str, macros: dict, line: int, limit: int = 64) -> str:
    """Expand every invocation of a known function-like macro in `text`, as the preprocessor
    would (`__LINE__` / `__COUNTER__` in arguments become the invocation's line, so that
    `STATUS_CONCAT(result_, __LINE__)` pastes to `result_12`). Used when an expansion does not
    parse because a nested macro stands where no call can (a declarator, a declaration
    argument): `ASSIGN_OR_RETURN(lhs, rexpr)` -> `ASSIGN_OR_RETURN_IMPL(CONCAT(tmp, __LINE__), lhs, rexpr)`.
    At most `limit` invocations are expanded (a recursive macro stops there)."""
    from .macro_args import split_macro_args, substitute_macro

    pos, done = 0, 0
    while done < limit and len(text) < _MAX_EXPANSION:
        m = _NAME_CALL.search(text, pos)
        if m is None:
            break
        macro = macros.get(m.group(1))
        end = _closing_char(text, m.end() - 1) if macro is not None else None
        if macro is None or end is None:
            pos = m.end()
            continue
        args = [_LINE_OR_COUNTER.sub(str(line), a) for a in split_macro_args(text[m.end() - 1:end])]
        if macro.declares is not None:
            args = with_declared_name(args, macro.declares) or []
        body = substitute_macro(macro, args)
        if body is None:
            pos = m.end()
            continue
        text = text[:m.start()] + body + text[end:]
        pos = m.start()  # rescan the result, as the preprocessor does
        done += 1
    return text


def _closing_char(text: str, open_at: int) -> int | None:
    """source._closing_paren on text: the character offset just past the `)` matching `(`."""
    data = text.encode()
    end = _closing_paren(data, len(text[:open_at].encode()))
    return None if end is None else len(data[:end].decode("utf-8", "replace"))
