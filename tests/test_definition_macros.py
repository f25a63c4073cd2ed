"""Macros that write a function's head or braces (frontends/definition_macros.py).

The behaviour on a whole file is pinned by fixtures/cpp/api_definition_macros.cpp; these tests
pin the pieces: which macros qualify, and that the rewrite keeps every offset and line."""
from __future__ import annotations

from ortlint.api import default_policy
from ortlint.frontends.common.definition_macros import HeadShape, brace_macros, head_shapes, rewrite, rewrite_definition_macros
from ortlint.frontends.common.header_index import MacroDef
from ortlint.frontends.common.source import blank_decorations

POLICY = default_policy()


def blank(text: str) -> str:
    return blank_decorations(text.encode(), POLICY).decode()


def test_head_macros_are_read_from_their_bodies() -> None:
    shapes = head_shapes([
        ("STATUS_API_IMPL", ["NAME"], "_Success_(return == 0) _Check_return_ OrtStatusPtr ORT_API_CALL NAME(__VA_ARGS__) NO_EXCEPTION", True),
        ("API", ["RETURN_TYPE", "NAME"], "RETURN_TYPE ORT_API_CALL NAME(__VA_ARGS__) NO_EXCEPTION", True),
        ("CALL", ["f"], "f(__VA_ARGS__)", True),  # no return type: still a head (`CALL(g, x) {` is `g(x) {`)
        ("CHECK", ["x"], "do { if (!(x)) return; } while (0)", False),
        ("LOG", ["fmt"], "printf(fmt, __VA_ARGS__)", True),
    ], blank)
    assert shapes == {"STATUS_API_IMPL": HeadShape("OrtStatusPtr", 0), "API": HeadShape("", 1), "CALL": HeadShape("", 0)}


def test_brace_macros_open_or_close_one_block() -> None:
    objects = {"BEGIN": "try {", "END": "} catch (...) { return 1; }", "READ_BEGIN": "BEGIN auto v = x;",
               "NS_BEGIN": "namespace ns {", "BOTH": "{ }", "TEXT": '"{"'}
    functions = {"END_WITH": "} catch (...) { return (api)->Fail(); }"}
    found = brace_macros(objects, blank, [*objects, *functions], functions)
    assert found == {"BEGIN": b"{", "END": b"}", "READ_BEGIN": b"{", "END_WITH": b"}"}


def test_the_rewrite_keeps_every_offset_and_line() -> None:
    src = (b"STATUS_API_IMPL(Apis::Create, int n,\n"
           b"            Thing** out) {\n"
           b"  BEGIN\n"
           b"  *out = make(n);\n"
           b"  return nullptr;\n"
           b"  END_WITH(api)  // the handlers\n"
           b"}\n"
           b"API(void, Apis::Release, Thing* t) {\n"
           b"  drop(t);\n"
           b"}\n")
    out = rewrite(src, {"STATUS_API_IMPL": HeadShape("OrtStatusPtr", 0), "API": HeadShape("", 1)},
                  {"BEGIN": b"{", "END_WITH": b"}"})
    assert len(out) == len(src) and out.count(b"\n") == src.count(b"\n")
    lines = out.decode().splitlines()
    assert lines[0].split() == ["OrtStatusPtr", "Apis::Create(", "int", "n,"]
    assert lines[2].strip() == "{" and lines[5].strip().startswith("}") and "catch" not in lines[5]
    assert lines[7].split() == ["void", "Apis::Release(", "Thing*", "t)", "{"]


def test_braces_that_would_not_pair_up_are_left_alone() -> None:
    src = b"int f() {\n  BEGIN\n  g();\n  END(x)\n}\n"
    assert rewrite(src, {}, {"BEGIN": b"{"}) == src  # the closing macro is not known: no block opened
    assert rewrite(src, {}, {"BEGIN": b"{", "END": b"}"}) != src


def test_only_uses_standing_alone_in_a_function_body_are_rewritten() -> None:
    src = b"BEGIN\nint f() {\n  x = BEGIN;\n  BEGIN g();\n  BEGIN\n  g();\n  END\n}\n"
    out = rewrite(src, {}, {"BEGIN": b"{", "END": b"}"})
    assert out.splitlines()[0] == b"BEGIN" and out.splitlines()[2] == b"  x = BEGIN;"
    assert out.splitlines()[3] == b"  BEGIN g();" and out.splitlines()[4].strip() == b"{"


def test_macros_come_from_the_headers_and_the_file() -> None:
    visible = {"STATUS_API_IMPL": MacroDef("STATUS_API_IMPL", ["NAME"], "OrtStatusPtr NAME(__VA_ARGS__)", True, "h.h", 1),
               "BEGIN": MacroDef("BEGIN", None, "try {", False, "h.h", 2)}
    src = b"#define END } catch (...) {}\nSTATUS_API_IMPL(f, int a) {\n  BEGIN\n  g(a);\n  END\n}\n"
    out = rewrite_definition_macros(src, visible, POLICY)
    assert out.splitlines()[1].split() == [b"OrtStatusPtr", b"f(", b"int", b"a)", b"{"]
    assert out.splitlines()[2].strip() == b"{" and out.splitlines()[4].strip() == b"}"


def test_nested_object_macros_are_expanded_once_each() -> None:
    """Forty levels of macros each naming the next twice: 2^40 expansions without the memo;
    past MAX_DEPTH levels a macro is not a brace."""
    objects = {f"M{i}": f"M{i + 1} M{i + 1}" for i in range(40)}
    objects["M40"] = "{"
    objects["B"] = "try M40"
    assert brace_macros(objects, blank, ["M0", "M37", "B"]) == {"B": b"{"}


def test_bodies_continued_with_crlf_lines_qualify_too() -> None:
    """A header saved with Windows line ends: `\\` then CR LF joins the lines as `\\` LF does."""
    body = "_Success_(return == 0) \\\r\n  OrtStatusPtr ORT_API_CALL NAME(__VA_ARGS__) NO_EXCEPTION"
    assert head_shapes([("STATUS_API_IMPL", ["NAME"], body, True)], blank) == {"STATUS_API_IMPL": HeadShape("OrtStatusPtr", 0)}
    objects = {"END": "}                 \\\r\n  catch (...) {   \\\r\n    return 1;     \\\r\n  }"}
    assert brace_macros(objects, blank, ["END"]) == {"END": b"}"}
