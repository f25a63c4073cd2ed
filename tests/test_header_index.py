"""The header index (frontends/header_index.py): how `#include "..."` is resolved, what a header
contributes, statement macros without `;`, `[[macro]]` policy entries, the `include-dirs`
setting, and the cache noticing an edited header."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import tree_sitter_cpp
from tree_sitter import Language, Parser

from ortlint.api import default_policy
from ortlint.config import ConfigError, load_file
from ortlint.frontends.common import header_index as hi
from ortlint.frontends.common.source import is_complete_statement_body, is_statement_body, statement_macro_sets, terminate_statement_macros
from ortlint.policy import PolicyError, load_policy
from ortlint.orchestration.settings import RunConfig
from ortlint.orchestration.runner import run


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- resolution


def test_resolution_order(tmp_path: Path) -> None:
    src = tmp_path / "proj" / "src" / "a" / "b"
    write(src / "x.c", "")
    write(src / "near.h", "")
    write(tmp_path / "proj" / "include" / "deep" / "far.h", "")
    write(tmp_path / "extra" / "cfg.h", "")
    write(tmp_path / "proj" / "third_party" / "lib" / "pkg" / "tail.h", "")
    index = hi.HeaderIndex(include_dirs=(str(tmp_path / "extra"),), roots=(str(tmp_path / "proj"),))
    assert index.resolve("near.h", str(src)) == str(src / "near.h")  # next to the including file
    assert index.resolve("cfg.h", str(src)) == str(tmp_path / "extra" / "cfg.h")  # include-dirs
    assert index.resolve("deep/far.h", str(src)) == str(tmp_path / "proj" / "include" / "deep" / "far.h")  # ancestors' include/
    assert index.resolve("pkg/tail.h", str(src)) == str(tmp_path / "proj" / "third_party" / "lib" / "pkg" / "tail.h")  # tree
    assert index.resolve("missing.h", str(src)) is None


def test_nearer_header_wins_and_include_cycles_end(tmp_path: Path) -> None:
    write(tmp_path / "a.h", '#include "b.h"\n#define WHO(x) first(x)\n')
    write(tmp_path / "b.h", '#include "a.h"\n#define WHO(x) second(x)\n#define ONLY_B(x) b(x)\n')
    main = write(tmp_path / "m.c", '#include "a.h"\n')
    seen = hi.HeaderIndex().visible(str(main), main.read_bytes())
    assert seen.headers == [str(tmp_path / "a.h"), str(tmp_path / "b.h")]
    assert seen.macros["WHO"].body.strip() == "first(x)" and "ONLY_B" in seen.macros


def test_facts_are_reread_when_a_header_changes(tmp_path: Path) -> None:
    header = write(tmp_path / "h.h", "#define A(x) x\n")
    index = hi.HeaderIndex()
    assert set(index.facts(str(header)).macros) == {"A"}
    header.write_text("#define B(x) x\n")
    os.utime(header, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert set(index.facts(str(header)).macros) == {"B"}
    assert index.parsed == 2


# ----------------------------------------------------------------------------- what a header declares


def _facts(code: str) -> hi.HeaderFacts:
    data = code.encode()
    tree = Parser(Language(tree_sitter_cpp.language())).parse(data)
    return hi.collect_facts(data, tree.root_node, "t.h")


def test_const_pointee_parameters() -> None:
    facts = _facts("""
        void f(const char *a, char *b, const char **c, char *const d, const int &e, const char *const g, int n);
        namespace ns { int h(const void *p); }
    """)
    assert facts.prototypes["f"] == (True, False, False, False, True, True, False)
    assert facts.prototypes["ns::h"] == (True,) and facts.prototypes["h"] == (True,)


def test_classes_bases_aliases_and_returns() -> None:
    facts = _facts("""
        struct ApiPtrs { const OrtApi &ort_api; };
        class Runner : public ApiPtrs {
         public:
          void Go();
          ~Runner();
         private:
          std::unique_ptr<Ort::Session> session_;
          const OrtApi *api_;
        };
        typedef struct OrtEnv OrtEnv;
        typedef struct Handle *HandlePtr;
        using Table = const OrtApi *;
        Runner *CurrentRunner();
        #if 0
        #define HIDDEN(x) x
        #endif
    """)
    runner = facts.classes["Runner"]
    assert runner.bases == ["ApiPtrs"] and {"Go", "~Runner"} <= runner.methods
    assert runner.fields["session_"] == "std::unique_ptr<Ort::Session>"
    assert runner.fields["api_"] == "const OrtApi *"
    assert facts.classes["ApiPtrs"].fields["ort_api"] == "const OrtApi &"
    assert "OrtEnv" not in facts.aliases  # `typedef struct X X` names the same type
    assert facts.aliases["HandlePtr"] == "Handle *" and facts.aliases["Table"] == "const OrtApi *"
    assert facts.returns["CurrentRunner"] == "Runner *"
    assert "HIDDEN" not in facts.macros


def test_method_return_types_are_recorded_qualified() -> None:
    facts = _facts("""
        namespace sdk {
        struct Model {
          static std::unique_ptr<Model> Create(const char *path);
          const char *Name() const { return name_; }
          Model *Self();
          static void operator delete(void *p);
          const char *name_;
        };
        }
    """)
    assert facts.returns["sdk::Model::Create"] == "std::unique_ptr<Model>"
    assert facts.returns["Model::Create"] == "std::unique_ptr<Model>"
    assert facts.returns["sdk::Model::Name"] == "const char *"
    assert facts.returns["sdk::Model::Self"] == "Model *"
    assert "Create" not in facts.returns and "Model::operator delete" not in facts.returns
    assert "operator delete" in facts.classes["Model"].methods


def test_angle_includes_of_the_tree_give_declarations_not_macros(tmp_path: Path) -> None:
    write(tmp_path / "include" / "lib" / "api.h", '#include "detail.h"\n#define LIB_CHECK(x) check(x)\n'
                                                  "struct Widget { static std::unique_ptr<Widget> Make(); };\n")
    write(tmp_path / "include" / "lib" / "detail.h", "#define DETAIL(x) x\nstruct Detail { int *p; };\n")
    write(tmp_path / "src" / "string.h", "#define NOT_THE_SYSTEM(x) x\nstruct Impostor {};\n")
    write(tmp_path / "src" / "local.h", "#define LOCAL(x) x\n")
    main = write(tmp_path / "tests" / "t.cpp", '#include <lib/api.h>\n#include <string.h>\n#include <memory>\n'
                                               '#include "../src/local.h"\n')
    seen = hi.HeaderIndex(roots=(str(tmp_path),)).visible(str(main), main.read_bytes())
    assert seen.headers == [str(tmp_path / "src" / "local.h"), str(tmp_path / "include" / "lib" / "api.h"),
                            str(tmp_path / "include" / "lib" / "detail.h")]  # the quoted closure first
    assert "LOCAL" in seen.macros and "LIB_CHECK" not in seen.macros and "DETAIL" not in seen.macros
    assert {"Widget", "Detail"} <= set(seen.classes) and "Impostor" not in seen.classes
    assert seen.returns["Widget::Make"] == "std::unique_ptr<Widget>"


def test_a_header_included_by_another_sees_what_precedes_its_include(tmp_path: Path) -> None:
    """`x_inline.h`, included at the end of `x.h` (never on its own), defines members of classes
    only `x.h` declares: analyzed alone, it sees the declarations (not the macros) of `x.h` that
    come before its `#include`, and what those include; not what comes after, nor other folders'."""
    write(tmp_path / "lib" / "types.h", "struct Handle { int *raw; };\n")
    write(tmp_path / "lib" / "x.h", '#include "types.h"\n#define X_MACRO(a) a\nstruct Before : Handle { Before(); };\n'
                                    '#include "x_inline.h"\nstruct After {};\n')
    write(tmp_path / "other" / "y.h", '#include "../lib/x_inline.h"\nstruct Elsewhere {};\n')
    inline = write(tmp_path / "lib" / "x_inline.h", "inline Before::Before() {}\n")
    seen = hi.HeaderIndex(roots=(str(tmp_path),)).visible(str(inline), inline.read_bytes())
    assert seen.headers == [str(tmp_path / "lib" / "x.h"), str(tmp_path / "lib" / "types.h")]
    assert {"Before", "Handle"} <= set(seen.classes) and not {"After", "Elsewhere"} & set(seen.classes)
    assert "X_MACRO" not in seen.macros
    write(tmp_path / "lib" / "unity.h", 'struct Unity {};\n#include "x.cpp"\n')
    source = write(tmp_path / "lib" / "x.cpp", "int f();\n")  # (only headers are read in an includer's context)
    assert hi.HeaderIndex(roots=(str(tmp_path),)).visible(str(source), source.read_bytes()) is hi.EMPTY


