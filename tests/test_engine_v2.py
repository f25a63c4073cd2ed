"""Engine v2: states joined by property state, statement-level checks, linear scans.

The behaviour on whole files is pinned by the fixtures (fixtures/jni/correlated_null_strings.c,
fixtures/cpp/range_for_loops.cpp, fixtures/c/array_elements_released_twice.c,
fixtures/c/dropped_status_in_long_function.c); these tests pin the pieces.
"""
from __future__ import annotations

from pathlib import Path

from ortlint.api import default_policy, lint
from ortlint.discover import SourceFile
from ortlint.engine.analyze import Budget, FunctionAnalyzer, Options
from ortlint.engine.explore import components, merge_points
from ortlint.engine.join import FactScope, coarse_key, fact_matters, join, join_coarse, join_held, property_key
from ortlint.engine.state import CONSUMED, ESCAPED, HELD, OPAQUE, RELEASED, Res, State
from ortlint.orchestration.analysis import Analysis
from ortlint.orchestration.program import Program
from ortlint.orchestration.settings import RunConfig
from ortlint.orchestration.parsing import parse_file
from ortlint.orchestration.runner import run

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


tracked = frozenset({"libc.heap", "ort.Status"})
no_local_refs: frozenset = frozenset()


def state(b: dict, r: dict) -> State:
    return State(dict(b), dict(r))


def test_value_facts_do_not_split_property_states() -> None:
    a = state({("n",): ("k", 1), ("p",): ("r", "1:return")}, {"1:return": Res("libc.heap", HELD)})
    b = state({("n",): ("k", 2), ("p",): ("r", "1:return")}, {"1:return": Res("libc.heap", HELD)})
    assert property_key(a, tracked) == property_key(b, tracked)
    joined = join(a, b, tracked, no_local_refs)
    # two different non-zero values join into "not 0" (a later `if (n != OK)` still fails)
    assert joined.b[("n",)] == ("x", frozenset({0})) and joined.b[("p",)] == ("r", "1:return")
    zero = state({("n",): ("k", 0), ("p",): ("r", "1:return")}, {"1:return": Res("libc.heap", HELD)})
    assert property_key(a, tracked) == property_key(zero, tracked)
    joined = join(zero, b, tracked, no_local_refs)
    assert ("n",) not in joined.b and joined.b[("p",)] == ("r", "1:return")


def test_the_life_stage_of_a_resource_splits_property_states() -> None:
    a = state({("p",): ("r", "1:return")}, {"1:return": Res("libc.heap", HELD)})
    b = state({("p",): ("r", "1:return")}, {"1:return": Res("libc.heap", RELEASED)})
    assert property_key(a, tracked) != property_key(b, tracked)


def test_agreeing_null_facts_survive_a_join() -> None:
    a = state({("x",): ("r", "p0"), ("n",): ("x", frozenset({0, 1}))}, {"p0": Res(None, OPAQUE, fact=("k", 0))})
    b = state({("x",): ("r", "p0"), ("n",): ("x", frozenset({0}))}, {"p0": Res(None, OPAQUE, fact=("k", 0))})
    joined = join(a, b, tracked, no_local_refs)
    assert joined.r["p0"].fact == ("k", 0) and joined.b[("n",)] == ("x", frozenset({0}))


def test_held_and_never_acquired_join_into_held_if_acquired() -> None:
    held = state({("p",): ("r", "3:return")}, {"3:return": Res("libc.heap", HELD)})
    never = state({("p",): ("k", 0)}, {})
    assert coarse_key(held, tracked) == coarse_key(never, tracked)
    joined = join_held(held, never, tracked, no_local_refs, frozenset(), frozenset())
    assert joined is not None and joined.r["3:return"].maybe_null and joined.b[("p",)] == ("r", "3:return")


def test_a_status_and_the_out_parameter_it_guards_are_never_joined() -> None:
    success = state({("st",): ("k", 0), ("opts",): ("r", "5:*0")}, {"5:*0": Res("libc.heap", HELD)})
    failure = state({("st",): ("r", "5:status")}, {"5:status": Res("ort.Status", HELD)})
    assert join_held(success, failure, tracked, no_local_refs, frozenset(), frozenset()) is None


def test_a_variable_tested_again_keeps_states_apart() -> None:
    a = state({("flag",): ("k", 1), ("p",): ("r", "3:return")}, {"3:return": Res("libc.heap", HELD)})
    b = state({("flag",): ("k", 0), ("p",): ("k", 0)}, {})
    assert join_held(a, b, tracked, no_local_refs, frozenset({"flag"}), frozenset()) is None
    assert join_held(a, b, tracked, no_local_refs, frozenset(), frozenset()) is not None


def test_a_dropped_status_is_reported_however_far_exploration_gets() -> None:
    path = FIXTURES / "c" / "dropped_status_in_long_function.c"
    options = Options(budget=Budget(max_block_visits=20, max_work=400))
    report = run(RunConfig([str(path)], default_policy(), options=options, jobs=1))
    assert any("incomplete" in n.message for n in report.notices)
    assert [(f.rule, f.line) for f in report.findings] == [("ORT004", 606)]


def test_no_budget_is_reached_on_the_fixtures() -> None:
    report = lint([str(FIXTURES)])
    assert not [n.message for n in report.notices if "budget" in n.message or "too many" in n.message]


