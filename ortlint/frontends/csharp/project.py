"""The project-wide index of C# declarations: the classes of the analyzed code, their members
with types, their methods with signatures, their bases, and extension methods.

The project is what one compilation sees: the folder of the nearest `.csproj` above the file,
with every `.cs` file below it (`bin/`, `obj/` and hidden folders left out); a file without a
`.csproj` above it sees its own folder only. The index holds declarations only (no body is
walked to build it) and is built once per process and project; a file's result records the
other files whose declarations it used, so the cache re-analyzes it when they change.

Whether a class disposes a member (evidence.py) decides whether storing an object into that
member hands it on (the suite's README, item 13): a class whose methods never dispose a member,
or whose only cleanup is a finalizer, does not own what is stored there. It is worked out from
the class's bodies the first time a store asks. A member disposed through another object
(`owner.Session.Dispose()`, found by a regular expression over every file) counts for every
class that has a member of that name.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from tree_sitter import Node

from ..managed.project_files import project_files
from .evidence import Evidence
from .syntax import (F_ACCESSORS, F_BODY, F_NAME, F_PARAMETERS, F_RETURNS, F_TYPE, F_TYPE_PARAMETERS, TYPE_DECLS, modifiers, named,
                     parse_budget, parse_tree, prepare, text_of)
from .types import canon

MAX_INDEXED_BYTES = 2 * 1024 * 1024  # larger files (generated code) are not indexed
INDEX_PARSE_SHARE = 0.25
_EXTERNAL_DISPOSE = re.compile(rb"\.\s*([A-Za-z_]\w*)\s*\??\s*\.\s*(?:Dispose|DisposeAsync|Close)\s*\(")
_SKIP_DIRS = frozenset({"bin", "obj", "node_modules", "packages", "Library", "Temp"})


@dataclass
class ParamDecl:
    name: str
    type: str
    mode: str = ""  # "ref" | "out" | "in" | "params" | "this" | ""
    optional: bool = False


@dataclass
class MethodDecl:
    name: str
    params: list[ParamDecl]
    returns: str
    static: bool = False
    body: bool = True
    line: int = 0
    file: str = ""
    generics: int = 0  # type parameters (`M<T>` and `M` are different overloads)

    @property
    def extension(self) -> bool:
        return bool(self.params) and self.params[0].mode == "this"

    def fits(self, count: int) -> bool:
        ps = self.params[1:] if self.extension else self.params
        required = sum(1 for p in ps if not p.optional and p.mode != "params")
        if ps and ps[-1].mode == "params":
            return count >= required
        return required <= count <= len(ps)


@dataclass
class ClassDecl:
    """A class, struct, record or interface of the analyzed code (all its partial parts)."""

    path: str  # Outer.Inner
    namespace: str
    kind: str
    files: list[str] = field(default_factory=list)
    bases: list[str] = field(default_factory=list)  # canonical, as written
    members: dict[str, tuple[str, bool]] = field(default_factory=dict)  # field/property -> (type, static)
    methods: dict[str, list[MethodDecl]] = field(default_factory=dict)
    ctors: list[MethodDecl] = field(default_factory=list)
    spans: list[tuple[str, int, int]] = field(default_factory=list)  # (file, start, end) of each part
    evidence: set[str] | None = None  # members with disposal evidence (computed when first asked)
    computed: set[str] = field(default_factory=set)  # properties with accessor code (a setter may store anywhere)
    partial: bool = False
    static: bool = False

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]

    def function_name(self, method: str, decl: MethodDecl) -> str:
        """The IR name of one method: `Class.Method`, with `/N` (its parameter count) when the
        class has several methods of that name, and the parameter types when another one has as
        many (`Owner.Owner/1(string)`, `Owner.Owner/1(byte[])`): each overload has its own
        summary (one name for both gave a call the summary of whichever was analyzed last)."""
        if method == ".ctor":
            found, base = self.ctors, f"{self.path}.{self.name}"
            if len(found) <= 1:
                return base
        else:
            found, base = self.methods.get(method, []), f"{self.path}.{method}"
            if len(found) <= 1:
                return base
        n = len(decl.params)
        rivals = [m for m in found if m is not decl and len(m.params) == n]
        name = f"{base}/{n}"
        if any(m.generics != decl.generics for m in rivals):
            name += f"`{decl.generics}"
        if any(m.generics == decl.generics for m in rivals):
            name += "(" + ", ".join(f"{p.mode} {p.type}".strip() for p in decl.params) + ")"
        return name


class ProjectIndex:
    """The classes of one project, by simple name (and nested path), with extension methods."""

    def __init__(self, root: str, api_classes: frozenset[str] = frozenset(), api_members: frozenset[str] = frozenset()):
        self.root = root
        self.api_classes, self.api_members = api_classes, api_members
        self.by_name: dict[str, list[ClassDecl]] = {}
        self.extensions: dict[str, list[tuple[ClassDecl, MethodDecl]]] = {}
        self.external_disposed: set[str] = set()
        self.subclasses: dict[str, list[ClassDecl]] = {}
        self.trees: dict[str, tuple[bytes, Node]] = {}  # file -> (prepared source, root): the last few parsed

    def note_external(self, data: bytes) -> None:
        """`owner.Session.Dispose()` / `x.Items?.Dispose()` anywhere: members disposed through
        another object (a regular expression over the text: no walk of every body)."""
        if b"Dispose" in data or b"Close" in data:
            for m in _EXTERNAL_DISPOSE.finditer(data):
                self.external_disposed.add(m.group(1).decode("utf-8", "replace"))

    def disposes(self, decl: ClassDecl) -> set[str]:
        """The members `decl`'s methods dispose (see the module doc), found by walking its parts'
        bodies the first time a store into one of its members asks."""
        if decl.evidence is None:
            decl.evidence = set()
            for path, start, end in decl.spans:
                found = self.tree(path)
                if found is None:
                    continue
                src, root = found
                node = root.descendant_for_byte_range(start, end)
                while node is not None and not (node.start_byte == start and node.end_byte == end):
                    node = node.parent
                if node is not None:
                    Evidence(src, self.api_classes, self.api_members).collect(node, decl.evidence)
        return decl.evidence

    def tree(self, path: str) -> tuple[bytes, Node] | None:
        found = self.trees.get(path)
        if found is None:
            try:
                with open(path, "rb") as fh:
                    src = prepare(fh.read(MAX_INDEXED_BYTES + 1))
            except OSError:
                return None
            if len(src) > MAX_INDEXED_BYTES:
                return None
            tree = parse_tree(src, parse_budget(len(src)) * INDEX_PARSE_SHARE)
            if tree is None:
                return None
            if len(self.trees) > 16:
                self.trees.pop(next(iter(self.trees)))
            found = self.trees[path] = (src, tree.root_node)
        return found

    def add(self, decl: ClassDecl) -> ClassDecl:
        """Add a class; a partial class's parts merge into one declaration."""
        for other in self.by_name.get(decl.name, []):
            if other.path == decl.path and other.namespace == decl.namespace and (decl.partial or other.partial):
                other.files.extend(f for f in decl.files if f not in other.files)
                other.bases.extend(b for b in decl.bases if b not in other.bases)
                other.members.update(decl.members)
                for name, ms in decl.methods.items():
                    other.methods.setdefault(name, []).extend(ms)
                other.ctors.extend(decl.ctors)
                other.spans.extend(decl.spans)
                other.computed |= decl.computed
                other.partial = True
                return other
        self.by_name.setdefault(decl.name, []).append(decl)
        return decl

    def link(self) -> None:
        for decls in self.by_name.values():
            for decl in decls:
                for ms in decl.methods.values():
                    for m in ms:
                        if m.extension and m.static:
                            self.extensions.setdefault(m.name, []).append((decl, m))
                for base in decl.bases:
                    self.subclasses.setdefault(base.split("<")[0], []).append(decl)

    def find(self, name: str, namespaces: tuple[str, ...] = ()) -> ClassDecl | None:
        """The class a (simple or nested) name means: one of the preferred namespaces first."""
        simple = name.rsplit(".", 1)[-1].split("<")[0]
        found = [d for d in self.by_name.get(simple, []) if d.path == name.split("<")[0] or d.path.endswith("." + simple)
                 or d.path == simple]
        if not found:
            return None
        for ns in namespaces:
            for d in found:
                if d.namespace == ns:
                    return d
        return found[0]

    def base_chain(self, decl: ClassDecl, namespaces: tuple[str, ...] = ()) -> list[ClassDecl]:
        """`decl` and its project base classes, nearest first."""
        out, seen = [], set()
        cur: ClassDecl | None = decl
        while cur is not None and id(cur) not in seen and len(out) < 32:
            seen.add(id(cur))
            out.append(cur)
            cur = next((b for b in (self.find(x, (cur.namespace,) + namespaces) for x in cur.bases)
                        if b is not None and b.kind != "interface"), None)
        return out

    def derived(self, decl: ClassDecl) -> list[ClassDecl]:
        """Every project class deriving from `decl`, transitively."""
        out, stack, seen = [], [decl], {id(decl)}
        while stack and len(out) < 256:
            cur = stack.pop()
            for sub in self.subclasses.get(cur.name, []):
                if id(sub) not in seen:
                    seen.add(id(sub))
                    out.append(sub)
                    stack.append(sub)
        return out

    def owns(self, decl: ClassDecl, member: str, namespaces: tuple[str, ...] = ()) -> bool:
        """Does the class (its hierarchy in the project) dispose `member` somewhere? True also
        when the member is not declared where the index can see it (an unknown base class)."""
        if member in self.external_disposed:
            return True
        chain = self.base_chain(decl, namespaces)
        owner = next((c for c in chain if member in c.members), None)
        if owner is None:
            return True
        family = chain[:chain.index(owner) + 1] + self.derived(owner)
        return any(member in self.disposes(c) for c in family)


