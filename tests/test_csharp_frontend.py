"""Unit tests of the C# front end: text prepared for the grammar, names and overloads, the IR of
`using`, try/catch/finally and loops, members of owner classes, the project index, the
generated policy, robustness; and end to end, what ORT030 reports (fixtures/csharp has the rest).

The CFG tests look at which calls run on which path, not at block numbering."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from ortlint import ir
from ortlint.api import default_policy, lint
from ortlint.frontends.csharp import project
from ortlint.frontends.csharp.api import parse_member
from ortlint.frontends.csharp.frontend import api_index, parse_csharp
from ortlint.frontends.csharp.syntax import keep_one_branch, parse_tree, prepare
from ortlint.policy import PolicyError, load_policy

ROOT = Path(__file__).resolve().parent.parent
HEADER = "using System;\nusing System.Collections.Generic;\nusing System.Linq;\nusing Microsoft.ML.OnnxRuntime;\n"


def unit(body: str, name: str = "Snippet.cs") -> ir.SourceUnit:
    return parse_csharp(name, default_policy(), (HEADER + body).encode())


def fn(body: str, name: str) -> ir.Function:
    funcs = {f.name: f for f in unit(body).functions}
    assert name in funcs, sorted(funcs)
    return funcs[name]


def calls(f: ir.Function) -> list[ir.Call]:
    return [e for b in f.blocks for e in b.events if isinstance(e, ir.Call)]


def callees(f: ir.Function) -> list[str]:
    return [c.callee for c in calls(f)]


def paths(f: ir.Function, limit: int = 400) -> list[list[str]]:
    """Every acyclic path from the entry, as the callees it runs, ending in `return`/`throw`;
    an exceptional edge is taken before each may-throw call."""
    blocks = {b.id: b for b in f.blocks}
    out: list[list[str]] = []

    def walk_(bid: int, seen: tuple[int, ...], acc: list[str]) -> None:
        if len(out) >= limit or bid in seen:
            return
        block = blocks[bid]
        local = list(acc)
        for ev in block.events:
            if isinstance(ev, ir.Call):
                if ev.may_throw and block.handler is not None:
                    walk_(block.handler, seen + (bid,), local + [f"!{ev.callee}"])
                elif ev.may_throw:
                    out.append(local + [f"!{ev.callee}", "throw"])
                local.append(ev.callee)
        term = block.term
        if isinstance(term, ir.Jump):
            walk_(term.target, seen + (bid,), local)
        elif isinstance(term, ir.Branch):
            walk_(term.then, seen + (bid,), local)
            walk_(term.orelse, seen + (bid,), local)
        elif isinstance(term, ir.Halt):
            out.append(local + [term.how])
        else:
            out.append(local + ["return"])
    walk_(f.entry, (), [])
    return out


def findings(tmp_path: Path, body: str, name: str = "Case.cs") -> list[tuple[int, str, str]]:
    path = tmp_path / name
    path.write_text(HEADER + body)
    return [(f.line - 4, f.rule, f.effective_level) for f in lint([str(path)]).findings]


# ----------------------------------------------------------------------------- prepared text


def test_if_regions_keep_one_branch_with_offsets_and_lines() -> None:
    src = b"a();\n#if DEBUG\nif (x) {\n#else\nif (y) {\n#endif\nb();\n}\n#if false\nbroken(\n#endif\n"
    out = keep_one_branch(src)
    assert len(out) == len(src) and out.count(b"\n") == src.count(b"\n")
    assert b"if (x) {" in out and b"if (y)" not in out and b"broken" not in out and b"#" not in out


def test_prepare_keeps_length_and_removes_what_the_grammar_misreads() -> None:
    src = (b"\xef\xbb\xbfclass A {\n  unsafe void M(System.IntPtr p) {\n    long v = *(long*)p;\n"
           b"    var q = (float*)p;\n    *p++ = 1;\n    *(p + 2) = 3;\n  }\n"
           b"  string S(int a) => $\"{{{a}}}\" + $@\"\"\"{a}\"\"\";\n"
           b"  void L() {\n    Mapper m = (in int s, ref int d) => d = s;\n    Span(ref x, 1) = 2;\n  }\n}\n"
           b"ref partial struct B { }\n")
    out = prepare(src)
    assert len(out) == len(src) and out.count(b"\n") == src.count(b"\n")
    assert not parse_tree(out).root_node.has_error


def test_every_conformance_case_and_fixture_parses_without_an_error_node() -> None:
    files = sorted((ROOT / "fixtures").rglob("*.cs"))
    shared = ROOT.parent / "shared" / "conformance" / "cases" / "csharp"
    files += sorted(shared.glob("*.cs")) if shared.is_dir() else []
    for path in files:
        assert not parse_tree(prepare(path.read_bytes())).root_node.has_error, path


def test_no_fixture_or_conformance_case_leaves_a_note() -> None:
    """A note on valid C# (an unreadable statement, an internal error) hides findings: the
    fixtures check what is found, this checks that nothing was skipped on the way."""
    files = sorted((ROOT / "fixtures" / "csharp").glob("*.cs"))
    shared = ROOT.parent / "shared" / "conformance" / "cases" / "csharp"
    files += sorted(shared.glob("*.cs")) if shared.is_dir() else []
    notes = [(Path(n.path).name, n.line, n.message) for path in files for n in lint([str(path)]).notices]
    assert not notes, notes


# ----------------------------------------------------------------------------- names and overloads


def test_functions_are_named_after_their_class_and_overloads_get_their_parameter_count() -> None:
    names = {f.name for f in unit("""
