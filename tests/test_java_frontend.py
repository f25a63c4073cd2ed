"""Unit tests of the Java front end: names, callee qualification, may-throw, and the lowering
of try/catch/finally, try-with-resources, throw, loops and closures into the IR CFG.

The CFG tests look at the shape the engine relies on (which calls run on which path), not at
block numbering, so they survive refactorings of the lowering."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from ortlint import ir
from ortlint.api import default_policy, lint
from ortlint.frontends.java.frontend import parse_java
from ortlint.policy import PolicyError, load_policy

HEADER = "import ai.onnxruntime.*;\nimport java.util.*;\n"


def unit(body: str, header: str = HEADER) -> ir.SourceUnit:
    return parse_java("Snippet.java", default_policy(), (header + body).encode())


def fn(body: str, name: str, header: str = HEADER) -> ir.Function:
    funcs = {f.name: f for f in unit(body, header).functions}
    assert name in funcs, sorted(funcs)
    return funcs[name]


def calls(f: ir.Function) -> list[ir.Call]:
    return [e for b in f.blocks for e in b.events if isinstance(e, ir.Call)]


def call(f: ir.Function, callee: str) -> ir.Call:
    found = [c for c in calls(f) if c.callee == callee]
    assert found, [c.callee for c in calls(f)]
    return found[0]


def paths(f: ir.Function, limit: int = 200) -> list[list[str]]:
    """Every acyclic path from the entry, as the callees it runs, ending in `return`/`throw`;
    exceptional edges are taken before the first may-throw call of a block."""
    blocks = {b.id: b for b in f.blocks}
    out: list[list[str]] = []

    def walk(bid: int, seen: tuple[int, ...], acc: list[str]) -> None:
        if len(out) >= limit or bid in seen:
            return
        block = blocks[bid]
        local = list(acc)
        for ev in block.events:
            if isinstance(ev, ir.Call):
                if ev.may_throw and block.handler is not None:
                    walk(block.handler, seen + (bid,), local + [f"!{ev.callee}"])
                elif ev.may_throw:
                    out.append(local + [f"!{ev.callee}", "throw"])
                local.append(ev.callee)
        term = block.term
        if isinstance(term, ir.Jump):
            walk(term.target, seen + (bid,), local)
        elif isinstance(term, ir.Branch):
            walk(term.then, seen + (bid,), local)
            walk(term.orelse, seen + (bid,), local)
        elif isinstance(term, ir.Return):
            out.append(local + ["return"])
        elif isinstance(term, ir.Halt):
            out.append(local + [term.how])

    walk(f.entry, (), [])
    return out


# ----------------------------------------------------------------------------- names


def test_functions_for_methods_constructors_lambdas_anonymous_classes_and_initializers() -> None:
    src = """
    class A {
        private Runnable r = () -> work();
        A() { }
        void work() { }
        void over(int a) { }
        void over(int a, int b) { }
        Runnable make() {
            return new Runnable() { public void run() { work(); } };
        }
        static class Inner { void deep() { } }
    }
    """
    names = {f.name for f in unit(src).functions}
    assert {"A.A", "A.work", "A.over/1", "A.over/2", "A.make", "A.Inner.deep", "A.<init>"} <= names
    assert any(n.startswith("A.<init>$lambda@") for n in names)
    assert any(n.startswith("A.make$anon@") and n.endswith(".run") for n in names)


def test_unqualified_and_this_calls_name_the_method_of_this_file() -> None:
    src = """
    class A {
        void helper(OnnxTensor t) { }
        void over(int a) { } void over(int a, int b) { }
        void f(OnnxTensor t) { helper(t); this.helper(t); over(1, 2); Util.go(t); }
    }
    class Util { static void go(OnnxTensor t) { } }
    """
    f = fn(src, "A.f")
    assert [(c.callee, c.style) for c in calls(f)] == [
        ("A.helper", "plain"), ("A.helper", "plain"), ("A.over/2", "plain"), ("Util.go", "plain")]


# ----------------------------------------------------------------------------- callees and types


def test_callees_are_qualified_with_declared_and_inferred_types() -> None:
    src = """
    class A {
        private OrtSession session;
        Object f(OrtEnvironment env, Map<String, OnnxTensor> in) throws OrtException {
            OrtSession.Result r = session.run(in);
            var s = env.createSession("m");
            var opts = new OrtSession.SessionOptions();
            var t = OnnxTensor.createTensor(env, new float[1]);
            s.getInputNames();
            opts.setIntraOpNumThreads(1);
            t.getValue();
            unknown().close();
            return r.get(0);
        }
        Object unknown() { return null; }
    }
    """
    got = [(c.callee, c.style) for c in calls(fn(src, "A.f"))]
    assert ("OrtSession.run", "method") in got
    assert ("OrtEnvironment.createSession", "method") in got
    assert ("new OrtSession.SessionOptions", "new") in got
    assert ("OnnxTensor.createTensor", "plain") in got
    assert ("OrtSession.getInputNames", "method") in got  # `var s` typed from the policy's `type`
    assert ("OrtSession.SessionOptions.setIntraOpNumThreads", "method") in got
    assert ("OnnxTensor.getValue", "method") in got
    assert ("close", "method") in got  # a receiver type the policy does not know: the bare method name
    assert ("OrtSession.Result.get", "method") in got


def test_imports_resolve_nested_and_fully_qualified_names() -> None:
    header = "import ai.onnxruntime.OrtSession;\nimport ai.onnxruntime.OrtSession.Result;\nimport ai.onnxruntime.OrtSession.SessionOptions;\n"
    src = """
    class A {
        void f(OrtSession s, java.util.Map<String, ai.onnxruntime.OnnxTensor> in) throws Exception {
            Result r = s.run(in);
            r.close();
            SessionOptions o = new SessionOptions();
            ai.onnxruntime.OnnxTensor t = ai.onnxruntime.OnnxTensor.createTensor(null, null);
            t.close();
        }
    }
    """
    got = [c.callee for c in calls(fn(src, "A.f", header))]
    assert got == ["OrtSession.run", "OrtSession.Result.close", "new OrtSession.SessionOptions",
                   "OnnxTensor.createTensor", "OnnxTensor.close"]


def test_ort_calls_may_throw_close_and_library_calls_do_not() -> None:
    src = """
    class A {
        void f(OrtSession s, OrtEnvironment env, List<String> names) throws OrtException {
            OnnxTensor t = OnnxTensor.createTensor(env, new float[1]);
            s.getInputInfo();
            s.getInputNames();
            names.add("x");
            t.close();
            OnnxValue.close(new HashMap<String, OnnxTensor>());
        }
    }
    """
    f = fn(src, "A.f")
    throws = {c.callee: c.may_throw for c in calls(f)}
    assert throws["OnnxTensor.createTensor"] and throws["OrtSession.getInputInfo"]
    assert not throws["OrtSession.getInputNames"]  # declares no exception in the binding
    assert not throws["List.add"] and not throws["OnnxTensor.close"] and not throws["OnnxValue.close"]


def test_project_classes_named_like_ort_classes_do_not_throw_when_ort_is_imported_by_name() -> None:
    header = "package ai.djl.x;\nimport ai.onnxruntime.OrtSession;\n"
    src = "class A { Object f(OrtSession s) { return new OrtSymbolBlock(s); } }"
    assert not call(fn(src, "A.f", header), "new OrtSymbolBlock").may_throw
    wildcard = "import ai.onnxruntime.*;\n"
    src2 = "class A { Object f() throws Exception { return new OrtSession.RunOptions(); } }"
    assert call(fn(src2, "A.f", wildcard), "new OrtSession.RunOptions").may_throw


# ----------------------------------------------------------------------------- try / finally


def test_finally_runs_on_normal_return_and_exception_paths() -> None:
    src = """
    class A {
        int f(OrtSession s, Map<String, OnnxTensor> in, boolean early) throws OrtException {
            try {
                if (early) return 1;
                s.run(in);
            } finally {
                cleanup();
            }
            return 0;
        }
        void cleanup() { }
    }
    """
    ps = paths(fn(src, "A.f"))
    assert ["A.cleanup", "return"] in ps  # early return runs the finally first
    assert ["OrtSession.run", "A.cleanup", "return"] in ps  # normal completion
    assert ["!OrtSession.run", "A.cleanup", "throw"] in ps  # exception: finally, then rethrow
    assert all("A.cleanup" in p for p in ps)


def test_break_and_continue_run_the_finally_of_every_try_they_leave() -> None:
    src = """
    class A {
        void f(List<String> xs) {
            outer:
            for (String x : xs) {
                try {
                    try {
                        if (x.isEmpty()) continue outer;
                        if (x.length() > 3) break outer;
                    } finally { inner(); }
                } finally { outer(); }
            }
        }
        void inner() { } void outer() { }
    }
    """
    f = fn(src, "A.f")
    assert len([c for c in calls(f) if c.callee == "A.inner"]) >= 3  # continue, break, normal (+ exceptional)
    for p in paths(f):
        if "A.inner" in p:
            assert "A.outer" in p[p.index("A.inner"):]  # the outer finally always follows the inner one


def test_try_with_resources_closes_in_reverse_order_on_every_path() -> None:
    src = """
    class A {
        Object f(OrtEnvironment env, OrtSession s) throws OrtException {
            try (OnnxTensor t = OnnxTensor.createTensor(env, new float[1]);
                 OrtSession.Result r = s.run(Map.of("x", t))) {
                return r.get(0).getValue();
            }
        }
    }
    """
    ps = paths(fn(src, "A.f"))
    normal = [p for p in ps if p[-1] == "return" and "OnnxTensor.close" in p and "OrtSession.Result.close" in p]
    assert normal and all(p.index("OrtSession.Result.close") < p.index("OnnxTensor.close") for p in normal)
    failed_run = [p for p in ps if "!OrtSession.run" in p]
    assert any("OnnxTensor.close" in p for p in failed_run)  # (paths skipping it are `t == null` ones)
    assert not any("OrtSession.Result.close" in p for p in failed_run)  # r was never created
    closes = [c for c in calls(fn(src, "A.f")) if c.callee.endswith(".close")]
    assert all(not c.may_throw and c.style == "method" for c in closes)


def test_try_with_an_existing_variable_closes_that_variable() -> None:
    src = """
    class A {
        void f(OrtEnvironment env) throws OrtException {
            OnnxTensor t = OnnxTensor.createTensor(env, new float[1]);
            try (t) { t.getValue(); }
        }
    }
    """
    close = call(fn(src, "A.f"), "OnnxTensor.close")
    assert close.receiver == ir.Var("t")


def test_catch_all_clause_stops_propagation_and_a_narrow_one_does_not() -> None:
    template = """
    class A {
        void f(OrtSession s, Map<String, OnnxTensor> in) throws Exception {
            try { s.run(in); } catch (%s e) { handled(); }
            after();
        }
        void handled() { } void after() { }
    }
    """
    broad = paths(fn(template % "OrtException", "A.f"))
    assert ["!OrtSession.run", "A.handled", "A.after", "return"] in broad
    assert not any(p[-1] == "throw" for p in broad)
    narrow = paths(fn(template % "java.io.IOException", "A.f"))
    assert any(p[-1] == "throw" for p in narrow) and ["!OrtSession.run", "A.handled", "A.after", "return"] in narrow


def test_throw_goes_to_the_handler_inside_a_try_and_leaves_the_function_outside() -> None:
    src = """
    class A {
        void f(boolean c) {
            try { if (c) throw new IllegalStateException(); } finally { cleanup(); }
            throw new RuntimeException();
        }
        void cleanup() { }
    }
    """
    ps = paths(fn(src, "A.f"))
    assert ["new IllegalStateException", "A.cleanup", "throw"] in ps
    assert ["A.cleanup", "new RuntimeException", "throw"] in ps


# ----------------------------------------------------------------------------- loops and closures


def test_loops_end_with_a_scope_exit_and_for_each_reads_elements() -> None:
    src = """
    class A {
        void f(List<OnnxTensor> ts) {
            for (OnnxTensor t : ts) { t.close(); }
            ts.forEach(OnnxTensor::close);
            int i = 0;
            while (i < 3) { i++; }
            do { i--; } while (i > 0);
        }
    }
    """
    f = fn(src, "A.f")
    exits = [e for b in f.blocks for e in b.events if isinstance(e, ir.ScopeExit)]
    assert len(exits) == 4
    loads = [e for b in f.blocks for e in b.events if isinstance(e, ir.Assign) and isinstance(e.value, ir.Index)]
    assert [ir.expr_text(e.value.base) for e in loads] == ["ts", "ts"]
    assert [c.callee for c in calls(f)].count("OnnxTensor.close") == 2


def test_a_closure_that_closes_a_captured_local_takes_it_over() -> None:
    src = """
    class A {
        Runnable f(OnnxTensor t, OnnxTensor u) {
            Runnable a = () -> t.close();
            Runnable b = () -> System.out.println(u);
            return a;
        }
    }
    """
    f = fn(src, "A.f")
    stores = [e for b in f.blocks for e in b.events if isinstance(e, ir.Assign) and isinstance(e.dest, ir.Field)]
    assert [ir.expr_text(e.value) for e in stores] == ["t"]  # handed to the lambda; u is only used
    lambdas = [g for g in unit(src).functions if "$lambda@" in g.name]
    assert len(lambdas) == 2 and all(not g.params for g in lambdas)


def test_fields_are_stored_through_this() -> None:
    src = """
    class A {
        private OnnxTensor last;
        void f(OrtEnvironment env) throws OrtException { last = OnnxTensor.createTensor(env, new float[1]); }
    }
    """
    assert call(fn(src, "A.f"), "OnnxTensor.createTensor").dest == ir.Field(ir.Var("this"), "last")


# ----------------------------------------------------------------------------- bad input


def test_syntax_errors_become_notes_and_the_rest_is_analyzed() -> None:
    src = """
    class A {
        void broken(OrtEnvironment env) throws OrtException {
            OnnxTensor t = OnnxTensor.createTensor(env, new float[1]);
            t.close(( ]] ;
        }
        void fine() { }
    }
    """
    u = unit(src)
    broken = next(f for f in u.functions if f.name == "A.broken")
    assert broken.notes and "could not parse" in broken.notes[0][1]
    havoc = [e for b in broken.blocks for e in b.events if isinstance(e, ir.Havoc)]
    assert havoc and "t" in havoc[0].names
    assert any(f.name == "A.fine" for f in u.functions)


@pytest.mark.parametrize("seed", range(30))
def test_random_mutations_of_a_fixture_never_crash(seed: int) -> None:
    rng = random.Random(seed)
    base = (Path(__file__).resolve().parent.parent / "fixtures" / "java" / "FinallyClose.java").read_bytes()
    data = bytearray(base)
    for _ in range(rng.randint(1, 40)):
        pos = rng.randrange(len(data))
        op = rng.random()
        if op < 0.4:
            del data[pos:pos + rng.randint(1, 20)]
        elif op < 0.8:
            data[pos:pos] = rng.choice([b"{", b"}", b"(", b")", b";", b"try", b"finally", b"->", b"\xff", b"\"", b"/*"])
        else:
            data[pos] = rng.randrange(256)
    u = parse_java("Mutant.java", default_policy(), bytes(data))
    assert isinstance(u, ir.SourceUnit)


def test_deep_nesting_is_skipped_with_a_note() -> None:
    body = "if (c) {" * 400 + "x();" + "}" * 400
    u = unit(f"class A {{ void f(boolean c) {{ {body} }} void x() {{ }} }}")
    assert any("nested too deeply" in m for _, m in u.notes)


# ----------------------------------------------------------------------------- end to end


def write(tmp_path: Path, body: str) -> str:
    path = tmp_path / "Case.java"
    path.write_text(HEADER + body)
    return str(path)


def findings(tmp_path: Path, body: str) -> list[tuple[int, str, str]]:
    report = lint([write(tmp_path, body)])
    return [(f.line - 2, f.rule, f.effective_level) for f in report.findings]


def test_a_local_map_keeps_but_does_not_own_and_value_close_closes_its_elements(tmp_path: Path) -> None:
    leak = """class A { int f(OrtEnvironment env, OrtSession s) throws OrtException {
        Map<String, OnnxTensor> in = new HashMap<>();
        in.put("x", OnnxTensor.createTensor(env, new float[1]));
        try (OrtSession.Result r = s.run(in)) { return r.size(); }
    } }"""
    assert [(line, rule) for line, rule, _ in findings(tmp_path, leak)] == [(3, "ORT010")]
    fixed = leak.replace("try (OrtSession.Result r = s.run(in)) { return r.size(); }",
                         "try (OrtSession.Result r = s.run(in)) { return r.size(); } finally { OnnxValue.close(in); }")
    assert findings(tmp_path, fixed) == []


def test_close_skipped_by_an_exception_is_a_warning_and_a_missing_close_an_error(tmp_path: Path) -> None:
    body = """class A {
        void skipped(OrtEnvironment env, OrtSession s) throws OrtException {
            OnnxTensor t = OnnxTensor.createTensor(env, new float[1]);
            s.run(Map.of("x", t)).close();
            t.close();
        }
        void missing(OrtEnvironment env) throws OrtException {
            OnnxTensor t = OnnxTensor.createTensor(env, new float[1]);
        }
    }"""
    assert findings(tmp_path, body) == [(3, "ORT010", "warning"), (8, "ORT010", "error")]


def test_values_taken_out_of_a_result_and_handed_on_hand_the_result_over(tmp_path: Path) -> None:
    body = """class A {
        List<OnnxValue> moved(OrtSession s, Map<String, OnnxTensor> in) throws OrtException {
            OrtSession.Result out = s.run(in);
            List<OnnxValue> values = new ArrayList<>();
            for (Map.Entry<String, OnnxValue> e : out) { values.add(e.getValue()); }
            return values;
        }
        int read(OrtSession s, Map<String, OnnxTensor> in) throws OrtException {
            OrtSession.Result out = s.run(in);
            return out.get(0) == null ? 0 : 1;
        }
    }"""
    assert [(line, rule) for line, rule, _ in findings(tmp_path, body)] == [(9, "ORT010")]


def test_policy_rejects_bad_java_keys(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[call]]\nname = "List.add"\nstyle = "method"\nstores = "everywhere"\n')
    with pytest.raises(PolicyError, match="stores"):
        load_policy([bad])


def test_close_on_a_type_variable_or_object_is_a_close_but_not_on_a_concrete_project_class() -> None:
    src = """
    class A {
        static <T extends AutoCloseable> void a(T c) throws Exception { c.close(); }
        static void b(Object o) throws Exception { ((AutoCloseable) o).close(); }
        static void c(MyModel m) { m.close(); }
    }
    """
    u = unit(src)
    got = {f.name: [c.callee for c in calls(f)] for f in u.functions}
    assert got["A.a"] == ["close"] and got["A.b"] == ["AutoCloseable.close"] and got["A.c"] == ["MyModel.close"]


def test_calls_to_methods_declaring_throws_may_throw() -> None:
    src = """
    class A {
        static float[] load(String p) throws java.io.IOException { return null; }
        static float[] pure(float[] x) { return x; }
        void f() throws Exception { load("p"); pure(null); new A(); new B(); }
    }
    class B { B() throws Exception { } }
    """
    throws = {c.callee: c.may_throw for c in calls(fn(src, "A.f"))}
    assert throws == {"A.load": True, "A.pure": False, "new A": False, "new B": True}


@pytest.mark.parametrize("closer", [
    "for (OnnxTensor t : in.values()) { t.close(); }",
    "in.values().forEach(OnnxTensor::close);",
    "in.values().stream().forEach(t -> t.close());",
    "Iterator<OnnxTensor> it = in.values().iterator(); while (it.hasNext()) { it.next().close(); }",
    "OnnxValue.close(in.values());",
    "OnnxValue.close(in);",
])
def test_every_way_of_closing_all_elements_of_a_local_map(tmp_path: Path, closer: str) -> None:
    body = """class A { void f(OrtEnvironment env, OrtSession s) throws OrtException {
        Map<String, OnnxTensor> in = new HashMap<>();
        try {
            in.put("a", OnnxTensor.createTensor(env, new float[1]));
            in.put("b", OnnxTensor.createTensor(env, new float[2]));
            s.run(in).close();
        } finally { %s }
    } }""" % closer
    assert findings(tmp_path, body) == []


# ----------------------------------------------------------------------------- inputs that crashed or stalled (issue 18)
# Each was measured at the size used here or below it to take seconds, to raise, or to end in
# SIGSEGV in the compiled build (which has no recursion limit). The walks are bounded by the
# front end's own depth counters; the front end gives plain Python room for MAX_NESTING levels
# only (`frames_for_nesting`), so a walk without its own bound would hit the recursion limit on
# these inputs, which is a note of its own ("exceeded the recursion limit").


def _messages(u: ir.SourceUnit) -> list[str]:
    return [m for _, m in u.notes] + [m for f in u.functions for _, m in f.notes]


def _assert_bounded(u: ir.SourceUnit, expected: str) -> None:
    messages = _messages(u)
    assert not any("recursion limit" in m for m in messages), messages
    assert any(expected in m for m in messages), messages


TAIL = "class Z { void g(OrtEnvironment env) throws OrtException { var o = new OrtSession.RunOptions(); } }\n"


def test_a_method_chain_of_15000_links_is_skipped_with_a_note() -> None:
    u = unit("class P { void f(StringBuilder s) { s" + ".append(1)" * 15000 + "; } }\n" + TAIL)
    _assert_bounded(u, "P.f() is nested too deeply")
    assert "Z.g" in {f.name for f in u.functions}


def test_30000_nested_classes_keep_the_outer_ones() -> None:
    src = "class A0 { void m() { } " + "".join(f"class A{i} {{ " for i in range(1, 30000)) + "}" * 30000 + "\n"
    u = unit(src + TAIL)
    _assert_bounded(u, "classes nested more than")
    names = {f.name for f in u.functions}
    assert {"A0.m", "Z.g"} <= names


def test_try_with_30000_resources_is_skipped_with_a_note() -> None:
    resources = "; ".join(f"var r{i} = new OrtSession.RunOptions()" for i in range(30000))
    u = unit("class P { void f() throws OrtException { try (" + resources + ") { } } }\n" + TAIL)
    _assert_bounded(u, "P.f() is nested too deeply")


def test_a_condition_of_30000_terms_is_analyzed() -> None:
    """A flat `&&` chain is lowered by a loop (frontends/lowering.py), not by recursion: the
    function is analyzed, with no note at all."""
    u = unit("class P { void f(boolean a) { if (" + " && ".join(["a"] * 30000) + ") { } } }\n" + TAIL)
    assert "P.f" in {f.name for f in u.functions}
    assert _messages(u) == []


def test_return_through_a_finally_too_deep_to_lower_keeps_the_other_functions(tmp_path: Path) -> None:
    """It raised IndexError, which dropped every function of the file (the leak in g too)."""
    deep = "(" * 5000 + "1" + ")" * 5000
    body = ("class P {\n int f() { try { return 1; } finally { int x = " + deep + "; } }\n"
            " void g(OrtEnvironment env) throws OrtException { var o = new OrtSession.SessionOptions(); }\n}\n")
    u = unit(body)
    _assert_bounded(u, "P.f() is nested too deeply")
    assert "P.g" in {f.name for f in u.functions}
    assert [(line, rule) for line, rule, _ in findings(tmp_path, body)] == [(3, "ORT010")]


def test_4000_curried_lambdas_have_short_names() -> None:
    """Each lambda's walk for captured locals covered every lambda inside it (4 000: 19 s), and
    each name repeated its outer lambdas' (1 GB of names at 16 000)."""
    from ortlint.frontends.java.tables import MAX_NAME
    u = unit("class P { Object f() { return " + "x -> " * 4000 + "null; } }\n")
    assert len(u.functions) == 4001
    assert max(len(f.name) for f in u.functions) <= MAX_NAME + 40
    assert len({f.name for f in u.functions}) == 4001


