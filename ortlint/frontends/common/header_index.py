"""The analyzed tree's own headers, without a build: macros, prototypes and class members.

Most users run `ortlint src/` without a compile database. The tree-sitter front ends then see one
file at a time; what its `#include "..."` headers declare is read here:

* function-like and object-like macro definitions (expanded like the file's own macros),
* prototypes: which parameters are `const T *` / `const T &` (a callee that only reads them
  cannot take ownership of what it is given: see `borrowed_params`),
* classes: member types, base classes and declared methods (so `session_->Run(...)` on a member
  declared in a header is known to be a method of that member's type, and `ort_api.X(...)` on a
  `const OrtApi& ort_api` inherited from a base struct is an OrtApi call),
* `typedef` / `using` aliases.

An include is looked up relative to the including file, then in the configured include folders
(`include-dirs`), then in every folder above the including file and its `include/` subfolder,
then anywhere in the analyzed tree by its trailing path. Each header is read and parsed once per
process (keyed by path, size and mtime); `visible()` merges the transitive closure of one file's
includes (depth- and count-bounded). The headers used are the file's `dependencies`, which the
per-file cache checks, so an edited header re-analyzes the files that include it.
"""
from __future__ import annotations

import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field

import tree_sitter_cpp
from tree_sitter import Language, Node, Parser, Tree

from ...fileio import read_prefix

from .source import ParseTimeout, line_start_matches, parse_limited

CPP_LANGUAGE = Language(tree_sitter_cpp.language())

MAX_HEADERS = 400  # headers merged for one file (a closure past this is cut, deterministically)
MAX_INCLUDE_DEPTH = 24
MAX_HEADER_BYTES = 2 * 1024 * 1024
MAX_ANCESTORS = 8  # folders above the including file searched for `name` and `include/name`
# Header text whose syntax trees stay kept for `take_tree`, the oldest dropped first (a tree
# takes about 15x the bytes of its text): a header is usually analyzed itself soon after the
# first file that includes it (`dir/a.cc` sorts before `dir/a.h`).
MAX_KEPT_TREE_BYTES = 1 << 20

_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*"([^"\n]+)"')  # at the start of a line (line_start_matches)
_ELABORATED = re.compile(r"^(?:struct|class|union|enum)\s+")
_SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".inl", ".inc", ".ipp", ".h++", ".cuh")


@dataclass
class MacroDef:
    """A `#define` seen in a header. `params` is None for an object-like macro."""

    name: str
    params: list[str] | None
    body: str
    variadic: bool
    path: str
    line: int


@dataclass
class ClassFacts:
    name: str  # as written (possibly qualified by the namespaces around it)
    fields: dict[str, str] = field(default_factory=dict)  # member -> declared type text
    bases: list[str] = field(default_factory=list)
    methods: set[str] = field(default_factory=set)


@dataclass
class HeaderFacts:
    """What one header declares (its own text only, not what it includes)."""

    path: str
    includes: list[str] = field(default_factory=list)
    macros: dict[str, MacroDef] = field(default_factory=dict)
    prototypes: dict[str, tuple[bool, ...]] = field(default_factory=dict)  # name -> const pointee per param
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    returns: dict[str, str] = field(default_factory=dict)  # function -> declared return type text


@dataclass
class Visible:
    """Everything one file sees through its includes (nearest definition first)."""

    headers: list[str] = field(default_factory=list)
    macros: dict[str, MacroDef] = field(default_factory=dict)
    prototypes: dict[str, tuple[bool, ...]] = field(default_factory=dict)
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    returns: dict[str, str] = field(default_factory=dict)


EMPTY = Visible()


# ----------------------------------------------------------------------------- extraction


def include_names(data: bytes) -> list[str]:
    """The names of the text's `#include "..."` lines, in order."""
    if b"include" not in data:
        return []
    return [m.group(1).decode("utf-8", "replace") for m in line_start_matches(_INCLUDE, data)]


def _text(src: bytes, node: Node | None) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace") if node is not None else ""