namespace N {
  class Outer {
    int _n = 1;
    Outer() { }
    Outer(int n) { _n = n; }
    void M() { Func<int> f = () => 1; Local(); void Local() { } }
    void M(int a) { }
    int P => _n;
    int Q { get { return _n; } set { _n = value; } }
    ~Outer() { }
    class Inner { void Run() { } }
  }
}
""").functions}
    assert {"Outer.Outer/0", "Outer.Outer/1", "Outer.M/0", "Outer.M/1", "Outer.get_P", "Outer.get_Q", "Outer.set_Q",
            "Outer.~Outer", "Outer.Inner.Run", "Outer.<init>", "Outer.M/0$Local"} <= names
    assert any(n.startswith("Outer.M/0$lambda@") for n in names)


def test_top_level_statements_are_the_programs_main() -> None:
    u = parse_csharp("Program.cs", default_policy(), b"using Microsoft.ML.OnnxRuntime;\nvar s = new InferenceSession(\"m\");\n")
    assert [f.name for f in u.functions] == ["Program.<Main>$"]


def test_calls_are_named_by_the_receivers_type_and_api_calls_may_throw() -> None:
    f = fn("""
class A {
  float M(InferenceSession s, float[] x, IDisposable d) {
    var v = OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });
    var opts = new SessionOptions();
    opts.AppendExecutionProvider_CPU(1);
    var names = s.InputNames;
    Console.WriteLine(names.Count);
    d.Dispose();
    v.Dispose();
    return 0;
  }
}""", "A.M")
    by = {c.callee: c for c in calls(f)}
    assert by["OrtValue.CreateTensorValueFromMemory"].style == "plain" and by["OrtValue.CreateTensorValueFromMemory"].may_throw
    assert by["new SessionOptions"].style == "plain" and by["new SessionOptions"].may_throw
    assert by["SessionOptions.AppendExecutionProvider_CPU"].may_throw
    assert not by["Console.WriteLine"].may_throw and by["Console.WriteLine"].borrows == (0,)
    assert not by["OrtValue.Dispose"].may_throw and by["OrtValue.Dispose"].receiver == ir.Var("v")
    assert "IDisposable.Dispose" in by


def test_run_overloads_are_resolved_by_argument_types_and_use() -> None:
    f = fn("""