def test_curried_lambdas_that_close_a_captured_local_take_it_over(tmp_path: Path) -> None:
    body = """class P { Object f(OrtEnvironment env) throws OrtException {
        OnnxTensor t = OnnxTensor.createTensor(env, new float[1]);
        return (java.util.function.Function<Object, Object>) a -> b -> c -> { t.close(); return null; };
    } }"""
    assert findings(tmp_path, body) == []
    leak = findings(tmp_path, body.replace("t.close();", "t.getInfo();"))
    assert [(line, rule) for line, rule, _ in leak] == [(2, "ORT010")]


def test_64000_comments_are_found_where_they_are() -> None:
    """Looking each comment up from the root was quadratic in a long flat list (64 000: 16 s)."""
    from tree_sitter import Parser
    from ortlint.frontends.java.syntax import JAVA_LANGUAGE, _scan
    src = ("".join(f"// c{i}\n" for i in range(64000)) + "class P<T> { void f() {\n"
           + "".join(f"  /* b{i} */ int a{i} = {i};\n" for i in range(2000)) + "} }\n").encode()
    root = Parser(JAVA_LANGUAGE).parse(src).root_node
    params, ids = _scan(root, src)
    body = root.named_children[-1].child_by_field_name("body").named_children[0].child_by_field_name("body")
    assert ids == {root.id, body.id}
    assert [p.text for p in params] == [b"T"]