def test_an_angle_include_is_not_looked_up_next_to_the_file(tmp_path: Path) -> None:
    write(tmp_path / "a" / "conf.h", "struct Here {};\n")
    index = hi.HeaderIndex()
    assert index.resolve("conf.h", str(tmp_path / "a")) == str(tmp_path / "a" / "conf.h")
    assert index.resolve_angle("conf.h", str(tmp_path / "a")) is None


# ----------------------------------------------------------------------------- statement macros


@pytest.mark.parametrize("body,statement", [("do { f(); } while (0)", True), ("if (x) return -1;", True),
                                            ("{ a(); }", True), ("((a) > (b) ? (a) : (b))", False),
                                            ("f(x)", False)])
def test_statement_bodies(body: str, statement: bool) -> None:
    assert is_statement_body(body) is statement


def test_semicolon_goes_into_the_next_lines_indentation() -> None:
    code = (b"void f(void) {\n  CHECK(a)\n  b = 1;\n  CHECK(c);\n  x = CHECK(d)\n    + 1;\n"
            b"  if (y)\n    CHECK(e)\n  else\n    g();\n  CHECK(h)\n  ->z;\n}\n")
    out = terminate_statement_macros(code, {"CHECK"})
    assert len(out) == len(code) and out.count(b"\n") == code.count(b"\n")
    lines = out.decode().split("\n")
    assert lines[2] == "; b = 1;"  # terminated
    assert lines[4] == "  x = CHECK(d)" and lines[5] == "    + 1;"  # inside an expression: untouched
    assert lines[8] == "  else" and lines[11] == "  ->z;"  # before `else` / a member access: untouched
    assert out.count(b";") == code.count(b";") + 1


