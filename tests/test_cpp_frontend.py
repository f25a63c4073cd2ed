"""The C++ front end on its own: names of what it analyzes, types it reads, and robustness
(any input gives a SourceUnit; nothing raises)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from ortlint import ir
from ortlint.api import default_policy
from ortlint.frontends.cpp.model import decltype_target, parse_type
from ortlint.frontends.cpp.frontend import is_cpp_header, parse_cpp

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def unit_of(code: str) -> ir.SourceUnit:
    return parse_cpp("t.cpp", default_policy(), code.encode())


def calls(fn: ir.Function) -> list[ir.Call]:
    return [e for b in fn.blocks for e in b.events if isinstance(e, ir.Call)]


def test_functions_are_named_with_namespaces_classes_and_lambdas() -> None:
    unit = unit_of("""
        namespace a { namespace b {
        struct S { void m() { auto l = [](int x) { return x; }; l(1); } ~S() {} };
        void S2(); } }
        void a::b::free_fn() {}
        namespace { void hidden() {} }
    """)
    names = {f.name: f for f in unit.functions}
    assert {"a::b::S::m", "a::b::S::~S", "a::b::free_fn", "hidden"} <= set(names)
    assert any(n.startswith("a::b::S::m::<lambda@") for n in names)
    assert names["hidden"].is_static and not names["a::b::S::m"].is_static


def test_same_class_calls_name_the_method() -> None:
    unit = unit_of("""
        class M { public: void run(OrtStatus *s) { fail(s); this->fail(s); }
                  [[noreturn]] void fail(OrtStatus *s); };
    """)
    run = next(f for f in unit.functions if f.name == "M::run")
    assert [c.callee for c in calls(run)] == ["M::fail", "M::fail"]


def test_call_targets_follow_declared_types() -> None:
    unit = unit_of("""
        struct Tracker { void Run(int); };
        void f(const OrtApi *api, const OrtApi &ref, Tracker *t, Ort::Value v, JNIEnv *env) {
          api->ReleaseValue(nullptr); ref.ReleaseValue(nullptr); t->Run(1); v.release();
          env->DeleteLocalRef(nullptr); Ort::GetApi().ReleaseStatus(nullptr);
        }
    """)
    fn = unit.functions[-1]
    got = [(c.callee, c.style) for c in calls(fn)]
    assert got == [("ReleaseValue", "table"), ("ReleaseValue", "table"), ("Tracker::Run", "plain"),
                   ("Ort::Value::release", "method"), ("DeleteLocalRef", "table"), ("Ort::GetApi", "plain"),
                   ("ReleaseStatus", "table")]


def test_smart_pointer_releases_at_every_exit() -> None:
    unit = unit_of("""
        using P = std::unique_ptr<OrtSession, decltype(&ReleaseIt)>;
        int f(OrtSession *raw, bool b) { P p(raw); if (b) return 1; return 0; }
    """)
    fn = unit.functions[-1]
    releases = [c for c in calls(fn) if c.callee == "ReleaseIt"]
    assert len(releases) == 3  # the landing pad, and each of the two returns


def test_type_text_parsing() -> None:
    t = parse_type("const std::unique_ptr<OrtStatus, decltype(g_api->ReleaseStatus)> &")
    assert (t.name, t.args, t.pointers) == ("std::unique_ptr", ("OrtStatus", "decltype(g_api->ReleaseStatus)"), 0)
    assert parse_type("void (*)(OrtValue *)").name == "<function pointer>"
    assert parse_type("(anonymous namespace)::Deleter").name == "Deleter"
    assert decltype_target("decltype(&OrtApi::ReleaseEnv)") == ("ReleaseEnv", "table")
    assert decltype_target("decltype(&free)") == ("free", "plain")


def test_cpp_headers_are_recognized() -> None:
    assert is_cpp_header("x.h", b"namespace app {\nclass A {};\n}\n")
    assert is_cpp_header("x.h", b"#include <vector>\n")
    assert not is_cpp_header("x.h", b"#ifdef __cplusplus\nextern \"C\" {\n#endif\nint f(void);\n")
    # ONNX Runtime's abi_logger.h: a using-declaration and casts, nothing else C++ (read as C,
    # its two methods did not parse)
    assert is_cpp_header("x.h", b"using onnxruntime::logging::Logger;\nstruct L { Logger* Get() "
                                b"{ return reinterpret_cast<Logger*>(this); } };\n")
    assert is_cpp_header("x.h", b"using Id = int;\n")
    assert not is_cpp_header("x.h", b"static int using_x = (int)1;\n")


SNIPPETS = [
    "", "}", "{{{{", "class", "template <typename T", "void f() { try { } }", "void f() { throw; }",
    "void f() try { } catch (...) { }", "auto l = [&](auto... xs) { return (xs + ...); };",
    "void f() { for (auto [a, b] : m) {} }", "struct S { S() = default; ~S() = delete; };",
    "void f() { delete[] new int[3]; ::operator delete(nullptr); }", "void f() { co_return; }",
    "void f() { if constexpr (sizeof(int) == 4) {} else {} }", "int main() { return [](){ return 1; }(); }",
    "void f() { std::unique_ptr<int[]> p(new int[2]); p.reset(); p = nullptr; }",
    "void f() { X x(y(z), w); Y y2(a.b); Z z2(static_cast<int>(q)); }",
    "void f() { auto g = finally([&] { return; }); DEFER(x, free(x)); }",
]


@pytest.mark.parametrize("code", SNIPPETS)


def test_odd_code_never_raises(code: str) -> None:
    assert isinstance(unit_of(code), ir.SourceUnit)


def test_deep_nesting_is_a_note_not_a_crash() -> None:
    code = "void f() { int x = " + "(" * 3000 + "1" + ")" * 3000 + "; }"
    unit = unit_of(code)
    assert isinstance(unit, ir.SourceUnit)


def test_truncated_fixtures_never_raise() -> None:
    rng = random.Random(4)
    for path in sorted((FIXTURES / "cpp").glob("*.cpp")):
        data = path.read_bytes()
        for _ in range(6):
            cut = rng.randrange(len(data))
            assert isinstance(parse_cpp(str(path), default_policy(), data[:cut]), ir.SourceUnit)
            garbled = bytearray(data)
            for _ in range(20):
                garbled[rng.randrange(len(garbled))] = rng.choice(b"{}();<>*&:~[]")
            assert isinstance(parse_cpp(str(path), default_policy(), bytes(garbled)), ir.SourceUnit)


def test_nested_immediately_invoked_lambdas_read_their_text_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: `return [&]() { return [&]() { ... }(); }();` 8 000 deep took 16 s and 1.3 GB:
    every `return` asked whether it returned `std::move(x)` by reading the text of its callee,
    an immediately-invoked lambda whose text is the whole rest of the nest. Counted here: the
    bytes the lowering decodes stay within a small multiple of the file."""
    from ortlint.frontends.common.cfg import CfgBuilder

    read = [0]
    real = CfgBuilder.text

    def text(self, node):  # noqa: ANN001, ANN202
        read[0] += node.end_byte - node.start_byte
        return real(self, node)

    monkeypatch.setattr(CfgBuilder, "text", text)
    depth = 4000
    path = tmp_path / "iife.cpp"
    path.write_text("int f(int x) {\n  return " + "[&]() { return " * depth + "x" + "; }()" * depth + ";\n}\n")
    unit = parse_cpp(str(path), default_policy())
    assert unit.functions and read[0] < 20 * path.stat().st_size, read[0]