def test_the_loop_body_is_scanned_once_per_loop(tmp_path: Path, monkeypatch) -> None:
    """8 000 calls in one loop body took 13 s: each argument rescanned the body."""
    body = "\n".join("    sink(q);" for _ in range(400))
    path = tmp_path / "loop.c"
    path.write_text("#include <stdlib.h>\nvoid sink(const char *);\n"
                    "void many(char **a, int n, char *q) {\n  for (int i = 0; i < n; i++) {\n"
                    f"    char *p = a[i];\n{body}\n    free(p);\n  }}\n}}\n")
    scans = []
    original = FunctionAnalyzer._loop_loads

    def counting(self, blocks):
        if blocks not in self._loop_load_cache:
            scans.append(blocks)
        return original(self, blocks)

    monkeypatch.setattr(FunctionAnalyzer, "_loop_loads", counting)
    policy = default_policy()
    unit = parse_file(SourceFile(str(path), "c"), policy)
    (fn,) = unit.functions
    FunctionAnalyzer(fn, policy, lambda call: None).run()
    assert len(scans) == 1


def test_loops_are_found_from_the_cfg() -> None:
    policy = default_policy()
    unit = parse_file(SourceFile(str(FIXTURES / "jni" / "local_ref_overflow_clean.c"), "c"), policy)
    grid = next(f for f in unit.functions if f.name.endswith("_grid"))
    forest = FunctionAnalyzer(grid, policy, lambda call: None).loops
    assert len(forest.loops) == 2
    inner = min(forest.loops, key=lambda lp: len(lp.body))
    loops = forest.enclosing(min(inner.body - {inner.header}))
    assert [lp.header for lp in loops] == [min(lp.header for lp in forest.loops), inner.header]
    constant = lambda e: unit.constants.get(e.name) if hasattr(e, "name") else getattr(e, "value", None)  # noqa: E731
    assert forest.small_constant(loops, constant)  # PAIR (2) x 4
    assert not forest.small_constant(loops, lambda e: None)


def test_one_location_reallocated_by_different_calls_holds_one_resource() -> None:
    """`v.data` after whichever of two `push(&v)` calls reallocated it last: one resource."""
    first = state({("v", ".data"): ("r", "4:v.data")}, {"4:v.data": Res("libc.heap", HELD)})
    second = state({("v", ".data"): ("r", "7:v.data")}, {"7:v.data": Res("libc.heap", HELD)})
    joined = join_held(first, second, tracked, no_local_refs, frozenset(), frozenset())
    assert joined is not None and joined.b[("v", ".data")] == ("r", "4:v.data") and "7:v.data" not in joined.r


def test_many_held_resources_and_many_exits_stay_cheap(tmp_path: Path) -> None:
    """200 buffers, each followed by an early return that leaks all the earlier ones: every
    exit was looked up in a list per resource (cubic: a fuzzed Go function took 107 s). The
    message counts every leaking exit; the related locations list the first 64."""
    body = "".join(f"  char *b{i} = malloc(8);\n  if (n == {i}) return -1;\n" for i in range(200))
    src = tmp_path / "many.c"
    src.write_text("#include <stdlib.h>\nint f(int n) {\n" + body + "  return 0;\n}\n")
    report = run(RunConfig([str(src)], default_policy(), isolate=False))
    first = min(report.findings, key=lambda f: f.line)
    assert len(report.findings) == 200
    assert "(and on 200 more paths)" in first.message and len(first.related) == 64


def test_a_dead_local_keeps_each_acquisition_its_own() -> None:
    """Two statuses that only a local nothing mentions any more holds (each `CHECK(call)`
    that throws into one `catch`): never one resource, so each call keeps its own leak."""
    first = state({("status",): ("r", "4:return")}, {"4:return": Res("ort.Status", HELD)})
    second = state({("status",): ("r", "9:return")}, {"9:return": Res("ort.Status", HELD)})
    assert join_held(first, second, tracked, no_local_refs, frozenset(), frozenset(),
                     dead=frozenset({"status"})) is None


def test_a_flag_tested_ahead_keeps_made_and_not_made_apart() -> None:
    """`bool error = Check(Create(&h)); ...; return error ? 0 : h;`: before the test of
    `error`, the state that made h and the one that did not stay apart; past it they may join."""
    made = state({("h",): ("r", "3:*2"), ("error",): ("k", 0)}, {"3:*2": Res("libc.heap", HELD)})
    not_made = state({("h",): ("k", 0), ("error",): ("k", 1)}, {})
    assert join_held(made, not_made, tracked, no_local_refs, frozenset({"error"}), frozenset()) is None
    assert join_held(made, not_made, tracked, no_local_refs, frozenset(), frozenset()) is not None