class A {
  void M(InferenceSession s, IReadOnlyCollection<NamedOnnxValue> ins, IReadOnlyCollection<NamedOnnxValue> outs,
         string[] names, OrtValue[] vs) {
    s.Run(ins, outs);
    s.Run(ins, names);
    var r = s.Run(ins, Other.Names());
    s.Run(null, names, vs, names, vs);
    using var q = s.Run(null, names, vs, names);
  }
}""", "A.M")
    assert [c for c in callees(f) if c.startswith("InferenceSession.")] == ["InferenceSession.Run/void", "InferenceSession.Run", "InferenceSession.Run",
                              "InferenceSession.Run/void", "InferenceSession.Run"]


def test_member_signatures_of_the_api_tables_parse() -> None:
    m = parse_member("OrtValue", "static CreateTensorValueFromMemory<T>(T[], long[] =, params int[]) : OrtValue")
    assert m.static and m.name == "CreateTensorValueFromMemory" and m.generics == ("T",)
    assert [p.type for p in m.params] == ["T[]", "long[]", "int[]"] and m.params[1].optional and m.params[2].params
    assert m.fits(0) is False and m.fits(1) and m.fits(5)
    prop = parse_member("InferenceSession", "InputNames : IReadOnlyList<string>")
    assert prop.params is None and prop.returns == "IReadOnlyList<string>"
    api = api_index(default_policy())
    assert api.is_disposable("InferenceSession") and not api.is_disposable("NamedOnnxValue")
    assert api.property_type("InferenceSession", "InputNames") == "IReadOnlyList<string>"


def test_csharp_api_tables_are_validated(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[csharp_api]]\nclass = "X"\nmembers = [1]\n')
    with pytest.raises(PolicyError, match="members"):
        load_policy([bad])
    bad.write_text('[[csharp_api]]\nklass = "X"\n')
    with pytest.raises(PolicyError, match="unknown key"):
        load_policy([bad])


# ----------------------------------------------------------------------------- control flow


def test_using_declaration_disposes_on_the_normal_path_and_every_exception() -> None:
    f = fn("""
class A {
  float M(InferenceSession s, float[] x) {
    using var v = OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });
    using var r = s.Run(null, s.InputNames, new[] { v }, s.OutputNames);
    return 1;
  }
}""", "A.M")
    for p in paths(f):
        if p[-1] == "throw" and p[0] == "!OrtValue.CreateTensorValueFromMemory":
            assert "OrtValue.Dispose" not in p  # the creation that throws created nothing
        elif "OrtValue.CreateTensorValueFromMemory" in p:
            assert "OrtValue.Dispose" in p, p
        if "InferenceSession.Run" in p:
            assert p.index("IDisposableReadOnlyCollection.Dispose") < p.index("OrtValue.Dispose"), p


def test_stacked_using_declarators_are_nested() -> None:
    f = fn("""
class A {
  void M() {
    using (SessionOptions a = new SessionOptions(), b = new SessionOptions()) { }
  }
}""", "A.M")
    failing_b = [p for p in paths(f) if p[-1] == "throw" and p.count("new SessionOptions") == 1]
    assert failing_b and all("SessionOptions.Dispose" in p for p in failing_b)


def test_catches_take_the_exceptions_they_can() -> None:
    f = fn("""
class A {
  void M(InferenceSession s) {
    try {
      s.EndProfiling();
      throw new InvalidOperationException("x");
    }
    catch (System.IO.IOException) { Console.WriteLine("io"); }
    catch (OnnxRuntimeException) { Console.WriteLine("ort"); }
  }
}""", "A.M")
    ps = paths(f)
    ort = [p for p in ps if p[:1] == ["!InferenceSession.EndProfiling"]]
    assert ort and all("Console.WriteLine" in p and p[-1] == "return" for p in ort)  # only the ORT catch
    thrown = [p for p in ps if "InferenceSession.EndProfiling" in p]
    assert thrown and all(p[-1] == "throw" for p in thrown)  # neither catch takes the InvalidOperationException


def test_break_continue_and_return_run_the_finally_they_leave() -> None:
    f = fn("""
