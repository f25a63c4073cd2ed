#!/usr/bin/env python3
"""Regenerate rules/onnxruntime-csharp.toml from the sources of the ONNX Runtime C# binding
(`csharp/src/Microsoft.ML.OnnxRuntime`, NuGet Microsoft.ML.OnnxRuntime).

What it reads, for every public class, struct and interface of `Microsoft.ML.OnnxRuntime` and its
sub-namespaces (`.Tensors`, training):

* whether it is `IDisposable` (directly, through `SafeHandle`, or through another class of the
  binding): each such class is a `[[kind]]` whose leaks are ORT030;
* every public constructor, method, property and field, with parameter and return types: the
  `[[csharp_api]]` tables the C# front end resolves overloads and types `var` locals with;
* which members hand the caller an object it owns (`[[call]]` with `acquire`): the public
  constructors of a disposable class, and the methods that return a disposable object, except
  the ones the binding documents or implements as shared or borrowed (see SHARED below and
  `borrowed_by_body`: a method whose body returns a static field or wraps a handle it does not
  own, `new OrtMemoryInfo(handle, false)`, hands out a view);
* which calls take ownership of what they are given (TAKES below, from the binding's
  documentation: `OrtValue.CreateSequence` "takes ownership of the values", `CreateMap` sets its
  `ref` arguments to null).

    python3 tools/gen_csharp_policy.py --git /work/.mirror/Craigacp+onnxruntime/repo [--rev HEAD]
    python3 tools/gen_csharp_policy.py --checkout path/to/onnxruntime     # or a tree with csharp/
    python3 tools/gen_csharp_policy.py --checkout ... --stdout            # print instead of writing

The output is committed and reviewed like any other policy file; the hand-written parts (the
.NET collections, `Dispose` on values of unknown type, `Environment.Exit`) are in HEADER and
TAIL below.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import tree_sitter_c_sharp
from tree_sitter import Language, Node, Parser

BINDING_DIR = "csharp/src/Microsoft.ML.OnnxRuntime"
RULES = Path(__file__).resolve().parent.parent / "rules" / "onnxruntime-csharp.toml"
LANGUAGE = Language(tree_sitter_c_sharp.language())
_TYPES = ("class_declaration", "struct_declaration", "interface_declaration", "record_declaration")
_DISPOSABLE_ROOTS = {"IDisposable", "SafeHandle", "SafeHandleZeroOrMinusOneIsInvalid", "IAsyncDisposable"}

# Members that return a disposable object the caller does not own: the process-wide environment
# ("OrtEnv is a singleton", OrtEnv.shared.cs), and what the suite's README item 13 and the
# binding's XML docs call shared instances and views. Found again by `borrowed_by_body` for the
# most part; listed so that a change in an implementation does not silently flip them.
SHARED = {
    "OrtEnv.Instance": "the process-wide environment (a singleton)",
    "OrtEnv.CreateInstanceWithOptions": "creates or returns the process-wide environment (a singleton)",
    "OrtMemoryInfo.DefaultInstance": "a shared default CPU memory info",
    "OrtAllocator.DefaultInstance": "the shared default CPU allocator",
    "OrtAllocator.Info": "a view of the allocator's memory info",
    "OrtMemoryAllocation.Info": "a view of the allocation's memory info",
    "OrtValue.GetTensorMemoryInfo": "a view of the value's memory info",
}
# Calls that take ownership of objects given to them, at the call, even when they throw.
TAKES = {
    "OrtValue.CreateSequence": ("elements", 0, "takes ownership of the values in the collection and clears it"),
    "OrtValue.CreateMap": ("args", (0, 1), "takes ownership of `keys` and `values` and sets both to null"),
}


@dataclass
class ApiType:
    name: str  # simple, nested as Outer.Inner, generic arity dropped
    namespace: str
    kind: str
    bases: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)
    creating: dict[str, str] = field(default_factory=dict)  # member -> returned type (owned)
    borrowed: dict[str, str] = field(default_factory=dict)  # member -> why
    static_members: set[str] = field(default_factory=set)
    properties: set[str] = field(default_factory=set)
    ctors: bool = False
    is_static: bool = False
    passthrough: list[str] = field(default_factory=list)  # extension methods that return their receiver


def read_sources(git: str | None, rev: str, checkout: str | None) -> tuple[dict[str, bytes], str]:
    """Path -> contents of every .cs file of the binding, and the revision read."""
    if checkout:
        root = Path(checkout)
        base = root / BINDING_DIR if (root / BINDING_DIR).is_dir() else root / "src" / "Microsoft.ML.OnnxRuntime"
        files = {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*.cs"))}
        return files, f"checkout {root.name}"
    names = subprocess.run(["git", "-C", git, "ls-tree", "-r", "--name-only", rev, BINDING_DIR],
                           check=True, capture_output=True, text=True).stdout.split()
    commit = subprocess.run(["git", "-C", git, "rev-parse", rev], check=True, capture_output=True, text=True).stdout.strip()
    files = {n: subprocess.run(["git", "-C", git, "show", f"{rev}:{n}"], check=True, capture_output=True).stdout
             for n in sorted(names) if n.endswith(".cs")}
    return files, commit


def text(src: bytes, node: Node | None) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace") if node is not None else ""


def squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).replace("< ", "<").replace(" >", ">").replace(" ,", ",").strip()


def mods(src: bytes, node: Node) -> set[str]:
    return {text(src, c) for c in node.named_children if c.type == "modifier"}


def strip_ns(t: str) -> str:
    """`System.Collections.Generic.List<X>` -> `List<X>` (namespaces off, nested names kept)."""
    t = squash(t).replace("global::", "")
    return re.sub(r"\b(?:System|Microsoft|ML|OnnxRuntime|Tensors|Collections|Generic|Threading|Tasks|Buffers|Runtime|"
                  r"InteropServices|Linq|IO|Text)\.", "", t)


def prepared(data: bytes) -> bytes:
    """The text the front end parses (the first branch of every `#if`, unsafe code and the
    grammar's blind spots blanked; same length and lines)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from ortlint.frontends.csharp.syntax import prepare
    return prepare(data)


def collect(files: dict[str, bytes]) -> dict[str, ApiType]:
    types: dict[str, ApiType] = {}
    parser = Parser(LANGUAGE)
    for _path, data in sorted(files.items()):
        src = prepared(data)
        root = parser.parse(src).root_node
        _walk_scope(src, root, "", None, types)
    return types


def _walk_scope(src: bytes, node: Node, namespace: str, outer: ApiType | None, types: dict[str, ApiType]) -> None:
    ns = namespace
    for child in node.named_children:
        if child.type == "file_scoped_namespace_declaration":
            ns = text(src, child.child_by_field_name("name"))
        elif child.type == "namespace_declaration":
            _walk_scope(src, child.child_by_field_name("body"), text(src, child.child_by_field_name("name")), None, types)
        elif child.type in _TYPES:
            _type(src, child, ns, outer, types)
        elif child.type == "declaration_list":
            _walk_scope(src, child, ns, outer, types)


def _type(src: bytes, node: Node, ns: str, outer: ApiType | None, types: dict[str, ApiType]) -> None:
    if not ns.startswith("Microsoft.ML.OnnxRuntime"):
        return
    m = mods(src, node)
    if "public" not in m and not (node.type == "interface_declaration" and outer is not None):
        return
    simple = text(src, node.child_by_field_name("name"))
    name = f"{outer.name}.{simple}" if outer is not None else simple
    kind = node.type.split("_")[0]
    api = types.get(name)
    if api is None:
        api = types[name] = ApiType(name, ns, kind, is_static="static" in m)
    base_list = next((c for c in node.named_children if c.type == "base_list"), None)
    for b in (base_list.named_children if base_list is not None else []):
        if b.type not in ("argument_list",):
            api.bases.append(strip_ns(text(src, b)))
    body = node.child_by_field_name("body")
    for member in (body.named_children if body is not None else []):
        _member(src, member, api, types)
    if api.members and all(m.endswith(": IntPtr") for m in api.members):
        del types[name]  # a native function table (OrtApi, OrtTrainingApi): not an API for users


def _params(src: bytes, plist: Node | None) -> list[str]:
    """Parameter types as signatures write them (`params T[]` is the list's own `type`/`name`)."""
    out = []
    pending = False
    for i, p in enumerate(plist.children if plist is not None else []):
        if not p.is_named:
            pending = pending or p.type == "params"
            continue
        if pending and plist.field_name_for_child(i) == "type":
            out.append("params " + strip_ns(text(src, p)))
            pending = False
            continue
        if p.type != "parameter":
            continue
        words = [text(src, c) for c in p.children if not c.is_named and text(src, c) in ("ref", "out", "in", "params", "this")]
        words += [text(src, c) for c in p.named_children if c.type == "modifier"]
        ptype = strip_ns(text(src, p.child_by_field_name("type")))
        prefix = " ".join(w for w in words if w in ("ref", "out", "in", "params", "this"))
        default = any(not c.is_named and c.type == "=" for c in p.children) or \
            any(c.type == "equals_value_clause" for c in p.named_children)
        out.append((prefix + " " if prefix else "") + ptype + (" =" if default else ""))
    return out


def _member(src: bytes, node: Node, api: ApiType, types: dict[str, ApiType]) -> None:
    t = node.type
    if t in _TYPES:
        _type(src, node, api.namespace, api, types)
        return
    m = mods(src, node)
    public = "public" in m or api.kind == "interface" and "private" not in m
    if not public:
        return
    static = "static " if "static" in m or "const" in m else ""
    if t == "constructor_declaration" and not static:
        api.ctors = True
        api.members.append(f"new({', '.join(_params(src, node.child_by_field_name('parameters')))})")
    elif t == "method_declaration":
        name = text(src, node.child_by_field_name("name"))
        tparams = node.child_by_field_name("type_parameters")
        generic = text(src, tparams).replace(" ", "") if tparams is not None else ""
        ret = strip_ns(text(src, node.child_by_field_name("returns")))
        params = _params(src, node.child_by_field_name("parameters"))
        if "async" in m and ret.startswith("Task"):
            pass
        api.members.append(f"{static}{name}{generic}({', '.join(params)}) : {ret}")
        _ownership(src, node, api, name, ret, bool(static))
    elif t == "property_declaration":
        name = text(src, node.child_by_field_name("name"))
        ret = strip_ns(text(src, node.child_by_field_name("type")))
        api.members.append(f"{static}{name} : {ret}")
        api.properties.add(name)
        api.borrowed.setdefault(name, "a property")
    elif t == "field_declaration":
        decl = next((c for c in node.named_children if c.type == "variable_declaration"), None)
        if decl is None:
            return
        ftype = strip_ns(text(src, decl.child_by_field_name("type")))
        for v in decl.named_children:
            if v.type == "variable_declarator":
                api.members.append(f"{static}{text(src, v.child_by_field_name('name'))} : {ftype}")
    elif t == "indexer_declaration":
        ret = strip_ns(text(src, node.child_by_field_name("type")))
        params = _params(src, node.child_by_field_name("parameters"))
        api.members.append(f"this[{', '.join(params)}] : {ret}")


def borrowed_by_body(src: bytes, node: Node) -> str:
    """Why a method returning a disposable object hands out one the caller does not own, judged
    from its body: it returns a static field (a singleton), or wraps a handle it does not own
    (`new T(handle, false)` / `owned: false`). "" when it creates a new object."""
    body = text(src, node.child_by_field_name("body")) + text(src, next(
        (c for c in node.named_children if c.type == "arrow_expression_clause"), None))
    if re.search(r"(?:return|=>)\s+(?:s_|_)\w+(?:\.Value)?\s*;", body):
        return "returns a static instance"
    params = [text(src, p.child_by_field_name("name")) for p in (node.child_by_field_name("parameters").named_children
                                                                 if node.child_by_field_name("parameters") else [])
              if p.type == "parameter"]
    if any(re.search(rf"return\s+{re.escape(p)}\s*;", body) for p in params if p):
        return "returns its argument"
    if re.search(r"new\s+\w+\([^;]*,\s*(?:false|owned:\s*false)\s*\)", body) and "return" in body:
        return "wraps a handle it does not own"
    return ""


def _ownership(src: bytes, node: Node, api: ApiType, name: str, ret: str, static: bool) -> None:
    api.creating.setdefault(name, "")
    reason = borrowed_by_body(src, node)
    key = f"{api.name}.{name}"
    if reason and key not in api.borrowed:
        api.borrowed[name] = reason
    if static:
        api.static_members.add(name)
    api.creating[name] = api.creating[name] or ret if ret != "void" else api.creating[name]
    params = _params(src, node.child_by_field_name("parameters"))
    if static and reason == "returns its argument" and params and params[0].startswith("this "):
        extended = base_of(params[0][5:].split(" =")[0])
        api.passthrough.append(f"{extended}.{name}")  # `options.ApplyConfiguration()` is `options`


def disposable_types(types: dict[str, ApiType]) -> set[str]:
    """Classes and interfaces of the binding that are IDisposable (transitively)."""
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, api in types.items():
            if name in out:
                continue
            bases = {re.sub(r"<.*", "", b) for b in api.bases}
            if bases & _DISPOSABLE_ROOTS or bases & out:
                out.add(name)
                changed = True
    return out


def base_of(t: str) -> str:
    return re.sub(r"<.*", "", t).rstrip("[]?")

HEADER = """\
# Release map for the ONNX Runtime C# API (NuGet Microsoft.ML.OnnxRuntime, namespaces
# Microsoft.ML.OnnxRuntime and Microsoft.ML.OnnxRuntime.Tensors): the IDisposable objects a caller
# owns, what creates them, what disposes them, and the API surface the C# front end resolves
# overloads and types `var` with. Kinds with language = "csharp" report ORT030 (csharp-undisposed).
#
# GENERATED by tools/gen_csharp_policy.py from the binding's sources; edit the generator (its
# SHARED, TAKES and hand-written tables), not this file. How the C# front end names calls:
#   OrtValue.CreateTensorValueFromMemory(...)  plain call `OrtValue.CreateTensorValueFromMemory`
#   session.Run(...)                           method call `InferenceSession.Run` (the receiver's
#                                              static type), or `InferenceSession.Run/void` when the
#                                              arguments select an overload that returns nothing
#   new SessionOptions()                       plain call `new SessionOptions` (every C# constructor
#                                              is a plain call: `new T` of Java's and C++'s policies
#                                              has style "new", and class names are shared)
#   x.Dispose() / x?.Dispose() / using         method call `T.Dispose` (`Dispose` when T is unknown)
#   c[k] = v, { v } in an initializer          method call `$store` on c (the collection keeps v)
#   new[] { a }, (a, b), new { a }             plain calls `new[]`, `tuple`, `new{}` (local collections)
#   OrtValue.CreateSequence(values)            first `OrtValue.CreateSequence$takes` (ownership passes
#                                              at the call, even when it throws), then the call
# Calls the policy does not describe keep nothing they are given (README item 13); calls of the
# analyzed code are named after their function and summarized.
#
# To teach ortlint your own IDisposable type: a [[kind]] with language = "csharp", the calls that
# create it (acquire into "return", nullable = false; `new MyType` is a plain call) and
# `MyType.Dispose` (style "method", release = { receiver = true, kinds = [...] }).
"""

COLLECTIONS = ["List", "Dictionary", "HashSet", "SortedSet", "Queue", "Stack", "LinkedList", "SortedDictionary",
               "SortedList", "ConcurrentDictionary", "ConcurrentBag", "ConcurrentQueue", "ConcurrentStack",
               "Collection", "ObservableCollection", "BlockingCollection"]
ADDERS = ["Add", "Insert", "Push", "Enqueue", "TryAdd", "AddLast", "AddFirst", "TryAdd", "GetOrAdd", "AddOrUpdate"]


def q(items) -> str:
    return "[" + ", ".join(f'"{i}"' for i in items) + "]"


def kind_id(name: str) -> str:
    return "cs." + name.replace(".", "_")


def creating_members(types: dict[str, ApiType], disposable: set[str]) -> list[tuple[str, str, str, str]]:
    """(callee, style, kind, why) of every API member that hands the caller an object it owns."""
    out = []
    for name, api in sorted(types.items()):
        if name in disposable and api.ctors and api.kind == "class":
            out.append((f"new {name}", "plain", kind_id(name), "a public constructor"))
        for member, ret in sorted(api.creating.items()):
            head = base_of(ret)
            key = f"{name}.{member}"
            if head not in disposable or key in SHARED or member in api.borrowed and api.borrowed[member] != "a property":
                continue
            style = "plain" if member in api.static_members else "method"
            out.append((key, style, kind_id(head), f"returns a new {head}"))
    return out


def render(types: dict[str, ApiType], disposable: set[str], rev: str) -> str:
    lines = [HEADER, "[policy]", 'name = "onnxruntime-csharp"',
             'description = "ONNX Runtime C# API: IDisposable sessions, options, values and run results"', ""]
    w = lines.append
    w(f"# From onnxruntime {rev} ({BINDING_DIR}).")
    w("")
    w("# ----------------------------------------------------------------------------- kinds")
    for name in sorted(disposable):
        api = types[name]
        if name == "DisposableNamedOnnxValue":
            continue  # only ever an element of a results collection (a ResultValue)
        w("")
        w("[[kind]]")
        w(f'id = "{kind_id(name)}"')
        w(f'label = "{name}"')
        w('language = "csharp"')
        if api.kind == "interface":
            w('contains = "cs.ResultValue"')
            w("closed_by_elements = true")
            w("# What Run returns: disposing it disposes every element, and disposing every element")
            w("# (a foreach over it) is disposing it. Its elements are borrowed from it.")
    w("")
    w("[[kind]]")
    w('id = "cs.ResultValue"')
    w('label = "an element of a results collection"')
    w('language = "csharp"')
    w("owned = false")
    w("")
    w("[[kind]]")
    w('id = "cs.collection"')
    w('label = "collection"')
    w('language = "csharp"')
    w("must_release = false")
    w("# A collection, array or tuple built here: what it keeps stays this function's until it escapes.")
    w("")
    w("# ----------------------------------------------------------------------------- what creates an owned object")
    for callee, style, kind, why in creating_members(types, disposable):
        w("")
        w("[[call]]")
        w(f'name = "{callee}"')
        w(f'style = "{style}"')
        w(f'note = "{why}"')
        w(f'acquire = {{ kind = "{kind}", into = "return", nullable = false }}')
    w("")
    w("# ----------------------------------------------------------------------------- shared and borrowed (never reported)")
    for key, why in sorted(SHARED.items()):
        w(f"#   {key}: {why}")
    borrowed = sorted(f"{n}.{m}: {why}" for n, api in types.items() for m, why in api.borrowed.items()
                      if why != "a property" and f"{n}.{m}" not in SHARED and base_of(api.creating.get(m, "")) in disposable)
    for line in borrowed:
        w(f"#   {line} (from its body)")
    passthrough = sorted(p for api in types.values() for p in api.passthrough)
    if passthrough:
        w("")
        w("[[call]]")
        w(f"names = {q(passthrough)}")
        w('style = "method"')
        w('note = "Extension methods that return the object they are called on (from their bodies): the result is that object."')
        w("view = true")
    w("")
    w("# ----------------------------------------------------------------------------- what takes ownership")
    for key, (how, args, why) in sorted(TAKES.items()):
        w("")
        w("[[call]]")
        w(f'name = "{key}$takes"')
        w('style = "plain"')
        w(f'note = "{why}"')
        kinds = q(sorted(kind_id(n) for n in disposable if n != "DisposableNamedOnnxValue"))
        if how == "elements":
            w(f"release = {{ arg = {args}, elements = true, kinds = {kinds} }}")
        else:
            w(f"escapes = {list(args)}")
    w("")
    w("# ----------------------------------------------------------------------------- disposing")
    all_kinds = sorted(kind_id(n) for n in disposable if n != "DisposableNamedOnnxValue") + ["cs.ResultValue"]
    names = ["Dispose", "DisposeAsync", "IDisposable.Dispose", "IAsyncDisposable.DisposeAsync"] + \
        sorted(f"{n}.Dispose" for n in disposable)
    w("")
    w("[[call]]")
    w("names = [" + ",\n         ".join(", ".join(f'"{x}"' for x in names[i:i + 5]) for i in range(0, len(names), 5)) + "]")
    w('style = "method"')
    w('note = "Dispose(): on a receiver of unknown type (`Dispose`), IDisposable, or a type of the binding."')
    w("release = { receiver = true, kinds = [" + ",\n            ".join(
        ", ".join(f'"{x}"' for x in all_kinds[i:i + 4]) for i in range(0, len(all_kinds), 4)) + "] }")
    w("")
    w("# ----------------------------------------------------------------------------- calls of the API that keep nothing")
    classes = sorted({n.split(".")[0] for n in types})
    for style in ("method", "plain"):
        w("")
        w("[[neutral]]")
        w(f'style = "{style}"')
        w('note = "Methods of the binding read their arguments; only the TAKES calls above take ownership."')
        w("prefixes = [" + ",\n            ".join(", ".join(f'"{c}."' for c in classes[i:i + 5])
                                                for i in range(0, len(classes), 5)) + "]")
    plain_new = sorted(f"new {n}" for n, api in types.items() if n not in disposable and api.ctors)
    if plain_new:
        w("")
        w("[[neutral]]")
        w('style = "plain"')
        w('note = "Constructors of classes of the binding that are not IDisposable."')
        w("names = [" + ",\n         ".join(", ".join(f'"{c}"' for c in plain_new[i:i + 4])
                                           for i in range(0, len(plain_new), 4)) + "]")
    w(TAIL)
    w("# ----------------------------------------------------------------------------- the API surface")
    w("# Every public class of the binding: bases, whether IDisposable, and its public members as")
    w("# signatures (see ortlint/policy_csharp.py). `=` marks a parameter with a default value.")
    for name, api in sorted(types.items()):
        if not api.members and not api.bases:
            continue
        w("")
        w("[[csharp_api]]")
        w(f'class = "{name}"')
        w(f'namespace = "{api.namespace}"')
        if api.bases:
            w(f"bases = {q(api.bases)}")
        if name in disposable:
            w("disposable = true")
        if api.members:
            w("members = [")
            for m in api.members:
                w(f'  "{m}",')
            w("]")
    return "\n".join(lines) + "\n"


TAIL = """
# ----------------------------------------------------------------------------- .NET (hand-written in the generator)

[[call]]
names = [""" + ", ".join(f'"new {c}"' for c in COLLECTIONS) + """,
         "new[]", "tuple", "new{}", "new Tuple", "new ValueTuple", "new KeyValuePair", "Tuple.Create",
         "ValueTuple.Create", "KeyValuePair.Create"]
style = "plain"
note = "A collection, array, tuple or anonymous object made here keeps what it is given without owning it (README item 13: a local collection passed to Run does not take the values)."
acquire = { kind = "cs.collection", into = "return", nullable = false }
stores = "return"

[[call]]
names = ["$store", """ + ", ".join(f'"{a}"' for a in sorted(set(ADDERS))) + """,
         """ + ", ".join(f'"{c}.{a}"' for c in ("List", "IList", "ICollection", "Dictionary", "IDictionary", "HashSet",
                                                 "ISet", "Queue", "Stack", "LinkedList", "ConcurrentDictionary",
                                                 "ConcurrentBag", "ConcurrentQueue", "ConcurrentStack", "SortedDictionary",
                                                 "SortedList", "Collection", "ObservableCollection", "BlockingCollection")
                         for a in ADDERS[:5]) + """]
style = "method"
note = "Adding to a collection keeps the object there: it is handed on only when the collection is (a field of an owner class, a parameter's, returned)."
stores = "receiver"

[[call]]
names = ["Environment.Exit", "Environment.FailFast"]
style = "plain"
note = "The process ends: what is still alive is not a leak (README item 13)."
noreturn = "abort"
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git", help="a git directory of onnxruntime")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--checkout", help="a checkout of onnxruntime (or its csharp/ folder)")
    ap.add_argument("--stdout", action="store_true")
    ap.add_argument("--dump", action="store_true", help="print what was read, for review")
    args = ap.parse_args()
    if not args.git and not args.checkout:
        ap.error("give --git or --checkout")
    files, rev = read_sources(args.git, args.rev, args.checkout)
    types = collect(files)
    if args.dump:
        disp = disposable_types(types)
        for name, api in sorted(types.items()):
            print(f"{api.kind} {name} : {', '.join(api.bases)}{'  [disposable]' if name in disp else ''}")
            for m in api.members:
                print("   ", m)
        return 0
    out = render(types, disposable_types(types), rev)
    if args.stdout:
        sys.stdout.write(out)
    else:
        RULES.write_text(out, encoding="utf-8")
        print(f"wrote {RULES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