def test_tests_ahead_and_dead_locals_follow_the_cfg(tmp_path: Path) -> None:
    path = tmp_path / "f.c"
    path.write_text("int g(int);\n"
                    "int f(int n) {\n"
                    "  int flag = g(n);\n"
                    "  int tmp = g(1);\n"
                    "  if (tmp) g(2);\n"
                    "  g(3);\n"
                    "  if (flag) return 1;\n"
                    "  return 0;\n"
                    "}\n")
    unit = parse_file(SourceFile(str(path), "c"), default_policy())
    fn = unit.functions[0]
    analyzer = FunctionAnalyzer(fn, default_policy(), lambda _c: None)
    ahead = analyzer._ahead
    # both are assigned in the entry block before their tests: their values there decide nothing
    assert ahead.tested(fn.entry)[0] == frozenset()
    assert {"flag", "tmp"} <= ahead.tested(fn.entry, within=True)[0]  # (after the assignments, they do)
    then = next(b.term.then for b in fn.blocks if b.term is not None and getattr(b.term, "text", "") == "tmp")
    assert ahead.tested(then)[0] == {"flag"}
    last_test = next(b.id for b in fn.blocks if b.term is not None and getattr(b.term, "text", "") == "flag")
    assert ahead.tested(last_test)[0] == {"flag"}
    assert "tmp" in ahead.dead(last_test) and "flag" not in ahead.dead(last_test)


def test_an_assignment_ends_what_a_test_ahead_decides(tmp_path: Path) -> None:
    """A macro's local status tested in each of N expansions inside a loop: the value the
    previous iteration left in it decides nothing, since every test is preceded by a new
    assignment. Kept apart by it, the loop head held 2^N property states (issue 31)."""
    path = tmp_path / "f.c"
    path.write_text("int g(int);\nvoid use(int);\n"
                    "void f(int n) {\n"
                    "  int st = 0;\n"
                    "  for (int i = 0; i < n; i++) {\n"
                    "    use(st);\n"
                    "    st = g(i);\n"
                    "    if (st) return;\n"
                    "  }\n"
                    "  if (st) use(1);\n"
                    "}\n")
    fn = parse_file(SourceFile(str(path), "c"), default_policy()).functions[0]
    ahead = FunctionAnalyzer(fn, default_policy(), lambda _c: None)._ahead
    head = next(b for b in fn.blocks if b.term is not None and getattr(b.term, "kind", "") == "loop")
    assert "st" in ahead.tested(head.id)[0]  # the loop may end: the test after it reads st as it is
    assert "st" not in ahead.tested(head.term.then)[0]  # inside the body, st is assigned before any test


def test_a_value_assigned_before_any_read_is_dead(tmp_path: Path) -> None:
    """liveness.Ahead.value_dead: what a local holds at a block's entry is dropped from the
    states there (explore._trim_dead) when every path assigns it before reading it."""
    path = tmp_path / "f.c"
    path.write_text("int g(int);\nvoid use(int);\n"
                    "void f(int n) {\n"
                    "  int a = g(0);\n"
                    "  int b = g(1);\n"
                    "  if (n) use(a);\n"
                    "  b = g(2);\n"
                    "  if (b) use(1);\n"
                    "}\n")
    fn = parse_file(SourceFile(str(path), "c"), default_policy()).functions[0]
    analyzer = FunctionAnalyzer(fn, default_policy(), lambda _c: None)
    ahead = analyzer._ahead

    def dead(bid: int) -> set[str]:  # (value_dead is a mask over value_keys)
        mask = ahead.value_dead(bid, analyzer._loop_exit_reads)
        return {key[0] for key, bit in ahead.value_keys().items() if mask & bit}
    first = next(b for b in fn.blocks if b.term is not None and getattr(b.term, "text", "") == "n")
    assert "b" in dead(first.term.then) and "a" not in dead(first.term.then)  # a is read there, b assigned first
    assert {"a", "b"} <= dead(first.term.orelse)  # past `use(a)`: a is never read again, b is assigned first
    assert "n" not in dead(first.id)  # (a parameter is never a candidate)


def test_fields_nothing_reads_any_more_are_dead(tmp_path: Path) -> None:
    """liveness.Ahead.fields_dead: storing into a field of a local value or returning the value
    reads none of its fields; any other mention does."""
    path = tmp_path / "f.cpp"
    path.write_text("struct S { char *a; char *b; };\nchar *g(int);\nvoid use(char *);\n"
                    "S f(int n) {\n"
                    "  S s;\n"
                    "  s.a = g(0);\n"
                    "  if (n) use(s.b);\n"
                    "  s.b = g(1);\n"
                    "  return s;\n"
                    "}\n")
    fn = parse_file(SourceFile(str(path), "cpp"), default_policy()).functions[0]
    analyzer = FunctionAnalyzer(fn, default_policy(), lambda _c: None)
    dead = lambda bid: analyzer._ahead.fields_dead(bid, analyzer._loop_exit_reads)  # noqa: E731
    test = next(b for b in fn.blocks if b.term is not None and getattr(b.term, "text", "") == "n")
    assert "s" not in dead(test.id) and "s" not in dead(test.term.then)  # `use(s.b)` reads a field
    assert "s" in dead(test.term.orelse)  # past it: a store into a field, and `return s`


def test_a_consumed_resource_is_not_part_of_the_property_state() -> None:
    """A consumed resource is silently gone: no path after can make a finding of it, so which
    one a location holds keeps no two states apart (a status macro's local in a test that ran
    twelve of them kept 2^12)."""
    one = state({("st",): ("r", "3:status")}, {"3:status": Res("ort.Status", CONSUMED)})
    other = state({("st",): ("r", "9:status")}, {"9:status": Res("ort.Status", CONSUMED)})
    assert property_key(one, tracked) == property_key(other, tracked) == property_key(state({}, {}), tracked)


