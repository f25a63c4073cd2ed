"""Declaration decorations the build would expand away, blanked before parsing (same length).

Projects put macros into declarations that a compiler sees through headers ortlint may not read:
an export macro between `class` and the name (`class LITE_EXPORTS YoloV3 {`, `struct DECLSPEC
S {`), a declaration macro before a function's return type (`TRITONBACKEND_ISPEC
TRITONSERVER_Error* TRITONBACKEND_Initialize(...)`). tree-sitter cannot know they are macros: the
class became a function whose body held `YoloV3(const YoloV3 &) = delete;` read as a delete
expression, and the function was named by its whole head, with no parameters.

The recovery is the one C and C++ programmers make when reading such code: in a position where
the grammar allows no second name, an identifier that is not a type is a decoration.

* `class|struct|union NAME1 ... NAME {` or `... NAME :` (a base clause) or `... NAME final`:
  only the last name is the class's; the ones before it (with an argument list, if any) are
  blanked. No C or C++ declaration has two names there.
* at the start of a line, `DECO TYPE NAME(` or `DECO TYPE *NAME(` (also `&`, `const TYPE`,
  `ns::TYPE`, `TYPE<...>`, the declarator on the next line): three names where a declaration
  has two, so one is a decoration: the first (a declaration macro before the return type), or
  the second when it is written like a macro (all capitals) and the first is not (a calling
  convention after the return type: `Status MY_CALL f(`). A function pointer's name counts as
  a name (`DECO void (*F)(`), and names in capitals between the parameter list and the `;`
  that ends the line are decorations too (`int F(void) MY_ATTR;`, on a line that starts a
  declaration, not a statement). C and C++ keywords are never decorations (`unsigned long f(`,
  `static T *f(`, `return x * f(y)`).

* `#if A\n [[x]]\n#else\n [[y]]\n#endif` (or `__declspec(...)`, `__attribute__((...))`,
  `alignas(...)`): a conditional whose every branch holds attributes only decorates the
  declaration after it, which tree-sitter cannot read split from it. It is blanked whole.

Known decorations are blanked by name from the policy (`[preprocess] blank`, see source.py);
this covers the ones nobody listed, without a list.
"""
from __future__ import annotations

import functools
import re


# C and C++ keywords and the words the grammar treats as types or specifiers: never decorations.
KEYWORDS = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
    char32_t class co_await co_return co_yield compl concept const consteval constexpr constinit
    const_cast continue decltype default delete do double dynamic_cast else enum explicit export
    extern false float for friend goto if inline int long mutable namespace new noexcept not not_eq
    nullptr operator or or_eq private protected public register reinterpret_cast requires return
    short signed sizeof static static_assert static_cast struct switch template this thread_local
    throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
    xor xor_eq restrict _Bool _Complex _Atomic _Noreturn _Thread_local _Alignas _Static_assert
    final override size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
    __restrict __inline __inline__ __extension__ __typeof__ typeof
""".split())

# keywords that may be a declaration's type (`MACRO void f(`, `MACRO int *f(`)
_TYPE_KEYWORDS = frozenset("""
    bool char char8_t char16_t char32_t double float int long short signed unsigned void wchar_t
    size_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t auto
