"""Time and peak memory of ortlint on the pathological inputs of issue 18 (C, C++, Java, the
engine and the suppression scan), each at the size that took seconds, raised or crashed.

A script, not a test (tests/test_frontend_limits.py, tests/test_java_frontend.py,
tests/test_engine_v2.py and tests/test_suppress_scan.py run the same shapes):

    .venv/bin/python bench/frontend_probes.py                 # every probe at its issue size
    .venv/bin/python bench/frontend_probes.py --scale 0.25    # smaller
    .venv/bin/python bench/frontend_probes.py --only and_chain,nonascii_long_line

Each probe runs `ortlint --no-cache --format json` in a fresh process (so peak RSS is the
probe's own) and prints seconds, peak MB, exit code and the notes about the file.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

HEAD = '#include "onnxruntime_c_api.h"\n'


def and_chain(n: int) -> tuple[str, str]:
    """`if (a0 && a1 && ... )`: a left-nested tree `n` levels deep."""
    terms = " && ".join(f"a[{i}]" for i in range(n))
    return "and_chain.c", f"int f(int *a) {{\n  if ({terms}) return 1;\n  return 0;\n}}\n"


def shift_chain(n: int) -> tuple[str, str]:
    """`std::cout << x << x << ...`: a left-nested `<<` chain."""
    return "shift_chain.cpp", "void f(int x) {\n  std::cout" + " << x" * n + ";\n}\n"


def nested_iife(n: int) -> tuple[str, str]:
    """`[&]{ [&]{ ... }(); }();` nested `n` deep."""
    return "nested_iife.cpp", "void f(int *p) {\n" + "[&]{ " * n + "g(p);" + " }();" * n + "\n}\n"


def unclosed_lambdas(n: int) -> tuple[str, str]:
    """`n` times `[&]{` never closed (a 240 KB file at n = 30 000)."""
    return "unclosed.cpp", "void f(int *p) {\n" + "  auto l = [&]{ g(p);\n" * n + "}\n"


def nonascii_long_line(n: int) -> tuple[str, str]:
    """One `é` at the start of a line of `n` calls (columns are computed per node)."""
    calls = " ".join(f"g(p{i});" for i in range(n))
    return "nonascii.c", f"void f(int *p) {{\n  /* é */ {calls}\n}}\n"


def long_struct_name(n: int) -> tuple[str, str]:
    """A `.h` whose struct name is `n` characters (the C++-header detector's regexes)."""
    return "long_name.h", "struct " + "A" * n + " x;\nint f(void);\n"


def same_name_classes(_n: int) -> tuple[str, str]:
    """The six-line file: a member whose class has the short name of another class."""
    return "same_name.cpp", ("namespace impl { struct Session { void* p; }; }\n"
                             "struct Session { impl::Session s; };\nvoid f() { Session n; }\n")


def loop_calls(n: int) -> tuple[str, str]:
    """One loop body of `n` calls (the engine's loop-release scan)."""
    body = "".join(f"    g(a[i], {k});\n" for k in range(n))
    return "loop_calls.c", f"void g(char *p, int k);\nvoid f(char **a, int m) {{\n  for (int i = 0; i < m; i++) {{\n{body}  }}\n}}\n"


def suppression_line(n: int) -> tuple[str, str]:
    """A line of `n` comment openers and `ortlint:` markers (the suppression scan)."""
    return "suppress.c", "int x; " + "// " * n + "ortlint: nothing " + "ortlint:" * n + "\n"


def java_method_chain(n: int) -> tuple[str, str]:
    return "Chain.java", "class Chain { void f(StringBuilder b) { b" + ".append(1)" * n + "; } }\n"


def java_nested_classes(n: int) -> tuple[str, str]:
    return "Nest.java", "".join(f"class C{i} {{ " for i in range(n)) + "}" * n + "\n"


def java_resources(n: int) -> tuple[str, str]:
    resources = "; ".join(f"java.io.StringReader r{i} = new java.io.StringReader(\"\")" for i in range(n))
    return "Res.java", f"class Res {{ void f() throws Exception {{ try ({resources}) {{ }} }} }}\n"


def java_curried_lambdas(n: int) -> tuple[str, str]:
    arrows = " -> ".join(f"a{i}" for i in range(n))
    return "Curry.java", f"class Curry {{ Object f() {{ return (java.util.function.Function) {arrows} -> 0; }} }}\n"


def java_comments(n: int) -> tuple[str, str]:
    return "Comments.java", "class Comments {\n" + "  // a comment\n" * n + "  void f() { }\n}\n"


def java_case_labels(n: int) -> tuple[str, str]:
    return "Cases.java", "class Cases { void f(int x) {\n" + "case 1:\n" * n + "} }\n"


def java_finally_deep(n: int) -> tuple[str, str]:
    deep = "(" * n + "1" + ")" * n
    return "Fin.java", ("class Fin {\n int f() { try { return 1; } finally { int x = " + deep + "; } }\n"
                        " void g(ai.onnxruntime.OrtEnvironment env) throws Exception {"
                        " var o = new ai.onnxruntime.OrtSession.SessionOptions(); }\n}\n")


def go_unclosed_calls(n: int) -> tuple[str, str]:
    """Lines of `n` unclosed nested calls (fuzzed): tree-sitter-go's error recovery needs
    500 MB for eleven of them, and the front end as much again afterwards."""
    line = "}" + "f(" * n + "\n\nvar warm []*ort.Tensor[float32]\n\n"
    return "unclosed.go", "package p\n\n" + line * 11


def cpp_owners_and_returns(n: int) -> tuple[str, str]:
    """`n` unique_ptr locals, each followed by a return (fuzzed): every return runs the
    destructors of every live object, n^2 / 2 of them."""
    body = "    auto ctx = std::make_unique<Ctx>();\n    if (key < 0) return nullptr;\n" * n
    return "owners.cpp", ("#include <memory>\nstruct Ctx { int v; };\n"
                          "Ctx *get(int key) {\n" + body + "    return nullptr;\n}\n"
                          "void leak() { Ctx *c = new Ctx(); }\n")


PROBES: dict[str, tuple[Callable[[int], tuple[str, str]], int]] = {
    "same_name_classes": (same_name_classes, 1),
    "loop_calls": (loop_calls, 8_000),
    "suppression_line": (suppression_line, 20_000),
    "java_and_chain": (lambda n: ("And.java", "class And { void f(boolean a) { if (" + " && ".join(["a"] * n)
                                  + ") { } } }\n"), 30_000),
    "java_method_chain": (java_method_chain, 15_000),
    "java_nested_classes": (java_nested_classes, 30_000),
    "java_resources": (java_resources, 30_000),
    "java_curried_lambdas": (java_curried_lambdas, 4_000),
    "java_comments": (java_comments, 64_000),
    "java_case_labels": (java_case_labels, 8_000),
    "java_finally_deep": (java_finally_deep, 5_000),
    "and_chain": (and_chain, 30_000),
    "shift_chain": (shift_chain, 30_000),
    "nested_iife": (nested_iife, 16_000),
    "unclosed_lambdas": (unclosed_lambdas, 30_000),
    "nonascii_long_line": (nonascii_long_line, 40_000),
    "long_struct_name": (long_struct_name, 40_000),
    "go_unclosed_calls": (go_unclosed_calls, 30_000),
    "cpp_owners_and_returns": (cpp_owners_and_returns, 2_000),
}


def run_probe(name: str, size: int, folder: str, ortlint: list[str]) -> dict:
    filename, text = PROBES[name][0](size)
    path = os.path.join(folder, filename)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    script = ("import resource,subprocess,sys,time;t=time.perf_counter();"
              "p=subprocess.run(sys.argv[1:],capture_output=True);d=time.perf_counter()-t;"
              "r=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
              "sys.stdout.write(f'{d} {r} {p.returncode}\\n');sys.stdout.buffer.write(p.stdout)")
    out = subprocess.run([sys.executable, "-c", script, *ortlint, "--no-cache", "--format", "json", path],
                         capture_output=True, timeout=600)
    head, _, body = out.stdout.partition(b"\n")
    seconds, rss_kb, code = head.split()
    notes = []
    try:
        notes = [n.get("message") for n in json.loads(body).get("notices", [])]
    except (ValueError, AttributeError):
        pass
    os.unlink(path)
    return {"probe": name, "size": size, "bytes": len(text.encode()), "seconds": round(float(seconds), 2),
            "peak_mb": round(int(rss_kb) / 1024), "exit": int(code), "notes": notes[:3]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--ortlint", default=os.path.join(os.path.dirname(sys.executable), "ortlint"))
    args = ap.parse_args()
    names = [n for n in PROBES if not args.only or n in args.only.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            size = max(1, int(PROBES[name][1] * args.scale))
            print(json.dumps(run_probe(name, size, folder, [args.ortlint])), flush=True)


if __name__ == "__main__":
    main()