def test_the_coarse_join_keeps_what_both_paths_hold() -> None:
    held = Res("libc.heap", HELD)
    a = state({("p",): ("r", "3:return"), ("q",): ("r", "5:return"), ("n",): ("k", 1)},
              {"3:return": held, "5:return": held})
    b = state({("p",): ("r", "3:return"), ("n",): ("k", 2)}, {"3:return": held, "7:return": held})
    out = join_coarse(a, b, tracked, no_local_refs)
    assert out.r == {"3:return": held}  # held on both paths: still leaks; held on one: forgotten
    assert out.b == {("p",): ("r", "3:return"), ("n",): ("x", frozenset({0}))}  # 1 or 2: not 0
    # it never adds what only the arriving state has, so merging again changes nothing
    assert join_coarse(out, b, tracked, no_local_refs).same(out)


def test_components_are_in_topological_order() -> None:
    succs = {0: [1], 1: [2, 4], 2: [3], 3: [1], 4: [5], 5: []}
    comps = components(0, succs.__getitem__, succs)
    assert [sorted(c) for c in comps] == [[0], [1, 2, 3], [4], [5]]


def test_a_state_joining_a_merged_away_key_keeps_what_it_lacks(tmp_path: Path) -> None:
    """After "held" and "never acquired" were joined into "held if acquired", the next
    "never acquired" state at that block joins the same way: it must not make the held
    resource vanish (a leak on the held path was lost that way)."""
    path = tmp_path / "f.c"
    path.write_text("int f(void) { return 0; }\n")
    fn = parse_file(SourceFile(str(path), "c"), default_policy()).functions[0]
    options = Options(budget=Budget(exact_states=0, join_held_after=0))
    analyzer = FunctionAnalyzer(fn, default_policy(), lambda _c: None, options)
    analyzer._tracked_kinds = tracked
    tables: dict = {}
    pending: dict = {}
    held = state({("p",): ("r", "3:return")}, {"3:return": Res("libc.heap", HELD)})
    never = state({("p",): ("k", 0)}, {})
    never_again = state({("p",): ("k", 0), ("n",): ("k", 7)}, {})
    for s in (held, never, never_again):
        analyzer._admit(fn.entry, s, tables, pending)
    states = list(tables[fn.entry].joined.values())
    assert [s.r["3:return"].st for s in states if "3:return" in s.r] == [HELD]
    assert all("3:return" in s.r for s in states)


def test_a_function_that_touches_no_resource_is_not_explored_when_no_summary_is_needed(tmp_path: Path,
                                                                                        monkeypatch) -> None:
    path = tmp_path / "f.c"
    path.write_text("#include <stdlib.h>\nint g(int);\n"
                    "int plain(int n) { int s = 0; for (int i = 0; i < n; i++) s += g(i); return s; }\n"
                    "int leaky(int n) { char *p = malloc(4); if (n) return 1; free(p); return 0; }\n")
    unit = parse_file(SourceFile(str(path), "c"), default_policy())
    explored: list[str] = []
    real = FunctionAnalyzer._explore
    monkeypatch.setattr(FunctionAnalyzer, "_explore", lambda self, entry: (explored.append(self.fn.name),
                                                                           real(self, entry))[1])
    results = {fn.name: FunctionAnalyzer(fn, default_policy(), lambda _c: None).run(summarize=False)
               for fn in unit.functions}
    assert explored == ["leaky"]
    assert results["plain"].findings == [] and results["plain"].summary is None
    assert [f.rule for f in results["leaky"].findings] == ["ORT001"]
    # with a summary wanted, the plain function is explored as always (callers may need it)
    FunctionAnalyzer(unit.functions[0], default_policy(), lambda _c: None).run(summarize=True)
    assert explored == ["leaky", "plain"]


def test_the_engine_makes_no_reference_cycles() -> None:
    """Workers analyze with the cyclic collector paused (runner.cycle_collection_paused): an
    analyzer, its states and traces must be freed by reference counting alone. (A bound method
    kept by a helper of the analyzer once made each one a cycle: a fifth of the analysis time
    went to collections, and memory grew with every function.)"""
    import gc
    from ortlint.orchestration.analysis import Analysis
    from ortlint.orchestration.program import Program
    policy = default_policy()
    language = {".c": "c", ".cpp": "cpp", ".java": "java", ".go": "go"}
    units = [parse_file(SourceFile(str(p), language[p.suffix]), policy)
             for folder in ("c", "cpp", "jni", "java", "go") for p in sorted((FIXTURES / folder).iterdir())
             if p.suffix in language]
    program = Program(units)
    analysis = Analysis(program, policy, Options())
    gc.collect()
    gc.disable()
    try:
        analysis.run()
        assert analysis.analyzed > 100
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_long_chain_of_retried_allocations_stays_linear(tmp_path: Path, monkeypatch) -> None:
    """`p = malloc(); if (p == NULL) p = malloc(); ...` 300 times (a fuzzed input): which retry
    succeeded is join_held's to merge (`_signature` keeps that the tested variable holds a
    resource, not which); the paths were kept apart per retry, so the work and the memory grew
    with the square of the chain (1 000 retries: past the 1 GB memory limit)."""
    retries = "\n".join("  if (copy == NULL) copy = malloc(n);" for _ in range(300))
    path = tmp_path / "retries.c"
    path.write_text("#include <stdlib.h>\nint f(size_t n) {\n  char *copy = malloc(n);\n" + retries
                    + "\n  if (copy == NULL) return -1;\n  return copy[0];\n}\n")
    fn = parse_file(SourceFile(str(path), "c"), default_policy()).functions[0]
    visits: list[int] = []
    real = FunctionAnalyzer._run_block
    monkeypatch.setattr(FunctionAnalyzer, "_run_block", lambda self, bid, state: (visits.append(bid),
                                                                                   real(self, bid, state))[1])
    result = FunctionAnalyzer(fn, default_policy(), lambda _c: None).run()
    assert len(visits) < 10 * len(fn.blocks)
    assert [f.rule for f in result.findings][:1] == ["ORT001"] and not result.notes


