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

An include is resolved as a compiler resolves `#include "..."`: in the including file's own
folder first (a header beside the file wins over a same-named one elsewhere, such as a vendored
copy), then in the configured include folders (`include-dirs`: those of the analyzed file's
configuration file, then the run's), then, standing in for the include folders a build adds, by
its trailing path anywhere in the repository, nearest to the including file first.
`#include <...>` headers found the same way (but not next to the file, and never a system header
name) are the project's own, included through its include folders: after the quoted closure,
their declarations are taken (classes, aliases, return types, prototypes), not their macros. The
repository is indexed from its root (the git checkout's top, or the project root) whatever paths
a run names, so a file analyzed alone (a pre-commit hook, an editor) sees the headers a run over
its whole tree sees (issue 30: a plugin EP's `.cc` alone got 9 findings, 95 in its folder,
because the header giving its classes their `OrtApi` member was only found in the folder run).
Each header is read and parsed once per process (keyed by path, size and mtime); `visible()`
merges the transitive closure of one file's includes (depth- and count-bounded). The headers
used are the file's `dependencies`, which the per-file cache checks, so an edited header
re-analyzes the files that include it.
"""
from __future__ import annotations

import os
import re
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import chain

import tree_sitter_cpp
from tree_sitter import Language, Node, Parser, Tree

from ...fileio import read_prefix
from .decorations import blank_class_decorations, blank_declaration_heads
from .source import ParseTimeout, line_start_matches, parse_limited
from .returns_this import macro_use, methods_returning_this

CPP_LANGUAGE = Language(tree_sitter_cpp.language())

MAX_HEADERS = 400  # headers merged for one file (a closure past this is cut, deterministically)
MAX_INCLUDE_DEPTH = 24
MAX_HEADER_BYTES = 2 * 1024 * 1024
MAX_INDEXED_FILES = 200_000  # headers the repository index holds at most (a walk past this stops, sorted)
# Folders the repository index does not enter: version control and build output (copies of the
# tree's headers, made by the build) — not vendored code, whose headers the build does include.
_SKIPPED_FOLDERS = re.compile(r"\.|node_modules$|build$|build-|_build$|Build$|cmake-build-|bazel-|CMakeFiles$|out$")
# Header text whose syntax trees stay kept for `take_tree`, the oldest dropped first (a tree
# takes about 15x the bytes of its text): a header is usually analyzed itself soon after the
# first file that includes it (`dir/a.cc` sorts before `dir/a.h`).
MAX_KEPT_TREE_BYTES = 1 << 20

_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*"([^"\n]+)"')  # at the start of a line (line_start_matches)
_ANGLE_INCLUDE = re.compile(rb'#[ \t]*include[ \t]*<([^>\n]+)>')
# Headers of the C library, POSIX and Windows: `#include <string.h>` is the system's, never a
# file of the tree that happens to share its name (`src/utils/string.h`, a stub folder).
SYSTEM_HEADERS = frozenset("""
    assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h
    setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h stdlib.h
    stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h wctype.h memory.h malloc.h
    aio.h arpa/inet.h cpio.h dirent.h dlfcn.h fcntl.h fnmatch.h glob.h grp.h iconv.h langinfo.h
    libgen.h monetary.h mqueue.h netdb.h net/if.h netinet/in.h netinet/tcp.h nl_types.h poll.h
    pthread.h pwd.h regex.h sched.h search.h semaphore.h spawn.h strings.h sys/ipc.h sys/mman.h
    sys/msg.h sys/resource.h sys/select.h sys/sem.h sys/shm.h sys/socket.h sys/stat.h
    sys/statvfs.h sys/time.h sys/times.h sys/types.h sys/uio.h sys/un.h sys/utsname.h sys/wait.h
    syslog.h tar.h termios.h ulimit.h unistd.h utime.h utmpx.h wordexp.h alloca.h execinfo.h
    windows.h winsock2.h ws2tcpip.h windef.h winbase.h winnt.h objbase.h tchar.h io.h direct.h
    process.h conio.h intrin.h""".split())
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
    returns_this: set[str] = field(default_factory=set)  # methods whose body is `return this;` (returns_this.py)
    macro_uses: list[str] = field(default_factory=list)  # macros invoked as members (`DEFINE_FUNCS(T)`)
    _destructor: bool | None = field(default=None, init=False, repr=False, compare=False)

    def declares_destructor(self) -> bool:
        """Is one of the methods a destructor? Asked for every visible class of every file that
        includes the header, once the header's facts are complete: computed once."""
        found = self._destructor
        if found is None:
            found = self._destructor = any(m.startswith("~") for m in self.methods)
        return found


@dataclass
class HeaderFacts:
    """What one header declares (its own text only, not what it includes)."""

    path: str
    includes: list[str] = field(default_factory=list)
    angle_includes: list[str] = field(default_factory=list)  # `#include <...>` names
    macros: dict[str, MacroDef] = field(default_factory=dict)
    prototypes: dict[str, tuple[bool, ...]] = field(default_factory=dict)  # name -> const pointee per param
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    returns: dict[str, str] = field(default_factory=dict)  # function -> declared return type text
    ref_params: dict[str, frozenset[int]] = field(default_factory=dict)  # function -> `T *&p` parameters


@dataclass
class Visible:
    """Everything one file sees through its includes (nearest definition first)."""

    headers: list[str] = field(default_factory=list)
    macros: dict[str, MacroDef] = field(default_factory=dict)
    prototypes: dict[str, tuple[bool, ...]] = field(default_factory=dict)
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    returns: dict[str, str] = field(default_factory=dict)
    ref_params: dict[str, frozenset[int]] = field(default_factory=dict)


EMPTY = Visible()


# ----------------------------------------------------------------------------- extraction


def include_names(data: bytes) -> list[str]:
    """The names of the text's `#include "..."` lines, in order."""
    if b"include" not in data:
        return []
    return [m.group(1).decode("utf-8", "replace") for m in line_start_matches(_INCLUDE, data)]


def angle_include_names(data: bytes) -> list[str]:
    """The names of the text's `#include <...>` lines, in order, but for the system's headers
    (`SYSTEM_HEADERS`) and the standard library's (no suffix: `<memory>`, `<vector>`)."""
    if b"include" not in data:
        return []
    names = [m.group(1).decode("utf-8", "replace").strip() for m in line_start_matches(_ANGLE_INCLUDE, data)]
    return [n for n in names if n not in SYSTEM_HEADERS and n.endswith(_SOURCE_SUFFIXES)]


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
    facts = HeaderFacts(path, includes=[] if own else include_names(src),
                        angle_includes=[] if own else angle_include_names(src))
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
                       aliases=dict(facts.aliases), ref_params=dict(facts.ref_params))


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
            _record_pointer_refs(src, func, ns + tuple(name.split("::")[:-1]), name.rsplit("::", 1)[-1], facts)
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
            _note_returns_this(src, member, info)
            type_node = member.child_by_field_name("type")
            for decl in member.children_by_field_name("declarator"):
                member_name = _declarator_name(src, decl)
                if not member_name:
                    continue
                method = method_declarator(decl)
                if method is not None:
                    info.methods.add(member_name)
                    _record_pointer_refs(src, method, ns + (name,), member_name, facts)
                    const = "const " if has_const_qualifier(src, member) else ""
                    _record_method_return(src, facts, ns + (name,), member_name, const, type_node, decl, method)
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


def _record_pointer_refs(src: bytes, func: Node, scope: tuple[str, ...], name: str, facts: HeaderFacts) -> None:
    """The parameters of a declared function (or method) that are references to pointers
    (`void *&obj`, `T*& out`): the callee assigns the caller's variable through them, so a caller
    in another file passes the variable itself, as one that sees the definition does. Without
    them a header-declared `grow(void *&obj)` was read as writing `*obj`: the caller's block
    looked overwritten by the new one and lost. Keyed by the bare, the scope-qualified and the
    last-scope-qualified name (`Class::method`), as the C++ model looks calls up."""
    params = func.child_by_field_name("parameters")
    if params is None:
        return
    indexes = frozenset(i for i, p in enumerate(c for c in params.named_children if c.type == "parameter_declaration")
                        if _is_pointer_reference(src, p))
    if not indexes:
        return
    keys = {name, "::".join(scope + (name,))}
    if scope:
        keys.add(f"{scope[-1]}::{name}")
    for key in keys:
        facts.ref_params[key] = facts.ref_params.get(key, frozenset()) | indexes


def _is_pointer_reference(src: bytes, param: Node) -> bool:
    """`T *&p`: the declarator's punctuation before the name is pointers then one `&`."""
    decl = param.child_by_field_name("declarator")
    if decl is None:
        return False
    text = _text(src, decl)
    name = _declarator_name(src, decl)
    marks = "".join(ch for ch in (text.split(name, 1)[0] if name else text) if ch in "*&")
    return marks.endswith("*&") and marks.count("&") == 1


def _note_returns_this(src: bytes, member: Node, info: ClassFacts) -> None:
    """A member defining a method that returns `this`, or invoking a macro (resolved against
    the macros the includer sees, by the file model)."""
    if member.type == "function_definition":
        if b"this" in src[member.start_byte:member.end_byte]:
            info.returns_this |= methods_returning_this(_text(src, member))
        return
    first = src[member.start_byte:member.start_byte + 1]
    if not (first.isupper() or first == b"_"):  # (most members are not macro invocations)
        return
    used = macro_use(_text(src, member))
    if used is not None:
        info.macro_uses.append(used)


def _record_method_return(src: bytes, facts: HeaderFacts, owner: tuple[str, ...], member: str, const: str,
                          type_node: Node | None, decl: Node, func: Node) -> None:
    """`Class::method` -> its declared return type (`static std::unique_ptr<OgaModel> Create(...)`
    in a wrapper class): `auto m = OgaModel::Create(path);` has that type. Qualified names only:
    a method's short name would shadow free functions of the same name."""
    if type_node is None or member.startswith(("~", "operator")) or member == owner[-1]:
        return
    stars = _text(src, decl)[:func.start_byte - decl.start_byte].count("*")
    returned = const + " ".join(_text(src, type_node).split()) + " *" * stars
    facts.returns.setdefault("::".join(owner + (member,)), returned)
    if len(owner) > 1:
        facts.returns.setdefault(f"{owner[-1]}::{member}", returned)


# ----------------------------------------------------------------------------- the index


class HeaderIndex:
    """Resolves includes and caches each header's facts for the life of the process."""

    def __init__(self, include_dirs: tuple[str, ...] = (), roots: tuple[str, ...] = (),
                 scoped: tuple[tuple[str, tuple[str, ...]], ...] = ()):
        self.include_dirs = tuple(os.path.abspath(d) for d in include_dirs)
        self.roots = tuple(os.path.abspath(r) for r in roots)
        # (folder, include folders) of configuration files below the run's: deepest first
        self.scoped = tuple(sorted(((os.path.abspath(f), tuple(os.path.abspath(d) for d in dirs))
                                    for f, dirs in scoped), key=lambda item: -len(item[0])))
        self._facts: dict[str, tuple[tuple[int, int], HeaderFacts | None]] = {}
        self._by_tail: dict[str, list[str]] | None = None
        self._parser: Parser | None = None
        self.parsed = 0  # headers read and parsed (for measurements)
        # Resolutions and file tests of this run: the files of a folder include the same headers,
        # and a miss costs a `stat` per folder above (18 of them). `new_run` forgets them.
        self._resolved: dict[tuple[str, str, tuple[str, ...]], str | None] = {}
        self._is_file: dict[str, bool] = {}
        # The same, for `visible`: by (including folder, include folders, `<...>`), name -> header
        self._resolved_from: dict[tuple[str, tuple[str, ...], bool], dict[str, str | None]] = {}
        # Each header's facts and folder as this run first found them (`visible` asks for the same
        # headers for every file: one `stat` per header and run, not one per including file)
        self._run_facts: dict[str, tuple[HeaderFacts | None, str]] = {}
        self._sites: dict[tuple[str, bool], str | None] = {}  # see `macro_site`
        self._kept: OrderedDict[str, tuple[bytes, Tree, HeaderFacts]] = OrderedDict()  # see take_tree
        self._kept_bytes = 0
        # folder -> header in it -> (a header beside it that includes it, where that `#include` is)
        self._includers: dict[str, dict[str, list[tuple[str, int]]]] = {}
        self._prefixes: dict[tuple[str, int], tuple[tuple[int, int], HeaderFacts | None]] = {}

    def new_run(self) -> None:
        """Forget what resolution found (headers may have been added or removed since)."""
        self._resolved.clear()
        self._is_file.clear()
        self._resolved_from.clear()
        self._run_facts.clear()
        self._sites.clear()
        self._kept.clear()
        self._kept_bytes = 0
        self._includers.clear()

    # -- resolution ------------------------------------------------------------------------

    def include_dirs_for(self, path: str) -> tuple[str, ...]:
        """The include folders of an analyzed file (absolute): its configuration file's, then the run's."""
        for folder, dirs in self.scoped:
            if path.startswith(folder.rstrip(os.sep) + os.sep):
                return dirs + tuple(d for d in self.include_dirs if d not in dirs)
        return self.include_dirs

    def resolve(self, name: str, from_dir: str, include_dirs: tuple[str, ...] | None = None) -> str | None:
        """The header `#include "name"` in a file of `from_dir` means, or None (`include_dirs`:
        those of the analyzed file whose includes are being followed; default: the run's)."""
        dirs = self.include_dirs if include_dirs is None else include_dirs
        key = (name, from_dir, dirs)
        try:
            return self._resolved[key]
        except KeyError:
            found = self._resolved[key] = self._resolve(name, from_dir, dirs)
            return found

    def resolve_angle(self, name: str, from_dir: str, include_dirs: tuple[str, ...] | None = None) -> str | None:
        """The header of the tree `#include <name>` in a file of `from_dir` means, or None: as
        for `"name"` (`resolve`), but not next to the including file (a compiler looks for `<...>`
        only in its include folders, which for a project's own headers are folders of the tree)."""
        dirs = self.include_dirs if include_dirs is None else include_dirs
        key = (f"<{name}>", from_dir, dirs)
        try:
            return self._resolved[key]
        except KeyError:
            found = self._resolved[key] = self._resolve(name, from_dir, dirs, beside=False)
            return found

    def _resolve(self, name: str, from_dir: str, include_dirs: tuple[str, ...], beside: bool = True) -> str | None:
        """The including file's folder (not for `<...>`), the include folders, then the repository by name."""
        isfile = self._isfile
        if os.path.isabs(name):
            return name if isfile(name) else None
        for folder in ((from_dir,) if beside else ()) + include_dirs:
            candidate = os.path.join(folder, name)
            if isfile(candidate):
                return os.path.normpath(candidate)
        return self._in_tree(name, from_dir)

    def _isfile(self, path: str) -> bool:
        found = self._is_file.get(path)
        if found is None:
            found = self._is_file[path] = os.path.isfile(path)
        return found

    def _in_tree(self, name: str, from_dir: str) -> str | None:
        """A header anywhere in the repository whose path ends with `name`: the nearest to the
        including folder (the longest common folder), then the shallowest, then by name."""
        if not self.roots:
            return None
        if self._by_tail is None:
            self._by_tail = self._walk_roots()
        found = self._by_tail.get(os.path.basename(name), [])
        tail = os.sep + os.path.normpath(name)
        matches = [p for p in found if p.endswith(tail)]
        if not matches:
            return None
        return min(matches, key=lambda p: (-len(os.path.commonpath([p, from_dir])), p.count(os.sep), p))

    def in_tree(self, path: str) -> bool:
        """Is `path` (absolute) inside the analyzed tree? Without a configured tree, nothing is."""
        return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots)

    def macro_site(self, header: str, analyzed: str) -> str | None:
        """`header` spelled as a finding at one of its `#define`s names it (`spelled_like`) when
        it is inside the analyzed tree; None for a header outside it (an SDK's macro is not the
        tree's to fix). Asked for every function-like macro every file sees: kept for the run
        (the answer depends on the header, whether `analyzed` is absolute, and the current folder)."""
        key = (header, os.path.isabs(analyzed))
        try:
            return self._sites[key]
        except KeyError:
            site = self._sites[key] = spelled_like(header, analyzed) if self.in_tree(os.path.abspath(header)) else None
            return site

    def _walk_roots(self) -> dict[str, list[str]]:
        """Header file names -> their paths in the repositories (links to folders not followed)."""
        out: dict[str, list[str]] = {}
        seen = 0
        for root in self.roots:
            if os.path.isfile(root):
                root = os.path.dirname(root)
            for folder, dirs, files in os.walk(root):
                dirs[:] = sorted(d for d in dirs if not _SKIPPED_FOLDERS.match(d))
                for f in sorted(files):
                    if f.endswith(_SOURCE_SUFFIXES):
                        out.setdefault(f, []).append(os.path.join(folder, f))
                        seen += 1
                if seen > MAX_INDEXED_FILES:
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
        parsed = self._parse(data, path)
        if parsed is None:
            return None
        data, heads, tree, facts = parsed
        if heads is data:
            self._keep_tree(path, data, tree, facts)
        return facts

    def _parse(self, data: bytes, path: str) -> tuple[bytes, bytes, Tree, HeaderFacts] | None:
        """(the text as the front ends read it, the text parsed, its tree, its facts) of a header's text."""
        data = blank_class_decorations(data)  # as the front ends read it (a kept tree is theirs)
        if self._parser is None:
            self._parser = Parser(CPP_LANGUAGE)
        try:
            tree = parse_limited(self._parser, data)  # the step limit of any parse (source.parse_steps)
            heads = blank_declaration_heads(data) if tree.root_node.has_error else data
            if heads != data:  # `DECO TYPE *f(`: read as the front ends read it after their first parse
                tree = parse_limited(self._parser, heads)
        except (ParseTimeout, ValueError):
            return None
        self.parsed += 1
        return data, heads, tree, collect_facts(heads, tree.root_node, path)

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
        header's definition wins), and the list of those headers.

        First the closure of the `#include "..."` lines, everything taken. Then the headers of
        the tree that `#include <...>` lines name (a project's own headers included through its
        include folders: `#include <ort_genai.h>` in its tests) and what they include, for their
        declarations only (classes, aliases, return types, prototypes): their macros are a
        library's business, described by `[[macro]]` shapes where they matter. What the first
        part found always wins."""
        includes = include_names(data)
        angle = angle_include_names(data)
        here = os.path.dirname(os.path.abspath(path))
        includers = self.includers(os.path.abspath(path)) if path.endswith(_SOURCE_SUFFIXES) else []
        if not includes and not angle and not includers:
            return EMPTY
        out = Visible()
        seen = {os.path.abspath(path)}
        dirs = self.include_dirs_for(os.path.abspath(path))
        later: list[_Includes] = [(angle, here, 1, True)]
        found: list[HeaderFacts] = []
        self._closure(out.headers, found, seen, dirs, [(includes, here, 1, False)], later, True)
        quoted = len(found)
        self._closure(out.headers, found, seen, dirs, later, later, False)
        self._includer_closure(out.headers, found, seen, dirs, includers)
        out.macros = _first_wins([f.macros for f in found[:quoted]])
        out.prototypes = _first_wins([f.prototypes for f in found])
        out.classes = _first_wins([f.classes for f in found])
        out.aliases = _first_wins([f.aliases for f in found])
        out.returns = _first_wins([f.returns for f in found])
        out.ref_params = _first_wins([f.ref_params for f in found])
        return out

    def includers(self, header: str) -> list[tuple[str, int]]:
        """The headers beside `header` (absolute) that include it by its bare name (`#include
        "x_inline.h"`, which a compiler resolves beside the includer first), with the offset of
        that `#include`: a header written to be included by another one only (ORT's
        `onnxruntime_cxx_inline.h`, included at the end of `onnxruntime_cxx_api.h`, defines the
        members of classes it never declares) is read in the includer's context."""
        folder = os.path.dirname(header)
        table = self._includers.get(folder)
        if table is None:
            table = self._includers[folder] = self._scan_includers(folder)
        return table.get(header, [])

    def _scan_includers(self, folder: str) -> dict[str, list[tuple[str, int]]]:
        """Header -> (header of the same folder including it by bare name, offset), for one folder."""
        out: dict[str, list[tuple[str, int]]] = {}
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return out
        for name in names:
            includer = os.path.join(folder, name)
            if not name.endswith(_SOURCE_SUFFIXES) or not self._isfile(includer):
                continue
            try:
                data = read_prefix(includer, MAX_HEADER_BYTES + 1)
            except OSError:
                continue
            if len(data) > MAX_HEADER_BYTES or b"include" not in data:
                continue
            for m in line_start_matches(_INCLUDE, data):
                target = m.group(1).decode("utf-8", "replace")
                if "/" in target or "\\" in target or target == name:
                    continue
                header = os.path.join(folder, target)
                if self._isfile(header):
                    out.setdefault(header, []).append((includer, m.start()))
        return out

    def _includer_closure(self, headers: list[str], found: list[HeaderFacts], seen: set[str], dirs: tuple[str, ...],
                          includers: list[tuple[str, int]]) -> None:
        """What the includers of a header declare before their `#include` of it, and what those
        parts include: declarations only (classes, aliases, return types, prototypes), after
        everything the header's own includes give."""
        queue: list[_Includes] = []
        for includer, offset in includers:
            if includer in seen or len(headers) >= MAX_HEADERS:
                continue
            facts = self._prefix_facts(includer, offset)
            if facts is None:
                continue
            seen.add(includer)
            headers.append(includer)
            found.append(facts)
            folder = os.path.dirname(includer)
            queue += [(facts.includes, folder, 2, False), (facts.angle_includes, folder, 2, True)]
        if queue:
            self._closure(headers, found, seen, dirs, queue, queue, False)

    def _prefix_facts(self, path: str, offset: int) -> HeaderFacts | None:
        """The facts of a header's text before `offset` (kept while the file is unchanged)."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_size, st.st_mtime_ns)
        cached = self._prefixes.get((path, offset))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            data = read_prefix(path, offset)
        except OSError:
            data = b""
        parsed = self._parse(data[:offset], path) if b"\0" not in data[:8192] else None
        facts = parsed[3] if parsed is not None else None
        self._prefixes[(path, offset)] = (stamp, facts)
        return facts

    def _closure(self, headers: list[str], found: list[HeaderFacts], seen: set[str], dirs: tuple[str, ...],
                 queue: list["_Includes"], angle: list["_Includes"], with_macros: bool) -> None:
        """The headers `queue` names and those they include (breadth first), appended to
        `headers` and their facts to `found` (`visible` merges them, a nearer header's definition
        first). With macros (the quoted closure), `#include <...>` lines met on the way go to
        `angle` for the second part; without (the second part), they are followed like the rest.
        The queue holds the include lines of one file at a time, in order."""
        head = 0
        while head < len(queue) and len(headers) < MAX_HEADERS:
            names, from_dir, depth, is_angle = queue[head]
            head += 1
            key = (from_dir, dirs, is_angle)
            resolved = self._resolved_from.get(key)
            if resolved is None:
                resolved = self._resolved_from[key] = {}
            for name in names:
                if len(headers) >= MAX_HEADERS:
                    return
                try:
                    header = resolved[name]
                except KeyError:
                    header = resolved[name] = self.resolve_angle(name, from_dir, dirs) if is_angle \
                        else self.resolve(name, from_dir, dirs)
                if header is None or header in seen:
                    continue
                seen.add(header)
                entry = self._run_facts.get(header)
                if entry is None:
                    entry = self._run_facts[header] = (self.facts(header), os.path.dirname(header))
                facts, folder = entry
                if facts is None:
                    continue
                headers.append(header)
                found.append(facts)
                if depth < MAX_INCLUDE_DEPTH:
                    if facts.includes:
                        queue.append((facts.includes, folder, depth + 1, False))
                    if facts.angle_includes:
                        (queue if not with_macros else angle).append((facts.angle_includes, folder, depth + 1, True))


def _first_wins(layers: list[dict]) -> dict:
    """The layers merged, the first layer holding a key giving its value, keys in the order they
    first appear: what `setdefault` of every item, layer after layer, gives. Done with dict
    operations (no Python step per key): a file of a large tree sees thousands of names from
    hundreds of headers, and the per-key loop was a tenth of its parse."""
    if not layers:
        return {}
    merged = dict.fromkeys(chain.from_iterable(layers))  # every key, in order of first appearance
    for layer in reversed(layers):
        merged.update(layer)  # existing keys keep their place; the nearest layer writes last
    return merged


_Includes = tuple[list[str], str, int, bool]  # (names as written, folder of the includer, depth, `<...>`)


def spelled_like(header: str, analyzed: str) -> str:
    """A header's path (absolute, as resolved) spelled as the analyzed file's path is: relative to
    the current folder when that one is relative and the header is inside the current folder, so
    a finding at a header's `#define` names it as a run over the header itself does."""
    if os.path.isabs(analyzed) or not os.path.isabs(header):
        return header
    rel = os.path.relpath(header)
    return header if rel == ".." or rel.startswith(".." + os.sep) else rel


_INDEX = HeaderIndex()


def configure(include_dirs: tuple[str, ...] = (), roots: tuple[str, ...] = (),
              scoped: tuple[tuple[str, tuple[str, ...]], ...] = ()) -> None:
    """Set the include folders and the repositories (their root folders) for this process (the
    runner does, once per run; worker processes are forked after it and inherit it). Facts of
    unchanged headers are kept across runs of the same process; what include resolution found
    is not."""
    global _INDEX
    fresh = HeaderIndex(include_dirs, roots, scoped)
    if (fresh.include_dirs, fresh.roots, fresh.scoped) != (_INDEX.include_dirs, _INDEX.roots, _INDEX.scoped):
        fresh._facts = _INDEX._facts
        _INDEX = fresh
    else:
        _INDEX.new_run()


def current() -> HeaderIndex:
    return _INDEX
