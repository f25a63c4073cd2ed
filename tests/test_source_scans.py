"""The whole-file text passes of the C/C++ front ends (source.py, declaration_macros.py,
header_index.py) were made cheaper without changing what they return: here each is compared
with the straightforward version it replaced (one `^`-anchored regex, one token at a time),
kept below as the reference, on tricky hand-written texts and on random texts built from the
pieces these passes care about (directives, parentheses, braces, strings, comments, blanks,
line continuations)."""
from __future__ import annotations

import random
import re

import pytest

from ortlint.frontends.common import declaration_macros as dm
from ortlint.frontends.common import header_index as hi
from ortlint.frontends.common import source

# ----------------------------------------------------------------------------- the reference versions

_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)\n]*)\)[ \t]*((?:[^\n\\]|\\\r?\n|\\)*)", re.M)
_PP_TOKENS = re.compile(
    rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?(?:\*/|\Z)|//[^\n]*|[()]'
    rb'|^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(?:[^\n\\]|\\\r?\n|\\)*', re.M | re.S)
_BRACE_TOKENS = re.compile(
    rb'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?(?:\*/|\Z)|//[^\n]*|[{}]'
    rb'|^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(?:[^\n\\]|\\\r?\n|\\)*', re.M | re.S)
_HAS_CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*if", re.M)
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_INVOCATION = re.compile(rb"^[ \t]*([A-Za-z_]\w*)[ \t]*\(", re.M)
_BRACE_SCAN = re.compile(rb'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?(?:\*/|\Z)'
                         rb'|^[ \t]*#(?:[^\n\\]|\\.)*|[{}]', re.M | re.S)


def ref_scan_function_macros(data: bytes) -> list:
    out = []
    for m in _DEFINE.finditer(data):
        params = [p.strip() for p in m.group(2).decode("utf-8", "replace").split(",") if p.strip()]
        variadic = bool(params) and params[-1] == "..."
        out.append((m.group(1).decode(), params[:-1] if variadic else params,
                    m.group(3).decode("utf-8", "replace"), variadic))
    return out


def ref_used_at_line_start(data: bytes, name: str) -> bool:
    return re.search(rb"^[ \t]*" + re.escape(name.encode()) + rb"[ \t]*\(", data, re.M) is not None


def ref_closing_paren(data: bytes, open_at: int, limit: int = 1 << 16) -> int | None:
    depth, i, end = 0, open_at, min(len(data), open_at + limit)
    while i < end:
        c = data[i]
        if c in b"\"'":
            close = data.find(bytes([c]), i + 1)
            while close > 0 and data[close - 1] == ord("\\") and data[close - 2] != ord("\\"):
                close = data.find(bytes([c]), close + 1)
            if close < 0:
                return None
            i = close
        elif c == ord("("):
            depth += 1
        elif c == ord(")"):
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == ord(";") or c == ord("{") and depth <= 1:
            return None
        i += 1
    return None


def ref_blank_conditionals_in_parens(data: bytes) -> bytes:
    if not _HAS_CONDITIONAL.search(data):
        return data
    out: bytearray | None = None
    depth = 0
    stack: list[dict] = []
    for m in _PP_TOKENS.finditer(data):
        tok = m.group(0)
        directive = m.group(1)
        if directive is None:
            if tok == b"(" or tok == b")":
                depth += 1 if tok == b"(" else -1
                depth = max(depth, 0)
            continue
        if directive in (b"if", b"ifdef", b"ifndef"):
            cond = tok.split(None, 1)[1].strip() if len(tok.split(None, 1)) > 1 else b""
            zero = directive == b"if" and cond in (b"0", b"(0)")
            stack.append({"depth": depth, "branch": 0, "keep": 1 if zero else 0, "after": None,
                          "cuts": [(m.start(), m.end())], "branch_start": m.end()})
        elif stack and directive in (b"elif", b"else"):
            top = stack[-1]
            if top["branch"] == top["keep"]:
                top["after"] = depth
            else:
                top["cuts"].append((top["branch_start"], m.start()))
            top["branch"] += 1
            top["cuts"].append((m.start(), m.end()))
            top["branch_start"] = m.end()
            depth = top["depth"]
        elif stack and directive == b"endif":
            top = stack.pop()
            if top["branch"] == top["keep"]:
                top["after"] = depth
            else:
                top["cuts"].append((top["branch_start"], m.start()))
            top["cuts"].append((m.start(), m.end()))
            if top["depth"] > 0:
                if out is None:
                    out = bytearray(data)
                for a, b in top["cuts"]:
                    out[a:b] = data[a:b].translate(source._SPACES)
            depth = top["after"] if top["after"] is not None else top["depth"]
    return bytes(out) if out is not None else data