def test_the_states_kept_are_bounded_and_merged_past_the_bound(tmp_path: Path) -> None:
    """Strings each acquired under its own NULL test and released under it (fuzzed from
    fixtures/jni/correlated_null_strings.c: 60 of them kept 8 M bindings at the blocks, 1 GB):
    past `Budget.keyed_states` property states at a block, or half of `Budget.max_retained`
    bindings kept, states are merged coarsely (`join.join_coarse`) instead of the analysis
    stopping: no note, and what is found is what the unbounded analysis finds."""
    pairs = 8
    params = ", ".join(f"jstring a{i}" for i in range(pairs))
    gets = "\n".join(f"  const char *s{i} = a{i} == NULL ? NULL : (*env)->GetStringUTFChars(env, a{i}, NULL);"
                     for i in range(pairs))
    frees = "\n".join(f"  if (a{i} != NULL) (*env)->ReleaseStringUTFChars(env, a{i}, s{i});" for i in range(pairs))
    path = tmp_path / "many.c"
    path.write_text("#include <jni.h>\n#include \"onnxruntime_c_api.h\"\n"
                    f"void f(JNIEnv *env, const OrtApi *api, OrtSession *session, {params}) {{\n{gets}\n"
                    "  api->SessionGetInputCount(session, NULL);\n"
                    f"{frees}\n}}\n")
    fn = parse_file(SourceFile(str(path), "c"), default_policy()).functions[0]
    roomy = FunctionAnalyzer(fn, default_policy(), lambda _c: None).run()
    assert not roomy.notes and [f.rule for f in roomy.findings] == ["ORT004"]
    for budget in (Budget(keyed_states=4), Budget(max_retained=2_000)):
        tight = FunctionAnalyzer(fn, default_policy(), lambda _c: None, Options(budget=budget)).run()
        assert not tight.notes and tight.widened > 0
        assert tight.findings == roomy.findings


def test_a_leak_on_every_merged_path_is_still_found_past_the_bound(tmp_path: Path) -> None:
    """The coarse join keeps what both states hold: a buffer held on every path into a block
    whose states were merged still leaks there."""
    branches = "\n".join(f"  if (g({i})) q{i} = malloc(n);" for i in range(6))
    frees = "\n".join(f"  if (q{i}) free(q{i});" for i in range(6))
    decls = " ".join(f"char *q{i} = NULL;" for i in range(6))
    path = tmp_path / "f.c"
    path.write_text("#include <stdlib.h>\nint g(int);\n"
                    f"int f(int n) {{\n  {decls}\n  char *always = malloc(n);\n{branches}\n{frees}\n"
                    "  return 0;\n}\n")
    fn = parse_file(SourceFile(str(path), "c"), default_policy()).functions[0]
    roomy = FunctionAnalyzer(fn, default_policy(), lambda _c: None).run()
    tight = FunctionAnalyzer(fn, default_policy(), lambda _c: None,
                             Options(budget=Budget(exact_states=1, join_held_after=0, keyed_states=2))).run()
    assert tight.widened > 0 and not tight.notes
    assert [(f.rule, f.line) for f in roomy.findings] == [("ORT001", 5)]
    assert [(f.rule, f.line) for f in tight.findings] == [("ORT001", 5)]


def test_what_lies_ahead_settles_in_linear_work() -> None:
    """liveness._propagate: a chain whose blocks are listed against the flow (each jumps to the
    one before it, the fact at the far end) took one sweep of every block per block before (a
    fuzzed C++ function of 17 000 blocks: 60 s); the worklist seeded in postorder visits each
    block about once."""
    from ortlint import ir
    from ortlint.engine.liveness import _propagate
    n = 3000
    blocks = [ir.Block(i, [], ir.Jump(i - 1) if i else ir.Return(None, ir.Loc(1, 1, 1, 1))) for i in range(n)]
    fn = ir.Function("f", "f.c", ir.Loc(1, 1, 1, 1), "c", [], {}, blocks, entry=n - 1)
    calls = [0]

    def succs(bid: int) -> list[int]:
        calls[0] += 1
        term = blocks[bid].term
        return [term.target] if isinstance(term, ir.Jump) else []

    from ortlint.engine.explore import postorder
    preds = {i - 1: [i] for i in range(1, n)}
    ahead = _propagate((postorder([n - 1], range(n), succs), preds), {0: 1}, succs)
    assert all(ahead.get(i) == 1 for i in range(n))
    assert calls[0] < 10 * n