def test_unknown_decorations_in_declarations_are_recognized() -> None:
    """`class MY_EXPORTS Name {` is a class (its `= delete` members are no delete expressions)
    and `MY_API Type *\\nName(params)` a function with its own name and parameters (issues 31, 32)."""
    unit = unit_of("""
        namespace ns {
        class MY_EXPORTS Holder : public Base {
         public:
          Holder(const Holder &) = delete;
          Holder(Holder &&) = delete;
          ~Holder() { free(buf_); }
          char *buf_;
        };
        struct DECLSPEC(x) Plain final { int y; };
        }
        TRITONBACKEND_ISPEC TRITONSERVER_Error*
        TRITONBACKEND_Initialize(TRITONBACKEND_Backend* backend, int n)
        {
          return nullptr;
        }
        Status MY_CALL Convert(int a) { return a; }
        static inline int Kept(unsigned long x) { return x * Kept(x); }
    """)
    names = {f.name: f for f in unit.functions}
    assert set(names) == {"ns::Holder::~Holder", "TRITONBACKEND_Initialize", "Convert", "Kept"}
    assert names["TRITONBACKEND_Initialize"].params == ["backend", "n"]
    assert not unit.notes
    assert all(c.callee not in ("delete", "delete[]") for f in unit.functions for c in calls(f))


def test_decoration_recovery_keeps_valid_declarations() -> None:
    from ortlint.frontends.common.decorations import blank_class_decorations, blank_declaration_heads
    text = (b"enum class Color : int { A };\ntemplate <class T> class Box : public T {};\nclass Fin final {};\n"
            b"mysubclass a b {};\nunsigned long f(int);\nstatic struct node *make(void);\n"
            b"int g() { return a * h(b); }\nconst char *name(void);\ninline bool operator()(int);\n")
    assert blank_class_decorations(text) == text
    assert blank_declaration_heads(text) == text
    decorated = b"class A_EXPORT B {};\nMACRO const char *f(int);\n"
    assert blank_class_decorations(decorated) == b"class          B {};\nMACRO const char *f(int);\n"
    assert blank_declaration_heads(decorated) == b"class A_EXPORT B {};\n      const char *f(int);\n"
    # a function pointer's name, and names in capitals after a declaration's parameter list
    # (RedisAI's redismodule.h: `REDISMODULE_API int (*RedisModule_X)(...) REDISMODULE_ATTR;`)
    pointers = b"MOD_API void * (*Mod_Alloc)(size_t n) MOD_ATTR;\n  int Run() MUST_USE(x) NOEXC;\n"
    expected = pointers
    for word in (b"MOD_API", b"MOD_ATTR", b"MUST_USE(x) NOEXC"):
        expected = expected.replace(word, b" " * len(word))
    assert blank_declaration_heads(pointers) == expected
    statements = (b"  if (x) CLEANUP;\n  x = f(a) FOO;\n  return f(a) FOO;\n  new (&slot) T(init);\n"
                  b"  return a * (*fp)(x);\n  int g(int) override;\n")
    assert blank_declaration_heads(statements) == statements


