"""The Go front end: the IR it produces for Go's control flow (defers, results, slots, closures,
cgo preambles), that valid Go gives no parse note, and that broken input never crashes it."""
from __future__ import annotations

from pathlib import Path

import pytest

from ortlint import ir
from ortlint.api import lint
from ortlint.frontends.go.cgo import preamble_source
from ortlint.frontends.go.frontend import parse_go
from ortlint.policy import load_policy
from tests.clihelpers import FIXTURES

POLICY = load_policy()
HEADER = 'package p\n\nimport ort "github.com/yalue/onnxruntime_go"\n\n'


def unit(tmp_path: Path, body: str) -> ir.SourceUnit:
    path = tmp_path / "x.go"
    path.write_text(HEADER + body, encoding="utf-8")
    return parse_go(str(path), POLICY)


def function(u: ir.SourceUnit, name: str) -> ir.Function:
    return next(f for f in u.functions if f.name == name)


def calls(fn: ir.Function) -> list[ir.Call]:
    return [e for b in fn.blocks for e in b.events if isinstance(e, ir.Call)]


def rules(tmp_path: Path, body: str) -> list[tuple[int, str]]:
    path = tmp_path / "y.go"
    path.write_text(HEADER + body, encoding="utf-8")
    return sorted((f.line - 4, f.rule) for f in lint([str(path)]).findings)


def test_binding_call_passes_results_first_and_returns_the_error(tmp_path: Path) -> None:
    u = unit(tmp_path, "func f() error {\n\tt, err := ort.NewTensor(ort.NewShape(1), []float32{1})\n"
                       "\tif err != nil {\n\t\treturn err\n\t}\n\treturn t.Destroy()\n}\n")
    new = next(c for c in calls(function(u, "f")) if c.callee == "ort.NewTensor")
    assert new.args[0] == ir.AddrOf(ir.Var("t")) and new.dest == ir.Var("err")
    destroy = next(c for c in calls(function(u, "f")) if c.callee == "Destroy")
    assert destroy.style == "method" and destroy.receiver == ir.Var("t")


def test_generic_constructor_is_a_binding_call(tmp_path: Path) -> None:
    u = unit(tmp_path, "func f() {\n\tx, _ := ort.NewEmptyTensor[float32](ort.NewShape(2))\n\tx.Destroy()\n}\n")
    assert "ort.NewEmptyTensor" in {c.callee for c in calls(function(u, "f"))}


def test_several_results_become_out_parameters(tmp_path: Path) -> None:
    u = unit(tmp_path, "func mk() (*ort.Tensor[float32], int, error) {\n\treturn nil, 0, nil\n}\n"
                       "func use() {\n\ta, n, err := mk()\n\t_, _, _ = a, n, err\n}\n")
    assert function(u, "mk").params == ["ret%0", "ret%1"]
    call = next(c for c in calls(function(u, "use")) if c.callee == "mk")
    assert call.args == (ir.AddrOf(ir.Var("a")), ir.AddrOf(ir.Var("n"))) and call.dest == ir.Var("err")


def test_defers_run_last_first_at_every_later_exit(tmp_path: Path) -> None:
    u = unit(tmp_path, "func keep(x *ort.Tensor[float32]) {}\n"
                       "func f(a, b *ort.Tensor[float32], c bool) {\n\tif c {\n\t\treturn\n\t}\n"
                       "\tdefer keep(a)\n\tdefer keep(b)\n\tif !c {\n\t\treturn\n\t}\n}\n")
    fn = function(u, "f")
    per_exit = []
    for block in fn.blocks:
        if isinstance(block.term, ir.Return):
            per_exit.append([ir.expr_text(c.args[0]) for c in block.events if isinstance(c, ir.Call)])
    assert [] in per_exit  # the first return is before the defers
    assert ["defer%2.0", "defer%1.0"] in per_exit  # b first, bound when each defer ran


def test_deferred_destroy_counts_from_the_defer_on(tmp_path: Path) -> None:
    """`defer x.Destroy()` destroys x at every later exit: for leaks, from the defer on."""
    assert rules(tmp_path, "func f(n int) error {\n\tt, err := ort.NewEmptyTensor[float32](ort.NewShape(1))\n"
                           "\tif err != nil {\n\t\treturn err\n\t}\n\tif n > 1 {\n\t\treturn nil\n\t}\n"
                           "\tdefer t.Destroy()\n\treturn nil\n}\n") == [(2, "ORT020")]


