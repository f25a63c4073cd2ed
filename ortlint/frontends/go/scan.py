"""What the Go front end learns about a whole file before lowering any function: the import
names of the onnxruntime_go binding and of other packages, the declared struct types with their
field types, every function's and method's result count, which fields a struct's own methods
destroy, and which struct types are cleaned up only by a finalizer.

Kept apart from the lowering so that each function can be lowered knowing its callees and the
types it stores into (a store into a field of a finalizer-only struct is not an escape)."""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field

import tree_sitter_go
from tree_sitter import Language, Node

from ...fileio import read_prefix
from ..common.trees import walk  # noqa: F401  (re-exported: the front end's modules import it from here)

GO_LANGUAGE = Language(tree_sitter_go.language())
BINDING_PATH = "github.com/yalue/onnxruntime_go"
BINDING_PACKAGE = "onnxruntime_go"
ORT = "ort"  # the name policy entries give the binding, whatever the file imports it as
BUILTIN_TYPES = frozenset({
    "bool", "byte", "rune", "string", "error", "int", "int8", "int16", "int32", "int64", "uint", "uint8",
    "uint16", "uint32", "uint64", "uintptr", "float32", "float64", "complex64", "complex128", "any"})
_CLEANUP_METHODS = (b"Destroy", b"Close")