@pytest.mark.parametrize("body,complete", [("if (c) { f(); }", True), ("{ a(); } /* note */", True),
                                           ("f(x); \\\n g(x);", True), ("do { f(); } while (0)", False),
                                           ("if (x) return -1", False)])
def test_complete_statement_bodies(body: str, complete: bool) -> None:
    assert is_complete_statement_body(body) is complete


def test_a_complete_statement_macro_is_terminated_before_any_statement() -> None:
    """`HAND(f, n)` (body `if (...) {...}`) then `*kept = ...` on the next line was read as a
    declaration of a local `kept`; two invocations on one line as one expression. A
    `do {...} while (0)` macro before `*` is left as it was (it could continue an expression)."""
    code = (b"#define HAND(f, n) if (o->f) { take(malloc(n)); }\n"
            b"#define CHECK(x) do { if (!(x)) return -1; } while (0)\n"
            b"int g(char **kept) {\n  HAND(a, 4)\n  *kept = 0;\n  HAND(a, 4) HAND(b, 4)\n  ++n;\n"
            b"  HAND(a, 4) /* c */ &x;\n  CHECK(c)\n  *kept = 0;\n  HAND(a, 4);\n  x = HAND(a, 4)\n  *2;\n}\n")
    names, complete = statement_macro_sets(code, None, default_policy())
    assert names == {"HAND", "CHECK"} and complete == {"HAND"}
    out = terminate_statement_macros(code, names, complete)
    assert len(out) == len(code) and out.count(b"\n") == code.count(b"\n")
    lines = out.decode().split("\n")
    assert lines[4] == "; *kept = 0;"  # the next line's indentation
    assert lines[5] == "  HAND(a, 4);HAND(b, 4)" and lines[6] == "; ++n;"  # the blank after `)`, then the indentation
    assert lines[7] == "  HAND(a, 4);/* c */ &x;"
    assert lines[9] == "  *kept = 0;"  # after CHECK: untouched
    assert lines[10:13] == ["  HAND(a, 4);", "  x = HAND(a, 4)", "  *2;"]  # has its `;`; inside an expression
    assert terminate_statement_macros(code, names).split(b"\n")[4] == b"  *kept = 0;"  # as before without `complete`
    column_zero = b"void h(void) {\n  HAND(a, 4)\n*kept = 0;\n  HAND(b, 4)\n}\n"
    assert terminate_statement_macros(column_zero, {"HAND"}, {"HAND"}).split(b"\n")[1:5] == [
        b" HAND(a, 4);", b"*kept = 0;", b"  HAND(b, 4)", b"}"]  # moved left before `*`; `}` needs nothing
    in_define = b"#define TWO(a) \\\n  HAND(a, 1) HAND(a, 2) \\\n  HAND(a, 3)\n  *p = 0;\n"
    assert terminate_statement_macros(in_define, {"HAND"}, {"HAND"}) == in_define  # a `#define`'s body: left