def test_defer_inside_a_branch_is_guarded_by_a_flag(tmp_path: Path) -> None:
    assert rules(tmp_path, "func f(c bool) error {\n\tt, err := ort.NewEmptyTensor[float32](ort.NewShape(1))\n"
                           "\tif err != nil {\n\t\treturn err\n\t}\n\tif c {\n\t\tdefer t.Destroy()\n\t}\n"
                           "\treturn nil\n}\n") == [(2, "ORT020")]


def test_run_fills_each_nil_slot_and_is_reported_once(tmp_path: Path) -> None:
    body = ("func f(s *ort.DynamicAdvancedSession, in []ort.Value) error {\n\touts := []ort.Value{nil, nil}\n"
            "\treturn s.Run(in, outs)\n}\n")
    u = unit(tmp_path, body)
    fills = [c for c in calls(function(u, "f")) if c.style == "new"]
    assert [ir.expr_text(c.dest) for c in fills] == ["outs[0]", "outs[1]"]
    assert rules(tmp_path, body) == [(3, "ORT020")]


def test_goroutine_body_is_its_own_function(tmp_path: Path) -> None:
    u = unit(tmp_path, "func f(t *ort.Tensor[float32]) {\n\tgo func() {\n\t\tt.Destroy()\n\t}()\n}\n")
    assert {f.name for f in u.functions} == {"f", "f$func6"}
    handoff = next(c for c in calls(function(u, "f")) if c.callee == "$handoff")
    assert handoff.args == (ir.Var("t"),)


def test_process_exits_end_the_path(tmp_path: Path) -> None:
    assert rules(tmp_path, 'import "os"\n\nfunc f() {\n\tt, err := ort.NewEmptyTensor[float32](ort.NewShape(1))\n'
                           "\tif err != nil || len(t.GetShape()) > 1 {\n\t\tos.Exit(1)\n\t}\n\tpanic(t)\n}\n") == []


def test_cgo_preamble_keeps_the_lines_of_the_go_file() -> None:
    src = (FIXTURES / "go" / "cgo_preamble_leak.go").read_bytes()
    c_src = preamble_source(src)
    assert c_src is not None and c_src.count(b"\n") == src.count(b"\n")
    lines_go, lines_c = src.split(b"\n"), c_src.split(b"\n")
    i = next(k for k, line in enumerate(lines_go) if b"CreateSessionOptions" in line)
    assert lines_c[i].strip() == lines_go[i].strip()
    assert b"package" not in c_src and b"import" not in c_src


def test_no_parse_note_on_valid_go_fixtures() -> None:
    for path in sorted((FIXTURES / "go").glob("*.go")):
        assert parse_go(str(path), POLICY).notes == [], path.name


@pytest.mark.parametrize("text", [
    "", "package", "package p\nfunc (", "package p\nfunc f() { for { select { case <-", "\x00\x01binary",
    "package p\nfunc f() {" + "(" * 2000 + "}", "package p\nfunc f() { L: goto L }",
    "package p\nfunc f() { defer func() { defer g() }() }",
    "package p\nimport \"C\"\nfunc f() {}", "package p\n/*\nint f(void) { return 0; }\n*/\nimport \"C\"\n",
])
def test_broken_input_never_crashes(tmp_path: Path, text: str) -> None:
    path = tmp_path / "b.go"
    path.write_bytes(text.encode("utf-8", "replace"))
    result = parse_go(str(path), POLICY)
    assert isinstance(result, ir.SourceUnit)
    lint([str(path)])


BINDING_SNAPSHOT = Path(__file__).resolve().parents[2] / ".mirror" / "yalue+onnxruntime_go" / "repo"


@pytest.mark.skipif(not BINDING_SNAPSHOT.is_dir(), reason="no snapshot of yalue/onnxruntime_go here")
def test_go_policy_is_what_the_generator_makes_of_the_binding() -> None:
    import subprocess
    import sys
    root = Path(__file__).resolve().parent.parent
    made = subprocess.run([sys.executable, str(root / "tools" / "gen_go_policy.py"), str(BINDING_SNAPSHOT)],
                          check=True, capture_output=True, text=True).stdout
    assert made == (root / "rules" / "onnxruntime-go.toml").read_text(encoding="utf-8")