def test_attribute_alternatives_are_decorations() -> None:
    """`#if defined(_MSC_VER)\n[[msvc::no_unique_address]]\n#else\n[[no_unique_address]]\n#endif`
    before a member: the conditional is blanked (GenAI's generators.h: a namespace unparsed),
    as are `__declspec` / `__attribute__` alternatives; conditionals with code stay."""
    from ortlint.frontends.common.decorations import blank_class_decorations
    text = (b"struct G {\n#if defined(_MSC_VER)\n  [[msvc::no_unique_address]]\n#else\n  [[no_unique_address]]\n"
            b"#endif\n  T t_;\n};\n#ifdef _WIN32\n__declspec(dllexport)\n#else\n__attribute__((visibility(\"default\")))\n"
            b"#endif\nint f(void);\n#ifdef X\n[[nodiscard]] int g();\n#endif\n")
    out = blank_class_decorations(text)
    assert len(out) == len(text) and out.count(b"\n") == text.count(b"\n")
    assert b"#if" not in out.split(b"#ifdef X")[0] and b"T t_;" in out and b"int f(void);" in out
    assert out.endswith(b"#ifdef X\n[[nodiscard]] int g();\n#endif\n")  # a declaration in the branch: kept
    for name in ("export_macro_decorations.cpp", "export_macro_decorations_clean.cpp"):
        path = FIXTURES / "cpp" / name
        assert not parse_cpp(str(path), default_policy(), path.read_bytes()).notes


def test_embedded_javascript_and_assembly_are_opaque() -> None:
    """EM_ASM's code argument, EM_JS bodies and `__asm {}` blocks are not parsed as C++: no
    `new` from JavaScript, no unparsed region, and the EM_ASM call keeps its C++ arguments."""
    path = FIXTURES / "cpp" / "embedded_javascript_clean.cpp"
    unit = parse_cpp(str(path), default_policy(), path.read_bytes())
    assert not unit.notes
    names = {f.name: f for f in unit.functions}
    assert set(names) == {"save", "js_alloc", "add"}
    save = [c for c in calls(names["save"])]
    assert [c.callee for c in save] == ["malloc", "EM_ASM", "free"]
    assert [ir.expr_text(a) for a in save[1].args] == ["0", "buffer", "size", "path"]
    assert all(c.style != "new" for f in unit.functions for c in calls(f))


def test_inherited_methods_are_called_on_the_class_that_declares_them() -> None:
    """`e->Step()` on `struct Wrapper : gen::Engine {}` is `gen::Engine::Step`: a method of the
    base, not of some other class named `Wrapper` elsewhere in the tree; `?:` has its branches' type."""
    unit = unit_of("""
        namespace gen { class Engine { public: int *Step(); int Busy() { return 0; } }; }
        struct Wrapper : gen::Engine { int Own(); };
        int *f(Wrapper *e, Wrapper *other, bool which) {
          e->Own();
          Wrapper *w = which ? e : other;
          w->Busy();
          return e->Step();
        }
    """)
    fn = next(f for f in unit.functions if f.name == "f")
    assert [c.callee for c in calls(fn)] == ["Wrapper::Own", "gen::Engine::Busy", "gen::Engine::Step"]



def test_empty_macros_are_blanked_outside_directives() -> None:
    """`#define __fd_take` (empty, object-like) then `void Destroy(__fd_take T* p)`: its uses
    vanish as the preprocessor makes them (same length, lines kept), but not in directives
    (`#ifndef GUARD_H` keeps its name); a macro with a body or parameters is left alone."""
    from ortlint.frontends.common.decorations import blank_empty_macros, empty_macro_names
    from ortlint.frontends.common.header_index import MacroDef
    text = (b"#ifndef GUARD_H\n#define GUARD_H\n#define __take /* owner */\n#define KEEP(x) x\n"
            b"void Destroy(__take Thing* p);\nint KEEP(n) = WIDTH;\n#endif  // GUARD_H\n")
    headers = {"WIDTH": MacroDef("WIDTH", None, "4", False, "h.h", 1), "API": MacroDef("API", None, "", False, "h.h", 2)}
    names = empty_macro_names(text, headers)
    assert names == ["GUARD_H", "__take"]  # (API is not used here; WIDTH has a body)
    out = blank_empty_macros(text, names)
    assert len(out) == len(text) and out.count(b"\n") == text.count(b"\n")
    assert b"void Destroy(       Thing* p);" in out
    assert out.count(b"GUARD_H") == 3 and b"#define __take" in out and b"KEEP(n) = WIDTH" in out