# ----------------------------------------------------------------------------- [[macro]] policy entries


@pytest.mark.parametrize("entry,message", [
    ('names = ["X"]\nacts = "explode"', "acts: must be one of"),
    ('acts = "throw"', "names: missing"),
    ('names = ["not a name"]\nacts = "throw"', "is not a macro name"),
    ('names = ["X"]\nacts = "throw"\narg = -1', "arg: must be an argument index"),
    ('names = ["X"]\nacts = "throw"\nextra = 1', "extra"),
])
def test_macro_entries_are_validated(tmp_path: Path, entry: str, message: str) -> None:
    rules = write(tmp_path / "m.toml", f"[[macro]]\n{entry}\n")
    with pytest.raises(PolicyError, match=message):
        load_policy([rules], include_defaults=False)


def test_macro_entries_load() -> None:
    shapes = default_policy().macro_shapes
    assert shapes["ORT_RETURN_IF_ERROR"].acts == "return-on-status"
    assert "return" in shapes["ORT_RETURN_IF_ERROR"].body and shapes["RedisModule_Assert"].acts == "abort-on-false"


# ----------------------------------------------------------------------------- configuration and cache


def test_include_dirs_setting(tmp_path: Path) -> None:
    config = write(tmp_path / ".ortlint.toml", 'include-dirs = ["third_party/include"]\n')
    assert load_file(config).include_dirs == [str(tmp_path / "third_party" / "include")]
    write(config, "include-dirs = 3\n")
    with pytest.raises(ConfigError):
        load_file(config)


def test_include_dirs_reach_headers_outside_the_tree(tmp_path: Path) -> None:
    write(tmp_path / "sdk" / "sdk_check.h", "#define SDK_FAIL_IF(c) do { if (c) return -1; } while (0)\n")
    src = write(tmp_path / "src" / "m.c", '#include <stdlib.h>\n#include "sdk_check.h"\n'
                "int f(int bad) { char *p = malloc(4); SDK_FAIL_IF(bad); free(p); return 0; }\n")
    plain = run(RunConfig([str(src)], default_policy()))
    assert plain.findings == []
    found = run(RunConfig([str(src)], default_policy(), include_dirs=(str(tmp_path / "sdk"),)))
    assert [(f.rule, f.line) for f in found.findings] == [("ORT001", 3)]