class A {
  int M(IEnumerable<float[]> rows) {
    foreach (var r in rows) {
      var v = OrtValue.CreateTensorValueFromMemory(r, new long[] { r.Length });
      try {
        if (r.Length == 0) continue;
        if (r.Length == 1) break;
        if (r.Length == 2) return 2;
      } finally { v.Dispose(); }
    }
    return 0;
  }
}""", "A.M")
    for p in paths(f):
        made = p.count("OrtValue.CreateTensorValueFromMemory")
        assert p.count("OrtValue.Dispose") == made, p


def test_loops_end_with_a_scope_exit_and_foreach_reads_elements() -> None:
    f = fn("""
class A {
  void M(List<OrtValue> vs) { foreach (var v in vs) v.Dispose(); }
}""", "A.M")
    events = [e for b in f.blocks for e in b.events]
    assert any(isinstance(e, ir.ScopeExit) for e in events)
    assert any(isinstance(e, ir.Assign) and isinstance(e.value, ir.Index) for e in events)


def test_syntax_errors_become_notes_and_the_rest_is_analyzed() -> None:
    u = unit("""
class A {
  void Broken(float[] x) {
    var v = OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });
    v.Dispose(( ]] ;
  }
  void Fine() { }
}""")
    assert u.notes or any(f.notes for f in u.functions)
    assert any(f.name == "A.Fine" for f in u.functions)


@pytest.mark.parametrize("seed", range(20))
def test_random_mutations_of_a_fixture_never_crash(seed: int) -> None:
    rng = random.Random(seed)
    data = bytearray((ROOT / "fixtures" / "csharp" / "ExceptionRouting.cs").read_bytes())
    for _ in range(rng.randint(1, 40)):
        pos = rng.randrange(len(data))
        op = rng.random()
        if op < 0.4:
            del data[pos:pos + rng.randint(1, 20)]
        elif op < 0.8:
            data[pos:pos] = rng.choice([b"{", b"}", b"(", b")", b";", b"try", b"finally", b"=>", b"#if X\n", b"\"", b"$\""])
        else:
            data[pos] = rng.randrange(256)
    assert isinstance(parse_csharp("Mutant.cs", default_policy(), bytes(data)), ir.SourceUnit)


def test_deep_nesting_is_skipped_with_a_note() -> None:
    body = "if (c) {" * 400 + "X();" + "}" * 400
    u = unit(f"class A {{ void F(bool c) {{ {body} }} void X() {{ }} }}")
    assert any("nested too deeply" in m for _, m in u.notes)


def test_a_condition_of_30000_terms_is_analyzed() -> None:
    cond = " && ".join(["c"] * 30000)
    u = unit(f"class A {{ void F(bool c) {{ if ({cond}) {{ }} }} }}")
    assert any(f.name == "A.F" for f in u.functions)


# ----------------------------------------------------------------------------- the project


def test_the_project_is_the_nearest_csproj_folder_and_a_loose_file_sees_its_folder(tmp_path: Path) -> None:
    (tmp_path / "app" / "sub").mkdir(parents=True)
    (tmp_path / "app" / "App.csproj").write_text("<Project/>")
    assert project.project_root(str(tmp_path / "app" / "sub" / "X.cs")) == (str(tmp_path / "app"), True)
    (tmp_path / "loose").mkdir()
    assert project.project_root(str(tmp_path / "loose" / "X.cs")) == (str(tmp_path / "loose"), False)


def test_partial_classes_merge_and_disposal_evidence_is_found_on_demand(tmp_path: Path) -> None:
    a = tmp_path / "A.cs"
    b = tmp_path / "B.cs"
    a.write_text("partial class P { OrtValue _v; OrtValue _w; static void Help(OrtValue v) { } }")
    b.write_text("partial class P { void Close() { _v?.Dispose(); } ~P() { _w.Dispose(); } }")
    index = project.ProjectIndex(str(tmp_path))
    for path in (a, b):
        for decl in project.declarations(str(path), path.read_bytes()):
            index.add(decl)
    index.link()
    decl = index.find("P")
    assert decl is not None and sorted(decl.files) == sorted([str(a), str(b)])
    assert index.owns(decl, "_v") and not index.owns(decl, "_w")


def test_helpers_and_classes_of_other_files_are_used_and_recorded_as_dependencies(tmp_path: Path) -> None:
    (tmp_path / "P.csproj").write_text("<Project/>")
    (tmp_path / "Lib.cs").write_text(HEADER + """