def test_parsing_stops_at_its_step_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """tree-sitter-java's error recovery on stray `case` labels is superlinear (8 000: 21 s).
    The limit counts parse steps (source.parse_steps), not seconds: the same on any machine."""
    from ortlint.frontends.common import source
    monkeypatch.setattr(source, "PARSE_STEPS_BASE", 5000)
    u = unit("class P { void f(int x) {\n" + "case 1:\n" * 8000 + "} }\n")
    assert u.functions == []
    assert any(m.startswith("limit reached: tree-sitter stopped parsing this file after") for m in _messages(u))
    assert unit("class P { void f(int x) { switch (x) { case 1: break; } } }\n").functions


# ----------------------------------------------------------------------------- the binding's declared throws (issue 17)

def _gen_policy(tmp_path: Path, sources: dict[str, str]) -> str:
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_java_policy", Path(__file__).parent.parent / "tools" / "gen_java_policy.py")
    gen = importlib.util.module_from_spec(spec)
    import sys
    sys.modules["gen_java_policy"] = gen  # dataclasses look their module up while the class is built
    spec.loader.exec_module(gen)  # type: ignore[union-attr]
    root = tmp_path / "ort"
    for name, text in sources.items():
        f = root / gen.BINDING_DIR / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    out = tmp_path / "section.toml"
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert gen.main(["--checkout", str(root), "--stdout"]) == 0
    out.write_text(buf.getvalue())
    return buf.getvalue()