def ref_blank_unbalanced_alternatives(data: bytes) -> bytes:
    if not _HAS_CONDITIONAL.search(data):
        return data
    out: bytearray | None = None
    stack: list[dict] = []
    for m in _BRACE_TOKENS.finditer(data):
        tok = m.group(0)
        directive = m.group(1)
        if directive is None:
            if tok in (b"{", b"}") and stack:
                stack[-1]["balance"][-1] += 1 if tok == b"{" else -1
            continue
        if directive in (b"if", b"ifdef", b"ifndef"):
            cond = tok.split(None, 1)[1].strip() if len(tok.split(None, 1)) > 1 else b""
            stack.append({"balance": [0], "directives": [(m.start(), m.end())], "branches": [],
                          "branch_start": m.end(), "ifdef": directive == b"ifdef",
                          "zero": directive == b"if" and cond in (b"0", b"(0)")})
        elif stack and directive in (b"elif", b"else"):
            top = stack[-1]
            top["branches"].append((top["branch_start"], m.start()))
            top["directives"].append((m.start(), m.end()))
            top["balance"].append(0)
            top["branch_start"] = m.end()
        elif stack and directive == b"endif":
            top = stack.pop()
            top["branches"].append((top["branch_start"], m.start()))
            top["directives"].append((m.start(), m.end()))
            balances = top["balance"]
            if len(balances) > 1 and balances[0] != 0 and all(b == balances[0] for b in balances):
                keep = len(balances) - 1 if top["ifdef"] else (1 if top["zero"] else 0)
                if out is None:
                    out = bytearray(data)
                cuts = top["directives"] + [span for i, span in enumerate(top["branches"]) if i != keep]
                for a, b in cuts:
                    out[a:b] = data[a:b].translate(source._SPACES)
            if stack:
                stack[-1]["balance"][-1] += balances[0]
    return bytes(out) if out is not None else data


def ref_terminate_statement_macros(data: bytes, names: set[str]) -> bytes:
    if not names:
        return data
    pattern = re.compile(rb"^[ \t]*(" + b"|".join(re.escape(n.encode()) for n in sorted(names)) + rb")[ \t]*\(", re.M)
    out = bytearray(data)
    for m in pattern.finditer(data):
        if not source._starts_statement(data, m.start(1)):
            continue
        end = ref_closing_paren(data, m.end() - 1)
        if end is None:
            continue
        nxt = source._next_token(data, end)
        if nxt is None or data[nxt] in source._NOT_A_STATEMENT_AFTER or data.startswith(b"else", nxt):
            continue
        blank = source._first_blank_after(data, end)
        if blank is not None and blank < nxt and data[blank:blank + 1] in (b" ", b"\t"):
            out[blank] = ord(";")
        elif data[nxt] == ord("#") and m.start(1) > 0 and out[m.start(1) - 1] in b" \t" and b"\n" not in data[m.start(1):end]:
            start = m.start(1)
            out[start - 1:end - 1] = data[start:end]
            out[end - 1] = ord(";")
    return bytes(out)


