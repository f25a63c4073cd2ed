#!/usr/bin/env python3
"""Regenerate rules/onnxruntime-go.toml from the source of the Go binding
github.com/yalue/onnxruntime_go (a checkout, or a bare snapshot read with git).

    python3 tools/gen_go_policy.py /path/to/onnxruntime_go > rules/onnxruntime-go.toml

What is read from the binding (never copied): every exported type with a `Destroy()` method
(one kind each), every exported function or method whose first result is such a type (a
creating call), results documented as "should _not_ be Destroy()'ed" (borrowed: nothing to
track), `[]Value` results documented as "must be freed" (a list of new values), and the
methods documented to allocate a Value for each nil output slot (`Run`, `RunWithOptions`).
Functions that only ever `return nil, <error>` (the removed training API) create nothing.
"""
from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import tree_sitter_go
from tree_sitter import Language, Node, Parser

GO = Language(tree_sitter_go.language())
SOURCES = ("onnxruntime_go.go", "legacy_code.go")


@dataclass
class Decl:
    name: str
    receiver: str  # the receiver's type name, "" for a function
    params: list[tuple[str, str]]  # (name, type text)
    results: list[str]  # type texts
    doc: str
    body: str


def read_source(root: str, name: str) -> str | None:
    """A file of a checkout, or of a bare git snapshot (`git show HEAD:name`)."""
    path = Path(root) / name
    if path.is_file():
        return path.read_text(encoding="utf-8")
    try:
        return subprocess.run(["git", "-C", root, "show", f"HEAD:{name}"], check=True,
                              capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def base_type(text: str) -> str:
    """`*Tensor[T]` -> `Tensor`; `[]Value` stays `[]Value`."""
    text = text.strip().lstrip("*")
    return re.sub(r"\[.*\]$", "", text) if not text.startswith("[") else text


def declarations(src: str) -> list[Decl]:
    data = src.encode()
    tree = Parser(GO).parse(data)
    text = lambda n: data[n.start_byte:n.end_byte].decode()  # noqa: E731
    out = []
    for node in tree.root_node.named_children:
        if node.type not in ("function_declaration", "method_declaration"):
            continue
        receiver = ""
        if node.type == "method_declaration":
            recv = node.child_by_field_name("receiver")
            decl = next((c for c in recv.named_children if c.type == "parameter_declaration"), None)
            if decl is not None and decl.child_by_field_name("type") is not None:
                receiver = base_type(text(decl.child_by_field_name("type")))
        params = []
        plist = node.child_by_field_name("parameters")
        for p in plist.named_children if plist is not None else ():
            if p.type not in ("parameter_declaration", "variadic_parameter_declaration"):
                continue
            ptype = text(p.child_by_field_name("type")) if p.child_by_field_name("type") else ""
            names = [text(c) for c in p.children_by_field_name("name")] or [""]
            params.extend((n, ptype) for n in names)
        results = []
        res = node.child_by_field_name("result")
        if res is not None:
            if res.type == "parameter_list":
                for p in res.named_children:
                    if p.type == "parameter_declaration":
                        count = max(1, len(p.children_by_field_name("name")))
                        results.extend([text(p.child_by_field_name("type"))] * count)
            else:
                results.append(text(res))
        out.append(Decl(text(node.child_by_field_name("name")), receiver, params, results,
                        doc_comment(node, text), text(node.child_by_field_name("body")) if node.child_by_field_name("body") else ""))
    return out


def doc_comment(node: Node, text) -> str:
    lines = []
    prev = node.prev_named_sibling
    while prev is not None and prev.type == "comment" and prev.end_point[0] >= node.start_point[0] - 1 - len(lines):
        lines.insert(0, text(prev).lstrip("/ "))
        prev = prev.prev_named_sibling
    return " ".join(lines)


def only_fails(decl: Decl) -> bool:
    """The body is a single `return nil, <error>`: the call never creates anything."""
    return re.fullmatch(r"\{\s*return nil, \w+\s*\}", decl.body.strip()) is not None


def borrowed(decl: Decl) -> bool:
    return re.search(r"should\s+_?not_?\s+be\s+Destroy", decl.doc) is not None


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    decls: list[Decl] = []
    for name in SOURCES:
        src = read_source(root, name)
        if src is not None:
            decls.extend(declarations(src))
    if not decls:
        sys.exit(f"no Go source of the binding found under {root}")
    destroyable = sorted({d.receiver for d in decls if d.name == "Destroy" and d.receiver and d.receiver[0].isupper()})
    creators: dict[str, list[str]] = {}  # kind -> plain names
    methods: dict[str, list[str]] = {}  # kind -> method names
    lists, nil_fill = [], []
    for d in decls:
        if not d.name[0].isupper() or not d.results or only_fails(d) or borrowed(d):
            continue
        if d.receiver and not d.receiver[0].isupper():
            continue
        first = base_type(d.results[0])
        if first in destroyable and d.results[-1] == "error":
            (methods if d.receiver else creators).setdefault(first, []).append(d.name)
        elif first == "[]Value" and d.receiver and re.search(r"must be freed", d.doc):
            lists.append(d.name)
        if d.receiver and re.search(r"If a given output is nil, it\s+will be allocated", d.doc) \
                and len(d.params) > 1 and d.params[1][0] == "outputs":
            nil_fill.append(d.name)
    # RunWithOptions shares Run's documentation ("Delegate to RunWithOptions"): same outputs parameter
    for d in decls:
        if d.receiver and d.name.endswith("WithOptions") and d.name[:-len("WithOptions")] in nil_fill \
                and len(d.params) > 1 and d.params[1][0] == "outputs":
            nil_fill.append(d.name)
    w = print
    w("# Release map for the Go binding github.com/yalue/onnxruntime_go (imported as any name; the")
    w("# Go front end calls its package functions `ort.Name`, whatever the import is called).")
    w("#")
    w("# Generated by tools/gen_go_policy.py from the binding's source; edit the generator, not this")
    w("# file. How the Go front end lowers the binding's calls:")
    w("#   x, err := ort.NewT(a, b)     plain call ort.NewT with arguments (&x, a, b), result err:")
    w("#                                returns = \"code\", success = 0 (nil): a failed call made nothing")
    w("#   m, err := s.GetModelMetadata()   method call with arguments (&m)")
    w("#   x.Destroy()                  method call, releases the receiver")
    w("#   s.Run(in, out)               method call; then, if it succeeded, one `new` call Run per nil")
    w("#                                slot of `out` (a local slice): the values Run allocates")
    w("#   InitializeEnvironment        a token; a return of a nil error hands it to the caller")
    w("#                                (the pseudo-call ort.$environment_kept the front end emits)")
    w("# Kinds with language = \"go\" report ORT020 (go-undestroyed) instead of ORT001.")
    w("")
    w("[policy]")
    w('name = "onnxruntime-go"')
    w('description = "onnxruntime_go objects that only Destroy() frees, and the environment"')
    w("")
    for t in destroyable + ["Value"]:
        w("[[kind]]")
        w(f'id = "go.{t}"')
        w(f'label = "{t}"' if t != "Value" else 'label = "Value"')
        w('language = "go"')
        w("")
    w("[[kind]]")
    w('id = "go.Environment"')
    w('label = "onnxruntime environment"')
    w('language = "go"')
    w("token = true")
    w("")
    for kind in sorted(creators):
        w("[[call]]")
        w(f"names = [{', '.join(chr(34) + 'ort.' + n + chr(34) for n in sorted(creators[kind]))}]")
        w('returns = "code"')
        w("success = 0")
        w(f'acquire = {{ kind = "go.{kind}", into = "*0", nullable = false }}')
        w("")
    for kind in sorted(methods):
        w("[[call]]")
        w(f"names = [{', '.join(chr(34) + n + chr(34) for n in sorted(set(methods[kind])))}]")
        w('style = "method"')
        w('returns = "code"')
        w("success = 0")
        w(f'acquire = {{ kind = "go.{kind}", into = "*0", nullable = false }}')
        w("")
    if lists:
        w("[[call]]")
        w(f"names = [{', '.join(chr(34) + n + chr(34) for n in sorted(lists))}]")
        w('note = "a new slice of new values: one object for the collection (destroy every element)"')
        w('style = "method"')
        w('returns = "code"')
        w("success = 0")
        w('acquire = { kind = "go.Value", into = "0[]", nullable = false }')
        w("")
    w("[[call]]")
    w(f"names = [{', '.join(chr(34) + n + chr(34) for n in sorted(set(nil_fill)))}]")
    w('note = "the run itself: fails with an error (then no output slot was filled)"')
    w('style = "method"')
    w('returns = "code"')
    w("success = 0")
    w("")
    w("[[call]]")
    w(f"names = [{', '.join(chr(34) + n + chr(34) for n in sorted(set(nil_fill)))}]")
    w('note = "one value allocated for a nil slot of the outputs argument (index 1) of a successful run"')
    w('style = "new"')
    w('acquire = { kind = "go.Value", into = "return", nullable = false }')
    w("")
    w("[[call]]")
    w('name = "Destroy"')
    w('style = "method"')
    kinds = ", ".join(f'"go.{t}"' for t in destroyable + ["Value"])
    w(f"release = {{ receiver = true, kinds = [{kinds}] }}")
    w("")
    w("[[call]]")
    w('name = "ort.InitializeEnvironment"')
    w('returns = "code"')
    w("success = 0")
    w('acquire = { kind = "go.Environment", into = "token" }')
    w("")
    w("[[call]]")
    w('names = ["ort.DestroyEnvironment", "ort.$environment_kept"]')
    w('release = { kinds = ["go.Environment"] }')
    w("")
    w("# ----------------------------------------------------------------- the Go language itself")
    w("")
    w("[[call]]")
    w('names = ["panic", "os.Exit", "log.Fatal", "log.Fatalf", "log.Fatalln", "log.Panic", "log.Panicf",')
    w('         "log.Panicln", "runtime.Goexit", "syscall.Exit"]')
    w('note = "end the goroutine or the process: nothing is leaked there"')
    w("noreturn = true")
    w("")
    w("[[call]]")
    w('names = ["logrus.Fatal", "logrus.Fatalf", "logrus.Fatalln", "logrus.Panic", "logrus.Panicf", "logrus.Panicln",')
    w('         "klog.Fatal", "klog.Fatalf", "klog.Fatalln", "klog.Exit", "klog.Exitf", "glog.Fatal", "glog.Fatalf",')
    w('         "glog.Fatalln", "glog.Exit", "glog.Exitf"]')
    w('note = "logging packages whose Fatal and Panic functions end the process like log.Fatal"')
    w("noreturn = true")
    w("")
    w("[[call]]")
    w('names = ["log.Logger.Fatal", "log.Logger.Fatalf", "log.Logger.Fatalln", "log.Logger.Panic", "log.Logger.Panicf",')
    w('         "log.Logger.Panicln", "zap.Logger.Fatal", "zap.Logger.Panic", "zap.SugaredLogger.Fatal",')
    w('         "zap.SugaredLogger.Fatalf", "zap.SugaredLogger.Fatalw", "zap.SugaredLogger.Panic",')
    w('         "zap.SugaredLogger.Panicf", "zap.SugaredLogger.Panicw", "logrus.Logger.Fatal", "logrus.Logger.Fatalf",')
    w('         "logrus.Logger.Panic", "logrus.Logger.Panicf", "logrus.Entry.Fatal", "logrus.Entry.Fatalf"]')
    w('style = "method"')
    w('note = "the same as methods of a logger"')
    w("noreturn = true")
    w("")
    w("[[call]]")
    w('names = ["testing.T.Fatal", "testing.T.Fatalf", "testing.T.FailNow", "testing.T.Skip", "testing.T.Skipf",')
    w('         "testing.T.SkipNow", "testing.B.Fatal", "testing.B.Fatalf", "testing.B.FailNow", "testing.B.Skip",')
    w('         "testing.B.Skipf", "testing.B.SkipNow", "testing.TB.Fatal", "testing.TB.Fatalf", "testing.TB.FailNow",')
    w('         "testing.TB.Skip", "testing.TB.Skipf", "testing.TB.SkipNow"]')
    w('style = "method"')
    w('note = "end the test: the test binary cleans up (like log.Fatal for a command)"')
    w("noreturn = true")
    w("")
    w("[[call]]")
    w('names = ["require.NoError", "require.NoErrorf", "require.Nil", "require.Nilf"]')
    w('note = "github.com/stretchr/testify/require: NoError(t, err) ends the test (t.FailNow) when err is not nil, '
      'so the path goes on with err nil"')
    w('status_check = { arg = 1, on_failure = "abort", releases = false }')
    w("")
    w("[[call]]")
    w('names = ["require.Error", "require.Errorf", "require.ErrorContains", "require.ErrorContainsf", "require.ErrorIs",')
    w('         "require.ErrorIsf", "require.ErrorAs", "require.ErrorAsf", "require.EqualError", "require.EqualErrorf",')
    w('         "require.NotNil", "require.NotNilf", "require.True", "require.Truef"]')
    w('note = "github.com/stretchr/testify/require: Error(t, err) ends the test (t.FailNow) when err is nil, so the path '
      'goes on with err not nil (a call that failed created nothing)"')
    w("assume = 1")
    w("")
    w("[[call]]")
    w('name = "must.M"')
    w('note = "github.com/janpfeifer/must: M(err) panics when err is not nil"')
    w('status_check = { arg = 0, on_failure = "abort", releases = false }')
    w("")
    w("[[call]]")
    w('name = "must.M1"')
    w('note = "github.com/janpfeifer/must: M1(v, err) panics when err is not nil and returns v (with f(g()), g\'s results)"')
    w('status_check = { arg = 1, on_failure = "abort", releases = false, passes = 0 }')
    w("")
    w("[[call]]")
    w('name = "$keep"')
    w('note = "append(s, x...), a slice or map literal: the local collection keeps x (keeping is not owning)"')
    w('stores = "receiver"')
    w("")
    w("[[call]]")
    w('name = "$handoff"')
    w('note = "handed to a goroutine or closure that destroys, returns or stores it"')
    w('escapes = "all"')
    w("")
    w("[[call]]")
    w('names = ["atomic.Pointer.Store", "atomic.Pointer.Swap", "atomic.Pointer.CompareAndSwap", "atomic.Value.Store",')
    w('         "atomic.Value.Swap", "atomic.Value.CompareAndSwap", "sync.Map.Store", "sync.Map.Swap",')
    w('         "sync.Map.LoadOrStore", "sync.Map.CompareAndSwap"]')
    w('style = "method"')
    w('note = "sync/atomic and sync.Map hold what they are given: `s.session.Store(sess)` keeps sess in s\'s field '
      '(handed to s), a local one keeps it this function\'s"')
    w('stores = "receiver"')
    w("")
    w("[[neutral]]")
    w('note = "the standard library keeps no onnxruntime_go object (sync.Pool drops what it holds)"')
    w('prefixes = ["fmt.", "log.", "errors.", "strings.", "strconv.", "bytes.", "time.", "math.", "sort.", "slices.",')
    w('            "maps.", "os.", "filepath.", "path.", "sync.", "runtime.", "context.", "unsafe.", "binary.",')
    w('            "io.", "bufio.", "json.", "utf8.", "atomic.", "reflect.", "testing.", "flag.", "rand.", "image.",')
    w('            "color.", "draw.", "png.", "jpeg.", "http.", "ort."]')
    w("")
    specified = {"Destroy", *nil_fill, *lists} | {n for names in methods.values() for n in names}
    keeping = sorted({d.name for d in decls if d.receiver and d.receiver[0].isupper() and d.name[0].isupper()
                      and d.name not in specified})
    w("[[neutral]]")
    w('style = "method"')
    w('note = "every other exported method of the binding keeps nothing it is given (from its source)"')
    w('prefixes = ["sync.", "time.", "strings.", "bytes.", "testing.", "ort.", "context.", "atomic."]')
    for i in range(0, len(keeping), 6):
        chunk = ", ".join(f'"{n}"' for n in keeping[i:i + 6])
        w(("names = [" if i == 0 else "         ") + chunk + ("]" if i + 6 >= len(keeping) else ","))


if __name__ == "__main__":
    main()
