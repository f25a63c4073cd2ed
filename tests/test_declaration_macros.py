"""Macros invoked with a declaration or a type as an argument (ortlint/frontends/declaration_macros.py):
what counts as one, the blanking that lets tree-sitter read the invocation as a call, and the
expansion of nested macros that stand where no call can."""
from __future__ import annotations

import pytest

from ortlint.frontends.common.macro_args import Macro
from ortlint.frontends.common.declaration_macros import declared_name, expand_text, is_declaration_or_type, statement_macros, mask_declaration_arguments, with_declared_name
from ortlint.policy import load_policy


@pytest.mark.parametrize("arg", ["auto x", "OrtValue* v", "OrtValue *const v", "const auto& y", "OrtStatus*",
                                 "const Engine", "std::unique_ptr<Ort::Value> p", "int n", "struct Foo *f", "int8_t", "uint16_t"])
def test_declarations_and_types(arg: str) -> None:
    assert is_declaration_or_type(arg)


@pytest.mark.parametrize("arg", ["x", "f(a, b)", "api->CreateRunOptions(&o)", "*out", "values[i]", '"text"',
                                 "long(x)", "const_cast<T*>(p)", "sizeof(int)", "", "size_t(n)"])
def test_expressions(arg: str) -> None:
    assert not is_declaration_or_type(arg)


def test_declared_name() -> None:
    assert declared_name("OrtValue *const v") == "v"
    assert declared_name("auto  session") == "session"
    assert declared_name("*out") == "*out"  # not a declaration: the place assigned
    assert with_declared_name(["auto v", "Make()"], 0) == ["auto v", "Make()", "v"]
    assert with_declared_name(["ctx", "auto v", "Make()", "extra"], 1) == ["ctx", "auto v", "Make()", "v", "extra"]
    assert with_declared_name(["auto v"], 0) is None


def test_mask_keeps_every_offset_and_the_original_arguments() -> None:
    src = (b"#define ASSIGN(lhs, rexpr) lhs = (rexpr)\n"
           b"void f(void) {\n"
           b"  g();  // a comment ending the line before\n"
           b"  ASSIGN(auto x,\n"
           b"         Make());\n"
           b"  ASSIGN(y, Make());\n"
           b"  OTHER(auto z, Make());\n"
           b"}\n")
    out, kept = mask_declaration_arguments(src, {"ASSIGN"})
    assert len(out) == len(src) and out.count(b"\n") == src.count(b"\n")
    open_at = src.index(b"ASSIGN(auto") + len(b"ASSIGN")
    assert kept == {open_at: "(auto x,\n         Make())"}
    assert b"ASSIGN(y, Make());" in out  # an expression argument: left as written
    assert b"OTHER(auto z, Make());" in out  # not a macro that will be expanded
    assert out[open_at:open_at + 2] == b"( " and b"Make());\n  ASSIGN(y" not in out[:open_at + 30]


def test_mask_leaves_macro_definitions_alone() -> None:
    src = b"#define OUTER(x) \\\n  ASSIGN(auto v, x); \\\n  use(v)\n"
    assert mask_declaration_arguments(src, {"ASSIGN"}) == (src, {})


def test_nested_macros_expand_with_the_line() -> None:
    macros = {
        "CAT_": Macro("CAT_", ["a", "b"], "a##b", False),
        "CAT": Macro("CAT", ["a", "b"], "CAT_(a, b)", False),
        "IMPL": Macro("IMPL", ["tmp", "lhs", "e"], "auto tmp = (e); if (!tmp) return 0; lhs = tmp", False),
    }
    text = "IMPL(CAT(value_, __LINE__), auto v, Make(1, 2))"
    assert expand_text(text, macros, 12) == "auto value_12 = (Make(1, 2)); if (!value_12) return 0; auto v = value_12"


def test_expansion_of_a_recursive_macro_stops() -> None:
    macros = {"R": Macro("R", ["x"], "R(x) + R(x)", False)}
    assert "R(" in expand_text("R(1)", macros, 1, limit=8)


def test_declare_or_return_shape(tmp_path) -> None:
    p = tmp_path / "mine.toml"
    p.write_text('[[macro]]\nnames = ["ASSIGN_OR_RETURN"]\nacts = "declare-or-return"\n', encoding="utf-8")
    shape = load_policy([p]).macro_shapes["ASSIGN_OR_RETURN"]
    assert shape.declares == 0 and shape.params == ("__ortlint_a0", "__ortlint_a1", "__ortlint_name")
    assert shape.body.startswith("__ortlint_a0 = (__ortlint_a1); if (!(__ortlint_name)) return")


