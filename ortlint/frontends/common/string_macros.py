"""String literals glued to macros: `LIBRARY_PREFIX ORT_TSTR("onnxruntime_providers_cuda") LIBRARY_EXTENSION`.

The preprocessor turns such a run of juxtaposed tokens into one string literal; tree-sitter sees
an identifier or a call next to a string, which its grammar takes only in a few positions.
tree-sitter-cpp accepts a concatenation whose second item is a string literal (`P "x"`,
`P "x" Q`, `"x" "y" P`), not `"x" P`, `"x" P "y"` nor any call inside (`P T("x") Q`);
tree-sitter-c accepts identifiers anywhere but in the first two places (`P Q "x"`), and no call
either. Elsewhere the statement is an ERROR: in ONNX Runtime's provider_bridge_ort.cc three
functions had a region that was not analyzed (`PathString(LIBRARY_PREFIX ORT_TSTR("...")
LIBRARY_EXTENSION)`), in a plugin EP a run at namespace scope became a "could not parse" region.

When tree-sitter reported an error in a file (CFrontEnd.parse_source: a file that parses is
never scanned), such a run is rewritten in place, same length (every byte offset, line and
column stays), into plain string literals, and the file is parsed again:

* a macro known to expand to a string becomes a string literal of its own length
  (`LIBRARY_PREFIX` -> `"____________"`; a one-character name becomes a blank). Known: an
  object-like macro every visible definition of which (the file's own `#define`s, all of them,
  and its headers', see header_index) is a run of string literals, of such macros and of
  wrapper or stringifying invocations (below); a definition may also be empty (the Windows
  `#define LIBRARY_PREFIX` beside `#define LIBRARY_PREFIX "lib"`). A macro whose only visible
  definition is empty (the header index keeps a header's first one) is taken as a string too:
  in a run next to string literals it is a platform's empty string;
* an invocation of a wrapper, a one-parameter function-like macro whose body is its parameter
  (`#define ORT_TSTR(X) X`), with an encoding prefix pasted (`L##X`) or passed to another
  visible wrapper (`#define _T(x) __T(x)`), has its name and parentheses blanked (`        ("x")` is no concatenation; `         "x" `
  is), when its argument is itself such a run;
* an invocation of a stringifying macro (`#define STR(x) #x`, or a wrapper of one) on one line
  becomes a string literal of its own length;
* a name, or an invocation on a run of strings, that no visible `#define` describes (the macro
  comes from a system header or from outside the analyzed tree: `PRId64`, `ORT_TSTR` in a plugin
  EP) is taken as a string only when string items stand right before and after it in the run
  (`"%" PRId64 "\\n"`): on one side only, it might be anything (`"%" PRId64` is left as it is).
  In a macro's body, an invocation of an unknown function-like macro on strings counts as a
  string (`#define LIBRARY_SUFFIX ORT_TSTR(".dll")` with ORT_TSTR defined outside the tree):
  the body is used only where the run it stands in does not parse otherwise.

Only a run that the grammar rejects is touched (`accepted`: code that parses keeps its tree),
only when it holds a string literal (a run of names alone is a declaration), and only when the
rewritten run is one the grammar accepts with no invocation left in it. Strings, comments,
character literals and preprocessor lines are skipped (a `#define`'s body is never rewritten); a
string after `extern` or `operator` (`extern "C" EXPORT`) starts no run, and a literal with a
suffix (`"x"sv`) ends one. The lowering reads a string literal as a constant whatever its text,
so the function's graph is the one of the expanded code.

Finding the strings means pairing every quote of the file from its start (comments, character
literals, raw strings): a regular-expression scan that costs a sixteenth of a tree-sitter parse
(the native corpus: 0.03 s against 0.48 s). `may_glue` first looks for the shapes of a rejected
run whatever the quotes pair with; only files that have an error and such a shape are scanned.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .source import line_start_matches, scan_function_macros

# What the scan skips or keeps, found from left to right so that quotes pair up: comments, a
# preprocessor line (when its `#` starts the line: _regions checks), a character literal (not a
# digit separator, `1'000`: a quote after a hexadecimal digit is none, but `u8'x'`), a raw
# string, a string.
# No capture group or look-behind before an alternative's first byte: Python's re then jumps
# from one candidate byte to the next.
_REGIONS = re.compile(
    rb"/\*(?:[^*]++|\*(?!/))*+(?:\*/|\Z)|//(?:[^\n\\]++|\\.)*+|#(?:[^\n\\]++|\\.)*+"
    rb"|'(?:(?<![0-9A-Fa-f]')|(?<=u8'))(?:[^'\\\n]++|\\.)*+'"
    rb'|R"([^()\\ \t\r\n"]{0,16})\(.*?\)\1"'
    rb'|"(?:[^"\\\n]++|\\.)*+"', re.S)
# Where a run that tree-sitter rejects may be, whatever the quotes pair with (may_glue).
# After a string: blanks then a name on its line or the next, or `)` and a name or a string.
_AFTER = re.compile(rb'"(?:[ \t]++[A-Za-z_]|[ \t]*+\r?\n[ \t]*+[A-Za-z_]|(?:[ \t\r\n]*+\))++[ \t\r\n]*+[A-Za-z_"])')
# Before a string, on the reversed text (so that the pattern starts with the quote too; the
# prefixes L u U u8 R LR uR UR u8R and the keywords are written backwards): two operands, a
# `)` and blanks, or an operand and an invocation the string is the argument of.
_NOT_KEYWORD = (rb"(?!(?:nruter|esac|nretxe|wohrt|esle|od|rotarepo|tcurts|ssalc|tsnoc|citats|wen|foezis|"
                rb"enifed|fedfi|fednfi|fi|fednu|amgarp|rorre|gninraw|edulcni|enil)\b)")
_BEFORE_REVERSED = re.compile(
    rb'"(?:R?(?:[LuU]|8u)|R)?(?:[ \t\r\n]++' + _NOT_KEYWORD + rb'\w++[ \t\r\n]++(?:\)|' + _NOT_KEYWORD + rb'\w)'
    rb'|[ \t\r\n]++\)'
    rb'|(?:[ \t\r\n]*+\([ \t\r\n]*+\w++)++[ \t\r\n]++(?:\)|' + _NOT_KEYWORD + rb'\w))')
_TOKEN = re.compile(rb"[A-Za-z_]\w*|[0-9](?:[\w.]|'(?=\w))*|::|->|\S")
_WORD_START = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_WORD = _WORD_START | frozenset(b"0123456789")
_BLANK = frozenset(b" \t\r\n\f\v")
_SEGMENT_END = re.compile(rb"[;{}]")
_PREFIXES = frozenset({b"L", b"u", b"U", b"u8", b"R", b"LR", b"uR", b"UR", b"u8R"})
_C_PREFIXES = frozenset({b"L", b"u", b"U", b"u8"})  # (C has no raw strings: `R` is a name there)
# Words that are no operand of a string concatenation: a run stops at them.
KEYWORDS = frozenset(
    b"alignas alignof asm __asm __asm__ auto bool break case catch char char8_t char16_t char32_t class "
    b"co_await co_return co_yield const consteval constexpr constinit const_cast continue decltype "
    b"default delete do double dynamic_cast else enum explicit export extern false float for friend "
    b"goto if inline int long mutable namespace new noexcept nullptr operator private protected public "
    b"register reinterpret_cast requires restrict return short signed sizeof static static_assert "
    b"_Static_assert static_cast struct switch template this thread_local throw true try typedef typeid "
    b"typename union unsigned using virtual void volatile wchar_t while _Alignof _Generic __attribute__ "
    b"__declspec __typeof__ typeof".split())
_NO_RUN_AFTER = frozenset({b"extern", b"operator"})  # `extern "C" X`, `operator "" _x`: no concatenation
MAX_DEPTH = 6  # macros inside macros, invocations inside invocations


# ----------------------------------------------------------------------------- what tree-sitter takes


def accepted(kinds: str, cpp: bool) -> bool:
    """Does tree-sitter parse a run of juxtaposed operands without an error? `kinds`: one
    letter per item, `S` a string literal, `I` a name, `C` an invocation `NAME(...)`.
    A last invocation reads as a call of the rest (`"x" "y" T("z")`: no error), so it counts as
    a name; any other invocation is an error. tree-sitter-cpp: the second item must be a
    string literal; tree-sitter-c: the first two must not both be names. (tests check this
    against both grammars, every run of up to five items.)"""
    if len(kinds) < 2:
        return True
    if "C" in kinds[:-1]:
        return False
    if kinds[-1] == "C":
        kinds = kinds[:-1] + "I"
    if cpp:
        return kinds[1] == "S"
    return not (kinds[0] == "I" and kinds[1] == "I")


# ----------------------------------------------------------------------------- tokens


@dataclass
class _Token:
    kind: str  # S string literal, I name, K keyword, ( ) and O anything else
    start: int
    end: int


@dataclass
class _Item:
    kind: str  # S, I or C
    start: int  # S: the literal (prefix included); I: the name; C: the name
    end: int  # I, S: past the last byte; C: past the `)`
    name: str = ""
    open_at: int = 0  # C: the `(`
    inner: "list[_Item] | None" = None  # C: the argument's run


def _regions(data: bytes) -> list[tuple[int, int, bool]]:
    """(start, end, is_string) of every comment, character literal, string literal (without
    its prefix) and preprocessor line of the text, in order."""
    out: list[tuple[int, int, bool]] = []
    pos = 0
    search = _REGIONS.search
    while True:
        m = search(data, pos)
        if m is None:
            return out
        start, end = m.span()
        first = data[start]
        if first == 35:  # `#`: a preprocessor line only when it starts its line
            line = start
            while line > 0 and data[line - 1] in b" \t":
                line -= 1
            if line > 0 and data[line - 1] != 10:
                pos = start + 1
                continue
        elif first == 82:  # `R"...`: the string starts at its quote (`R` is a prefix)
            start += 1
        out.append((start, end, first in (34, 82)))
        pos = end


def _tokens(data: bytes, regions: list[tuple[int, int, bool]], lo: int, hi: int, first: int,
            prefixes: frozenset[bytes] = _PREFIXES) -> list[_Token]:
    """The tokens of data[lo:hi]; `regions` from index `first` on are the skipped regions there
    (strings become `S` tokens, with their prefix; comments vanish; a preprocessor line is `O`)."""
    out: list[_Token] = []
    pos = lo
    index = first
    n = len(regions)
    while pos < hi:
        r_start, r_end, is_string = regions[index] if index < n and regions[index][0] < hi else (hi, hi, False)
        for m in _TOKEN.finditer(data, pos, r_start):
            a, b = m.span()
            c = data[a]
            if c in _WORD_START:
                word = data[a:b]
                out.append(_Token("K" if word in KEYWORDS else "I", a, b))
            elif c == 40 or c == 41:
                out.append(_Token(chr(c), a, b))
            else:
                out.append(_Token("O", a, b))
        if r_start >= hi:
            break
        if is_string:
            start = r_start
            if out and out[-1].kind == "I" and out[-1].end == r_start and data[out[-1].start:r_start] in prefixes:
                start = out.pop().start  # L"x", u8"x", LR"(x)"
            if out and out[-1].kind == "K" and data[out[-1].start:out[-1].end] in _NO_RUN_AFTER:
                out.append(_Token("O", start, r_end))
            elif r_end < len(data) and data[r_end] in _WORD:
                out.append(_Token("O", start, r_end))  # "x"sv: a user-defined literal
            else:
                out.append(_Token("S", start, r_end))
        elif data[r_start] == 35:
            out.append(_Token("O", r_start, r_end))
        pos = r_end
        index += 1
    return out


def _closing(tokens: list[_Token], open_index: int, hi: int) -> int | None:
    """The index of the `)` closing the `(` at `open_index` when only operands (strings, names,
    parentheses) stand between; None at the first other token (no invocation item then: a call
    with operators or commas in it is scanned as any tokens, each token once)."""
    depth = 0
    for i in range(open_index, hi):
        kind = tokens[i].kind
        if kind == "(":
            depth += 1
        elif kind == ")":
            depth -= 1
            if depth == 0:
                return i
        elif kind != "S" and kind != "I":
            return None
    return None


def _qualified(tokens: list[_Token], i: int, data: bytes) -> bool:
    """Is name `i` part of a longer expression (`ns::P`, `a.P`, `p->P`, `P::x`, `~P`)?"""
    if i > 0 and tokens[i - 1].kind == "O" and data[tokens[i - 1].start:tokens[i - 1].end] in (b"::", b".", b"->", b"~"):
        return True
    return i + 1 < len(tokens) and tokens[i + 1].kind == "O" and data[tokens[i + 1].start:tokens[i + 1].end] == b"::"


def _runs(tokens: list[_Token], data: bytes) -> list[list[_Item]]:
    """The runs of juxtaposed operands of a token list: two items or more, or an invocation
    alone (its argument may hold one)."""
    out: list[list[_Item]] = []
    run: list[_Item] = []

    def flush() -> None:
        if len(run) > 1 or run and run[0].kind == "C":
            out.append(list(run))
        run.clear()

    i, hi = 0, len(tokens)
    while i < hi:
        tok = tokens[i]
        if tok.kind == "S":
            run.append(_Item("S", tok.start, tok.end))
        elif tok.kind == "I" and not _qualified(tokens, i, data):
            call = _call(tokens, i, hi, data, 0)
            if call is not None:
                item, i = call
                run.append(item)
                continue
            if i + 1 < hi and tokens[i + 1].kind == "(":
                flush()  # a call of anything else: its arguments are scanned as any tokens
            else:
                run.append(_Item("I", tok.start, tok.end, data[tok.start:tok.end].decode()))
        else:
            flush()
        i += 1
    flush()
    return out


def _call(tokens: list[_Token], i: int, hi: int, data: bytes, depth: int) -> tuple[_Item, int] | None:
    """Name `i` followed by `(`, arguments, `)`: an invocation item when the arguments are one
    run of operands (string literals, names, invocations, with no operator or comma between).
    Returns the item and the index after its `)`; None for any other call (its arguments are
    then scanned as any tokens)."""
    if i + 1 >= hi or tokens[i + 1].kind != "(" or depth > MAX_DEPTH:
        return None
    close = _closing(tokens, i + 1, hi)
    if close is None:
        return None
    inner = _operands(tokens, i + 2, close, data, depth + 1)
    if inner is None:
        return None
    name = data[tokens[i].start:tokens[i].end].decode()
    return _Item("C", tokens[i].start, tokens[close].end, name, tokens[i + 1].start, inner), close + 1


def _operands(tokens: list[_Token], lo: int, hi: int, data: bytes, depth: int) -> list[_Item] | None:
    """tokens[lo:hi] as one run of operands, or None."""
    items: list[_Item] = []
    i = lo
    while i < hi:
        tok = tokens[i]
        if tok.kind == "S":
            items.append(_Item("S", tok.start, tok.end))
        elif tok.kind == "I" and not _qualified(tokens, i, data):
            call = _call(tokens, i, hi, data, depth)
            if call is not None:
                item, i = call
                items.append(item)
                continue
            if i + 1 < hi and tokens[i + 1].kind == "(":
                return None
            items.append(_Item("I", tok.start, tok.end, data[tok.start:tok.end].decode()))
        else:
            return None
        i += 1
    return items or None


def _has_string(items: Iterable[_Item]) -> bool:
    return any(it.kind == "S" or it.kind == "C" and it.inner and _has_string(it.inner) for it in items)


# ----------------------------------------------------------------------------- macros


_OBJECT_DEFINE = re.compile(rb"#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])[ \t]*((?:[^\n\\]|\\\r?\n|\\)*)")
_NOISE = re.compile(r"/\*.*?(?:\*/|$)|//[^\n]*|\\\r?\n", re.S)
_PASTED = re.compile(r"^(?:L|u8|u|U)\s*##\s*(\w+)$")
_STRINGIFIED = re.compile(r"^#\s*(\w+)$")
_PASSED = re.compile(r"^([A-Za-z_]\w*)\s*\(\s*(\w+)\s*\)$")


class _Macros:
    """What the macros a file can see expand to: `kind(name)` is `string` (an object-like macro
    that expands to string literals), `empty` (its definitions are empty), `wrapper` (a
    function-like macro whose value is its argument), `stringify` (whose value is its argument
    made a string), `other` (any other visible macro) or `unknown` (none is visible)."""

    def __init__(self, data: bytes, visible: dict, blank: Callable[[str], str]):
        self.objects: dict[str, list[str]] = {}  # the file's own definitions, all of them
        self.functions: dict[str, list[tuple[list[str], str, bool]]] = {}
        if b"define" in data:
            for m in line_start_matches(_OBJECT_DEFINE, data):
                self.objects.setdefault(m.group(1).decode(), []).append(m.group(2).decode("utf-8", "replace"))
            for name, params, body, variadic in scan_function_macros(data):
                self.functions.setdefault(name, []).append((params, body, variadic))
        self.visible = visible
        self.blank = blank
        self.kinds: dict[str, str] = {}

    def kind(self, name: str, depth: int = 0) -> str:
        found = self.kinds.get(name)
        if found is not None:
            return found
        objects = list(self.objects.get(name, ()))
        functions = list(self.functions.get(name, ()))
        header = self.visible.get(name)
        if header is not None:
            if header.params is None:
                objects.append(header.body)
            else:
                functions.append((list(header.params), header.body, header.variadic))
        self.kinds[name] = "other"  # (a macro inside itself)
        if objects and functions:
            kind = "other"
        elif objects:
            kind = self._object_kind(objects, depth)
        elif functions:
            kind = self._function_kind(functions, depth)
        else:
            kind = "unknown"
        self.kinds[name] = kind
        return kind

    def _text(self, body: str) -> str:
        return " ".join(self.blank(_NOISE.sub(" ", body)).split())

    def _object_kind(self, bodies: list[str], depth: int) -> str:
        kinds = set()
        for body in bodies:
            text = self._text(body)
            if not text:
                kinds.add("empty")
                continue
            data = text.encode()
            tokens = _tokens(data, _regions(data), 0, len(data), 0)
            items = _operands(tokens, 0, len(tokens), data, 0) if tokens and depth < MAX_DEPTH else None
            if items is None or not all(self._body_string(it, depth + 1) for it in items) \
                    or not any(it.kind != "I" or self.kind(it.name, depth + 1) == "string" for it in items):
                return "other"
            kinds.add("string")
        return "string" if "string" in kinds else "empty"

    def _body_string(self, item: _Item, depth: int) -> bool:
        """Is this item of a macro's body a string (or nothing)? An invocation of a macro that
        is not visible counts when its argument is strings (`ORT_TSTR(".dll")`)."""
        if item.kind == "S":
            return True
        kind = self.kind(item.name, depth)
        if item.kind == "I":
            return kind in ("string", "empty")
        if kind == "stringify":
            return True
        return kind in ("wrapper", "unknown") and bool(item.inner) and all(self._body_string(i, depth + 1) for i in item.inner)

    def _function_kind(self, definitions: list[tuple[list[str], str, bool]], depth: int) -> str:
        kinds = set()
        for params, body, variadic in definitions:
            if len(params) != 1 or variadic:
                return "other"
            param = params[0]
            text = self._text(body)
            if text == param or (m := _PASTED.match(text)) is not None and m.group(1) == param:
                kinds.add("wrapper")
            elif (m := _STRINGIFIED.match(text)) is not None and m.group(1) == param:
                kinds.add("stringify")
            elif (m := _PASSED.match(text)) is not None and m.group(2) == param and depth < MAX_DEPTH:
                inner = self.kind(m.group(1), depth + 1)
                if inner not in ("wrapper", "stringify"):
                    return "other"  # `f(x)` with f defined nowhere: a call, as likely as not
                kinds.add(inner)
            else:
                return "other"
        return kinds.pop() if len(kinds) == 1 else "other"


# ----------------------------------------------------------------------------- the rewrite


class _Rewrite:
    """The edits that make one run plain string literals."""

    def __init__(self, data: bytes, macros: _Macros):
        self.data = data
        self.macros = macros
        self.literals: list[tuple[int, int]] = []  # spans that become a string literal
        self.blanks: list[tuple[int, int]] = []  # spans that become blanks

    def string_like(self, item: _Item) -> str | None:
        """What `item` is, if it reads as a string: `known` (a literal, a known macro or an
        invocation of one) or `unknown` (needs string items around it); None otherwise."""
        if item.kind == "S":
            return "known"
        kind = self.macros.kind(item.name)
        if item.kind == "I":
            return "known" if kind in ("string", "empty") else "unknown" if kind == "unknown" else None
        if kind == "stringify":
            return "known"
        if kind in ("wrapper", "unknown") and item.inner:
            return "known" if kind == "wrapper" else "unknown"
        return None

    def convert(self, items: list[_Item]) -> str | None:
        """Record the edits that turn every item that reads as a string into one; returns the
        run's kinds afterwards (as `accepted` takes them), None when an invocation stays."""
        shapes = [self.string_like(it) for it in items]
        kinds = []
        for i, (item, shape) in enumerate(zip(items, shapes)):
            if shape == "unknown" and not (0 < i < len(items) - 1 and shapes[i - 1] == "known" and shapes[i + 1] == "known"):
                shape = None  # a macro nothing describes: only between two string items
            if shape is None:
                if item.kind == "C":
                    return None
                kinds.append(item.kind)
                continue
            if item.kind == "S":
                kinds.append("S")
            elif item.kind == "I" or self.macros.kind(item.name) == "stringify":
                if not self.literal(item.start, item.end):
                    if item.kind == "C":
                        return None
                    continue  # a one-letter name: blanked, nothing stands there
                kinds.append("S")
            else:  # a wrapper: its name and parentheses go, its argument is a run of strings
                inner = self.convert(item.inner or [])
                if inner is None or "I" in inner or "C" in inner:
                    return None
                self.blanks.append((item.start, item.open_at + 1))
                self.blanks.append((item.end - 1, item.end))
                kinds.extend(inner)
        return "".join(kinds)

    def literal(self, start: int, end: int) -> bool:
        if end - start < 2:
            self.blanks.append((start, end))
            return False
        if b"\n" in self.data[start:end]:
            return False
        self.literals.append((start, end))
        return True