def _scope(params: tuple[str, ...], *paths: tuple[str, ...]) -> FactScope:
    prefixes = {path[:i] for path in paths for i in range(1, len(path) + 1)}
    return FactScope(params, frozenset(prefixes), frozenset())


def test_a_flag_nothing_ahead_reads_does_not_keep_states_apart() -> None:
    """`if (opts->with_header) append(&out, ...)`: after the test, whether the flag was set
    decides nothing, so the state that reallocated `out.data` there joins the one that did not."""
    def taken(flag: tuple, rid: str) -> State:
        return state({("opts",): ("r", "p0"), ("out", ".data"): ("r", rid)},
                     {"p0": Res(None, OPAQUE), "p0/*/.with_header": Res(None, OPAQUE, fact=flag),
                      rid: Res("libc.heap", HELD)})
    a, b = taken(("k", 0), "4:out.data"), taken(("x", frozenset({0})), "7:out.data")
    nothing_ahead = _scope(("opts",), ("opts", "*", ".error"))
    joined = join_held(a, b, tracked, no_local_refs, frozenset({"opts"}), frozenset(), scope=nothing_ahead)
    assert joined is not None and joined.r["p0/*/.with_header"].fact is None
    read_ahead = _scope(("opts",), ("opts", "*", ".with_header"))
    assert join_held(a, b, tracked, no_local_refs, frozenset({"opts"}), frozenset(), scope=read_ahead) is None
    assert join_held(a, b, tracked, no_local_refs, frozenset({"opts"}), frozenset()) is None  # no scope: every fact


def test_a_flag_read_ahead_through_another_pointer_still_matters() -> None:
    """`again = opts; ... if (again->keep)`: the fact about `opts->keep` is read through `again`."""
    scope = _scope(("opts",), ("again", "*", ".keep"))
    pinned = {"p0": ["again"]}
    assert fact_matters("p0/*/.keep", scope, pinned)
    assert not fact_matters("p0/*/.keep", scope, {})
    assert not fact_matters("p0/*/.other", scope, pinned)
    assert fact_matters("7:return/*/.keep", scope, {})  # memory of an acquired resource: kept
    assert fact_matters("v:again/.keep", _scope((), ("again", ".keep")), {})


APPEND = ("#include <stdlib.h>\n#include <string.h>\n"
          "struct buffer { unsigned char *data; size_t size; };\n"
          "%s"
          "static int append(struct buffer *out, const void *bytes, size_t n) {\n"
          "  unsigned char *grown = realloc(out->data, out->size + n);\n"
          "  if (grown == NULL) return 83;\n"
          "  memcpy(grown + out->size, bytes, n);\n"
          "  out->data = grown;\n  out->size += n;\n  return 0;\n}\n")  # a buffer that each append reallocates


def test_optional_steps_tested_once_stay_linear(tmp_path: Path, monkeypatch) -> None:
    """24 flags, each tested once to decide a step that reallocates one buffer (a PNG
    encoder's chunks): the facts about flags already tested kept the paths apart, and the
    block runs grew with the square of the steps (1 628 runs for 55 blocks; 481 now)."""
    flags = [f"f{i}" for i in range(24)]
    steps = "\n".join(f"  if (opts->{f}) append(&out, \"X\", 1);" for f in flags)
    path = tmp_path / "encode.c"
    path.write_text(
        APPEND % f"struct options {{ int {', '.join(flags)}; int keep, error; }};\n" +
        "int encode(unsigned char **result, struct options *opts) {\n"
        "  struct buffer out = {NULL, 0};\n  unsigned char *scratch = NULL;\n"
        f"  if (opts->keep) scratch = malloc(64);\n{steps}\n"
        "  if (opts->keep) free(scratch);\n"
        "  if (opts->error) { free(out.data); return opts->error; }\n"
        "  *result = out.data;\n  return 0;\n}\n")
    policy = default_policy()
    unit = parse_file(SourceFile(str(path), "c"), policy)
    runs: list[int] = []
    real = FunctionAnalyzer._run_block
    monkeypatch.setattr(FunctionAnalyzer, "_run_block", lambda self, bid, st: (
        runs.append(bid) if self.fn.name == "encode" else None, real(self, bid, st))[1])
    analysis = Analysis(Program([unit]), policy, Options())
    analysis.run()
    blocks = len(next(fn for fn in unit.functions if fn.name == "encode").blocks)
    assert len(runs) < 12 * blocks
    assert not [f for r in analysis.results.values() for f in r.findings]