def ref_in_function_bodies(data: bytes, positions: list[int]) -> list[bool]:
    out: list[bool] = []
    stack: list[bool] = []
    it = iter(positions)
    nxt = next(it, None)
    for m in _BRACE_SCAN.finditer(data):
        while nxt is not None and nxt < m.start():
            out.append(any(stack))
            nxt = next(it, None)
        if nxt is None:
            break
        token = m.group(0)
        if token == b"{":
            before = data[max(0, m.start() - 16):m.start()].rstrip()
            stack.append(bool(stack and stack[-1]) or before.endswith(dm._CODE_OPENERS)
                         or dm._TRAILING_RETURN.search(data, max(0, m.start() - 160), m.start()) is not None)
        elif token == b"}" and stack:
            stack.pop()
    while nxt is not None:
        out.append(any(stack))
        nxt = next(it, None)
    return out


def ref_mask_declaration_arguments(data: bytes, names: set[str]) -> tuple[bytes, dict[int, str]]:
    if not names:
        return data, {}
    out: bytearray | None = None
    kept: dict[int, str] = {}
    candidates = [m for m in _INVOCATION.finditer(data) if m.group(1).decode("ascii", "replace") in names]
    in_code = ref_in_function_bodies(data, [m.start(1) for m in candidates]) if candidates else []
    for m, code in zip(candidates, in_code):
        if not code or not source._starts_statement(data, m.start(1)) or dm._continues_define(data, m.start()):
            continue
        open_at = m.end() - 1
        end = ref_closing_paren(data, open_at)
        if end is None:
            continue
        text = data[open_at:end].decode("utf-8", "replace")
        if not any(dm.is_declaration_or_type(a) for a in dm._split(text)):
            continue
        if out is None:
            out = bytearray(data)
        out[open_at + 1:end - 1] = data[open_at + 1:end - 1].translate(dm._SPACES)
        kept[open_at] = text
    return (bytes(out) if out is not None else data), kept


# ----------------------------------------------------------------------------- texts

HANDWRITTEN = [
    b"",
    b"#if X\nf(a,\n#ifdef Y\n b\n#else\n c\n#endif\n);\n#endif\n",
    b"void f() {\n  g(a,\n  #if 0\n  b,\n  #else\n  c,\n  #endif\n  d);\n}\n",
    b"\t #  ifdef A\nint x = (1\n# elif B\n+ 2\n#endif\n);\n",
    b"x = 1; #if A\n(\n#endif\n)\n",  # a `#if` that does not start its line is no directive
    b"/* (\n#if A */ f(\n#if B\n x\n#endif\n);\n",
    b'"#if A (" f(\n#if B\n"x)"\n#endif\n);\n',
    b"#if V\n if (a) {\n#else\n if (b) {\n#endif\n  g();\n}\n",
    b"#ifdef V\nvoid f() {\n#else\nvoid g() {\n#endif\n}\n",
    b"#if 0\n{\n#else\n{\n#endif\n}\n",
    b"f(\n#if A \\\n  && B\n x,\n#endif\n y);\n",
    b"a)))(((\n#if A\n)\n#endif\n",
    b"#define CHECK(x) do { if (!(x)) return; } while (0)\n  CHECK(a)\n  b = 2;\n  # define M(a, ...) \\\n  a\n",
    b"x #define N(a) a\n#define O(a) a(\n",
    b'#include "a.h"\n  # include "b/c.h"\nint i; #include "no.h"\n#include <sys.h>\n',
    b"void f() {\n  ASSIGN_OR_RETURN(OrtValue* v, Make(api));\n  CHECK(st)\n  g();\n}\nASSIGN_OR_RETURN(int x, y);\n",
    b"void f() {\n#if A\n  CHECK(a)\n#endif\n  x();\n}\n",
    b"void f() {\n  s = \"(\" ; CHECK((a, \")\"), 'x')\n  y();\n}\n",
]

PIECES = [b"(", b")", b"{", b"}", b"\n", b"\n", b"\n", b" ", b"\t", b"  ", b"#if 0", b"#if X", b"#ifdef A",
          b"#ifndef B", b"#else", b"#elif C", b"#endif", b"# if", b"#  endif", b'"', b"'", b"/*", b"*/",
          b"//", b"\\\n", b"\\", b"a", b"f", b"x1", b";", b",", b"void g() {", b"CHECK", b"CHECK(", b"MAC(",
          b"ASSIGN(int v, ", b"#define M(x) ", b"#define CHECK(x) do {} while (0)", b'#include "h.h"',
          b"#include", b"else", b"return", b"\r\n", b"\xc3\xa9", b"#", b"*", b"=", b"->"]