@dataclass
class FileScan:
    """File-level facts the lowering of every function needs."""

    src: bytes
    package: str = ""
    dot_binding: bool = False
    ort_aliases: set[str] = field(default_factory=set)
    imports: dict[str, str] = field(default_factory=dict)  # local name -> last path element
    results: dict[str, int] = field(default_factory=dict)  # "f" / "T.M" -> number of results
    collection_results: dict[str, frozenset[int]] = field(default_factory=dict)  # "f" / "T.M" -> slice/map results
    structs: dict[str, dict[str, str]] = field(default_factory=dict)  # T -> field -> normalized type
    interfaces: set[str] = field(default_factory=set)
    methods: dict[str, set[str]] = field(default_factory=dict)  # T -> method names
    owned_fields: dict[str, set[str]] = field(default_factory=dict)  # T -> fields its methods destroy
    finalized: set[str] = field(default_factory=set)  # struct types given to runtime.SetFinalizer
    globals: dict[str, str] = field(default_factory=dict)  # package-level var -> normalized type
    variadic: dict[str, int] = field(default_factory=dict)  # "f" / "T.M" -> index of its `...` parameter
    package_binding: bool = False  # another file of the package imports the binding
    package_consulted: bool = False  # a call was bound by what the package's other files import

    @property
    def is_binding(self) -> bool:
        """The file belongs to the binding itself, or dot-imports it: its unqualified calls are
        the binding's."""
        return self.package == BINDING_PACKAGE or self.dot_binding

    @property
    def imports_binding(self) -> bool:
        """The file itself can name the binding (imports it, dot-imports it, or is it)."""
        return self.is_binding or bool(self.ort_aliases)

    def may_hold_binding(self) -> bool:
        """Whether a value of unknown type here can be a binding object, so that a method call
        on it is read as the binding's method (`x.Clone()` as Tensor.Clone): only where the file
        or another file of its package imports the binding. A package that never imports it
        cannot get a binding object from its own code (a function returning one would name
        its type), so its `path.Clone()` is its own method. Notes when the answer came from
        the other files (the IR then depends on them)."""
        if self.imports_binding:
            return True
        self.package_consulted = True
        return self.package_binding

    def text(self, node: Node | None) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace") if node is not None else ""

    # ------------------------------------------------------------------ types

    def norm_type(self, node: Node | None) -> str:
        """A type as the lowering compares it: `*ort.Tensor[float32]` -> `ort.Tensor`,
        `*detector` -> `detector`, `sync.Pool` -> `sync.Pool`, `[]T` -> `[]T`."""
        if node is None:
            return ""
        t = node.type
        if t in ("pointer_type", "parenthesized_type"):
            inner = node.named_children
            return self.norm_type(inner[0]) if inner else ""
        if t == "generic_type":
            return self.norm_type(node.child_by_field_name("type"))
        if t == "qualified_type":
            pkg = self.text(node.child_by_field_name("package"))
            name = self.text(node.child_by_field_name("name"))
            if pkg in self.ort_aliases:
                return f"{ORT}.{name}"
            return f"{self.imports.get(pkg, pkg)}.{name}"
        if t == "type_identifier":
            name = self.text(node)
            if self.is_binding and name[:1].isupper() and name not in self.structs:
                return f"{ORT}.{name}"
            return name
        if t in ("slice_type", "array_type", "implicit_length_array_type"):
            return "[]" + self.norm_type(node.child_by_field_name("element"))
        if t == "map_type":
            return "map[]" + self.norm_type(node.child_by_field_name("value"))
        if t == "channel_type":
            return "chan"
        if t == "function_type":
            return "func"
        return self.text(node)

    def is_local_struct(self, type_name: str) -> bool:
        """A named type of this package (declared here or in another file of the package)."""
        return bool(type_name) and "." not in type_name and not type_name.startswith(("[", "map[", "chan", "func")) \
            and type_name not in BUILTIN_TYPES and type_name not in self.interfaces

    def field_type(self, struct: str, name: str) -> str:
        return self.structs.get(struct, {}).get(name, "")

    def non_owning(self, struct: str, name: str) -> bool:
        """A field of a struct whose only cleanup is a finalizer, and which its methods never
        destroy: storing an object there does not hand it to anyone who destroys it."""
        return struct in self.finalized and name not in self.owned_fields.get(struct, set())

    # ------------------------------------------------------------------ reading the file

    def read(self, root: Node) -> list[Node]:
        """Collect the file-level facts; returns the function and method declarations."""
        decls: list[Node] = []
        for node in root.named_children:
            t = node.type
            if t == "package_clause":
                name = next((c for c in node.named_children if c.type == "package_identifier"), None)
                self.package = self.text(name)
            elif t == "import_declaration":
                for spec in walk(node):
                    if spec.type == "import_spec":
                        self.read_import(spec)
            elif t == "type_declaration":
                for spec in node.named_children:
                    if spec.type == "type_spec":
                        self.read_type(spec)
            elif t == "var_declaration":
                decls.append(node)
                for spec in walk(node):
                    if spec.type == "var_spec":
                        vtype = self.norm_type(spec.child_by_field_name("type"))
                        names = spec.children_by_field_name("name")
                        value = spec.child_by_field_name("value")
                        values = value.named_children if value is not None else []
                        for i, name in enumerate(names):
                            if not vtype and len(values) == len(names):
                                self.globals[self.text(name)] = self.expr_type(values[i], {})
                            else:
                                self.globals[self.text(name)] = vtype
            elif t in ("function_declaration", "method_declaration"):
                decls.append(node)
        funcs = [d for d in decls if d.type != "var_declaration"]
        for node in funcs:
            self.read_signature(node)
        for node in funcs:
            self.read_cleanup(node)
        return decls

    def read_import(self, spec: Node) -> None:
        path = self.text(spec.child_by_field_name("path")).strip('"`')
        alias_node = spec.child_by_field_name("name")
        alias = self.text(alias_node) if alias_node is not None else path.rsplit("/", 1)[-1]
        if alias == "." and path == BINDING_PATH:
            self.dot_binding = True  # `import . "github.com/yalue/onnxruntime_go"`
            return
        if alias in ("_", "."):
            return
        if path == BINDING_PATH:
            self.ort_aliases.add(alias if alias_node is not None else BINDING_PACKAGE)
        else:
            last = path.rsplit("/", 1)[-1]
            self.imports[alias] = last

    def read_type(self, spec: Node) -> None:
        name = self.text(spec.child_by_field_name("name"))
        body = spec.child_by_field_name("type")
        if body is None:
            return
        if body.type == "interface_type":
            self.interfaces.add(name)
            return
        if body.type != "struct_type":
            return
        fields: dict[str, str] = {}
        for decl in walk(body):
            if decl.type == "field_declaration":
                ftype = self.norm_type(decl.child_by_field_name("type"))
                names = decl.children_by_field_name("name")
                for n in names:
                    fields[self.text(n)] = ftype
                if not names:  # embedded field: named after its type
                    fields[ftype.rsplit(".", 1)[-1]] = ftype
        self.structs[name] = fields

    def receiver(self, node: Node) -> tuple[str, str]:
        """(receiver name, receiver type) of a method declaration."""
        recv = node.child_by_field_name("receiver")
        decl = next((c for c in recv.named_children if c.type == "parameter_declaration"), None) if recv else None
        if decl is None:
            return "", ""
        name = decl.child_by_field_name("name")
        return self.text(name) if name is not None else "", self.norm_type(decl.child_by_field_name("type"))

    def function_name(self, node: Node) -> str:
        name = self.text(node.child_by_field_name("name"))
        if node.type == "method_declaration":
            return f"{self.receiver(node)[1]}.{name}"
        return name

    def read_signature(self, node: Node) -> None:
        name = self.function_name(node)
        self.results[name] = result_count(node.child_by_field_name("result"))
        collections = self.collection_result_indices(node.child_by_field_name("result"))
        if collections:
            self.collection_results[name] = collections
        params = node.child_by_field_name("parameters")
        index = 1 if node.type == "method_declaration" else 0  # a method's receiver is argument 0
        for p in params.named_children if params is not None else ():
            if p.type == "variadic_parameter_declaration":
                self.variadic[name] = index
            elif p.type == "parameter_declaration":
                index += max(1, len(p.children_by_field_name("name")))
        if node.type == "method_declaration":
            _recv, rtype = self.receiver(node)
            self.methods.setdefault(rtype, set()).add(self.text(node.child_by_field_name("name")))

    def collection_result_indices(self, result: Node | None) -> frozenset[int]:
        """Which results of a signature are slices or maps (`([]ort.Value, error)` -> {0}): a
        local declared from such a call is a collection, whose elements are what the callee
        made, like a local declared `var outputs []ort.Value`."""
        if result is None:
            return frozenset()
        if result.type != "parameter_list":
            return frozenset({0}) if self.norm_type(result).startswith(("[]", "map[")) else frozenset()
        out, index = set(), 0
        for p in result.named_children:
            if p.type not in ("parameter_declaration", "variadic_parameter_declaration"):
                continue
            count = max(1, len(p.children_by_field_name("name")))
            if self.norm_type(p.child_by_field_name("type")).startswith(("[]", "map[")):
                out.update(range(index, index + count))
            index += count
        return frozenset(out)

    def read_cleanup(self, node: Node) -> None:
        """Fields a method destroys (`r.f.Destroy()`, a loop destroying the elements of `r.f`),
        and struct types handed to runtime.SetFinalizer (functions given to SetFinalizer are
        not cleanup: finalizers are not guaranteed to run)."""
        body = node.child_by_field_name("body")
        if body is None:
            return
        text = self.src[body.start_byte:body.end_byte]
        finalizer = b"SetFinalizer" in text
        recv, rtype = self.receiver(node) if node.type == "method_declaration" else ("", "")
        if not finalizer and not (recv and (b".Destroy(" in text or b".Close(" in text)):
            return  # nothing to learn: most functions are skipped without a walk
        local_types = self.declared_types(node) if finalizer else {}
        stack = [body]
        while stack:
            n = stack.pop()
            if n.type == "call_expression" and self.is_set_finalizer(n):
                args = [a for a in n.child_by_field_name("arguments").named_children if a.type != "comment"]
                if args:
                    self.finalized.add(self.expr_type(args[0], local_types))
                continue  # the finalizer function's cleanup does not count
            if recv and n.type == "call_expression":
                fn = n.child_by_field_name("function")
                if fn is not None and fn.type == "selector_expression" and \
                        self.src[fn.child_by_field_name("field").start_byte:fn.end_byte] in _CLEANUP_METHODS:
                    owner = fn.child_by_field_name("operand")
                    f = self.field_of(owner, recv)
                    if f:
                        self.owned_fields.setdefault(rtype, set()).add(f)
            if recv and n.type == "range_clause" and b".Destroy()" in self.src[n.parent.start_byte:n.parent.end_byte]:
                f = self.field_of(n.child_by_field_name("right"), recv)
                if f:
                    self.owned_fields.setdefault(rtype, set()).add(f)
            stack.extend(n.named_children)

    def field_of(self, node: Node | None, recv: str) -> str:
        """`recv.f` (also `recv.f[i]`) -> "f"."""
        while node is not None and node.type in ("index_expression", "parenthesized_expression"):
            node = node.child_by_field_name("operand") or (node.named_children[0] if node.named_children else None)
        if node is not None and node.type == "selector_expression":
            operand = node.child_by_field_name("operand")
            if operand is not None and operand.type == "identifier" and self.text(operand) == recv:
                return self.text(node.child_by_field_name("field"))
        return ""

    def is_set_finalizer(self, call: Node) -> bool:
        fn = call.child_by_field_name("function")
        return fn is not None and fn.type == "selector_expression" and \
            self.text(fn.child_by_field_name("field")) == "SetFinalizer" and \
            self.imports.get(self.text(fn.child_by_field_name("operand"))) == "runtime"

    def declared_types(self, fn: Node) -> dict[str, str]:
        """Names declared in a function with an evident type: parameters, the receiver,
        `var x T`, `x := &T{...}`, `x := T{...}` (enough to tell which struct a name holds)."""
        out: dict[str, str] = {}
        if fn.type == "method_declaration":
            name, rtype = self.receiver(fn)
            if name:
                out[name] = rtype
        for plist in (fn.child_by_field_name("parameters"),):
            for p in plist.named_children if plist is not None else ():
                if p.type in ("parameter_declaration", "variadic_parameter_declaration"):
                    ptype = self.norm_type(p.child_by_field_name("type"))
                    for n in p.children_by_field_name("name"):
                        out[self.text(n)] = ptype
        body = fn.child_by_field_name("body")
        for n in walk(body) if body is not None else ():
            if n.type == "var_spec" and n.child_by_field_name("type") is not None:
                vtype = self.norm_type(n.child_by_field_name("type"))
                for name in n.children_by_field_name("name"):
                    out.setdefault(self.text(name), vtype)
            elif n.type == "short_var_declaration":
                left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                if left is None or right is None:
                    continue
                names, values = left.named_children, right.named_children
                if len(names) == len(values):
                    for name, value in zip(names, values):
                        vt = self.expr_type(value, {})
                        if vt:
                            out.setdefault(self.text(name), vt)
        return out

    def expr_type(self, node: Node, local_types: dict[str, str]) -> str:
        """The evident type of an expression, or ""."""
        t = node.type
        if t == "identifier":
            name = self.text(node)
            return local_types.get(name) or self.globals.get(name, "")
        if t == "unary_expression":
            return self.expr_type(node.child_by_field_name("operand"), local_types)
        if t == "composite_literal":
            return self.norm_type(node.child_by_field_name("type"))
        if t == "parenthesized_expression" and node.named_children:
            return self.expr_type(node.named_children[0], local_types)
        if t == "type_assertion_expression":
            return self.norm_type(node.child_by_field_name("type"))
        if t == "call_expression":  # `log.New(...)`: a package's New makes its type
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "selector_expression" and self.text(fn.child_by_field_name("field")) == "New":
                pkg = self.text(fn.child_by_field_name("operand"))
                if pkg in self.imports and self.imports[pkg] == "log":
                    return "log.Logger"
            return ""
        if t == "selector_expression":
            operand = node.child_by_field_name("operand")
            base = self.expr_type(operand, local_types) if operand is not None else ""
            return self.field_type(base, self.text(node.child_by_field_name("field")))
        return ""