def test_only_invocations_in_function_bodies_are_blanked() -> None:
    src = (b"namespace n {\n"
           b"DECLARE(int8_t);\n"                      # namespace scope: a declaration, left alone
           b"struct Api {\n  DECLARE(const char *);\n};\n"
           b"int f(void) {\n"
           b"  const char *s = \"}\";  // }\n"         # braces in strings and comments do not count
           b"  DECLARE(const char *);\n"
           b"  return 0;\n"
           b"}\n"
           b"}  // namespace n\n")
    out, kept = mask_declaration_arguments(src, {"DECLARE"})
    assert list(kept.values()) == ["(const char *)"]
    assert out.count(b"DECLARE(int8_t);") == 1 and out.count(b"DECLARE(const char *);") == 1


def test_a_body_after_a_trailing_return_type_is_code() -> None:
    """`auto C::f(...) -> Result<T> {` opens a function body (mmdeploy's acl_net.cpp: its
    `OUTCOME_TRY(auto n, g());` was left unparsed)."""
    src = (b"auto Net::Create(const Dims& dims) const -> Result<Buffers> {\n"
           b"  DECLARE(auto n, Size(dims));\n"
           b"  return n;\n"
           b"}\n"
           b"struct Holder : Base<decltype(a->b)> {\n  DECLARE(int x, 1);\n};\n")
    out, kept = mask_declaration_arguments(src, {"DECLARE"})
    assert list(kept.values()) == ["(auto n, Size(dims))"]
    assert out.count(b"DECLARE(int x, 1);") == 1


def test_statement_macros() -> None:
    bodies = {
        "IMPL": "auto tmp = (e); if (!tmp) return 1; lhs = tmp",
        "ASSIGN": "IMPL(CAT(v_, __LINE__), lhs, e)",   # an invocation of a statement macro
        "CALL_AS": "do { return static_cast<T *>(p)->m(); } while (0)",
        "API_FN": "_Success_(return == 0) OrtStatusPtr NAME(__VA_ARGS__)",  # declares a function
        "SHAPE": "",                                    # a [[macro]] shape
    }
    assert statement_macros(bodies) == {"IMPL", "ASSIGN", "CALL_AS", "SHAPE"}


def test_pathological_inputs_stay_bounded() -> None:
    src = b"void f(void) {\n" + b"/* " * 50000 + b"\n  DECLARE(const char *);\n}\n"
    out, _kept = mask_declaration_arguments(src, {"DECLARE"})  # an unterminated comment is scanned once
    assert len(out) == len(src)
    macros = {"D": Macro("D", ["x"], "x x", False)}
    text = "D(" * 60 + "y" + ")" * 60  # doubles at every level: stopped by the size cap
    assert len(expand_text(text, macros, 1)) < 1 << 17


def test_unknown_macro_given_a_declaration_and_its_value_becomes_that_declaration() -> None:
    """`OUTCOME_TRY(auto x, f());` with no definition in sight reads as `auto x = f();` (same
    length); known macros, expressions (`CHECK(a * b, c)`), other arities, code outside function
    bodies and invocations not ending their statement are left alone."""
    from ortlint.frontends.common.declaration_macros import declare_unknown_macro_arguments
    text = (b"int g();\nTRY_DECL(auto y, g());\nvoid f() {\n  OUTCOME_TRY(auto x, Make(a, b));\n"
            b"  ASSIGN(std::vector<int> v,\n         Load());\n  CHECK(a * b, c);\n  CHECK(T *p, c);\n"
            b"  KNOWN(auto z, g());\n  THREE(auto w, g(), 1);\n  USE(auto q, g()) + 1;\n}\n")
    out = declare_unknown_macro_arguments(text, {"KNOWN"})
    assert len(out) == len(text) and out.count(b"\n") == text.count(b"\n")
    lines = out.decode().split("\n")
    assert lines[1] == "TRY_DECL(auto y, g());"
    assert lines[3] == "              auto x= Make(a, b) ;"
    assert lines[4:6] == ["         std::vector<int> v=", "         Load() ;"]
    assert lines[6:11] == ["  CHECK(a * b, c);", "  CHECK(T *p, c);", "  KNOWN(auto z, g());",
                           "  THREE(auto w, g(), 1);", "  USE(auto q, g()) + 1;"]


def test_unknown_macro_given_a_statement_runs_it_as_a_block() -> None:
    """`EXPECT_ANY_THROW(const auto s = make(...); );` (a raw string with brackets in it) and
    `EXPECT_ANY_THROW(auto s = make(1));`: the statement is code run in place, a block."""
    from ortlint.frontends.common.declaration_macros import declare_unknown_macro_arguments
    text = (b'void f() {\n  EXPECT_ANY_THROW(\n    const auto s = make(\n      key, R"({"a":[1,2]})"_json);\n  );\n'
            b"  EXPECT_ANY_THROW(auto t = make(1));\n  EXPECT_TRUE(a == b);\n  LOG(x <= y);\n}\n")
    out = declare_unknown_macro_arguments(text, set()).decode().split("\n")
    assert out[1] == "                  {" and out[4] == "  };"
    assert out[5] == "                  {auto t = make(1);}"
    assert out[6:8] == ["  EXPECT_TRUE(a == b);", "  LOG(x <= y);"]