def random_texts(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 120))) for _ in range(count)]


LINES = [b"#if X", b"#ifdef A", b"#if 0", b"  #  ifndef B", b"#else", b"#elif B", b"#endif", b"  if (a) {", b"}",
         b"  } else {", b"  f(a,", b"  b);", b"  g(", b"  )", b"  /* ( */", b'  s = "{(";', b"void h() {",
         b"  CHECK(x)", b"  ASSIGN(int v, f(x));", b"#define D(x) { \\", b"  x; }", b"int k; #if Q", b"  // }",
         b"#if V\n if (a) {\n#else\n if (b) {\n#endif", b"#ifdef V\nvoid f() {\n#else\nvoid g() {\n#endif",
         b"#if 0\n{\n#elif Z\n{\n#else\n{\n#endif", b"#if W\n}\n#else\n}\n#endif"]


def structured_texts(count: int, seed: int) -> list[bytes]:
    """Lines of code and directives, so that conditionals often enclose parentheses and braces."""
    rng = random.Random(seed)
    return [b"\n".join(rng.choice(LINES) for _ in range(rng.randint(0, 30))) + b"\n" for _ in range(count)]


TEXTS = HANDWRITTEN + random_texts(2000, 11) + structured_texts(2000, 12)


def test_random_texts_exercise_the_passes() -> None:
    """The random texts do reach the interesting cases (not a test that cannot fail)."""
    assert sum(source.blank_conditionals_in_parens(t) != t for t in TEXTS) > 50
    assert sum(source.blank_unbalanced_alternatives(t) != t for t in TEXTS) > 50
    assert sum(dm.mask_declaration_arguments(t, {"ASSIGN"})[1] != {} for t in TEXTS) > 50
    assert sum(source.terminate_statement_macros(t, {"CHECK"}) != t for t in TEXTS) > 50
    assert sum(bool(source.scan_function_macros(t)) for t in TEXTS) > 50


@pytest.mark.parametrize("chunk", range(4))
def test_conditional_passes_match_the_reference(chunk: int) -> None:
    for text in TEXTS[chunk::4]:
        expected_parens = ref_blank_conditionals_in_parens(text)
        assert source.blank_conditionals_in_parens(text) == expected_parens, text
        expected_braces = ref_blank_unbalanced_alternatives(text)
        assert source.blank_unbalanced_alternatives(text) == expected_braces, text
        assert source.blank_preprocessor_alternatives(text) == ref_blank_unbalanced_alternatives(expected_parens), text
        assert source.has_conditional(text) == bool(_HAS_CONDITIONAL.search(text)), text


@pytest.mark.parametrize("chunk", range(4))
def test_line_start_scans_match_the_reference(chunk: int) -> None:
    for text in TEXTS[chunk::4]:
        assert source.scan_function_macros(text) == ref_scan_function_macros(text), text
        assert hi.include_names(text) == [m.group(1).decode("utf-8", "replace") for m in _INCLUDE.finditer(text)], text
        for name in ("CHECK", "MAC", "f", "a"):
            used = source.line_start_search(source._invocation_of(name), text) is not None
            assert used == ref_used_at_line_start(text, name), (name, text)
        names = {"CHECK", "MAC", "ASSIGN", "f"}
        assert source.terminate_statement_macros(text, names) == ref_terminate_statement_macros(text, names), text
        assert dm.mask_declaration_arguments(text, names) == ref_mask_declaration_arguments(text, names), text


def test_complete_statement_macros_keep_every_offset() -> None:
    """With `complete` macros (is_complete_statement_body) the pass still only replaces blanks
    or moves an invocation left within its line: same length, newlines where they were."""
    changed = 0
    for text in TEXTS:
        out = source.terminate_statement_macros(text, {"CHECK", "MAC", "f"}, {"CHECK", "MAC"})
        assert len(out) == len(text) and [i for i, c in enumerate(out) if c == 10] == [i for i, c in enumerate(text) if c == 10]
        changed += out != source.terminate_statement_macros(text, {"CHECK", "MAC", "f"})
    assert changed > 20