def result_count(result: Node | None) -> int:
    if result is None:
        return 0
    if result.type != "parameter_list":
        return 1
    count = 0
    for p in result.named_children:
        if p.type in ("parameter_declaration", "variadic_parameter_declaration"):
            count += max(1, len(p.children_by_field_name("name")))
    return count


_FUNC_HEAD = re.compile(rb"^func\s*(?:\(\s*(?:\w+\s+)?\*?\s*(\w+)[^)]*\)\s*)?(\w+)\s*(?:\[[^\]]*\])?\s*\(", re.M)


def package_variadics(path: str) -> dict[str, int]:
    """Variadic functions and methods declared in the other .go files of the file's folder (the
    same package): `f(a, b, c)` of `func f(x int, rest ...T)` packs b and c into one slice."""
    return dict(_package_facts(path)[0])


def package_imports_binding(path: str, package: str) -> bool:
    """Some .go file of the file's folder declaring package `package` imports the binding (a
    `package foo_test` file's imports do not reach package foo)."""
    return package in _package_facts(path)[1]


def _package_facts(path: str) -> tuple[tuple[tuple[str, int], ...], frozenset[str]]:
    folder = os.path.dirname(os.path.abspath(path))
    try:
        names = tuple(sorted(n for n in os.listdir(folder) if n.endswith(".go")))
        stamp = tuple(os.stat(os.path.join(folder, n)).st_mtime_ns for n in names)
    except OSError:
        return (), frozenset()
    return _folder_facts(folder, names, stamp)