def _declarator_name(src: bytes, node: Node | None) -> str | None:
    """The name a declarator declares (`*p`, `&r`, `f(int)`, `a[3]`, `ns::f`), in a loop."""
    steps = 0
    while node is not None and steps < 64:
        steps += 1
        kind = node.type
        if kind in ("identifier", "field_identifier", "type_identifier", "qualified_identifier",
                    "destructor_name", "operator_name"):
            return " ".join(_text(src, node).split())
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type.endswith("declarator")
                          or c.type in ("identifier", "field_identifier", "qualified_identifier")), None)
        node = inner
    return None


def _function_declarator(node: Node | None) -> Node | None:
    steps = 0
    while node is not None and steps < 64:
        steps += 1
        if node.type == "function_declarator":
            return node
        node = node.child_by_field_name("declarator")
    return None


def method_declarator(node: Node | None) -> Node | None:
    """The function declarator of a member function's declaration; None for a data member,
    including a pointer to a function (`OrtStatus *(*CreateEp)(...)`), which is a field that
    calls go through, not a method."""
    fn = _function_declarator(node)
    if fn is None:
        return None
    inner = fn.child_by_field_name("declarator")
    return None if inner is not None and inner.type == "parenthesized_declarator" else fn


def has_const_qualifier(src: bytes, node: Node) -> bool:
    """Is one of `node`'s children the `const` qualifier? (A loop, not `any(<genexpr>)`: asked for
    every parameter and member of every header.)"""
    for c in node.children:
        if c.type == "type_qualifier" and src[c.start_byte:c.end_byte] == b"const":
            return True
    return False


def const_pointee_flags(src: bytes, params: Node | None) -> tuple[bool, ...]:
    """Per parameter: is it `const T *` or `const T &` (one level of indirection to const)?"""
    if params is None:
        return ()
    flags: list[bool] = []
    for p in params.named_children:
        if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
            continue
        const = has_const_qualifier(src, p)
        decl = p.child_by_field_name("declarator")
        indirect = decl is not None and decl.type in ("pointer_declarator", "abstract_pointer_declarator",
                                                      "reference_declarator", "abstract_reference_declarator")
        if indirect and decl.type in ("pointer_declarator", "abstract_pointer_declarator"):
            inner = decl.child_by_field_name("declarator")
            if inner is not None and inner.type in ("pointer_declarator", "abstract_pointer_declarator"):
                indirect = False  # `const T **`: the callee may write a pointer through it
            if "type_qualifier" in [c.type for c in decl.children]:
                indirect = indirect and const  # `const T * const p` stays a borrow; `T * const p` is not
        flags.append(const and indirect)
    return tuple(flags)


def _macro(src: bytes, node: Node, path: str) -> MacroDef | None:
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    if name is None:
        return None
    body = _text(src, value) if value is not None else ""
    params: list[str] | None = None
    variadic = False
    if node.type == "preproc_function_def":
        ptext = _text(src, node.child_by_field_name("parameters")) or "()"
        params = [p.strip() for p in ptext.strip("()").split(",") if p.strip()]
        variadic = bool(params) and params[-1] == "..."
        if variadic:
            params = params[:-1]
    return MacroDef(_text(src, name), params, body, variadic, path, node.start_point[0] + 1)


_CONTAINERS = ("translation_unit", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
               "preproc_elifdef", "linkage_specification", "declaration_list", "ERROR")


