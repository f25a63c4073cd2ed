"""String literals glued to macros (`LIBRARY_PREFIX ORT_TSTR("x") LIBRARY_EXTENSION`): the
same-length rewrite of string_macros.py and what the C/C++ front ends make of such code."""
from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from tree_sitter import Parser

from ortlint.api import default_policy
from ortlint.frontends.c.frontend import C_LANGUAGE, parse_c
from ortlint.frontends.cpp.frontend import CPP_LANGUAGE, parse_cpp
from ortlint.frontends.common.header_index import MacroDef

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

DEFINES = """\
#ifdef _WIN32
#define LIBRARY_PREFIX
#define LIBRARY_EXTENSION ORT_TSTR(".dll")
#else
#define LIBRARY_PREFIX "lib"
#define LIBRARY_EXTENSION ".so"
#endif
#define ORT_TSTR(X) X
"""


def rewrite(code: str, cpp: bool = True, visible: dict | None = None) -> str:
    from ortlint.frontends.common.string_macros import rewrite_string_macros

    data = code.encode()
    out = rewrite_string_macros(data, visible or {}, lambda text: text, cpp)
    assert len(out) == len(data)
    assert [i for i, b in enumerate(out) if b == 10] == [i for i, b in enumerate(data) if b == 10]
    return out.decode()


def errors(code: str, cpp: bool = True) -> bool:
    return Parser(CPP_LANGUAGE if cpp else C_LANGUAGE).parse(code.encode()).root_node.has_error


# ----------------------------------------------------------------------------- the grammars


@pytest.mark.parametrize("cpp", [True, False], ids=["cpp", "c"])
def test_accepted_says_what_tree_sitter_parses(cpp: bool) -> None:
    """`accepted` is the grammar's rule for juxtaposed operands: every run of up to five names,
    string literals and invocations, in the places a run stands (an assignment, an argument, a
    return, an initializer)."""
    from ortlint.frontends.common.string_macros import accepted

    items = {"I": "P", "S": '"x"', "C": 'T("y")'}
    contexts = ["void f() { a = %s; }", "void f() { g(%s); }", "void f() { return %s; }", "const char *a = %s;"]
    contexts += ["void f() { auto v{%s}; }"] if cpp else ["void f() { x = (T){%s, 1}; }"]
    wrong = []
    for n in range(1, 6):
        for kinds in itertools.product("ISC", repeat=n):
            text = " ".join(items[k] for k in kinds)
            for context in contexts:
                if accepted("".join(kinds), cpp) == errors(context % text, cpp):
                    wrong.append(context % text)
    assert not wrong, wrong[:5]


# ----------------------------------------------------------------------------- the rewrite


def test_provider_library_names_become_concatenations() -> None:
    code = DEFINES + 'auto p = PathString(LIBRARY_PREFIX ORT_TSTR("onnxruntime_providers_shared") LIBRARY_EXTENSION);\n'
    out = rewrite(code)
    assert out.splitlines()[-1] == \
        'auto p = PathString("____________"          "onnxruntime_providers_shared"  "_______________");'
    assert out.startswith(DEFINES)  # the `#define`s themselves are never rewritten
    assert not errors(out) and errors(code)


def test_header_macros_and_a_wrapper_from_outside_the_tree() -> None:
    """The plugin EP's shape: the header index saw the Windows definitions (an empty prefix, a
    suffix that is `ORT_TSTR(".dll")`), ORT_TSTR itself is defined nowhere in the tree."""
    visible = {"LIBRARY_PREFIX": MacroDef("LIBRARY_PREFIX", None, "", False, "dl.h", 12),
               "LIBRARY_SUFFIX": MacroDef("LIBRARY_SUFFIX", None, 'ORT_TSTR(".dll")', False, "dl.h", 13)}
    code = 'namespace {\nconstexpr auto hipBackend{LIBRARY_PREFIX ORT_TSTR("hip-backend") LIBRARY_SUFFIX};\n}\n'
    out = rewrite(code, visible=visible)
    assert 'hipBackend{"____________"          "hip-backend"  "____________"}' in out
    assert not errors(out)
    # without the header, nothing says that the names around ORT_TSTR(...) are strings
    assert rewrite(code) == code


def test_wide_prefix_wrappers_and_nested_wrappers() -> None:
    code = ('#define W(x) L##x\n#define __T(x) L ## x\n#define _T(x) __T(x)\n'
            'void f() { g(W("a") "b"); h(L"c" _T("d") L"e"); }\n')
    out = rewrite(code)
    assert 'g(  "a"  "b")' in out and 'h(L"c"    "d"  L"e")' in out
    assert not errors(out)


def test_stringified_arguments_become_a_literal() -> None:
    code = '#define STR(x) #x\n#define XSTR(x) STR(x)\nconst char *v = "v" XSTR(VERSION) "." STR(MINOR);\n'
    out = rewrite(code)
    assert out.splitlines()[-1] == 'const char *v = "v" "___________" "." "________";'
    assert not errors(out)


def test_unknown_macros_only_between_strings() -> None:
    sandwiched = 'void f() { printf("%" PRIu64 " runs\\n", n); }\n'
    assert rewrite(sandwiched) == 'void f() { printf("%" "____" " runs\\n", n); }\n'
    for code in ['void f() { printf("%" PRIu64, n); }\n',  # one side only: might be anything
                 'void f() { printf("%" PRIu64 FMT_END "x", n); }\n',  # two unknown names in a row
                 'void f() { s = T("x") "y"; }\n']:  # an unknown invocation with nothing before it
        assert rewrite(code) == code


