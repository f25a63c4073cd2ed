"""The C/C++ front ends on the pathological inputs of issue 18, at sizes that used to take
seconds, exhaust memory or crash: each must end with a report (findings or a clear notice).
Sizes here are modest; `bench/frontend_probes.py` measures the issue's sizes (no timing here)."""
from __future__ import annotations

import sys
from pathlib import Path

import time

import pytest

from ortlint import ir
from ortlint.api import default_policy, lint
from ortlint.frontends.common import source as source_mod
from ortlint.frontends.c.frontend import parse_c
from ortlint.frontends.cpp.frontend import is_cpp_header, parse_cpp
from ortlint.frontends.go.frontend import parse_go
from ortlint.frontends.java.frontend import parse_java

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import frontend_probes as probes  # noqa: E402


def _lint_text(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return lint([str(path)])


def test_deep_and_chain_is_analyzed_without_recursion(tmp_path: Path) -> None:
    """A 30 000-term `&&` chain: lowered in a loop (no 'nested too deeply', no crash), and a leak
    on its early return is still found."""
    terms = " && ".join(f"a[{i}]" for i in range(3000))
    code = ("#include <stdlib.h>\nint f(int *a) {\n  char *b = malloc(4);\n  if (!b) return -1;\n"
            f"  if ({terms}) return 1;\n  free(b);\n  return 0;\n}}\n")
    report = _lint_text(tmp_path, "chain.c", code)
    assert [f.rule for f in report.findings] == ["ORT001"]
    assert not any("nested too deeply" in n.message for n in report.notices)
    name, text = probes.and_chain(30_000)
    report = _lint_text(tmp_path, name, text)
    assert not any("nested too deeply" in n.message or "internal error" in n.message for n in report.notices)


def test_long_shift_chain_is_one_flat_operation() -> None:
    name, text = probes.shift_chain(20_000)
    unit = parse_cpp(name, default_policy(), text.encode())
    assert [f.name for f in unit.functions] == ["f"] and not unit.notes
    assert not any("nested too deeply" in m for _l, m in unit.functions[0].notes)


def test_short_chains_keep_their_binary_shape() -> None:
    unit = parse_c("t.c", default_policy(), b"int f(int a) { int x = a + 1 + 2; return x; }\n")
    assign = next(e for b in unit.functions[0].blocks for e in b.events if isinstance(e, ir.Assign))
    assert isinstance(assign.value, ir.Op) and len(assign.value.operands) == 2


def test_nested_immediately_invoked_lambdas_are_inlined_not_also_analyzed_alone() -> None:
    name, text = probes.nested_iife(4000)
    unit = parse_cpp(name, default_policy(), text.encode())
    # each lambda is inlined into its caller; only those past the inlining depth become functions
    assert 1 < len(unit.functions) <= 4000 // 4 + 2


def test_unclosed_lambdas_say_the_file_was_not_parsed() -> None:
    name, text = probes.unclosed_lambdas(3000)
    unit = parse_cpp(name, default_policy(), text.encode())
    assert any("could not parse" in m for _l, m in unit.notes)


def test_columns_on_a_long_non_ascii_line() -> None:
    calls = " ".join(f"g(p{i});" for i in range(2000))
    code = f"void f(int *p) {{\n  /* é */ {calls}\n}}\n"
    unit = parse_c("t.c", default_policy(), code.encode())
    events = [e for b in unit.functions[0].blocks for e in b.events if isinstance(e, ir.Call)]
    line = code.split("\n")[1]
    for call in (events[0], events[1234], events[-1]):
        assert line[call.loc.col - 1:].startswith(call.text.rstrip(";"))


def test_columns_on_invalid_utf8_lines_still_count_characters() -> None:
    code = b"void f(int *p) {\n  /* \xff\xfe */ g(p);\n}\n"
    unit = parse_c("t.c", default_policy(), code)
    call = next(e for b in unit.functions[0].blocks for e in b.events if isinstance(e, ir.Call))
    assert call.loc.col == len(b"  /* \xff\xfe */ ".decode("utf-8", "replace")) + 1


@pytest.mark.parametrize("text", [b"struct " + b"A" * 40_000 + b" x;\n", b"/*" * 40_000,
                                  b"class " + b"B" * 40_000 + b" final\n"])
def test_cpp_header_detector_on_long_names_and_open_comments(text: bytes) -> None:
    assert not is_cpp_header("x.h", text)


@pytest.mark.parametrize("text,expected", [(b"struct A : public B {};\n", True),
                                           (b"struct Foo::Bar : private Q {\n", True),
                                           (b"struct S { int a; };\n", False)])
def test_cpp_header_detector_still_recognizes_inheritance(text: bytes, expected: bool) -> None:
    assert is_cpp_header("x.h", text) is expected


GO_TEXT = b"package p\n" + b"func f(p int) int { return g(p) }\n" * 2000


@pytest.mark.parametrize("parse,name", [(parse_c, "t.c"), (parse_cpp, "t.cpp"), (parse_go, "t.go")])
def test_parse_step_limit_degrades_to_a_warning(monkeypatch: pytest.MonkeyPatch, parse, name: str) -> None:
    monkeypatch.setattr(source_mod, "PARSE_STEPS_BASE", 10)
    monkeypatch.setattr(source_mod, "PARSE_STEPS_PER_KB", 0)
    text = GO_TEXT if name.endswith(".go") else b"int f(int *p) { return g(p); }\n" * 2000
    unit = parse(name, default_policy(), text)
    assert unit.functions == []
    assert [m for _l, m in unit.notes] == ["limit reached: tree-sitter stopped parsing this file after 1,000 parse "
                                           "steps (error recovery on malformed code); could not parse this file, it "
                                           "is not analyzed"]


def test_the_parse_step_limit_counts_work_not_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same file stops at the same step however slow the machine: tree-sitter's progress
    callbacks are counted, the clock is never read. A parse slowed down (every callback sleeps,
    as on a machine busy with other work) stops or finishes exactly where a fast one does."""
    from tree_sitter import Language, Parser
    import tree_sitter_cpp
    text = b"int f(int *p) { if (p) { return g(p); } return 0; }\n" * 300
    parser = Parser(Language(tree_sitter_cpp.language()))
    fast = source_mod.StepCounter(10 ** 9)
    parser.parse(lambda offset, _point: text[offset:offset + 4096], progress_callback=fast)
    needed = fast.calls
    assert needed > 10
    real_call = source_mod.StepCounter.__call__

    def slow_call(self, *state):  # noqa: ANN001, ANN202
        time.sleep(0.002)
        return real_call(self, *state)

    monkeypatch.setattr(source_mod.StepCounter, "__call__", slow_call)
    assert source_mod.parse_limited(parser, text, needed).root_node.type == "translation_unit"
    with pytest.raises(source_mod.ParseTimeout):
        source_mod.parse_limited(parser, text, needed - 1)


JAVA_TEXT = b"class T {\n" + b"  int f(int p) { return g(p); }\n" * 20000 + b"}\n"


@pytest.mark.parametrize("parse,name,text", [(parse_c, "t.c", b"int f(int *p) { return g(p); }\n" * 20000),
                                             (parse_java, "T.java", JAVA_TEXT)])
def test_parse_memory_cap_degrades_to_a_notice(monkeypatch: pytest.MonkeyPatch, parse, name: str, text: bytes) -> None:
    """Error recovery on a 4 MB fuzzed file grew tree-sitter past the worker's memory limit and
    the native parser crashed; a cap below the limit cancels the parse first. The Java front
    end parses on its own (with a CPU budget) and had no cap: a 4 MB file of 60 KB lines took
    a worker to 1 GB."""
    monkeypatch.setattr(source_mod, "PARSE_MEMORY_MB", 1)
    monkeypatch.setattr(source_mod, "_resident_bytes", iter(range(0, 1 << 40, 1 << 20)).__next__)
    unit = parse(name, default_policy(), text)
    assert unit.functions == []
    assert any(m.startswith("limit reached: tree-sitter needed more than 1 MB") for _l, m in unit.notes)


def test_methods_inlined_at_every_call_are_bounded() -> None:
    """Each method calls the next one 20 times: inlining every call multiplies per level (a
    fuzzed file needed more than 1 GB). Past a budget of inlined source the calls stay calls, with a note."""
    methods = "".join(f"  void m{i}(int *p) {{ {f'm{i + 1}(p); ' * 20}x++; }}\n" for i in range(12))
    code = f"struct W {{\n  int x;\n  ~W() {{ }}\n{methods}  void m12(int *p) {{ }}\n}};\nvoid f(int *p) {{ W v; v.m0(p); }}\n"
    unit = parse_cpp("t.cpp", default_policy(), code.encode())
    f = next(fn for fn in unit.functions if fn.name == "f")
    assert any("inlines more than" in m for _l, m in f.notes)
    assert sum(len(b.events) for b in f.blocks) < 200_000


def test_unclosed_go_calls_are_a_warning_not_a_lost_worker(tmp_path: Path) -> None:
    """Eleven lines of 30 000 unclosed nested calls (fuzzed): tree-sitter-go needs ~500 MB to
    parse them and the front end as much again; the parse is capped at a third of the worker's
    memory limit, so the file is "could not parse" (a warning), not a worker killed mid-parse."""
    from ortlint.orchestration.settings import RunConfig
    from ortlint.orchestration.runner import run
    name, text = probes.go_unclosed_calls(30_000)
    (tmp_path / name).write_text(text, encoding="utf-8")
    report = run(RunConfig([str(tmp_path)], default_policy(), jobs=1))
    assert not [n.message for n in report.notices if n.level == "error"]
    assert any("could not parse" in n.message for n in report.notices)


def test_destructors_times_exits_are_bounded() -> None:
    """2 000 unique_ptr locals each followed by a `return` (fuzzed): 2 M destructor calls to
    lower, past 1 GB. Past MAX_CLEANUP_RUNS the function is skipped with a note; the file's
    other functions are analyzed as usual."""
    name, text = probes.cpp_owners_and_returns(2000)
    unit = parse_cpp(name, default_policy(), text.encode())
    assert [f.name for f in unit.functions] == ["leak"]
    assert any("too many destructors times exits" in message for _loc, message in unit.notes)
    name, text = probes.cpp_owners_and_returns(20)
    assert [f.name for f in parse_cpp(name, default_policy(), text.encode()).functions] == ["get", "leak"]