""".split())

_NAME = rb"[A-Za-z_]\w*\b"  # (`\b`: no backtracking into a name)
_ARGS = rb"(?:[ \t]*\([^()\n]*\))?"
# `class A B {` / `struct A(x) B : public C` / `class A B final {`: group 1 the decorations
# (matched where `bytes.find` finds the keyword: a search for the pattern was slower)
_CLASS_HEAD = re.compile(rb"(?:class|struct|union)[ \t\r\n]+((?:" + _NAME + _ARGS + rb"[ \t\r\n]+)+)"
                         rb"(?!final\b)(" + _NAME + rb")[ \t\r\n]*(?:final\b[ \t\r\n]*)?(?:\{|:(?!:))")
_DECORATION_WORD = re.compile(_NAME + _ARGS)
# At a line start: `WORDS TYPE [*&] NAME (`, WORDS one or more names (specifiers or decorations)
_LINE_HEAD = re.compile(
    rb"\n[ \t]*(?P<words>(?:" + _NAME + _ARGS + rb"[ \t]+)+)"
    + rb"(?P<type>" + _NAME + rb"(?:::" + _NAME + rb")*(?:[ \t]*<[^<>;{}()\n]*>)?)"
    + rb"(?:[ \t\r\n]*[*&][ \t\r\n*&]*|[ \t\r\n]+)"
    + rb"(?:(?P<name>~?" + _NAME + rb"(?:::~?" + _NAME + rb")*)|\([ \t]*\*[ \t]*(?P<pointer>" + _NAME + rb")[ \t]*\))"
    + rb"[ \t\r\n]*\(")
_MACRO_LIKE = re.compile(r"^[A-Z][A-Z0-9_]*$")
# `...) DECO;` / `...) DECO(x) DECO2;` ending a line: names in capitals after a parameter list
_TRAILING = re.compile(rb"\)[ \t]*((?:[A-Z_][A-Z0-9_]*\b(?:[ \t]*\([^()\n]*\))?[ \t]*)+);[ \t]*(?://[^\n]*)?\r?$", re.M)
# the line of a declaration: it starts with a name that begins no statement, no `=` before its `(`
_DECLARATION_LINE = re.compile(rb"[ \t]*(?!(?:if|while|for|switch|return|else|do|case|new|delete|throw|sizeof|co_return|co_await|goto)\b)"
                               rb"[A-Za-z_][^=(\n]*\(")


def blank_class_decorations(data: bytes) -> bytes:
    """`data` with the decorations between `class`/`struct`/`union` and the name made blanks
    (newlines kept, so every offset, line and column stays), and the conditionals whose
    branches hold nothing but attributes (see _attribute_alternatives). Always done: tree-sitter
    reads `struct DECLSPEC S { int y; };` as a function without an error to tell."""
    return _blanked(data, _class_decorations(data) + _attribute_alternatives(data))


# A line of attributes: `[[...]]`, `__attribute__((...))`, `__declspec(...)`, `alignas(...)`
_ATTRIBUTE = rb"(?:\[\[[^\n]*?\]\]|__attribute__[ \t]*\(\([^\n]*?\)\)|__declspec[ \t]*\([^\n]*?\)|alignas[ \t]*\([^\n]*?\))"
_ATTRIBUTE_CONDITIONAL = re.compile(
    rb"^[ \t]*#[ \t]*if(?:def|ndef)?\b[^\n]*\n"
    rb"(?:[ \t]*(?:" + _ATTRIBUTE + rb"[ \t]*)+(?://[^\n]*)?\r?\n|[ \t]*#[ \t]*(?:else|elif)\b[^\n]*\n)+"
    rb"[ \t]*#[ \t]*endif\b[^\n]*", re.M)
_ATTRIBUTE_MARKS = (b"[[", b"__attribute__", b"__declspec", b"alignas")


def _attribute_alternatives(data: bytes) -> list[tuple[int, int]]:
    """`#if defined(_MSC_VER)\n [[msvc::no_unique_address]]\n#else\n [[no_unique_address]]\n#endif\n
    Telemetry t_;`: the alternatives are attributes of the declaration after them, which
    tree-sitter cannot read split from it (GenAI's generators.h: the whole namespace unparsed).
    Attributes are decorations ortlint does not use: the conditional goes, the declaration stays."""
    if b"#" not in data or not any(mark in data for mark in _ATTRIBUTE_MARKS):
        return []
    return [m.span() for m in _ATTRIBUTE_CONDITIONAL.finditer(data)]


def blank_declaration_heads(data: bytes) -> bytes:
    """`data` with the decorations of declaration heads (`DECO TYPE *NAME(`) made blanks. Done
    when the parse has an error: a head with a name too many always gives one."""
    return _blanked(data, _declaration_decorations(data))


def _blanked(data: bytes, spans: list[tuple[int, int]]) -> bytes:
    if not spans:
        return data
    out = bytearray(data)
    for start, end in spans:
        for i in range(start, end):
            if out[i] not in (0x0A, 0x0D):
                out[i] = 0x20
    return bytes(out)


def _class_decorations(data: bytes) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    match = _CLASS_HEAD.match
    for keyword in (b"class", b"struct", b"union"):
        at = data.find(keyword)
        while at >= 0:
            before = data[at - 1] if at else 0x20
            m = match(data, at) if not (chr(before).isalnum() or before == 0x5F) else None  # not `subclass`
            if m is not None:
                start = m.start(1)
                for word in _DECORATION_WORD.finditer(m.group(1)):
                    if _word(word.group()) not in KEYWORDS:
                        spans.append((start + word.start(), start + word.end()))
            at = data.find(keyword, at + len(keyword))
    return spans


def _word(text: bytes) -> str:
    return text.split(b"(")[0].strip().decode("ascii", "replace")


def _declaration_decorations(data: bytes) -> list[tuple[int, int]]:
    """`[specifiers] DECO... TYPE [*&] NAME (` at line starts (the text's first line too)."""
    spans = []
    text = data if data.startswith(b"\n") else b"\n" + data
    shift = len(text) - len(data)
    for m in _LINE_HEAD.finditer(text):
        words = [(w.group(), w.start()) for w in _DECORATION_WORD.finditer(m.group("words"))]
        decos = [(m.start("words") + at, m.start("words") + at + len(w)) for w, at in words
                 if _word(w) not in KEYWORDS]
        type_text = m.group("type")
        type_name = _word(re.split(rb"[ \t:<]", type_text, maxsplit=1)[0])
        name = (m.group("name") or m.group("pointer")).decode("ascii", "replace")
        if not decos or name in KEYWORDS or type_name in KEYWORDS and type_name not in _TYPE_KEYWORDS:
            continue  # `return x * f(y)`, `static T *f(`, `else if (`
        if len(decos) == 1 and type_name not in KEYWORDS and _MACRO_LIKE.match(type_name) \
                and not _MACRO_LIKE.match(_word(data[decos[0][0] - shift:decos[0][1] - shift])) \
                and b"::" not in type_text and b"<" not in type_text:
            decos = [m.span("type")]  # `Status MY_CALL f(`: a calling convention
        spans.extend((a - shift, b - shift) for a, b in decos)
    return spans + _trailing_decorations(data)


def _trailing_decorations(data: bytes) -> list[tuple[int, int]]:
    """`REDISMODULE_API int (*RedisModule_X)(RedisModuleCtx *ctx) REDISMODULE_ATTR;`: after the
    parameter list of a declaration only keywords may come (`const`, `noexcept`, `override`,
    ...); names in capitals there are decorations (an attribute, an exception specification)."""
    spans = []
    for m in _TRAILING.finditer(data):
        line = data.rfind(b"\n", 0, m.start()) + 1
        if _DECLARATION_LINE.match(data, line):
            spans.append(m.span(1))
    return spans


# `#define NAME` with nothing after it (a comment at most): an empty object-like macro of the file
_EMPTY_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]*(?:/\*[^\n]*?\*/[ \t]*|//[^\n]*)?\r?$", re.M)
_ANY_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.M)
_DIRECTIVE_LINE = re.compile(rb"^[ \t]*#[^\n]*", re.M)


def empty_macro_names(data: bytes, header_macros: dict[str, object]) -> list[str]:
    """The empty object-like macros (`#define __fd_take`, `#define API_EXPORT`) defined in the
    file or in the tree's headers it includes (`header_macros`: name -> MacroDef) that the file
    uses. Most files use none: each name is looked for in the bytes first."""
    names: set[str] = set()
    if b"define" in data:
        empty = [m.span() for m in _EMPTY_DEFINE.finditer(data)]
        names = {data[a:b].split(b"define", 1)[1].split()[0].decode() for a, b in empty}
        starts = {a for a, _ in empty}
        # a name the file also defines with a body (`#ifdef __GNUC__ #define UNUSED __attribute__((unused))
        # #else #define UNUSED #endif`) may stand where a body is needed: not blanked
        names -= {m.group(1).decode() for m in _ANY_DEFINE.finditer(data) if m.start() not in starts}
    for name, macro in header_macros.items():
        if getattr(macro, "params", None) is None and not str(getattr(macro, "body", "x")).strip():
            names.add(name)
    return sorted(n for n in names if n.encode() in data)


def blank_empty_macros(data: bytes, names: list[str]) -> bytes:
    """`data` with every use of the empty object-like macros `names` made blanks, outside
    preprocessor directives (`#ifndef GUARD_H` keeps its name), as the preprocessor would make
    them vanish. An annotation written where the grammar allows no word
    (`void Destroy(__fd_take T *p)`: a parameter with two types) otherwise misparses the
    declaration it decorates: the parameter named `T*p`, its `delete p` releasing nothing."""
    if not names:
        return data
    directives = [m.span() for m in _DIRECTIVE_LINE.finditer(data)] if b"#" in data else []
    spans = []
    d = 0
    for start, end in _word_spans(data, names):
        while d < len(directives) and directives[d][1] < start:
            d += 1
        if d < len(directives) and directives[d][0] <= start:
            continue  # in a directive (a guard, an `#ifdef`, a definition)
        spans.append((start, end))
    return _blanked(data, spans)


def _word_spans(data: bytes, names: list[str]) -> list[tuple[int, int]]:
    """Where the whole words `names` (identifiers) stand in `data`, in order: what one
    alternation `\\b(?:A|B|...)\\b` finds (two whole words never overlap), without compiling
    that alternation for each file's own set of names (a compile per file cost more than the
    search); each name's pattern is compiled once per process."""
    if len(names) == 1:
        return [m.span() for m in _whole_word(names[0]).finditer(data)]
    return sorted(m.span() for name in names for m in _whole_word(name).finditer(data))


@functools.lru_cache(maxsize=4096)
def _whole_word(name: str) -> re.Pattern[bytes]:
    return re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