@pytest.mark.parametrize("chunk", range(4))
def test_closing_paren_and_brace_scan_match_the_reference(chunk: int) -> None:
    for text in TEXTS[chunk::4]:
        opens = [i for i, c in enumerate(text) if c == ord("(")]
        for i in opens:
            assert source._closing_paren(text, i) == ref_closing_paren(text, i), (i, text)
            assert source._closing_paren(text, i, 7) == ref_closing_paren(text, i, 7), (i, text)
        positions = sorted({m.start(1) for m in _INVOCATION.finditer(text)} | set(opens))
        assert dm._in_function_bodies(text, positions) == ref_in_function_bodies(text, positions), text


def test_line_start_matches_is_the_anchored_scan() -> None:
    pattern = re.compile(rb"#[ \t]*(\w+)(?:[^\n\\]|\\\r?\n|\\)*")
    anchored = re.compile(rb"^[ \t]*" + pattern.pattern, re.M)
    for text in TEXTS:
        got = [(m.group(0), m.group(1), m.end()) for m in source.line_start_matches(pattern, text)]
        want = [(m.group(0).lstrip(b" \t"), m.group(1), m.end()) for m in anchored.finditer(text)]
        assert got == want, text


# ----------------------------------------------------------------------------- macro substitution


def ref_substitute_macro(macro, args: list[str]) -> str | None:
    if len(args) < len(macro.params) or (len(args) > len(macro.params) and not macro.variadic):
        if not (len(macro.params) == 0 and args == [""]):
            return None
    mapping = dict(zip(macro.params, args))
    if macro.variadic:
        mapping["__VA_ARGS__"] = ", ".join(args[len(macro.params):])
    body = macro.body.replace("\\\n", " ")

    def stringify(m: re.Match[str]) -> str:  # white space inside the argument becomes one blank
        text = re.sub(r"\s+", " ", mapping.get(m.group(1), m.group(1))).strip()
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    body = re.sub(r"(?<!#)#\s*([A-Za-z_]\w*)", lambda m: stringify(m) if m.group(1) in mapping else m.group(0), body)
    body = re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: mapping.get(m.group(1), m.group(1)) if m.group(1) in mapping else m.group(0), body)
    body = re.sub(r"\s*##\s*", "", body)
    return body


BODY_PIECES = ["x", "y", "ab", "a", "b1", "_z", "é", "xé", "1x", "0x", " ", "(", ")", ",", ";", "#", "##", "# x",
               "#y", '"x"', "\\\n", "__VA_ARGS__", "do {", "} while (0)", "return", "st", "x##y", "x ## 1", "->"]
PARAM_SETS = [[], ["x"], ["x", "y"], ["a", "ab"], ["st"], ["xé"], ["x", "x"], ["/*c*/ x"], ["é"]]
ARG_PIECES = ["", "x", "f(a, b)", '"s,t"', "y", "st", "\\", '"', "p->q", "é", "f(a) ==\n    NULL", " \tp "]


def test_macro_substitution_matches_the_reference() -> None:
    from ortlint.frontends.common.macro_args import Macro, substitute_macro

    rng = random.Random(13)
    changed = 0
    for _ in range(6000):
        params = rng.choice(PARAM_SETS)
        body = "".join(rng.choice(BODY_PIECES) for _ in range(rng.randint(0, 14)))
        macro = Macro("M", list(params), body, rng.random() < 0.3)
        args = [rng.choice(ARG_PIECES) for _ in range(rng.randint(0, 3))]
        expected = ref_substitute_macro(macro, args)
        assert substitute_macro(macro, args) == expected, (params, body, args)
        changed += expected is not None and expected != body
    assert changed > 1000


# ----------------------------------------------------------------------------- decorations