def test_code_that_parses_is_left_alone() -> None:
    for code, cpp in [(DEFINES + 'void f() { s = LIBRARY_PREFIX "x"; t = "a" "b" LIBRARY_EXTENSION; }\n', True),
                      (DEFINES + 'void f() { s = "x" LIBRARY_EXTENSION; }\n', False),  # tree-sitter-c takes it
                      ('#define EXPORT\nextern "C" EXPORT void f(void);\n', True),
                      ('#define EXPORT\nvoid f() { return PREFIX "x"; }\n', True),
                      ('int operator "" _km(unsigned long long v);\n', True),
                      ('void f() { auto s = "abc"sv; auto t = "x"_json; }\n', True)]:
        assert rewrite(code, cpp) == code


def test_only_code_is_rewritten() -> None:
    """A run inside a comment, a string, a raw string or a preprocessor line stays; quotes in
    character literals and digit separators do not shift what is a string."""
    code = DEFINES + ('#define NAME "a" LIBRARY_PREFIX "b"\n'
                      '// "a" LIBRARY_PREFIX "b"\n/* "a" LIBRARY_PREFIX\n "b" */\n'
                      'const char *r = R"x(" LIBRARY_PREFIX ")x";\n'
                      "char q = '\"'; int n = 1'000;\n"
                      'const char *s = "\\" LIBRARY_PREFIX \\"";\n'
                      'const char *t = "a" LIBRARY_PREFIX "b";\n')
    out = rewrite(code)
    assert out.splitlines()[:-1] == code.splitlines()[:-1]
    assert out.splitlines()[-1] == 'const char *t = "a" "____________" "b";'


def test_known_macros_of_another_kind_are_never_strings() -> None:
    """A number, a call of a function (or of a macro defined nowhere: `__T` of a system header)."""
    code = ('#define N 5\n#define CALL(x) f(x)\n#define _T(x) __T(x)\n'
            'void g() { s = "a" N "b"; t = "a" CALL("b") "c"; u = "a" _T("b") "c"; }\n')
    assert rewrite(code) == code


def test_one_letter_names_become_blanks() -> None:
    code = '#define S "s"\nconst char *t = "a" S "b";\n'
    assert rewrite(code).splitlines()[-1] == 'const char *t = "a"   "b";'


_PIECES = ['"x"', 'L"w"', 'R"(r)"', "LIBRARY_PREFIX", "LIBRARY_EXTENSION", 'ORT_TSTR("t")', "UNKNOWN", 'UNKNOWN_CALL("u")',
           "N", 'ORT_TSTR(LIBRARY_PREFIX "v")', "/* c */", "\n  "]


@pytest.mark.parametrize("cpp", [True, False], ids=["cpp", "c"])
def test_random_runs_parse_after_the_rewrite(cpp: bool) -> None:
    """Random runs: the rewrite keeps the length and the lines; a run that parses is left as it
    is; a rewritten one parses."""
    rng = random.Random(20240607)
    prelude = DEFINES + "#define N 5\n"
    for _ in range(600):
        run = " ".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 5)))
        code = prelude + "void f(void) { x = " + run + "; g(" + run + ", 1); }\n"
        out = rewrite(code, cpp)
        if not errors(code, cpp):
            assert out == code, run
        elif out != code:
            assert not errors(out, cpp), (run, out[len(prelude):])


# ----------------------------------------------------------------------------- the front ends


def test_fixture_parses_whole() -> None:
    """fixtures/cpp/string_macro_concatenation.cpp: every function is there (the one after the
    namespace-scope run was lost) and none has unparsed code."""
    path = FIXTURES / "cpp" / "string_macro_concatenation.cpp"
    unit = parse_cpp(str(path), default_policy())
    assert {f.name for f in unit.functions} == {"glue_open_clean", "glue_open_dry_run", "glue::glue_report_clean",
                                                "glue::glue_report_leaks"}
    assert not unit.notes and not [n for f in unit.functions for n in f.notes]


def test_glued_call_argument_is_analyzed() -> None:
    """The acquiring call whose argument is the glued name: a plain call with a string constant."""
    code = DEFINES + """
        struct ProviderSharedLibrary {
          void Ensure() {
            auto full_path = Env::Default().GetRuntimePath() +
                             PathString(LIBRARY_PREFIX ORT_TSTR("onnxruntime_providers_shared") LIBRARY_EXTENSION);
            Load(full_path, &handle_);
          }
          void *handle_{};
        };
    """
    unit = parse_cpp("bridge.cc", default_policy(), code.encode())
    (fn,) = [f for f in unit.functions if f.name.endswith("Ensure")]
    assert not fn.notes
    callees = {e.callee for b in fn.blocks for e in b.events if type(e).__name__ == "Call"}
    assert {"PathString", "Load"} <= callees


def test_c_front_end_too() -> None:
    code = '#define W(x) x\nvoid f(void) { char *p = malloc(8); puts(W("a") "b"); free(p); }\n'
    unit = parse_c("t.c", default_policy(), code.encode())
    (fn,) = unit.functions
    assert not fn.notes
    callees = {e.callee for b in fn.blocks for e in b.events if type(e).__name__ == "Call"}
    assert {"malloc", "puts", "free"} <= callees


def test_a_file_that_parses_is_not_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    import ortlint.frontends.c.frontend as c_treesitter

    def fail(*_args: object) -> bytes:
        raise AssertionError("scanned")

    monkeypatch.setattr(c_treesitter, "rewrite_string_macros", fail)
    unit = parse_cpp("t.cpp", default_policy(), (DEFINES + 'const char *s = LIBRARY_PREFIX "x";\n').encode())
    assert not unit.notes