_PARENS = re.compile(rb"[()]")
MAX_PARAMETER_LIST = 1 << 14  # bytes: far above any real one


def _parameter_list(data: bytes, start: int) -> bytes | None:
    """The parameter list that opens before `start`, nested parentheses included; None when it
    does not close within MAX_PARAMETER_LIST bytes. Bounded: a byte-by-byte walk to the end of
    a 4 MB file for every unclosed `func f(` (a truncated or mutated file) took minutes, and
    every .go file of the folder waits for this scan."""
    depth = 1
    for p in _PARENS.finditer(data, start, min(len(data), start + MAX_PARAMETER_LIST)):
        depth += 1 if data[p.start()] == 0x28 else -1
        if depth == 0:
            return data[start:p.start()]
    return None


_SEPARATORS = re.compile(rb"[()\[\]{},]")


def _top_level_parts(plist: bytes) -> list[bytes]:
    """`plist` cut at the commas outside brackets (`m map[string]int, f func(a, b int)`: two
    parts), blank parts dropped. One pass: a regex looking ahead for the closing bracket from
    every comma was quadratic in the list's length."""
    parts, depth, last = [], 0, 0
    for m in _SEPARATORS.finditer(plist):
        c = plist[m.start()]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
        elif depth <= 0:
            parts.append(plist[last:m.start()])
            last = m.end()
    parts.append(plist[last:])
    return [p for p in parts if p.strip()]