_UNDERSCORES = bytes(b if b >= 0x80 else ord("_") for b in range(256))  # (UTF-8 bytes kept: columns stay)


def _apply(out: bytearray, data: bytes, rewrite: _Rewrite) -> None:
    for start, end in rewrite.literals:
        out[start:end] = b'"' + data[start + 1:end - 1].translate(_UNDERSCORES) + b'"'
    for start, end in rewrite.blanks:
        out[start:end] = bytes(b if b in (10, 13) else 32 for b in data[start:end])


def _kinds(items: list[_Item]) -> str:
    return "".join(it.kind for it in items)


def _candidates(data: bytes, regions: list[tuple[int, int, bool]]) -> list[int]:
    """Indexes of the string literals in code where a rejected run can be: with a name (not a
    keyword) or a `)` right before it, or a name right after it; or inside an invocation
    (`T("x")`) with a name or a `)` before it, or a name or a string after it."""
    out = []
    previous_end = 0
    n = len(data)
    for index, (start, end, is_string) in enumerate(regions):
        if not is_string:
            previous_end = end
            continue
        before = _back(data, start, previous_end)
        if before >= previous_end and data[before] in _WORD and before == start - 1:
            word_start = _word_start(data, before, previous_end)
            if data[word_start:start] in _PREFIXES:  # L"x": look before the prefix
                before = _back(data, word_start, previous_end)
        after = end
        while after < n and data[after] in _BLANK:
            after += 1
        glued = after > end and after < n and data[after] in _WORD_START or _operand_before(data, before, previous_end)
        if not glued and before >= previous_end and data[before] == 40:  # `T("x")`: what stands around T(...)
            name_end = _back(data, before, previous_end)
            if name_end >= previous_end and data[name_end] in _WORD:
                glued = _operand_before(data, _back(data, _word_start(data, name_end, previous_end), previous_end),
                                        previous_end)
            if not glued and after < n and data[after] == 41:
                following = after + 1
                while following < n and data[following] in _BLANK:
                    following += 1
                glued = following < n and (data[following] in _WORD_START or data[following] == 34)
        if glued:
            out.append(index)
        previous_end = end
    return out