def test_the_generator_records_declared_throws_inherited_members_and_varargs(tmp_path: Path) -> None:
    section = _gen_policy(tmp_path, {
        "OnnxValue.java": "package ai.onnxruntime; public interface OnnxValue extends AutoCloseable {"
                          " Object getValue() throws OrtException; String toString(); }",
        "OnnxTensor.java": "package ai.onnxruntime; public class OnnxTensor implements OnnxValue {"
                           " OnnxTensor(long h) { }"
                           " public static OnnxTensor createTensor(OrtEnvironment e, Object o) throws OrtException { return null; }"
                           " public Object getValue() throws OrtException { return null; }"
                           " public TensorInfo getInfo() { return null; }"
                           " public void pack(String... parts) throws java.io.IOException, OrtException { }"
                           " private void secret() throws OrtException { } }",
    })
    policy_file = tmp_path / "section.toml"
    policy = load_policy([policy_file], include_defaults=False)
    assert policy.java_throws("OnnxTensor", "createTensor", 2) == ("OrtException",)
    assert policy.java_throws("OnnxTensor", "getInfo", 0) == ()
    assert policy.java_throws("OnnxTensor", "toString", 0) == ()  # inherited from OnnxValue
    assert policy.java_throws("OnnxTensor", "pack", 3) == ("IOException", "OrtException")  # varargs
    assert policy.java_throws("OnnxTensor", "<init>", 1) == ()
    assert policy.java_throws("OnnxTensor", "secret", 0) is None  # private: not API
    assert "GENERATED" in section