# ----------------------------------------------------------------------------- building

_PROJECTS: dict[str, ProjectIndex | None] = {}


def project_root(path: str) -> tuple[str, bool]:
    """(folder, recursive): the nearest folder above `path` holding a `.csproj` (what one
    compilation sees), else the file's own folder, not recursively."""
    cur = os.path.dirname(os.path.abspath(path))
    for _ in range(40):
        try:
            names = os.listdir(cur)
        except OSError:
            break
        if any(n.endswith(".csproj") for n in names):
            return cur, True
        if ".git" in names:
            break
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    return os.path.dirname(os.path.abspath(path)), False


_TYPE_DECL = re.compile(rb"\b(?:class|struct|interface|record)\s+([A-Za-z_]\w*)")
_SOLUTIONS: dict[str, frozenset[str]] = {}
MAX_SOLUTION_FILES = 20000


def solution_type_names(path: str) -> frozenset[str]:
    """The names of the classes declared anywhere in the solution around `path` (the folder of
    the nearest `.sln`, else of the repository), found by a regular expression, no parse. A type
    the project index does not know but the solution declares belongs to another project of the
    analyzed code: its methods may keep what they are given (README item 13 exempts only code
    that is not analyzed), so calls on it are treated as unknown calls, not as a library's."""
    cur = os.path.dirname(os.path.abspath(path))
    root = ""
    for _ in range(40):
        try:
            names = os.listdir(cur)
        except OSError:
            break
        if any(n.endswith((".sln", ".slnx")) for n in names) or ".git" in names:
            root = cur
            break
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    if not root:
        return frozenset()
    found = _SOLUTIONS.get(root)
    if found is None:
        out: set[str] = set()
        count = 0
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
            for name in files:
                if not name.endswith(".cs"):
                    continue
                count += 1
                if count > MAX_SOLUTION_FILES:
                    break
                try:
                    with open(os.path.join(folder, name), "rb") as fh:
                        out.update(m.group(1).decode() for m in _TYPE_DECL.finditer(fh.read(MAX_INDEXED_BYTES)))
                except OSError:
                    continue
        found = _SOLUTIONS[root] = frozenset(out)
    return found


