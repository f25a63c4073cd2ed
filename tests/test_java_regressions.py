"""Java cases version 1 (7c3bba6) got right and later versions missed (issue 32), and the
varargs close helper: each is checked on the finding's level and trace, not only its line.

The fixture tree fixtures/multi/java_exception_paths holds the cases (with a clean twin of each).
"""
from __future__ import annotations

from pathlib import Path

from ortlint import ir
from ortlint.api import default_policy, lint
from ortlint.findings import Finding
from ortlint.frontends.java.frontend import parse_java

TREE = Path(__file__).resolve().parent.parent / "fixtures" / "multi" / "java_exception_paths"
HEADER = "import ai.onnxruntime.*;\nimport java.util.*;\nimport java.nio.file.*;\nimport java.io.*;\n"


def tree_findings() -> dict[tuple[str, int], Finding]:
    return {(Path(f.path).name, f.line): f for f in lint([str(TREE)]).findings}


def steps(f: Finding) -> list[str]:
    return [t.message for t in f.trace]


def functions(body: str) -> dict[str, ir.Function]:
    return {f.name: f for f in parse_java("Snippet.java", default_policy(), (HEADER + body).encode()).functions}


def calls(f: ir.Function) -> list[ir.Call]:
    return [e for b in f.blocks for e in b.events if isinstance(e, ir.Call)]


def test_unchecked_throw_of_a_helper_in_another_file_leaves_the_caller() -> None:
    """`ModelFiles.load` (ModelFiles.java) declares nothing but throws IllegalArgumentException:
    the session created before the call leaks on that path (a warning)."""
    found = tree_findings()[("Loader.java", 15)]
    assert found.rule == "ORT010" and found.level == "warning"
    assert "ModelFiles.load() throws" in steps(found)


def test_helper_of_this_file_that_is_given_the_object_and_throws() -> None:
    """`decode(result)` throws IllegalStateException before the caller closes the result."""
    found = tree_findings()[("Loader.java", 22)]
    assert found.rule == "ORT010" and found.level == "warning"
    assert "Loader.decode() throws" in steps(found)


def test_default_method_that_only_throws_does_not_end_the_caller() -> None:
    """`converter.witness()` is a default method whose body only throws: an override runs,
    so the options created after it are still checked (and leak when a setter throws)."""
    found = tree_findings()[("Loader.java", 42)]
    assert found.rule == "ORT010" and found.level == "warning"
    assert any("setInterOpNumThreads() throws" in s for s in steps(found))


def test_clean_twins_and_static_import() -> None:
    found = tree_findings()
    assert not [k for k in found if k[0] in ("LoaderOk.java", "ModelFiles.java", "Converter.java")]
    leak = found[("StaticImports.java", 14)]
    assert leak.level == "warning" and "ModelFiles.read() throws" in steps(leak)
    assert ("StaticImports.java", 20) not in found


def test_placeholder_calls_are_not_bound_to_the_throwing_body() -> None:
    src = """
    interface Conv { default int witness() { throw new UnsupportedOperationException(); }
                     static int make() { throw new IllegalStateException(); } }
    abstract class Base {
        int hook() { throw new UnsupportedOperationException(); }
        final int fixed() { throw new UnsupportedOperationException(); }
        int guarded(int x) { if (x > 0) { return x; } throw new IllegalArgumentException(); }
        void run(Conv c) { c.witness(); hook(); fixed(); guarded(1); Conv.make(); }
    }
    """
    got = [(c.callee, c.style) for c in calls(functions(src)["Base.run"])]
    assert got == [("Conv.witness", "method"), ("Base.hook", "method"), ("Base.fixed", "plain"),
                   ("Base.guarded", "plain"), ("Conv.make", "plain")]


def test_catch_of_a_checked_exception_makes_library_calls_of_the_body_throw() -> None:
    src = """
    class A {
        byte[] read(Path p, OrtSession s, Map<String, OnnxTensor> in) {
            try { s.run(in); } catch (OrtException e) { }
            try { Integer.parseInt("1"); } catch (NumberFormatException e) { }
            try { return Files.readAllBytes(p); } catch (IOException e) { return null; }
        }
    }
    """
    throws = {c.callee: c.may_throw for c in calls(functions(src)["A.read"])}
    assert throws["OrtSession.run"] is True
    assert throws["Integer.parseInt"] is False  # an unchecked catch says nothing
    assert throws["Files.readAllBytes"] is True  # only a library call can explain the catch


def test_varargs_arguments_are_one_array_of_the_callee() -> None:
    src = """
    class A {
        static void closeAll(AutoCloseable... cs) { for (AutoCloseable c : cs) { try { c.close(); } catch (Exception e) { } } }
        static void tagged(String tag, OnnxTensor... ts) { }
        void f(OnnxTensor a, OnnxTensor b, AutoCloseable[] arr) {
            closeAll(a, b); tagged("x", a); closeAll(arr); closeAll(); closeAll(new AutoCloseable[] {a});
        }
    }
    """
    got = [(c.callee, len(c.args)) for c in calls(functions(src)["A.f"])]
    assert got == [("$varargs", 2), ("A.closeAll", 1), ("$varargs", 1), ("A.tagged", 2), ("A.closeAll", 1),
                   ("$varargs", 0), ("A.closeAll", 1), ("A.closeAll", 1)]