@pytest.mark.parametrize("bad, message", [
    ('[[java_api]]\nclass = "A"\nnothrow = ["m"]\n', "not `name/arity`"),
    ('[[java_api]]\nclass = "A"\n[java_api.throws]\n"m/1" = []\n', "non-empty list"),
    ('[[java_api]]\nclass = "A"\nthrow = ["m/1"]\n', "unknown key"),
    ('[[java_api]]\nnothrow = ["m/1"]\n', "class"),
])
def test_java_api_tables_are_validated(tmp_path: Path, bad: str, message: str) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(bad)
    with pytest.raises(PolicyError, match=message):
        load_policy([f], include_defaults=False)


def test_the_committed_tables_match_the_binding_snapshot(tmp_path: Path) -> None:
    """Regenerating from the pinned binding sources gives what is committed."""
    mirror = Path("/work/.mirror/Craigacp+onnxruntime/repo")
    if not mirror.is_dir():
        pytest.skip("no local snapshot of the onnxruntime sources")
    import subprocess
    import sys
    rules = Path(__file__).parent.parent / "rules" / "onnxruntime-java.toml"
    text = rules.read_text()
    begin = "# ----- GENERATED by tools/gen_java_policy.py: begin"
    committed = text[text.index(begin):]
    origin = committed.splitlines()[1]
    rev = origin.split()[3]
    fresh = subprocess.run([sys.executable, str(rules.parent.parent / "tools" / "gen_java_policy.py"), "--git", str(mirror),
                            "--rev", rev, "--stdout"], capture_output=True, text=True, check=True).stdout
    assert committed.strip() == fresh.strip()