DECORATION_PIECES = [b"JNIEXPORT", b"JNICALL", b"ORT_API_CALL", b"__declspec", b"(dllexport)", b"__attribute__",
                     b"((unused))", b"_In_", b"_Out_", b"_Outptr_result_maybenull_", b"_In_reads_(n)", b"_Success_",
                     b"(return == 0)", b"x", b"a_", b"_", b"1", b" ", b"\n", b"(", b")", b"*", b"jint", b"ORT_EXPORT",
                     b"WINAPI", b"xJNICALL", b"_Inx", b"\xc3\xa9"]


def test_quick_decoration_pattern_matches_the_policy_regex() -> None:
    from ortlint.api import default_policy

    policy = default_policy()
    quick = source._quick_blank_pattern(policy)
    assert quick is not None
    slow = re.compile(policy.blank_regex().pattern.encode())
    rng = random.Random(17)
    blanked = 0
    for _ in range(4000):
        text = b"".join(rng.choice(DECORATION_PIECES) for _ in range(rng.randint(0, 25)))
        want = [(m.start(), m.end()) for m in slow.finditer(text)]
        assert [(m.start(), m.end()) for m in quick.finditer(text)] == want, text
        blanked += bool(want)
    assert blanked > 1000


def test_decorations_that_do_not_start_a_word_use_the_policy_regex() -> None:
    from ortlint.policy import Policy

    policy = Policy()
    policy.blank_words = {"[[nodiscard]]", "API"}
    assert source._quick_blank_pattern(policy) is None
    slow = re.compile(policy.blank_regex().pattern.encode())
    text = b"[[nodiscard]] int API f(); x[[nodiscard]]"
    assert source.blank_decorations(text, policy) == slow.sub(lambda m: b" " * len(m.group(0)), text)
    assert source.blank_decorations(text, policy) != text