static class Lib {
  public static OrtValue Make(this float[] x) => OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });
}""")
    use = tmp_path / "Use.cs"
    use.write_text(HEADER + "class Use { long M(float[] x) { var v = x.Make(); return 1; } }")
    u = parse_csharp(str(use), default_policy())
    f = next(f for f in u.functions if f.name == "Use.M")
    assert "Lib.Make" in callees(f)
    assert str(tmp_path / "Lib.cs") in u.dependencies
    report = lint([str(tmp_path)])
    assert [(Path(x.path).name, x.line, x.rule) for x in report.findings] == [("Use.cs", 5, "ORT030")]


# ----------------------------------------------------------------------------- end to end


def test_exception_only_leaks_are_warnings_and_missing_dispose_errors(tmp_path: Path) -> None:
    got = findings(tmp_path, """
class A {
  float Skipped(InferenceSession s, float[] x) {
    var v = OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });
    using var r = s.Run(null, s.InputNames, new[] { v }, s.OutputNames);
    v.Dispose();
    return 1;
  }
  void Missing(float[] x) {
    var v = OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });
  }
}""")
    assert got == [(4, "ORT030", "warning"), (10, "ORT030", "error")]


def test_members_of_classes_that_dispose_them_own_what_is_stored(tmp_path: Path) -> None:
    got = findings(tmp_path, """
class Owner : IDisposable {
  InferenceSession _s;
  InferenceSession _t;
  public Owner(string p) { _s = new InferenceSession(p); _t = new InferenceSession(p); }
  public void Dispose() => _s.Dispose();
}""")
    assert got == [(5, "ORT030", "error")]
    assert "into `this._t`" in lint([str(tmp_path / "Case.cs")]).findings[0].message


def test_reading_a_property_of_a_member_into_a_local_is_no_disposal_evidence(tmp_path: Path) -> None:
    got = findings(tmp_path, """
class Holder {
  InferenceSession _s;
  public void Load(string p) { _s = new InferenceSession(p); }
  public int Count() { var names = _s.OutputNames; var same = _s; return names.Count; }
}""")
    assert got == []  # `var same = _s;` may be disposed later: doubt means ownership
    got = findings(tmp_path, """
class Holder {
  InferenceSession _s;
  public void Load(string p) { _s = new InferenceSession(p); }
  public int Count() { var names = _s.OutputNames; return names.Count; }
}""")
    assert got == [(4, "ORT030", "error")]


def test_the_bindings_own_internal_constructor_is_read_from_its_body(tmp_path: Path) -> None:
    got = findings(tmp_path, """
namespace Microsoft.ML.OnnxRuntime {
public class FixedBufferOnnxValue : IDisposable {
  internal OrtValue Value { get; private set; }
  private FixedBufferOnnxValue(ref OrtValue v) { Value = v; v = null; }
  public static FixedBufferOnnxValue Make(float[] x) {
    var v = OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });
    return new FixedBufferOnnxValue(ref v);
  }
  public void Dispose() => Value.Dispose();
}
}""")
    assert got == []  # the constructor cannot throw: no exceptional path leaks `v`


def test_create_sequence_takes_its_values_even_when_it_throws(tmp_path: Path) -> None:
    got = findings(tmp_path, """
class A {
  OrtValue M(float[] x) {
    var items = new List<OrtValue>();
    items.Add(OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length }));
    return OrtValue.CreateSequence(items);
  }
}""")
    assert got == []


def test_a_bool_remembering_a_null_test_decides_like_the_test(tmp_path: Path) -> None:
    got = findings(tmp_path, """