def test_thousands_of_defers_times_returns_are_skipped_with_a_note(tmp_path: Path) -> None:
    """Each return lowers every earlier defer again: 400 defers x 400 returns took a minute
    (found by the fuzzer); past a bound the function is skipped, the others are analyzed."""
    steps = "".join(f"\tdefer f{i}()\n\tif n == {i} {{\n\t\treturn nil\n\t}}\n" for i in range(400))
    body = (f"func many(n int) error {{\n{steps}\treturn nil\n}}\n\n"
            "func leak() {\n\tt, err := ort.NewEmptyTensor[float32](ort.NewShape(2))\n"
            "\tif err != nil {\n\t\treturn\n\t}\n\t_ = t\n}\n")
    u = unit(tmp_path, body)
    assert "many" not in {f.name for f in u.functions} and "leak" in {f.name for f in u.functions}
    assert any("too many deferred calls" in m for _, m in u.notes)


def test_a_file_of_many_comments_is_read_in_one_walk(tmp_path: Path) -> None:
    """Finding each comment's parent through `Node.parent` was quadratic (found by the fuzzer:
    27 s for a 360 KB file); the front end walks the tree once."""
    body = "// a comment\n" * 20000 + "func f() {\n\tt, err := ort.NewEmptyTensor[float32](ort.NewShape(2))\n" \
        "\tif err != nil {\n\t\treturn\n\t}\n\t_ = t\n}\n"
    u = unit(tmp_path, body)
    assert [f.name for f in u.functions] == ["f"] and not u.notes


def test_the_first_syntax_error_is_found_without_walking_the_whole_tree(tmp_path: Path) -> None:
    """A walk of every node kept a Python object per pending node (more than 1 GB for a fuzzed
    4 MB line of chained calls); the error is found by going down the children that have one."""
    chain = "ort.N" + ".g()" * 50000
    u = unit(tmp_path, f"func ok() {{}}\n\nfunc f() error {{\n\treturn {chain} +\n}}\n")
    assert any(m.startswith("syntax error near line") for _, m in u.notes)
    assert [line.line for line, m in u.notes if m.startswith("syntax error")][0] >= 7


def test_a_huge_mutated_package_file_does_not_stall_its_neighbours(tmp_path: Path) -> None:
    """Every .go file's parse reads its folder's other files for variadic functions
    (go_scan.package_variadics). A 4 MB neighbour full of `func fN(` heads whose parameter
    lists never close was walked byte by byte to its end once per head (a fuzzed input: every
    .go file of its folder stopped at the 20 s limit); the walk is now bounded, and the
    variadics of well-formed neighbours are still found."""
    from ortlint.frontends.go.scan import MAX_PARAMETER_LIST, _top_level_parts, package_variadics
    (tmp_path / "big.go").write_bytes(b"package p\n" + b"func f(a int,\n" * 2000 + b"x" * (4 << 20))
    (tmp_path / "ok.go").write_text("package p\n\nfunc Pack(prefix string, m map[string]int, f func(a, b int), rest ...int) {}\n"
                                    "func (s *S) Log(format string, args ...any) {}\n")
    (tmp_path / "main.go").write_text("package p\n")
    import time
    started = time.process_time()
    found = package_variadics(str(tmp_path / "main.go"))
    assert time.process_time() - started < 5.0
    assert found == {"Pack": 3, "S.Log": 2}
    assert _top_level_parts(b"a int, m map[string]int, f func(x, y int), ") == [b"a int", b" m map[string]int",
                                                                                 b" f func(x, y int)"]
    assert MAX_PARAMETER_LIST < 1 << 20


def test_a_call_as_the_only_argument_passes_every_result(tmp_path: Path) -> None:
    """`must.M1(ort.NewTensor(...))`: the tensor and the error are the helper's two arguments
    (each in a temporary), not a tensor lost inside the argument list (issue 32)."""
    u = unit(tmp_path, 'import "github.com/janpfeifer/must"\n\nfunc f(d []float32) {\n'
                       '\tt := must.M1(ort.NewTensor(ort.NewShape(1, 2), d))\n\tt.Destroy()\n}\n')
    made, helper = [c for c in calls(function(u, "f")) if c.callee in ("ort.NewTensor", "must.M1")]
    assert [ir.expr_text(a) for a in made.args][:1] == [f"&{helper.args[0].name}"]
    assert helper.args[1] == made.dest and len(helper.args) == 2


def test_must_helper_keeps_the_trace_of_the_object(tmp_path: Path) -> None:
    path = FIXTURES / "go" / "must_helper_leak.go"
    found = {f.line: f for f in lint([str(path)]).findings}
    for line, exit_line in ((20, 22), (25, 27)):
        steps = [t.message for t in found[line].trace]
        assert steps[-1].startswith("returning from earlyReturn()") and f"line {exit_line}" in found[line].message
        assert not any("$" in s for s in steps)  # no temporary named to the user