def test_blocks_handed_over_in_optional_steps_stay_linear(tmp_path: Path) -> None:
    """48 flags, each deciding a block handed over to an unknown call (`host_take(host, b)`):
    an escaped block the caller cannot see no longer keeps property states apart, so the
    paths through the steps join (3 158 block runs for 197 blocks before, 953 now), and the
    leak after them is still reported."""
    n = 48
    steps = "\n".join(f"  if (opts->f{i}) {{ void *b = malloc(8); if (b == NULL) return -1; host_take(host, b); }}"
                      for i in range(n))
    path = tmp_path / "hand_over.c"
    path.write_text("#include <stdlib.h>\nstruct host;\nvoid host_take(struct host *h, void *b);\n"
                    "int host_ready(struct host *h);\n"
                    f"struct options {{ int {', '.join(f'f{i}' for i in range(n))}; }};\n"
                    "int f(struct host *host, struct options *opts) {\n" + steps + "\n"
                    "  char *s = malloc(4);\n  if (s == NULL) return -1;\n  if (!host_ready(host)) return -2;\n"
                    "  free(s);\n  return 0;\n}\n")
    fn = parse_file(SourceFile(str(path), "c"), default_policy()).functions[0]
    runs = [0]
    real = FunctionAnalyzer._run_block

    class Counting(FunctionAnalyzer):
        def _run_block(self, bid, st):  # type: ignore[no-untyped-def]
            runs[0] += 1
            return real(self, bid, st)

    result = Counting(fn, default_policy(), lambda _c: None).run()
    assert runs[0] < 8 * len(fn.blocks)
    assert [(f.rule, f.line) for f in result.findings] == [("ORT001", n + 7)] and not result.notes


def test_escaped_blocks_are_named_by_where_they_are_held() -> None:
    """`out->data` after whichever of two reallocating calls ran last: one escaped block, so
    the two states have one property key and their join keeps what `out->data` holds (under
    the first state's name) for the summary; handed to an unknown call, a block leaves the
    key altogether."""
    def pushed(rid: str) -> State:
        return state({("out",): ("r", "p0"), ("@p0", "*", ".data"): ("r", rid)},
                     {"p0": Res(None, OPAQUE), rid: Res("libc.heap", ESCAPED, esc=("@p0", "*", ".data"))})
    a, b = pushed("4:out->data"), pushed("7:out->data")
    assert property_key(a, tracked) == property_key(b, tracked)
    joined = join(a, b, tracked, no_local_refs)
    assert joined.b[("@p0", "*", ".data")] == ("r", "4:out->data") and joined.r["4:out->data"].st == ESCAPED
    assert "7:out->data" not in joined.r
    handed = state({}, {"p0": Res(None, OPAQUE), "5:b": Res("libc.heap", ESCAPED)})
    kept = state({}, {"p0": Res(None, OPAQUE)})
    assert property_key(handed, tracked) == property_key(kept, tracked)
    returned = state({}, {"5:b": Res("libc.heap", ESCAPED, esc=("<return>",))})
    assert property_key(returned, tracked) != property_key(kept, tracked)


def test_a_joined_local_reference_keeps_the_path_that_made_it() -> None:
    """A JNI local reference alive on one side only is kept by the join (it piles up in the
    loop either way); when that side made everything the join keeps from one side only, its
    path explains the joined state, so an ORT007 trace shows the previous iteration's creation.
    When each side made its own, the first state's path stays (one path cannot show both)."""
    from ortlint.engine.state import TraceNode
    local_ref = frozenset({"jni.LocalRef"})
    entry = State({}, {}, frozenset(), TraceNode(10, 1, "loop condition is true", None, None, 1))
    made = State({}, {"7:onnxValue": Res("jni.LocalRef", HELD)}, frozenset(),
                 TraceNode(12, 5, "JNI local reference acquired", "7:onnxValue", None, 1))
    joined = join(entry, made, tracked, local_ref)
    assert "7:onnxValue" in joined.r and joined.trace is made.trace
    assert join(entry, State({}, {}, frozenset(), made.trace), tracked, local_ref).trace is entry.trace
    other = State({}, {"3:$3": Res("jni.LocalRef", HELD)}, frozenset(),
                  TraceNode(11, 5, "JNI local reference acquired", "3:$3", None, 1))
    assert join(other, made, tracked, local_ref).trace is other.trace  # each side made its own: the first explains


def test_a_leak_trace_starts_at_its_acquisition(tmp_path: Path) -> None:
    """A state joined from a path that reallocated the buffer and one that did not (join_held)
    explains a leak by the path that did: each finding's trace starts at its own call."""
    path = tmp_path / "drops.c"
    path.write_text(
        APPEND % "struct options { int a, b, c, d, error; };\n" +
        "int encode(unsigned char **result, struct options *opts) {\n"
        "  struct buffer out = {NULL, 0};\n  *result = NULL;\n  append(&out, \"SIG\", 3);\n"
        "  if (opts->a) append(&out, \"A\", 1);\n  if (opts->b) append(&out, \"B\", 1);\n"
        "  if (opts->c) append(&out, \"C\", 1);\n  if (opts->d) append(&out, \"D\", 1);\n"
        "  if (opts->error) return opts->error;\n  *result = out.data;\n  return 0;\n}\n")
    report = run(RunConfig([str(path)], default_policy(), isolate=False))
    assert len(report.findings) >= 3 and {f.rule for f in report.findings} == {"ORT001"}
    for finding in report.findings:
        assert finding.trace[0].line == finding.line and "acquired by append()" in finding.trace[0].message
        assert finding.trace[-1].line == 21


def _switch_memory_mb(tmp_path: Path, name: str, language: str, text: str) -> int:
    import tracemalloc
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    fn = parse_file(SourceFile(str(path), language), default_policy()).functions[-1]
    tracemalloc.start()
    try:
        FunctionAnalyzer(fn, default_policy(), lambda c: None, Options(), {}).run(True)
        return tracemalloc.get_traced_memory()[1] >> 20
    finally:
        tracemalloc.stop()