def _project_folder(name: str) -> bool:
    """A subfolder holding the project's sources (not build output, packages or hidden folders)."""
    return not name.startswith(".") and name not in _SKIP_DIRS


def project_index(path: str, api_classes: frozenset[str], api_members: frozenset[str]) -> ProjectIndex | None:
    """The index of the project holding `path` (built on first use), None when too large."""
    root, recursive = project_root(path)
    key = root + ("" if recursive else os.sep + "<folder>")
    if key in _PROJECTS:
        return _PROJECTS[key]
    files = project_files(root, ".cs", _project_folder if recursive else None)
    if files is None:
        _PROJECTS[key] = None
        return None
    index = ProjectIndex(root, api_classes, api_members)
    for full in files:
        try:
            if os.path.getsize(full) > MAX_INDEXED_BYTES:
                continue
            with open(full, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        index.note_external(data)
        for decl in declarations(full, data):
            index.add(decl)
    index.link()
    _PROJECTS[key] = index
    return index


def declarations(path: str, data: bytes, root: Node | None = None) -> list[ClassDecl]:
    """The classes one file declares (members and signatures; no bodies are walked)."""
    src = prepare(data) if root is None else data
    if root is None:
        tree = parse_tree(src, parse_budget(len(src)) * INDEX_PARSE_SHARE)
        if tree is None:
            return []
        root = tree.root_node
    reader = _Reader(path, src)
    reader.scope(root, "", None)
    return reader.out


class _Reader:
    """One file's declarations."""

    def __init__(self, path: str, src: bytes):
        self.path, self.src = path, src
        self.out: list[ClassDecl] = []

    def text(self, node: Node | None) -> str:
        return text_of(self.src, node)

    def scope(self, node: Node, namespace: str, outer: ClassDecl | None) -> None:
        ns = namespace
        for child in node.named_children:
            t = child.type
            if t == "file_scoped_namespace_declaration":
                ns = self.text(child.child_by_field_id(F_NAME))
            elif t == "namespace_declaration":
                inner = self.text(child.child_by_field_id(F_NAME))
                self.scope(child.child_by_field_id(F_BODY), f"{ns}.{inner}" if ns else inner, None)
            elif t in TYPE_DECLS:
                self.type_decl(child, ns, outer)
            elif t in ("declaration_list", "preproc_if", "preproc_else", "preproc_elif"):
                self.scope(child, ns, outer)

    def type_decl(self, node: Node, ns: str, outer: ClassDecl | None) -> None:
        name = self.text(node.child_by_field_id(F_NAME))
        mods = modifiers(self.src, node)
        decl = ClassDecl(f"{outer.path}.{name}" if outer is not None else name, ns, node.type.split("_")[0],
                         files=[self.path], partial="partial" in mods, static="static" in mods,
                         spans=[(self.path, node.start_byte, node.end_byte)])
        base_list = next((c for c in node.named_children if c.type == "base_list"), None)
        for b in named(base_list):
            if b.type not in ("argument_list",):
                decl.bases.append(canon(self.text(b.child_by_field_id(F_TYPE) if b.type == "primary_constructor_base_type"
                                                  else b)))
        params = node.child_by_field_id(F_PARAMETERS)  # a record's or primary constructor's parameters
        if params is not None:
            for p in read_params(self.src, params):
                decl.members[p.name] = (p.type, False)
        self.out.append(decl)
        body = node.child_by_field_id(F_BODY)
        for member in named(body):
            self.member(member, decl, ns)

    def member(self, node: Node, decl: ClassDecl, ns: str) -> None:
        t = node.type
        if t in TYPE_DECLS:
            self.type_decl(node, ns, decl)
            return
        if t in ("preproc_if", "preproc_else", "preproc_elif"):
            for child in named(node):
                self.member(child, decl, ns)
            return
        mods = modifiers(self.src, node)
        static = "static" in mods or "const" in mods
        if t in ("field_declaration", "event_field_declaration"):
            vd = next((c for c in node.named_children if c.type == "variable_declaration"), None)
            ftype = canon(self.text(vd.child_by_field_id(F_TYPE))) if vd is not None else ""
            for v in named(vd):
                if v.type == "variable_declarator":
                    decl.members[self.text(v.child_by_field_id(F_NAME))] = (ftype, static)
        elif t == "property_declaration":
            name = self.text(node.child_by_field_id(F_NAME))
            decl.members[name] = (canon(self.text(node.child_by_field_id(F_TYPE))), static)
            if _has_accessor_code(node):
                decl.computed.add(name)
        elif t in ("method_declaration", "constructor_declaration", "operator_declaration",
                   "conversion_operator_declaration", "indexer_declaration", "event_declaration"):
            name = self.text(node.child_by_field_id(F_NAME)) if t in ("method_declaration", "constructor_declaration") else t
            body = node.child_by_field_id(F_BODY) or next((c for c in node.named_children
                                                           if c.type == "arrow_expression_clause"), None)
            if t in ("method_declaration", "constructor_declaration"):
                tparams = node.child_by_field_id(F_TYPE_PARAMETERS)
                m = MethodDecl(name, read_params(self.src, node.child_by_field_id(F_PARAMETERS)),
                               canon(self.text(node.child_by_field_id(F_RETURNS))) if t == "method_declaration" else "",
                               static, body is not None, node.start_point[0] + 1, self.path,
                               sum(1 for c in named(tparams) if c.type == "type_parameter"))
                if t == "constructor_declaration":
                    if not static:
                        decl.ctors.append(m)
                else:
                    decl.methods.setdefault(name, []).append(m)



def _has_accessor_code(prop: Node) -> bool:
    """`P { get => _p; set { _p = value; } }` or `P => x`: not an auto-property."""
    if any(c.type == "arrow_expression_clause" for c in prop.named_children):
        return True
    accessors = prop.child_by_field_id(F_ACCESSORS)
    return any(a.child_by_field_id(F_BODY) is not None or any(c.type == "arrow_expression_clause" for c in a.named_children)
               for a in named(accessors))


def read_params(src: bytes, plist: Node | None) -> list[ParamDecl]:
    """The parameters of a parameter list; `params T[] xs` is not a `parameter` node in this
    grammar but a `params` token followed by the list's own `type` and `name` fields."""
    out: list[ParamDecl] = []
    if plist is None:
        return out
    pending_params = False
    ptype = ""
    for i, p in enumerate(plist.children):
        if not p.is_named:
            if p.type == "params":
                pending_params = True
            continue
        field = plist.field_name_for_child(i)
        if pending_params and field == "type":
            ptype = canon(text_of(src, p))
            continue
        if pending_params and field == "name":
            out.append(ParamDecl(text_of(src, p), ptype, "params", False))
            pending_params = False
            continue
        if p.type != "parameter":
            continue
        words = {text_of(src, c) for c in p.children if not c.is_named}
        words |= {text_of(src, c) for c in p.named_children if c.type == "modifier"}
        mode = next((w for w in ("ref", "out", "in", "params", "this") if w in words), "")
        optional = "=" in words or any(c.type == "equals_value_clause" for c in p.named_children)
        out.append(ParamDecl(text_of(src, p.child_by_field_id(F_NAME)), canon(text_of(src, p.child_by_field_id(F_TYPE))),
                             mode, optional))
    return out