_PACKAGE_CLAUSE = re.compile(rb"^package\s+(\w+)", re.M)
_BINDING_IMPORT = re.compile(rb"[\"`]" + re.escape(BINDING_PATH.encode()) + rb"[\"`]")


@functools.lru_cache(maxsize=64)
def _folder_facts(folder: str, names: tuple[str, ...],
                  stamp: tuple[int, ...]) -> tuple[tuple[tuple[str, int], ...], frozenset[str]]:
    """(variadic functions and methods, packages some file of which imports the binding) of
    the .go files of a folder; one read of each file for both."""
    out: dict[str, int] = {}
    binding: set[str] = set()
    for name in names:
        try:
            data = read_prefix(os.path.join(folder, name), 4 * 1024 * 1024)  # a regular file: a FIFO must not block
        except OSError:
            continue
        package = _PACKAGE_CLAUSE.search(data)
        if package is not None and _BINDING_IMPORT.search(data):
            binding.add(package.group(1).decode("ascii", "replace"))
        for m in _FUNC_HEAD.finditer(data):
            plist = _parameter_list(data, m.end())
            if plist is None or b"..." not in plist:
                continue
            params = _top_level_parts(plist)
            index = next((k for k, p in enumerate(params) if b"..." in p), None)
            if index is None:
                continue
            recv = m.group(1)
            fname = (recv.decode() + "." if recv else "") + m.group(2).decode()
            out[fname] = index + (1 if recv else 0)
    return tuple(sorted(out.items())), frozenset(binding)