def test_editing_a_header_reanalyzes_the_files_that_include_it(tmp_path: Path) -> None:
    header = write(tmp_path / "t" / "check.h", "#define FAIL_IF(c) do { if (c) return -2; } while (0)\n")
    src = write(tmp_path / "t" / "m.c", '#include <stdlib.h>\n#include "check.h"\n'
                "int f(int bad) { char *p = malloc(4); FAIL_IF(bad); free(p); return 0; }\n")
    cache = str(tmp_path / "cache")
    first = run(RunConfig([str(src)], default_policy(), cache_dir=cache))
    assert [(f.rule, f.line) for f in first.findings] == [("ORT001", 3)]
    header.write_text("#define FAIL_IF(c) do { (void)(c); } while (0)\n")
    os.utime(header, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    second = run(RunConfig([str(src)], default_policy(), cache_dir=cache))
    assert second.findings == []


def test_semicolon_before_a_directive_at_column_zero_moves_the_invocation_left() -> None:
    code = b"void f(int t) {\n  switch (t) {\n    CASE(a, 1)\n#if X\n    CASE(b, 2)\n#endif\n  }\n}\n"
    out = terminate_statement_macros(code, {"CASE"})
    assert len(out) == len(code)
    assert out.split(b"\n")[2] == b"   CASE(a, 1);" and out.split(b"\n")[4] == b"   CASE(b, 2);"


def test_a_finding_inside_a_macro_expansion_names_the_macro_in_its_trace() -> None:
    """Reported at the invocation, with a step naming the macro and where it is defined."""
    from ortlint.api import lint
    folder = Path(__file__).resolve().parent.parent / "fixtures" / "multi" / "header_index"
    report = lint([str(folder)])
    by_line = {(Path(f.path).name, f.line): f for f in report.findings}
    logged = by_line[("app.c", 55)]
    assert logged.trace[0].message == "in the expansion of LOG_IF_ERROR (status_check.h:27)"
    plain = by_line[("app.c", 49)]  # strdup written in the function itself: no such step
    assert not any("expansion" in s.message for s in plain.trace)


# ----------------------------------------------------------------------------- a header's tree, parsed once


_CPP_HEADER = """#pragma once
#include <memory>
namespace kept {
class Holder {
 public:
  explicit Holder(int n);
  ~Holder();
  OrtStatus* Make(const OrtApi* api, OrtEnv** out);
};
inline OrtStatus* make_env(const OrtApi* api, OrtEnv** out) {
  OrtStatus* st = api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "x", out);
  if (st != NULL) return st;
  return NULL;
}
}  // namespace kept
"""


def test_a_header_tree_is_handed_over_once_and_only_for_the_same_text(tmp_path: Path) -> None:
    header = write(tmp_path / "kept.h", _CPP_HEADER)
    index = hi.HeaderIndex(roots=(str(tmp_path),))
    facts = index.facts(str(header))
    data = header.read_bytes()
    cpp = Language(tree_sitter_cpp.language())
    assert index.take_tree(str(header), data + b" ", cpp) is None  # other text: never this tree
    index.facts(str(header))  # (cached: not parsed again, so no tree is kept again)
    assert index.parsed == 1 and index.take_tree(str(header), data, cpp) is None  # a tree is handed out once at most
    index = hi.HeaderIndex(roots=(str(tmp_path),))
    facts = index.facts(str(header))
    taken = index.take_tree(str(header), data, cpp)
    assert taken is not None and taken[1] is facts
    assert str(taken[0].root_node) == str(Parser(cpp).parse(data).root_node)
    assert index.take_tree(str(header), data, cpp) is None


def test_a_header_analyzed_with_the_index_tree_gives_the_ir_of_a_fresh_parse(tmp_path: Path, monkeypatch) -> None:
    """The hand-over saves a parse and the own-file facts walk; what the front end makes of
    the header must not depend on it (the file that includes it comes first, as in a run)."""
    import pickle
    from ortlint.discover import SourceFile
    from ortlint.frontends.c import frontend as c_treesitter
    from ortlint.orchestration.parsing import parse_file
    parses: list[int] = []
    real_parse = c_treesitter.parse_limited
    monkeypatch.setattr(c_treesitter, "parse_limited", lambda *a, **k: parses.append(1) or real_parse(*a, **k))
    header = write(tmp_path / "kept.h", _CPP_HEADER)
    user = write(tmp_path / "a.cc", '#include "kept.h"\nint use() { return 0; }\n')
    policy = default_policy()

    def header_unit(hand_over: bool) -> bytes:
        hi.configure((), (str(tmp_path),))
        if hand_over:
            parse_file(SourceFile(str(user), "cpp"), policy)  # the index parses kept.h here
        parses.clear()
        unit = parse_file(SourceFile(str(header), "c"), policy)
        assert len(parses) == (0 if hand_over else 1)  # the front end parsed kept.h itself only without it
        return pickle.dumps((unit.functions, unit.notes, unit.constants, unit.dependencies))

    with_hand_over = header_unit(True)
    assert with_hand_over == header_unit(False)