def ref_split_macro_args(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("("):
        text = text[1:]
    if text.endswith(")"):
        text = text[:-1]
    args, depth, cur, quote = [], 0, [], None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch in "([{":
            depth += 1
            cur.append(ch)
        elif ch in ")]}":
            depth -= 1
            cur.append(ch)
        elif ch == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    if cur or args:
        args.append("".join(cur).strip())
    return args


def test_macro_argument_splitting_matches_the_reference() -> None:
    from ortlint.frontends.common.macro_args import split_macro_args

    pieces = ["(", ")", "[", "]", "{", "}", ",", " ", "\n", '"', "'", "\\", "a", "f(x)", '","', "é", "\\\"", "<", ">"]
    rng = random.Random(19)
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
        assert split_macro_args(text) == ref_split_macro_args(text), text


def test_pointer_new_arrays_match_the_reference() -> None:
    old = re.compile(rb"\bnew[ \t]+(?:const[ \t]+)?[A-Za-z_][\w:]*(?:[ \t]*<[^<>;{}()\n]*>)?[ \t]*(\*+)[ \t]*\[")
    pieces = [b"new", b" ", b"T", b"*", b"**", b"[", b"n]", b"const ", b"<int>", b"x", b"renew", b"_new", b"anew",
              b"\n", b"::", b"std::vector<int*>", b"(", b";", b"\t", b"new T*[n]", b"new const T **[", b"new X<a> *[",
              b"new\tns::T*\t["]
    rng = random.Random(23)
    found = 0
    for _ in range(5000):
        text = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        want = [m.span(1) for m in old.finditer(text)]
        assert [m.span(1) for m in source._NEW_POINTER_ARRAY.finditer(text)] == want, text
        found += bool(want)
    assert found > 500


def test_a_conditional_in_parentheses_inside_an_else_branch_is_blanked() -> None:
    """Functions written twice under `#if MINIMAL ... #else ... #endif`: tree-sitter reads both,
    so a condition's `#ifdef` in the second one must go too (ONNX Runtime's allocation planner)."""
    text = (b"#if defined(MINIMAL)\nint f(void) { return 0; }\n#else\n"
            b"int f(int x, int y) {\n  if (x\n#ifdef B\n      && y\n#endif\n  ) return 1;\n  return 0;\n}\n#endif\n")
    out = source.blank_conditionals_in_parens(text)
    assert len(out) == len(text) and out.count(b"#") == 3 and b"&& y" in out  # the inner directives only
    alternatives = b"f(a,\n#ifdef X\n g(b\n#else\n h(c\n#endif\n ));\nint k;\n#ifdef Y\nint m;\n#endif\n"
    out = source.blank_conditionals_in_parens(alternatives)
    assert b"h(c" not in out and b"#ifdef Y" in out  # the count after `#endif` is the kept branch's


# ------------------------------------------------------------- `else` continuing across `#endif`

def test_a_one_branch_conditional_inside_an_if_chain_keeps_its_branch_without_the_directives() -> None:
    text = (b"if (a) { x(); }\n#ifdef FEATURE\n  /* optional */ else if (b) { y(); }\n#endif\n"
            b"else { z(); }\n")
    out = source.blank_else_continuations(text)
    assert len(out) == len(text) and out.count(b"\n") == text.count(b"\n")
    assert b"#" not in out and b"else if (b) { y(); }" in out and b"else { z(); }" in out


def test_under_if_zero_the_continued_branch_goes_too() -> None:
    text = b"if (a) { x(); }\n#if 0\nelse if (b) { y(); }\n#endif\nelse { z(); }\n"
    out = source.blank_else_continuations(text)
    assert b"y()" not in out and b"else { z(); }" in out and len(out) == len(text)


def test_conditionals_that_continue_no_chain_are_left_alone() -> None:
    two_branches = b"if (a) { x(); }\n#ifdef F\nelse if (b) { y(); }\n#else\nelse if (c) { w(); }\n#endif\n"
    plain = b"#ifdef F\nint a;\n#endif\nelse\n"
    nested_other = b"#ifdef F\n#ifdef G\nelse if (b) { y(); }\n#endif\n#endif\n"
    assert source.blank_else_continuations(two_branches) == two_branches
    assert source.blank_else_continuations(plain) == plain
    out = source.blank_else_continuations(nested_other)  # only the inner one continues a chain
    assert out.startswith(b"#ifdef F\n") and out.rstrip().endswith(b"#endif") and out.count(b"#") == 2


def test_an_else_that_ends_a_conditional_keeps_its_body_after_the_endif() -> None:
    text = b"#if defined(LIB)\n  if (a) { x(); } else  // no library\n#endif\n  { z(); }\n"
    out = source.blank_else_continuations(text)
    assert len(out) == len(text) and b"#" not in out and b"else  // no library" in out
    two_branches = b"#ifdef LIB\n  if (a) { x(); } else\n#else\n  if (b) { y(); } else\n#endif\n  { z(); }\n"
    a_word = b"#ifdef LIB\n  int x = orelse\n#endif\n  ;\n"
    assert source.blank_else_continuations(two_branches) == two_branches
    assert source.blank_else_continuations(a_word) == a_word


def test_comment_runs_after_a_conditional_are_read_once() -> None:
    """"Blanks and comments, then `else`" as one regex backtracked exponentially over a line of
    `// // // ...` (the fuzzer's hang); the scan of the regions reads each comment once."""
    text = b"#if X\n" + b"// " * 4000 + b"\n/* a */ // b\n  else { z(); }\n#endif\n" + b"#if Y\n// " + b"// " * 4000 + b"\n#endif\n"
    out = source.blank_else_continuations(text)
    assert len(out) == len(text) and out.count(b"#") == 2 and b"else { z(); }" in out


# ------------------------------------------------------------------- `delete[]` before a parenthesis

def test_a_cast_after_array_delete_becomes_blanks_and_parentheses_around_its_operand_too() -> None:
    text = b"delete[](uint8_t*) data;\ndelete [] (char*)(q);\ndelete[](name);\nredelete[](x);\ndelete (p);\n"
    out = source.blank_array_delete_parens(text)
    assert len(out) == len(text)
    lines = out.split(b"\n")
    assert lines[0].split() == [b"delete[]", b"data;"]
    assert lines[1].split() == [b"delete", b"[]", b"(q);"]  # the cast goes; `(q)` is its operand
    assert lines[2].split() == [b"delete[]", b"name", b";"]
    assert lines[3] == b"redelete[](x);" and lines[4] == b"delete (p);"  # another name; no `[]`