def test_ort_calls_that_declare_nothing_do_not_throw() -> None:
    src = """
    class A {
        void f(OrtSession.Result r, NodeInfo n, OnnxTensor t, OrtException e) throws OrtException {
            r.get(0); n.getName(); t.getInfo(); e.getMessage(); e.getCode(); t.getValue();
        }
    }
    """
    throws = {c.callee: c.may_throw for c in calls(fn(src, "A.f"))}
    assert throws == {"OrtSession.Result.get": False, "NodeInfo.getName": False, "OnnxTensor.getInfo": False,
                      "OrtException.getMessage": False, "OrtException.getCode": False, "OnnxTensor.getValue": True}


def test_levels_say_which_path_leaks_and_the_trace_names_the_throwing_call(tmp_path: Path) -> None:
    body = """class A {
      long exceptional(OrtEnvironment env, OrtSession s, float[] x) throws OrtException {
        OnnxTensor t = OnnxTensor.createTensor(env, x);
        long n = s.getInputInfo().size() + t.getInfo().getShape().length;
        t.close();
        return n;
      }
      long normal(OrtEnvironment env, float[] x) throws OrtException {
        OnnxTensor t = OnnxTensor.createTensor(env, x);
        return t.getInfo().getShape().length;
      }
    }"""
    report = lint([write(tmp_path, body)])
    by_line = {f.line - 2: f for f in report.findings}
    assert sorted(by_line) == [3, 9]
    exceptional, normal = by_line[3], by_line[9]
    assert exceptional.effective_level == "warning" and "when an exception leaves" in exceptional.message
    assert any("OrtSession.getInputInfo() throws" in step.message for step in exceptional.trace)
    assert normal.effective_level == "error" and "when returning" in normal.message