def collect_facts(src: bytes, root: Node, path: str, own: bool = False) -> HeaderFacts:
    """Macros, prototypes, classes and aliases declared at file level (an explicit stack: no
    recursion, whatever the nesting). Inside `#if 0` nothing counts. `own`: the analyzed file
    itself, of which the front end reads only prototypes, classes and aliases (its macros come
    from the syntax tree and the text): includes, macros and return types are not collected."""
    facts = HeaderFacts(path, includes=[] if own else include_names(src))
    stack: list[tuple[Node, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, ns = stack.pop()
        kind = node.type
        if kind in ("preproc_def", "preproc_function_def"):
            if own:
                continue
            macro = _macro(src, node, path)
            if macro is not None:
                facts.macros.setdefault(macro.name, macro)
        elif kind == "namespace_definition":
            body = node.child_by_field_name("body")
            name = _text(src, node.child_by_field_name("name"))
            if body is not None:
                stack.append((body, ns + ((name,) if name else ())))
        elif kind in ("class_specifier", "struct_specifier"):
            _collect_class(src, node, ns, facts, stack)
        elif kind in ("declaration", "field_declaration", "function_definition"):
            _collect_declaration(src, node, ns, facts, stack, returns=not own)
        elif kind in ("type_definition", "alias_declaration"):
            _collect_alias(src, node, facts, ns, stack)
        elif kind == "template_declaration":
            stack.extend([(c, ns) for c in reversed(node.named_children)])
        elif kind in _CONTAINERS:
            if kind == "preproc_if" and _text(src, node.child_by_field_name("condition")).strip() in ("0", "(0)"):
                alt = node.child_by_field_name("alternative")
                if alt is not None:
                    stack.append((alt, ns))
                continue
            stack.extend([(c, ns) for c in reversed(node.named_children)])
    return facts


def own_facts(facts: HeaderFacts, path: str) -> HeaderFacts:
    """What `collect_facts(src, root, path, own=True)` gives for a tree of which `facts` are
    `collect_facts(src, root, ...)`: `own` only leaves includes, macros and returns out."""
    return HeaderFacts(path, prototypes=dict(facts.prototypes), classes=dict(facts.classes),
                       aliases=dict(facts.aliases))


def _collect_declaration(src: bytes, node: Node, ns: tuple[str, ...], facts: HeaderFacts,
                         stack: list[tuple[Node, tuple[str, ...]]], returns: bool = True) -> None:
    type_node = node.child_by_field_name("type")
    if type_node is not None and type_node.type in ("class_specifier", "struct_specifier"):
        _collect_class(src, type_node, ns, facts, stack)
    for decl in node.children_by_field_name("declarator"):
        func = _function_declarator(decl)
        if func is None:
            continue
        name = _declarator_name(src, func.child_by_field_name("declarator"))
        if name:
            flags = const_pointee_flags(src, func.child_by_field_name("parameters"))
            facts.prototypes.setdefault(name, flags)
            facts.prototypes.setdefault(name.rsplit("::", 1)[-1], flags)
            if ns:
                facts.prototypes.setdefault("::".join(ns + (name,)), flags)
            if returns and type_node is not None:
                stars = _text(src, decl)[:func.start_byte - decl.start_byte].count("*")
                returned = " ".join(_text(src, type_node).split()) + " *" * stars
                facts.returns.setdefault("::".join(ns + (name,)) if ns else name, returned)


def _collect_alias(src: bytes, node: Node, facts: HeaderFacts, ns: tuple[str, ...],
                   stack: list[tuple[Node, tuple[str, ...]]]) -> None:
    type_node = node.child_by_field_name("type")
    if node.type == "alias_declaration":
        facts.aliases.setdefault(_text(src, node.child_by_field_name("name")), " ".join(_text(src, type_node).split()))
        return
    if type_node is not None and type_node.type in ("class_specifier", "struct_specifier"):
        _collect_class(src, type_node, ns, facts, stack)
    base = _ELABORATED.sub("", " ".join(_text(src, type_node).split()))
    if type_node is not None and type_node.type in ("class_specifier", "struct_specifier", "union_specifier",
                                                    "enum_specifier"):
        base = _text(src, type_node.child_by_field_name("name"))
    for decl in node.children_by_field_name("declarator"):
        name = _declarator_name(src, decl)
        stars = _text(src, decl).count("*")
        if name and base and not (name == base and not stars) and not _function_declarator(decl):
            facts.aliases.setdefault(name, base + " *" * stars)


def _collect_class(src: bytes, node: Node, ns: tuple[str, ...], facts: HeaderFacts,
                   stack: list[tuple[Node, tuple[str, ...]]]) -> None:
    name = _text(src, node.child_by_field_name("name"))
    body = node.child_by_field_name("body")
    if not name or body is None:
        return
    info = ClassFacts(name)
    for child in node.named_children:
        if child.type == "base_class_clause":
            for base in child.named_children:
                if base.type in ("type_identifier", "qualified_identifier", "template_type"):
                    info.bases.append(" ".join(_text(src, base).split()))
    for member in body.named_children:
        if member.type in ("field_declaration", "declaration", "function_definition"):
            type_node = member.child_by_field_name("type")
            for decl in member.children_by_field_name("declarator"):
                member_name = _declarator_name(src, decl)
                if not member_name:
                    continue
                if method_declarator(decl) is not None:
                    info.methods.add(member_name)
                    continue
                prefix = "const " if has_const_qualifier(src, member) else ""
                written = _text(src, decl)
                suffix = "".join(ch for ch in written.split(member_name, 1)[0] if ch in "*&")
                info.fields[member_name] = prefix + " ".join(_text(src, type_node).split()) + \
                    (" " + suffix if suffix else "")
        elif member.type in ("class_specifier", "struct_specifier"):
            stack.append((member, ns + (name,)))
    facts.classes.setdefault(name, info)
    if ns:
        facts.classes.setdefault("::".join(ns + (name,)), info)


# ----------------------------------------------------------------------------- the index


class HeaderIndex:
    """Resolves includes and caches each header's facts for the life of the process."""

    def __init__(self, include_dirs: tuple[str, ...] = (), roots: tuple[str, ...] = ()):
        self.include_dirs = tuple(os.path.abspath(d) for d in include_dirs)
        self.roots = tuple(os.path.abspath(r) for r in roots)
        self._facts: dict[str, tuple[tuple[int, int], HeaderFacts | None]] = {}
        self._by_tail: dict[str, list[str]] | None = None
        self._parser: Parser | None = None
        self.parsed = 0  # headers read and parsed (for measurements)
        # Resolutions and file tests of this run: the files of a folder include the same headers,
        # and a miss costs a `stat` per folder above (18 of them). `new_run` forgets them.
        self._resolved: dict[tuple[str, str], str | None] = {}
        self._is_file: dict[str, bool] = {}
        self._kept: OrderedDict[str, tuple[bytes, Tree, HeaderFacts]] = OrderedDict()  # see take_tree
        self._kept_bytes = 0

    def new_run(self) -> None:
        """Forget what resolution found (headers may have been added or removed since)."""
        self._resolved.clear()
        self._is_file.clear()
        self._kept.clear()
        self._kept_bytes = 0

    # -- resolution ------------------------------------------------------------------------

    def resolve(self, name: str, from_dir: str) -> str | None:
        """The header `#include "name"` in a file of `from_dir` means, or None."""
        key = (name, from_dir)
        try:
            return self._resolved[key]
        except KeyError:
            found = self._resolved[key] = self._resolve(name, from_dir)
            return found

    def _resolve(self, name: str, from_dir: str) -> str | None:
        isfile = self._isfile
        if os.path.isabs(name):
            return name if isfile(name) else None
        for folder in (from_dir, *self.include_dirs):
            candidate = os.path.join(folder, name)
            if isfile(candidate):
                return os.path.normpath(candidate)
        folder = from_dir
        for _ in range(MAX_ANCESTORS):
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
            for candidate in (os.path.join(folder, name), os.path.join(folder, "include", name)):
                if isfile(candidate):
                    return os.path.normpath(candidate)
        return self._in_tree(name, from_dir)

    def _isfile(self, path: str) -> bool:
        found = self._is_file.get(path)
        if found is None:
            found = self._is_file[path] = os.path.isfile(path)
        return found

    def _in_tree(self, name: str, from_dir: str) -> str | None:
        """A header anywhere in the analyzed tree whose path ends with `name` (nearest first)."""
        if not self.roots:
            return None
        if self._by_tail is None:
            self._by_tail = self._walk_roots()
        found = self._by_tail.get(os.path.basename(name), [])
        tail = os.sep + os.path.normpath(name)
        matches = [p for p in found if p.endswith(tail)]
        if not matches:
            return None
        return min(matches, key=lambda p: (-len(os.path.commonpath([p, from_dir])), p))

    def in_tree(self, path: str) -> bool:
        """Is `path` (absolute) inside the analyzed tree? Without a configured tree, nothing is."""
        return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)

    def _walk_roots(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        seen = 0
        for root in self.roots:
            if os.path.isfile(root):
                root = os.path.dirname(root)
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("node_modules", "build"))
                for f in files:
                    if f.endswith(_SOURCE_SUFFIXES):
                        out.setdefault(f, []).append(os.path.join(folder, f))
                        seen += 1
                if seen > 200_000:
                    return out
        return out

    # -- facts -------------------------------------------------------------------------------

    def facts(self, path: str) -> HeaderFacts | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_size, st.st_mtime_ns)
        cached = self._facts.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        found = self._read(path, st.st_size)
        self._facts[path] = (stamp, found)
        return found

    def _read(self, path: str, size: int) -> HeaderFacts | None:
        if size > MAX_HEADER_BYTES:
            return None
        try:
            data = read_prefix(path, MAX_HEADER_BYTES + 1)  # a regular file: a FIFO must not block
        except OSError:
            return None
        if b"\0" in data[:8192]:
            return None
        if self._parser is None:
            self._parser = Parser(CPP_LANGUAGE)
        try:
            tree = parse_limited(self._parser, data)  # the step limit of any parse (source.parse_steps)
        except (ParseTimeout, ValueError):
            return None
        self.parsed += 1
        facts = collect_facts(data, tree.root_node, path)
        self._keep_tree(path, data, tree, facts)
        return facts

    def _keep_tree(self, path: str, data: bytes, tree: Tree, facts: HeaderFacts) -> None:
        """Keep a header's tree for `take_tree`, the oldest dropped past MAX_KEPT_TREE_BYTES."""
        if len(data) > MAX_KEPT_TREE_BYTES:
            return
        old = self._kept.pop(path, None)
        if old is not None:
            self._kept_bytes -= len(old[0])
        self._kept[path] = (data, tree, facts)
        self._kept_bytes += len(data)
        while self._kept_bytes > MAX_KEPT_TREE_BYTES:
            _path, (dropped, _tree, _facts) = self._kept.popitem(last=False)
            self._kept_bytes -= len(dropped)

    def take_tree(self, path: str, data: bytes, language: Language) -> tuple[Tree, HeaderFacts] | None:
        """The syntax tree this index made of the header at `path` and the facts it read from
        it (once; they are then dropped) when `data` is that header's text byte for byte and
        `language` the C++ grammar it was parsed with: the tree a parse of `data` gives. Most
        of a tree's headers are analyzed as files too, often unchanged by the front end's
        rewriting, and parsing them again cost as much as the index's parse."""
        kept = self._kept.pop(os.path.abspath(path), None)
        if kept is None:
            return None
        self._kept_bytes -= len(kept[0])
        return (kept[1], kept[2]) if language == CPP_LANGUAGE and kept[0] == data else None

    def visible(self, path: str, data: bytes) -> Visible:
        """The facts of every header `path` includes, transitively (breadth first: a nearer
        header's definition wins), and the list of those headers."""
        includes = include_names(data)
        if not includes:
            return EMPTY
        out = Visible()
        seen = {os.path.abspath(path)}
        queue: list[tuple[str, str, int]] = [(name, os.path.dirname(os.path.abspath(path)), 1) for name in includes]
        head = 0
        while head < len(queue) and len(out.headers) < MAX_HEADERS:
            name, from_dir, depth = queue[head]
            head += 1
            header = self.resolve(name, from_dir)
            if header is None or header in seen:
                continue
            seen.add(header)
            facts = self.facts(header)
            if facts is None:
                continue
            out.headers.append(header)
            for key, value in facts.macros.items():
                out.macros.setdefault(key, value)
            for key, flags in facts.prototypes.items():
                out.prototypes.setdefault(key, flags)
            for key, cls in facts.classes.items():
                out.classes.setdefault(key, cls)
            for key, alias in facts.aliases.items():
                out.aliases.setdefault(key, alias)
            for key, returned in facts.returns.items():
                out.returns.setdefault(key, returned)
            if depth < MAX_INCLUDE_DEPTH:
                queue.extend((inc, os.path.dirname(header), depth + 1) for inc in facts.includes)
        return out


_INDEX = HeaderIndex()


def configure(include_dirs: tuple[str, ...] = (), roots: tuple[str, ...] = ()) -> None:
    """Set the include folders and the analyzed tree for this process (the runner does, once
    per run; worker processes are forked after it and inherit it). Facts of unchanged headers
    are kept across runs of the same process; what include resolution found is not."""
    global _INDEX
    include_dirs = tuple(os.path.abspath(d) for d in include_dirs)
    roots = tuple(os.path.abspath(r) for r in roots)
    if (include_dirs, roots) != (_INDEX.include_dirs, _INDEX.roots):
        old = _INDEX._facts
        _INDEX = HeaderIndex(include_dirs, roots)
        _INDEX._facts = old
    else:
        _INDEX.new_run()


def current() -> HeaderIndex:
    return _INDEX