def test_environment_handed_back_by_a_returned_flag(tmp_path: Path) -> None:
    body = ('func initialise() (bool, error) {\n'
            '\tif err := ort.InitializeEnvironment(); err != nil {\n\t\treturn false, err\n\t}\n'
            '\tif err := ort.DisableTelemetry(); err != nil {\n\t\treturn %s, err\n\t}\n\treturn true, nil\n}\n')
    assert rules(tmp_path, body % "true") == []
    assert rules(tmp_path, body % "false") == [(2, "ORT020")]


def test_address_of_a_struct_value_is_the_struct(tmp_path: Path) -> None:
    """Fields of a struct variable are `(*s).f`, so `&s` is `s`: what `fill(&s)` stores is what
    `s.Cleanup()` destroys."""
    u = unit(tmp_path, 'type h struct{ t *ort.Tensor[float32] }\n\nfunc fill(x *h) {}\n\n'
                       'func f() {\n\tvar s h\n\tfill(&s)\n\tp := &h{}\n\tfill(p)\n\tvar n int\n\tg(&n)\n}\n\nfunc g(n *int) {}\n')
    got = [(c.callee, ir.expr_text(c.args[0])) for c in calls(function(u, "f"))]
    assert got == [("fill", "s"), ("fill", "p"), ("g", "&n")]


# ----------------------------------------------------------------------------- files parsed in pieces


def test_a_file_parsed_in_pieces_gives_the_ir_of_a_whole_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: a generated 5 MB file of small functions needed 365 MB of syntax tree, over the
    parse memory cap, and was not analyzed. Pieces of top-level declarations (with the package
    clause and imports) give the same IR, closures, notes and dependencies included."""
    import pickle

    from ortlint.api import default_policy
    from ortlint.frontends.common.source import read_source
    from ortlint.frontends.go import frontend

    monkeypatch.setattr(frontend, "PIECES_MIN_BYTES", 0)
    monkeypatch.setattr(frontend, "PIECE_BYTES", 300)
    policy = default_policy()
    split = 0
    for path in sorted((FIXTURES / "go").glob("*.go")):
        source = read_source(str(path), policy, blank=False)
        whole = frontend.GoFrontEnd(str(path), source.original, policy, source.lines).run()
        front = frontend.GoFrontEnd(str(path), source.original, policy, source.lines)
        pieces = front.pieces()
        if pieces is None or len(pieces) < 2:
            continue
        split += 1
        part = front.run_in_pieces(pieces)
        assert pickle.dumps((whole.functions, whole.notes, whole.dependencies)) == \
            pickle.dumps((part.functions, part.notes, part.dependencies)), path.name
    assert split >= 20


def test_a_parse_over_the_memory_cap_is_done_again_in_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ortlint.frontends.common import source as common_source
    from ortlint.frontends.go import frontend

    real = frontend.parse_limited

    def parse_limited(parser, data, seconds=None):  # noqa: ANN001, ANN202 - the whole file is "too big"
        if not parser.included_ranges or parser.included_ranges[-1].end_byte - parser.included_ranges[0].start_byte \
                == len(data):
            raise common_source.memory_cap_reached()
        return real(parser, data, seconds)

    monkeypatch.setattr(frontend, "parse_limited", parse_limited)
    monkeypatch.setattr(frontend, "PIECES_MIN_BYTES", 0)
    monkeypatch.setattr(frontend, "PIECE_BYTES", 100)
    helper = "".join(f"func helper{i}(a []int) int {{\n\tn := 0\n\tdefer func() {{ n += a[0] }}()\n\treturn n\n}}\n\n"
                     for i in range(6))
    path = tmp_path / "gen.go"
    path.write_text("package app\n\nimport ort \"github.com/yalue/onnxruntime_go\"\n\n" + helper
                    + "func leak() error {\n\topts, err := ort.NewSessionOptions()\n\tif err != nil {\n\t\treturn err\n"
                      "\t}\n\t_ = opts.SetIntraOpNumThreads(1)\n\treturn nil\n}\n", encoding="utf-8")
    report = lint([str(path)])
    assert [(f.rule, f.line) for f in report.findings] == [("ORT020", 42)]  # (a whole parse only: nothing)
    assert not report.notices