# ----------------------------------------------------------------------------- the project type index

def test_the_project_index_follows_packages_and_the_default_package_sees_its_folder_only(tmp_path: Path) -> None:
    """`model.session.run(in)` is typed through Model, declared in another file and package;
    a default-package file does not look into subfolders."""
    base = tmp_path / "src" / "org" / "x"
    base.mkdir(parents=True)
    (base / "Model.java").write_text("package org.x;\nimport ai.onnxruntime.OrtSession;\n"
                                     "public class Model { public OrtSession session; }\n")
    user = base / "User.java"
    user.write_text("package org.x;\nimport ai.onnxruntime.*;\nimport java.util.Map;\n"
                    "class User { int f(Model m, Map<String, OnnxTensor> in) throws OrtException {\n"
                    "  OrtSession.Result r = m.session.run(in);\n  return r.size(); } }\n")
    assert [(f.line, f.rule) for f in lint([str(user)]).findings] == [(5, "ORT010")]
    loose = tmp_path / "src" / "Loose.java"  # default package: org/x is not its folder
    loose.write_text(user.read_text().replace("package org.x;\n", ""))
    assert lint([str(loose)]).findings == []


def test_a_class_of_another_package_that_is_not_imported_is_not_used(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "org" / "y").mkdir(parents=True)
    (src / "org" / "z").mkdir(parents=True)
    (src / "org" / "y" / "Model.java").write_text("package org.y;\nimport ai.onnxruntime.OrtSession;\n"
                                                  "public class Model { public OrtSession session; }\n")
    user = src / "org" / "z" / "User.java"
    user.write_text("package org.z;\nimport ai.onnxruntime.*;\nimport java.util.Map;\nimport lib.Model;\n"
                    "class User { int f(Model m, Map<String, OnnxTensor> in) throws OrtException {\n"
                    "  OrtSession.Result r = m.session.run(in);\n  return r.size(); } }\n")
    assert lint([str(user)]).findings == []  # lib.Model is not org.y.Model
    user.write_text(user.read_text().replace("import lib.Model;", "import org.y.Model;"))
    assert [(f.line, f.rule) for f in lint([str(user)]).findings] == [(6, "ORT010")]


def test_a_loop_over_elements_is_explained_with_the_collection_as_written() -> None:
    """The header of `for (v : m.entrySet())` and of `c.forEach(T::close)` shows the source, not the
    temporary the collection was lowered into (`$4`) nor the internal element name (`$each7`)."""
    body = """class A {
      void f(Map<String, OnnxTensor> m, List<OnnxTensor> c) {
        for (Map.Entry<String, OnnxTensor> e : m.entrySet()) { e.getValue().close(); }
        c.forEach(OnnxTensor::close);
      }
    }"""
    loops = [b.term.text for b in fn(body, "A.f").blocks if isinstance(b.term, ir.Branch) and b.term.kind == "loop"]
    assert loops == ["e : m.entrySet()", "element : c"]