def test_memory_is_linear_in_the_cases_of_a_switch(tmp_path: Path) -> None:
    """Issue 35: every `case` excluded one more value along the chain of tests, in a set per
    block, so memory grew with the square of the cases while a resource was held (3 000 empty
    C cases: 443 MB; 3 000 Go cases: 216 MB). At most 32 excluded values are kept: 33 and 11 MB.
    Here 2 000 cases (before: 196 and about 100 MB)."""
    c_cases = "".join(f"  case {i}:\n" for i in range(2000))
    c_text = ("#include <stdlib.h>\nvoid sw(int x) {\n  char *p = malloc(4);\n  switch (x) {\n" + c_cases
              + "    break;\n  }\n  free(p);\n}\n")
    go_cases = "".join(f"\tcase {i}:\n\t\tn++\n" for i in range(2000))
    go_text = ("package app\n\nimport ort \"github.com/yalue/onnxruntime_go\"\n\nfunc sw(x int) int {\n"
               "\topts, err := ort.NewSessionOptions()\n\tif err != nil {\n\t\treturn 0\n\t}\n\tn := 0\n"
               "\tswitch x {\n" + go_cases + "\t}\n\topts.Destroy()\n\treturn n\n}\n")
    assert _switch_memory_mb(tmp_path, "sw.c", "c", c_text) < 50
    assert _switch_memory_mb(tmp_path, "sw.go", "go", go_text) < 50


def test_a_list_emptied_node_by_node_reaches_its_fixpoint(tmp_path: Path, monkeypatch) -> None:
    """`while (l->head) { free(l->head->data); unlink(&l->head, l->head->data); }`: the callee
    stores the next node into the head, so each iteration read the element afresh under a new
    identity (`data#2`, `data#3`, ...) and left the released earlier ones behind, reachable from
    nothing. The states at the loop head differed only in those and never converged (a
    terminal's destructor with three such loops: 21 s, 2 667 coarse merges). Dropped at the
    block's entry (`explore._drop_unreachable_outside`), the loop converges in a few runs."""
    path = tmp_path / "lists.c"
    path.write_text((FIXTURES / "c" / "lists_unlinked_node_by_node_clean.c").read_text()
                    .replace("while (s->history)", "if (s->history)").replace("while (s->spare)", "if (s->spare)"))
    policy = default_policy()
    unit = parse_file(SourceFile(str(path), "c"), policy)
    runs: list[int] = []
    real = FunctionAnalyzer._run_block
    monkeypatch.setattr(FunctionAnalyzer, "_run_block", lambda self, bid, st: (
        runs.append(bid) if self.fn.name == "screen_destroy" else None, real(self, bid, st))[1])
    analysis = Analysis(Program([unit]), policy, Options())
    analysis.run()
    fn = next(fn for fn in unit.functions if fn.name == "screen_destroy")
    result = next(r for k, r in analysis.results.items() if k[1] == "screen_destroy")
    assert result.widened == 0 and not result.notes and not result.findings
    assert len(runs) < 12 * len(fn.blocks)


def test_an_unreachable_renamed_value_made_outside_is_dropped() -> None:
    """Only a renamed identity (never named by a summary) that no binding holds goes, with the
    memory it had; the entry value `p0/*/.data` stays (the summary says it was released), and
    so does a renamed one still bound, or one whose memory holds a buffer still held."""
    from ortlint.engine.explore import _drop_unreachable_outside
    s = state({("s",): ("r", "p0"), ("@p0", "*", ".head"): ("r", "p0/*/.head#w"),
               ("@p0/*/.head#w#prev", "*", ".data"): ("r", "p0/*/.head#w/*/.data#2"),
               ("@p0/*/.head#w/*/.data#2", "*", ".text"): ("k", 0),
               ("@p0/*/.keep#2", "*", ".buf"): ("r", "7:return")},
              {"p0": Res(None, OPAQUE), "p0/*/.head#w": Res(None, OPAQUE), "p0/*/.data": Res(None, RELEASED),
               "p0/*/.head#w#prev": Res(None, RELEASED), "p0/*/.head#w/*/.data#2": Res(None, RELEASED),
               "p0/*/.keep#2": Res(None, RELEASED), "7:return": Res("libc.heap", HELD)})
    out = _drop_unreachable_outside(s)
    assert set(out.r) == {"p0", "p0/*/.head#w", "p0/*/.data", "p0/*/.keep#2", "7:return"}
    assert set(out.b) == {("s",), ("@p0", "*", ".head"), ("@p0/*/.keep#2", "*", ".buf")}
    assert set(s.r) >= {"p0/*/.head#w#prev", "p0/*/.head#w/*/.data#2"}  # (a copy: the admitted state is not changed)


def test_merge_points_are_the_blocks_several_edges_enter() -> None:
    """Unreachable values made outside are dropped where paths meet (a loop head, the block after
    an `if`), not at every block: elsewhere a state arrives alone and nothing merges."""
    succs = {0: [1], 1: [2, 3], 2: [4], 3: [4], 4: [1, 5], 5: []}
    assert merge_points(dict.fromkeys(succs), lambda b: succs[b]) == {1, 4}