class A {
  bool M(OrtValue given, float[] x) {
    bool owned = given == null;
    var v = given ?? OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });
    bool t = v.IsTensor;
    if (owned) v.Dispose();
    return t;
  }
  bool Changed(OrtValue given, float[] x) {
    bool owned = given == null;
    given = null;
    var v = given ?? OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });
    if (owned) v.Dispose();
    return true;
  }
}""")
    assert got == [(13, "ORT030", "error")]


def test_suppression_comment_and_sarif_work_for_csharp(tmp_path: Path) -> None:
    from tests.clihelpers import ortlint
    path = tmp_path / "S.cs"
    path.write_text(HEADER + """
class A {
  void M(float[] x) {
    var v = OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });  // ortlint: ignore[ORT030]
    Console.WriteLine(x.Length);
    var w = OrtValue.CreateTensorValueFromMemory(x, new long[] { x.Length });
  }
}""")
    r = ortlint("--isolated", "--format", "sarif", str(path))
    assert r.code == 1, r.stderr
    assert r.stdout.count('"ruleId": "ORT030"') == 1 and '"startLine": 10' in r.stdout


def test_the_committed_policy_matches_the_binding_snapshot() -> None:
    """Regenerating from the pinned binding sources gives what is committed."""
    mirror = Path("/work/.mirror/Craigacp+onnxruntime/repo")
    if not mirror.is_dir():
        pytest.skip("no local snapshot of the onnxruntime sources")
    import subprocess
    import sys
    rules = ROOT / "rules" / "onnxruntime-csharp.toml"
    committed = rules.read_text(encoding="utf-8")
    rev = next(line for line in committed.splitlines() if line.startswith("# From onnxruntime ")).split()[3]
    fresh = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_csharp_policy.py"), "--git", str(mirror), "--rev",
                            rev, "--stdout"], capture_output=True, text=True, check=True).stdout
    assert committed == fresh


def test_the_classes_that_decide_a_member_store_are_dependencies(tmp_path: Path) -> None:
    """A base class in another file disposes the member: when it changes, the cache must
    re-analyze the file that stores into the member."""
    (tmp_path / "P.csproj").write_text("<Project/>")
    (tmp_path / "Base.cs").write_text(HEADER + "class Base { protected InferenceSession S; void Close() => S.Dispose(); }")
    derived = tmp_path / "Derived.cs"
    derived.write_text(HEADER + "class Derived : Base { Derived(string p) { S = new InferenceSession(p); } }")
    u = parse_csharp(str(derived), default_policy())
    assert str(tmp_path / "Base.cs") in u.dependencies
    assert lint([str(tmp_path)]).findings == []


def test_thousands_of_using_declarations_are_skipped_with_a_note_not_a_recursion_error() -> None:
    body = "".join(f"using var v{i} = new RunOptions();\n" for i in range(2000))
    u = unit(f"class A {{ void M() {{\n{body}}} void B() {{ }} }}")
    assert any("nested too deeply" in m for _, m in u.notes)
    assert [f.name for f in u.functions] == ["A.B"]
    body = "".join(f"using var v{i} = new RunOptions();\n" for i in range(250))
    assert [f.name for f in unit(f"class A {{ void M() {{\n{body}}} }}").functions] == ["A.M"]


def test_a_foreach_is_explained_with_the_collection_as_written() -> None:
    """The header of `foreach (var v in this._names)` shows the source, not the IR's `this->_names`."""
    body = """class A {
      List<string> _names = new List<string>();
      void F(List<OrtValue> values) {
        foreach (var n in this._names) { Console.WriteLine(n); }
        values.ForEach(v => v.Dispose());
      }
    }"""
    loops = [b.term.text for b in fn(body, "A.F").blocks if isinstance(b.term, ir.Branch) and b.term.kind == "loop"]
    assert loops == ["n in this._names", "v in values"]