def _back(data: bytes, pos: int, floor: int) -> int:
    """The last byte before `pos` that is not blank (floor - 1 when there is none from `floor`)."""
    i = pos - 1
    while i >= floor and data[i] in _BLANK:
        i -= 1
    return i


def _word_start(data: bytes, last: int, floor: int) -> int:
    i = last
    while i > floor and data[i - 1] in _WORD:
        i -= 1
    return i


def _operand_before(data: bytes, at: int, floor: int) -> bool:
    """Does an operand end at `at`: a `)` or a name that is no keyword?"""
    if at < floor:
        return False
    if data[at] == 41:
        return True
    return data[at] in _WORD and data[_word_start(data, at, floor):at + 1] not in KEYWORDS


def _segment(data: bytes, regions: list[tuple[int, int, bool]], index: int, floor: int) -> tuple[int, int, int]:
    """(start, end, first region index) of the stretch around string `index` between a `;`, `{`
    or `}` (outside strings and comments; or a preprocessor line) before it and one after it;
    not before `floor`."""
    first = index
    start = floor
    while True:
        gap_start = regions[first - 1][1] if first > 0 else 0
        gap_start = max(gap_start, floor)
        gap_end = regions[first][0]
        cut = max(data.rfind(b";", gap_start, gap_end), data.rfind(b"{", gap_start, gap_end),
                  data.rfind(b"}", gap_start, gap_end))
        if cut >= 0:
            start = cut + 1
            break
        if first == 0 or regions[first - 1][1] <= floor or data[regions[first - 1][0]] == 35:
            start = gap_start
            break
        first -= 1
    last = index
    n = len(regions)
    while True:
        gap_start = regions[last][1]
        gap_end = regions[last + 1][0] if last + 1 < n else len(data)
        m = _SEGMENT_END.search(data, gap_start, gap_end)
        if m is not None:
            return start, m.start(), first
        if last + 1 >= n or data[regions[last + 1][0]] == 35:
            return start, gap_end, first
        last += 1


def may_glue(data: bytes) -> bool:
    """Can the text hold a run of string literals and operands that tree-sitter rejects? A quick
    test of the whole text, before the scan that pairs quotes (two files in three have no such
    place): every rejected run has a string literal with, after it, a name (on its line or the
    next), or `)` and then a name or a string; or, before it, a `)`, two operands (not after a
    keyword: `return P "x"` parses), or an operand and an invocation it is the argument of
    (`P T("x")`). Comments between are not looked through (`"x" /* c */ P` is left as it is), nor
    are blank lines."""
    if b'"' not in data:
        return False
    return _AFTER.search(data) is not None or _BEFORE_REVERSED.search(data[::-1]) is not None


def rewrite_string_macros(data: bytes, visible: dict, blank: Callable[[str], str], cpp: bool) -> bytes:
    """`data` with every run of string literals and macros that tree-sitter rejects rewritten
    into plain string literals, same length (see the module docstring). `visible`: the macros
    of the file's headers (header_index.Visible.macros); `blank` blanks the policy's decorations
    in a macro body; `cpp`: the grammar is tree-sitter-cpp's (else tree-sitter-c's)."""
    if not may_glue(data):
        return data
    regions = _regions(data)
    candidates = _candidates(data, regions)
    if not candidates:
        return data
    macros: list[_Macros] = []

    def known() -> _Macros:  # read only when a run is rejected (rarely)
        if not macros:
            macros.append(_Macros(data, visible, blank))
        return macros[0]

    out: bytearray | None = None
    done = 0
    for index in candidates:
        if regions[index][0] < done:
            continue
        start, end, first = _segment(data, regions, index, done)
        done = end
        for run in _runs(_tokens(data, regions, start, end, first, _PREFIXES if cpp else _C_PREFIXES), data):
            if _has_string(run):
                out = _rewrite_run(data, run, known, cpp, out)
    return bytes(out) if out is not None else data


def _rewrite_run(data: bytes, run: list[_Item], macros: Callable[[], _Macros], cpp: bool,
                 out: bytearray | None) -> bytearray | None:
    """Rewrite `run` when tree-sitter rejects it and the rewrite makes it acceptable; else look
    into the arguments of its invocations, which tree-sitter reads as expressions of their own."""
    if not accepted(_kinds(run), cpp):
        rewrite = _Rewrite(data, macros())
        kinds = rewrite.convert(run)
        if kinds is not None and accepted(kinds, cpp) and (rewrite.literals or rewrite.blanks):
            if out is None:
                out = bytearray(data)
            _apply(out, data, rewrite)
            return out
    for item in run:
        if item.kind == "C" and item.inner and _has_string(item.inner):
            out = _rewrite_run(data, item.inner, macros, cpp, out)
    return out
