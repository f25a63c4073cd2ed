"""What the C++ front end knows about a file before it lowers any function.

Lowering one C++ function needs facts declared elsewhere in the file: the members and
destructor of a class, what `using SessionPtr = ...` stands for, the type of a global, the
return type of a helper. `FileModel` gathers them in one walk over the syntax tree, and
`FileModel.ownership` answers the question the lowering asks of every declared object: *does
this type release what it holds when it goes out of scope, and how?*

Types are handled as text (`parse_type`), so the same code serves tree-sitter declarations and
the canonical type spellings libclang reports in precise mode.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Iterator

from tree_sitter import Node

from ...policy import Policy
from ..c.syntax import declarator_name, find_function_declarator, inner_declarator, is_array_declarator
from ..common.cfg import FieldIds, field_ids
from ..common.header_index import method_declarator
from ..common.returns_this import methods_returning_this
from .address_taken import address_taken_names

if TYPE_CHECKING:
    from ..common.header_index import ClassFacts, HeaderFacts, Visible

# Types whose `->F(...)` / `.F(...)` members are entries of a C function table, not methods.
TABLE_TYPES = frozenset({
    "OrtApi", "OrtTrainingApi", "OrtModelEditorApi", "OrtCompileApi", "OrtEpApi", "OrtInteropApi",
    "OrtApiBase", "JNIEnv", "JNIEnv_", "JNINativeInterface_", "JavaVM", "JavaVM_", "JNIInvokeInterface_",
})
SMART_POINTERS = frozenset({"std::unique_ptr", "std::shared_ptr", "unique_ptr", "shared_ptr"})
# The call a `std::shared_ptr` parameter's function makes at its entry: the pointee is co-owned
# from then on (rules/cpp.toml: takes ownership of its argument).
SHARED_OWNER = "std::shared_ptr"
CONTAINERS = frozenset({"std::vector", "std::array", "std::deque", "std::list", "vector", "array",
                        "std::basic_string", "std::span", "gsl::span"})
TUPLES = frozenset({"std::pair", "std::tuple", "pair", "tuple"})
# Containers that own nothing: a view of the array it is built from (`gsl::span<T*> s(out, n)`).
VIEWS = frozenset({"std::span", "gsl::span", "span"})
_ORT_CLASSES = re.compile(r"^(?:Value|Session|SessionOptions|Env|MemoryInfo|RunOptions|Status|TypeInfo|"
                          r"TensorTypeAndShapeInfo|Allocator|AllocatorWithDefaultOptions|IoBinding|"
                          r"ModelMetadata|ArenaCfg|CustomOpDomain|ThreadingOptions|KeyValuePairs|"
                          r"LoraAdapter|Exception|RunOptions)$")
# How a class-scope `operator delete` is named among a class's methods: by the file model
# (`clean_name` of the declarator) and by the header index (its words kept).
_DELETE_OPERATOR_NAMES = ("operatordelete", "operator delete")
_QUALIFIER_WORDS = re.compile(r"\b(?:const|volatile|struct|class|union|enum|typename|mutable|constexpr|"
                              r"static|inline|register|thread_local|extern|__restrict|restrict)\b")


# ----------------------------------------------------------------------------- types as text


@dataclass(frozen=True)
class TypeRef:
    """A parsed type spelling: `const std::unique_ptr<OrtValue, D> &` has name `std::unique_ptr`,
    args `('OrtValue', 'D')`, no pointers."""

    name: str
    args: tuple[str, ...] = ()
    pointers: int = 0
    array: bool = False
    text: str = ""

    def deref(self) -> "TypeRef":
        """The type `*p` has."""
        return TypeRef(self.name, self.args, max(0, self.pointers - 1), False, self.text)


def _angle_events(text: str) -> list[tuple[int, int]]:
    """Positions of `<` (+1) and `>` (-1) that bracket template arguments: not `->`, not
    inside parentheses (`decltype(api->F)`, `(a < b)`)."""
    if "<" not in text and ">" not in text:
        return []
    out, parens = [], 0
    for m in _BRACKETS.finditer(text):  # only these characters matter
        ch, i = m.group(), m.start()
        if ch in "([{":
            parens += 1
        elif ch in ")]}":
            parens -= 1
        elif parens == 0 and ch == "<":
            out.append((i, 1))
        elif parens == 0 and ch == ">" and (i == 0 or text[i - 1] != "-"):
            out.append((i, -1))
    return out


_BRACKETS = re.compile(r"[()\[\]{}<>]")
# Compiled once: `re.sub(pattern, ...)` looks the pattern up in re's cache on every call, and
# `clean_name`/`parse_type` run for most declarations and calls.
_LEADING_SCOPE = re.compile(r"^::")
_INLINE_STD_NAMESPACE = re.compile(r"\bstd::__(?:1|cxx11)::")
_FUNCTION_POINTER = re.compile(r"\(\s*\*\s*\w*\s*\)\s*\(")
_ARRAY_AND_DECLARATOR_MARKS = re.compile(r"\[[^\]]*\]|[*&]")


def split_template_args(text: str) -> list[str]:
    """'A, B<C, D>, void (*)(E *)' -> ['A', 'B<C, D>', 'void (*)(E *)']."""
    angles = dict(_angle_events(text))
    out, depth, cur = [], 0, []
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        depth += angles.get(i, 0) if ch in "<>" else 0
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


@functools.lru_cache(maxsize=8192)  # pure, and called for every declaration and call (profile)
def clean_name(name: str) -> str:
    """Drop spaces, a leading `::`, `(anonymous namespace)::` and inline namespaces like `__1`.
    Most names have none of them (the cache misses often: every receiver and callee text
    comes here), so that is tested first with substring tests, without the two regexes."""
    if " " not in name and "(" not in name and "std::__" not in name and not name.startswith("::"):
        return name
    name = name.replace("(anonymous namespace)::", "").replace(" ", "")
    name = _LEADING_SCOPE.sub("", name)
    return _INLINE_STD_NAMESPACE.sub("std::", name)


_SPACED_OPERATORS = re.compile(r"\boperator(?=(?:new|delete)\b)")


def operator_name(name: str) -> str:
    """`Wrapper::operator delete` as the user writes it (`clean_name` drops the space): the name
    functions and calls of the allocation operators have, in the IR and in messages."""
    return _SPACED_OPERATORS.sub("operator ", name) if "operator" in name else name


@functools.lru_cache(maxsize=8192)  # pure (TypeRef is frozen); the same spellings recur all over a file
def parse_type(text: str) -> TypeRef:
    """Parse a declared type spelling (never raises; unknown shapes give an empty name)."""
    raw = text
    text = _QUALIFIER_WORDS.sub(" ", (text or "").replace("(anonymous namespace)::", "")).strip()
    if text.startswith("decltype"):
        return TypeRef("decltype", (), 0, False, raw)
    events = _angle_events(text)
    start = events[0][0] if events and events[0][1] > 0 else -1
    args: tuple[str, ...] = ()
    rest = text
    if start >= 0:
        depth, end = 0, -1
        for i, step in events:
            depth += step
            if depth == 0:
                end = i
                break
        if end < 0:
            return TypeRef("", (), 0, False, raw)
        args = tuple(split_template_args(text[start + 1:end]))
        rest = text[:start] + text[end + 1:]
    if _FUNCTION_POINTER.search(rest):  # a function pointer type
        return TypeRef("<function pointer>", (), 1, False, raw)
    pointers = rest.count("*")
    array = "[" in rest
    words = _ARRAY_AND_DECLARATOR_MARKS.sub(" ", rest).split()
    name = clean_name(words[0]) if words else ""
    return TypeRef(name, args, pointers, array, raw)


def decltype_target(text: str) -> tuple[str, str] | None:
    """`decltype(&ReleaseX)` -> ('ReleaseX', 'plain'); `decltype(api->ReleaseX)` and
    `decltype(&OrtApi::ReleaseX)` -> ('ReleaseX', 'table')."""
    m = re.match(r"\s*decltype\s*\((.*)\)\s*[*&]?\s*$", text, re.S)
    if m is None:
        return None
    inner = m.group(1).strip().lstrip("&").strip()
    fm = re.search(r"(->|\.|::)?\s*([A-Za-z_]\w*)\s*$", inner)
    if fm is None:
        return None
    name = fm.group(2)
    prefix = inner[:fm.start()].strip()
    if fm.group(1) in ("->", ".") or parse_type(prefix).name in TABLE_TYPES:
        return name, "table"
    return (clean_name(inner) if fm.group(1) == "::" else name), "plain"


# ----------------------------------------------------------------------------- classes


@dataclass
class ClassInfo:
    """A class or struct defined in the file."""

    name: str
    qualname: str
    methods: dict[str, list[Node]] = field(default_factory=dict)  # name -> definitions with bodies
    declared_methods: set[str] = field(default_factory=set)
    fields: dict[str, str] = field(default_factory=dict)  # member -> declared type text
    field_order: list[str] = field(default_factory=list)
    field_defaults: dict[str, Node] = field(default_factory=dict)
    ctors: list[Node] = field(default_factory=list)
    dtor: Node | None = None
    has_dtor_decl: bool = False
    from_header: bool = False  # declared in an included header: members known, bodies not

    inherited: dict[str, str] = field(default_factory=dict)  # method -> the base class that declares it
    returns_this: set[str] = field(default_factory=set)  # methods returning `this` (common/returns_this.py)

    def has_method(self, name: str) -> bool:
        return name in self.methods or name in self.declared_methods or name in self.inherited

    def method_owner(self, name: str) -> str:
        """The class whose method `name` is: this one, or the base that declares it (`Step()` of
        `struct OgaEngine : Generators::Engine {}` is `Generators::Engine::Step`, not a method
        of some other `OgaEngine` elsewhere in the tree)."""
        return self.qualname if name in self.methods else self.inherited.get(name, self.qualname)

    def call_operator(self) -> Node | None:
        defs = self.methods.get("operator()")
        return defs[0] if defs else None


@dataclass(frozen=True)
class ReleaseFn:
    """How a guard gives its pointer back: the call and its style (`table` for OrtApi entries)."""

    callee: str
    style: str


@dataclass
class Ownership:
    """What a declared object does with what it holds when its scope ends.

    `what` is "smart" (std::unique_ptr / shared_ptr: `release` is the deleter, or the deleter
    is the second constructor argument), "class" (a class of this file with a destructor or
    owning members), "ort" (an `Ort::` C++ API object: RAII, never a finding), "container"
    (std::vector / std::array of handles: an array the function owns), "lambda" or "none".
    """

    what: str
    release: ReleaseFn | None = None
    deleter_from_arg: bool = False
    shared: bool = False
    cls: ClassInfo | None = None
    pointee: TypeRef | None = None
    deleter_lambda: Node | None = None  # a lambda given to the constructor as the deleter

    def releases(self) -> bool:
        return self.release is not None or self.deleter_lambda is not None


NONE = Ownership("none")


# ----------------------------------------------------------------------------- the model


def node_text(src: bytes, node: Node | None) -> str:
    if node is None:
        return ""
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")


# The node types that add to a type when they are themselves the leaf the declarator walks end at
# (`declarator_pointers` counts the pointer kinds, `is_array_declarator` tests for the array).
_SHAPED_LEAVES = frozenset(("pointer_declarator", "abstract_pointer_declarator", "array_declarator"))


def declarator_pointers(node: Node | None) -> int:
    """How many `*` a declarator adds to its type (`**out` -> 2)."""
    count, depth = 0, 0
    while node is not None and depth < 50:
        depth += 1
        kind = node.type
        if kind in ("pointer_declarator", "abstract_pointer_declarator"):
            count += 1
        if kind == "function_declarator" or not node.child_count:  # a leaf is the declared name
            return count
        node = inner_declarator(node)
    return count


def declared_type_text(src: bytes, type_node: Node | None, declarator: Node | None) -> str:
    """The type of one declarator of a declaration, as text: `OrtValue *` for `OrtValue *v`."""
    base = node_text(src, type_node)
    if declarator is None or not declarator.child_count and declarator.type not in _SHAPED_LEAVES:
        return base  # a bare name (`int n`): no walk for stars or brackets
    pointers = declarator_pointers(declarator)
    if declarator is not None and is_array_declarator(declarator):
        return f"{base}{'*' * pointers}[]"
    return base + "*" * pointers


def innermost_name(src: bytes, node: Node | None) -> tuple[str, Node] | None:
    """The declared name of a (possibly nested) declarator, with its node."""
    depth = 0
    while node is not None and depth < 50:
        depth += 1
        if node.type in ("identifier", "field_identifier", "operator_name", "destructor_name",
                         "qualified_identifier", "type_identifier"):
            return clean_name(node_text(src, node)), node
        if not node.child_count:  # another leaf: nothing declared below
            return None
        node = inner_declarator(node, ("identifier", "field_identifier"))
    return None


def operator_cast_name(src: bytes, declarator: Node) -> str | None:
    """`operator bool` for the declarator of `explicit operator bool() const {...}` (a guard's
    test, lowered in place by cpp_guards when the object is used as a condition)."""
    if declarator.type != "operator_cast":
        return None
    type_node = declarator.child_by_field_name("type")
    return "operator " + node_text(src, type_node).strip() if type_node is not None else None


class FileModel:
    """Classes, aliases, global types and function return types of one C++ file."""

    def __init__(self, src: bytes, policy: Policy, fields: FieldIds | None = None):
        self.src = src
        self.policy = policy
        self.F = fields if fields is not None else _cpp_fields()
        self.classes: dict[str, ClassInfo] = {}  # both short and qualified names
        self.aliases: dict[str, str] = {}
        self.globals: dict[str, str] = {}
        self.returns: dict[str, str] = {}  # function name (short and qualified) -> return type text
        self.ref_params: dict[str, frozenset[int]] = {}  # function name -> indexes of reference parameters
        self.namespaces_used: set[str] = set()
        self.internal: set[int] = set()  # start bytes of function definitions with internal linkage
        self._releaser = _releasers_by_label(policy)
        self._owners: dict[str, Ownership] = {}
        self._address_taken: dict[tuple[int, int, int], tuple[bytes, frozenset[str]]] = {}  # see address_taken
        self.declarations: list[tuple[Node, tuple[str, ...], str | None, bool]] = []  # `walk` of the file, once
        self._bases: dict[str, list[str]] = {}  # class -> base class names (from add_visible)
        self._found: dict[tuple[str, tuple[str, ...]], ClassInfo | None] = {}  # see find_class
        self._found_size = 0
        self.self_owning_cache: dict[tuple[str, tuple[str, ...]], Any] = {}  # self_owning.self_ownership
        self.qualified_cache: dict[tuple[str, int], str | None] = {}  # status_values._only_qualified

    # -- collection ---------------------------------------------------------------------

    def collect(self, root: Node) -> None:
        """Two passes: classes and declarations first, then out-of-class member definitions.
        The walk is made once; its list serves both passes and the front end's function list."""
        self.declarations = list(walk(root, self.src))
        for node, ns, cls, internal in self.declarations:
            self._collect_one(node, ns, cls, internal)
        for node, ns, cls_name, _internal in self.declarations:
            if cls_name is None and node.type == "function_definition":
                self._attach_out_of_class(node, ns)
        # ownership asked while collecting (a `T(const T&) = delete;` declared before `~T()`)
        # saw a class without its destructor yet
        self._owners.clear()

    def returns_this(self, cls: ClassInfo, name: str) -> bool:
        """Whether method `name` of `cls` (or of the base that declares it) returns `this`."""
        if name in cls.returns_this:
            return True
        owner = cls.inherited.get(name)
        base = self.classes.get(owner) if owner is not None else None
        return base is not None and name in base.returns_this

    def add_visible(self, visible: "Visible", own: "HeaderFacts | None" = None, macros: Mapping[str, Any] | None = None) -> None:
        """Classes and aliases declared in the file's headers (header_index): members only (their
        method bodies stay in the header), then every class's inherited members, so that
        `ort_api.X(...)` in a method of a class whose base struct holds `const OrtApi& ort_api`
        knows `ort_api`'s type."""
        for name, alias in visible.aliases.items():
            self.aliases.setdefault(name, alias)
        for name, returned in visible.returns.items():
            self.returns.setdefault(name, returned)
        for name, indexes in visible.ref_params.items():  # (this file's own declaration wins)
            self.ref_params.setdefault(name, indexes)
        bases: dict[str, list[str]] = {}
        classes = self.classes
        # (a file of a large tree sees hundreds of header classes, each under its short and its
        # qualified name: the per-member loops below run only where a merge can add something)
        for name, facts in visible.classes.items():
            info = classes.get(name)
            if info is None:
                info = classes[name] = ClassInfo(name.rsplit("::", 1)[-1], name, from_header=True)
                classes.setdefault(info.name, info)
            fields = info.fields
            if not fields:
                fields.update(facts.fields)
            elif not facts.fields.keys() <= fields.keys():
                for member, type_text in facts.fields.items():
                    if member not in fields:
                        fields[member] = type_text
            if facts.methods:
                info.declared_methods.update(facts.methods.difference(info.methods) if info.methods else facts.methods)
                if not info.has_dtor_decl:
                    info.has_dtor_decl = facts.declares_destructor()
            bases.setdefault(info.qualname, []).extend(facts.bases)
            if facts.returns_this or facts.macro_uses:
                _add_returns_this(info, facts, macros or {}, visible.macros)
        for name, facts in (own.classes.items() if own is not None else ()):
            info = classes.get(name)
            if info is not None and facts.bases:
                bases.setdefault(info.qualname, []).extend(facts.bases)
            if info is not None and (facts.returns_this or facts.macro_uses):
                _add_returns_this(info, facts, macros or {}, visible.macros)
        self._bases.update(bases)
        for qual, names in bases.items():
            if names:  # (no base: nothing to inherit)
                self._inherit(classes.get(qual), names)

    def _inherit(self, info: ClassInfo | None, base_names: list[str]) -> None:
        """Copy the members of `base_names` (transitively, each class once) into `info`."""
        if info is None:
            return
        seen = {info.qualname}
        todo = list(base_names)
        while todo and len(seen) < 64:
            base = self.classes.get(clean_name(strip_template(todo.pop(0))))
            if base is None or base.qualname in seen:
                continue
            seen.add(base.qualname)
            for member, type_text in base.fields.items():
                info.fields.setdefault(member, type_text)
            for method in (*base.methods, *base.declared_methods):
                if method not in info.methods and method not in info.declared_methods:
                    info.inherited.setdefault(method, base.inherited.get(method, base.qualname))
            info.declared_methods.update(base.declared_methods)
            todo.extend(self._bases.get(base.qualname, ()))

    def _collect_one(self, node: Node, ns: tuple[str, ...], cls_name: str | None, internal: bool) -> None:
        """Record one declaration the walk yields (class, alias, field, global, function)."""
        cls = self.classes.get(cls_name) if cls_name else None
        kind = node.type
        if kind in ("class_specifier", "struct_specifier", "union_specifier"):
            self._collect_class(node, ns, cls)
        elif kind == "alias_declaration":
            name = node_text(self.src, node.child_by_field_id(self.F.name))
            self._add_alias(name, node_text(self.src, node.child_by_field_id(self.F.type)), cls_name)
        elif kind == "type_definition":
            type_node = node.child_by_field_id(self.F.type)
            for decl in node.children_by_field_id(self.F.declarator):
                found = innermost_name(self.src, decl)
                if found:
                    self._add_alias(found[0], declared_type_text(self.src, type_node, decl), cls_name)
        elif kind == "using_declaration" and b"namespace" in self.src[node.start_byte:node.end_byte]:
            target = node.named_children[-1] if node.named_children else None
            self.namespaces_used.add(clean_name(node_text(self.src, target)))
        elif kind == "field_declaration" and cls is not None:
            self._collect_field(node, cls)
        elif kind == "declaration":
            self._collect_declaration(node, ns, cls)
        elif kind == "function_definition":
            self._collect_function(node, ns, cls, internal)

    def _add_alias(self, name: str, text: str, cls_name: str | None) -> None:
        """Record `using name = text;`. A member alias is also reached as `Class::name`
        (`Node::UP` for `using UP = std::unique_ptr<Node>;` inside `Node`), by the class's
        qualified and short names, so the smart pointer behind it is seen at every use."""
        self.aliases[name] = text
        if cls_name:
            for owner in (cls_name, cls_name.rsplit("::", 1)[-1]):
                self.aliases.setdefault(f"{owner}::{name}", text)

    def _collect_class(self, node: Node, ns: tuple[str, ...], outer: ClassInfo | None) -> None:
        name = node_text(self.src, node.child_by_field_id(self.F.name))
        if not name or node.child_by_field_id(self.F.body) is None:
            return
        qual = class_qualname(clean_name(name), ns, outer.qualname if outer else None)
        info = self.classes.get(qual) or ClassInfo(clean_name(name), qual)
        self.classes[qual] = info
        self.classes.setdefault(info.name, info)

    def _collect_field(self, node: Node, cls: ClassInfo) -> None:
        """A member of a class: its type (methods declared but not defined are noted too)."""
        type_node = node.child_by_field_id(self.F.type)
        is_static = any(c.type == "storage_class_specifier" and node_text(self.src, c) == "static" for c in node.children)
        for decl in node.children_by_field_id(self.F.declarator):
            found = innermost_name(self.src, decl)
            if found is None:
                continue
            if method_declarator(decl) is not None:  # a method declaration
                cls.declared_methods.add(found[0])
                if found[0].startswith("~"):
                    cls.has_dtor_decl = True
                continue
            cls.fields[found[0]] = declared_type_text(self.src, type_node, decl)
            if not is_static:
                cls.field_order.append(found[0])
        default = node.child_by_field_id(self.F.default_value)
        if default is not None and cls.field_order:
            cls.field_defaults[cls.field_order[-1]] = default

    def _collect_declaration(self, node: Node, ns: tuple[str, ...], cls: ClassInfo | None) -> None:
        """A declaration outside a function: global variable types and function return types."""
        type_node = node.child_by_field_id(self.F.type)
        for decl in node.children_by_field_id(self.F.declarator):
            target = decl.child_by_field_id(self.F.declarator) if decl.type == "init_declarator" else decl
            found = innermost_name(self.src, target)
            if found is None:
                continue
            name, _ = found
            if find_function_declarator(target) is not None:
                if cls is not None:
                    cls.declared_methods.add(name)
                    if name.startswith("~"):
                        cls.has_dtor_decl = True
                else:
                    self._record_return(name, ns, declared_type_text(self.src, type_node, target))
                    self._record_ref_params(name, ns, target)
                continue
            if cls is None:
                text = declared_type_text(self.src, type_node, target)
                self.globals[name] = text
                if ns:
                    self.globals["::".join(ns + (name,))] = text

    def _collect_function(self, node: Node, ns: tuple[str, ...], cls: ClassInfo | None, internal: bool) -> None:
        """A function definition: return type, reference parameters, and the class it belongs to."""
        declarator = node.child_by_field_id(self.F.declarator)
        found = innermost_name(self.src, declarator)
        cast = operator_cast_name(self.src, declarator) if found is None and cls is not None and declarator else None
        if cast is not None and cls is not None:  # `explicit operator bool() const {...}` (cpp_guards)
            self._add_method(cls, cast, node)
        if found is None:
            return
        name = found[0]
        if internal:
            self.internal.add(node.start_byte)
        ret = self._return_text(node)
        if cls is not None:
            self._add_method(cls, name, node)
            self._record_return(f"{cls.qualname}::{name}", (), ret)
            self._record_ref_params(f"{cls.qualname}::{name}", (), declarator, node.child_by_field_id(self.F.body))
        else:
            self._record_return(name, ns, ret)
            self._record_ref_params(name, ns, declarator, node.child_by_field_id(self.F.body))

    def _return_text(self, node: Node) -> str:
        declarator = node.child_by_field_id(self.F.declarator)
        func = find_function_declarator(declarator)
        trailing = next((c for c in func.named_children if c.type == "trailing_return_type"), None) if func else None
        if trailing is not None:
            return node_text(self.src, trailing.named_children[0] if trailing.named_children else None)
        text = node_text(self.src, node.child_by_field_id(self.F.type))
        return text + "*" * declarator_pointers(declarator)

    def _record_return(self, name: str, ns: tuple[str, ...], text: str) -> None:
        if not text:
            return
        self.returns.setdefault(name, text)
        self.returns.setdefault(name.rsplit("::", 1)[-1], text)
        if ns:
            self.returns.setdefault("::".join(ns + (name,)), text)

    def own_function(self, name: str, ns: tuple[str, ...], arity: int) -> tuple[str, tuple[bool, ...]] | None:
        """The function this file defines (not a method) that a call by bare `name` with
        `arity` arguments from namespace `ns` reaches, as C++ lookup finds it: in `ns` or an
        enclosing namespace (an anonymous namespace's are the global scope's), innermost
        first, its parameter count matching. (full name, which parameters are pointers), or
        None when the file defines none."""
        index = self.__dict__.get("_own_functions")
        if index is None:
            index = self.__dict__["_own_functions"] = self._index_own_functions()
        found = index.get(name)
        if not found:
            return None
        for i in range(len(ns), -1, -1):
            scope = ns[:i]
            for where, pointers in found:
                if where == scope and len(pointers) == arity:
                    return "::".join(scope + (name,)), pointers
        return None

    def _index_own_functions(self) -> dict[str, list[tuple[tuple[str, ...], tuple[bool, ...]]]]:
        """Bare name -> (namespace, which parameters are pointers) of each non-member function
        defined here (not those with default or variadic arguments: any count may match)."""
        index: dict[str, list[tuple[tuple[str, ...], tuple[bool, ...]]]] = {}
        for node, ns, cls, _internal in self.declarations:
            if cls is not None or node.type != "function_definition":
                continue
            func = find_function_declarator(node.child_by_field_id(self.F.declarator))
            name_node = func.child_by_field_id(self.F.declarator) if func is not None else None
            params = func.child_by_field_id(self.F.parameters) if func is not None else None
            if name_node is None or params is None or name_node.type != "identifier":
                continue
            if any(c.type in ("variadic_parameter", "variadic_parameter_declaration", "optional_parameter_declaration")
                   for c in params.named_children):
                continue
            plist = [c for c in params.named_children if c.type == "parameter_declaration"]
            pointers = tuple(parse_type(declared_type_text(self.src, p.child_by_field_id(self.F.type),
                                                           p.child_by_field_id(self.F.declarator))).pointers > 0
                             for p in plist)
            index.setdefault(node_text(self.src, name_node), []).append((ns, pointers))
        return index

    def is_value_reference(self, type_text: str) -> bool:
        """A reference to a pointer, a smart pointer or a number (`void *&p`, `std::unique_ptr<T> &p`,
        `size_t &n`): assigning to it writes the caller's variable (a smart pointer given by
        reference is the caller's, not destroyed when the callee returns). References to other
        objects (`const std::vector<T> &v`) are analyzed like the object itself."""
        t = self.resolve_alias(parse_type(type_text))
        if t.pointers > 0 or self.ownership(type_text).what == "smart":
            return True
        return not t.args and self.find_class(t.name) is None and self.ownership(type_text).what == "none" \
            and not t.name.startswith("std::")

    def is_sink_param(self, param: Node, type_text: str) -> bool:
        """`std::unique_ptr<T> &&p`: an rvalue reference to a smart pointer that owns alone. The
        argument is a temporary or a `std::move`d smart pointer, which the caller's lowering
        already hands over at the call (`std::move(x)` leaves `x` empty), so the parameter is
        lowered as one taken by value: what the callee does with `p` is what happens to the
        object, and `p` still holding it when the callee returns destroys it (as the caller's
        moved-from smart pointer would). Read as a reference, the callee's summary would speak
        of `*p` while a caller that cannot see the declaration (a header's class) passes the
        pointer itself: the hand-over was lost."""
        if not is_rvalue_reference_param(param):
            return False
        own = self.ownership(type_text)
        return own.what == "smart" and not own.shared

    def _record_ref_params(self, name: str, ns: tuple[str, ...], declarator: Node | None,
                           body: Node | None = None) -> None:
        """Which parameters are references to pointers or numbers, or references to objects
        whose address the definition's `body` takes (address_taken.py): callers pass the
        variable (its address)."""
        func = find_function_declarator(declarator)
        params = func.child_by_field_id(self.F.parameters) if func is not None else None
        if params is None:
            return
        plist = [c for c in params.named_children if c.type.endswith("parameter_declaration")]
        refs = [(i, p) for i, p in enumerate(plist) if is_reference_param(p) and not self.is_sink_param(
            p, declared_type_text(self.src, p.child_by_field_id(self.F.type), p.child_by_field_id(self.F.declarator)))]
        indexes = frozenset(i for i, p in refs if p.type != "variadic_parameter_declaration" and self.is_value_reference(
            declared_type_text(self.src, p.child_by_field_id(self.F.type), p.child_by_field_id(self.F.declarator))))
        kept_indexes: frozenset[int] = frozenset()
        if refs and body is not None:
            # walking the body for `&name` (address_taken_names) costs a visit of every node of
            # every definition: done only when a reference parameter's name occurs in its text
            names = {i: declarator_name(p.child_by_field_id(self.F.declarator), self.src) for i, p in refs}
            text = self.src[body.start_byte:body.end_byte]
            if any(n and ("\ufffd" in n or n.encode("utf-8") in text) for n in names.values()):
                kept = self.address_taken(self.src, body)
                kept_indexes = frozenset(i for i, n in names.items() if n in kept)
        for key in {name, name.rsplit("::", 1)[-1], "::".join(ns + (name,))}:
            self.ref_params[key] = self.ref_params.get(key, indexes) | kept_indexes

    def address_taken(self, src: bytes, body: Node | None) -> frozenset[str]:
        """`address_taken_names(src, body)`, walked once per body: the model asks while collecting
        definitions and the lowering of the same definition asks again."""
        if body is None:
            return frozenset()
        key = (id(src), body.start_byte, body.end_byte)
        hit = self._address_taken.get(key)
        if hit is None or hit[0] is not src:  # (the text is kept in the entry: its id is not reused)
            hit = self._address_taken[key] = (src, address_taken_names(src, body))
        return hit[1]

    def _add_method(self, cls: ClassInfo, name: str, node: Node) -> None:
        """Attach a definition to its class: constructor, destructor or method (bodiless = declared only)."""
        if node.child_by_field_id(self.F.body) is None:  # = default / = delete
            if name.startswith("~"):
                cls.has_dtor_decl = True
            cls.declared_methods.add(name)
            return
        if name.startswith("~"):
            cls.dtor = node
        elif name == cls.name:
            cls.ctors.append(node)
        else:
            cls.methods.setdefault(name, []).append(node)

    def _attach_out_of_class(self, node: Node, ns: tuple[str, ...]) -> None:
        """`void Model::fail(...) {...}` belongs to class Model for inlining and name lookup."""
        found = innermost_name(self.src, node.child_by_field_id(self.F.declarator))
        if found is None or "::" not in found[0]:
            return
        owner, member = found[0].rsplit("::", 1)
        cls = self.find_class(owner, ns)
        if cls is not None and node not in cls.ctors and node is not cls.dtor:
            self._add_method(cls, member, node)

    # -- queries ------------------------------------------------------------------------

    def find_class(self, name: str, ns: tuple[str, ...] = ()) -> ClassInfo | None:
        """The class `name` means in namespace `ns` (innermost first). Asked for every typed
        name the lowering meets: answers are remembered until a class is added (`classes` only
        ever gains keys, so its size tells)."""
        if self._found_size != len(self.classes):
            self._found.clear()
            self._found_size = len(self.classes)
        key = (name, ns)
        try:
            return self._found[key]
        except KeyError:
            found = self._found[key] = self._find_class(name, ns)
            return found

    def _find_class(self, name: str, ns: tuple[str, ...]) -> ClassInfo | None:
        name = clean_name(name)
        for i in range(len(ns), -1, -1):
            cls = self.classes.get("::".join(ns[:i] + (name,)))
            if cls is not None:
                return cls
        return None

    def delete_operator(self, type_name: str, ns: tuple[str, ...] = ()) -> str | None:
        """The class-scope `operator delete` that `delete p` calls for a `T *p` (`T`'s own or one
        it inherits), as the name of the function that defines it (`OgaResult::operator delete`),
        or None when `T` has none and the global `delete` runs. Wrappers of C handles define one
        that calls the handle's destroy function (`static void operator delete(void *p) {
        OgaDestroyResult(...); }`): `delete p` and the default deleter of a
        `std::unique_ptr<T>` release through it."""
        cls = self.find_class(type_name, ns) if type_name else None
        seen: set[str] = set()
        todo = [cls] if cls is not None else []
        while todo and len(seen) < 16:
            info = todo.pop(0)
            if info.qualname in seen:
                continue
            seen.add(info.qualname)
            if any(name in info.methods or name in info.declared_methods for name in _DELETE_OPERATOR_NAMES):
                return f"{info.qualname}::operator delete"
            for base in self._bases.get(info.qualname, ()):
                found = self.find_class(strip_template(base), ns)
                if found is not None:
                    todo.append(found)
        return None

    def base_names(self, qualname: str) -> list[str]:
        """The base classes of the class `qualname`, as written (`Napi::AsyncWorker`, `Base<T>`)."""
        return self._bases.get(qualname, [])

    def derives_from(self, type_name: str, base_name: str, ns: tuple[str, ...] = ()) -> bool:
        """Is `type_name` a class of the tree that derives, directly or not, from `base_name`
        (`struct StringAllocator : OrtAllocator`)?"""
        cls = self.find_class(type_name, ns) if type_name else None
        seen: set[str] = set()
        todo = [cls] if cls is not None else []
        while todo and len(seen) < 16:
            info = todo.pop()
            if info.qualname in seen:
                continue
            seen.add(info.qualname)
            for base in self._bases.get(info.qualname, ()):
                name = clean_name(strip_template(base))
                if name == base_name or name.rsplit("::", 1)[-1] == base_name:
                    return True
                found = self.find_class(name, ns)
                if found is not None:
                    todo.append(found)
        return False

    def base_classes(self, cls: ClassInfo) -> list[ClassInfo]:
        """The direct bases of `cls` that the tree declares (a template base by its template)."""
        ns = tuple(cls.qualname.split("::")[:-1])
        found = (self.find_class(clean_name(strip_template(b)), ns) for b in dict.fromkeys(self._bases.get(cls.qualname, ())))
        return [b for b in found if b is not None and b is not cls]

    def resolve_alias(self, t: TypeRef, depth: int = 0) -> TypeRef:
        """Follow `using X = ...` / `typedef ... X` (keeping the pointers written at the use)."""
        while depth < 8 and not t.args and t.name in self.aliases:
            inner = parse_type(self.aliases[t.name])
            t = TypeRef(inner.name, inner.args, inner.pointers + t.pointers, inner.array or t.array, inner.text)
            depth += 1
        return t

    def qualify_ort(self, name: str, ns: tuple[str, ...] = ()) -> str:
        """`Value` after `using namespace Ort;` is `Ort::Value` (unless the tree declares a class of
        that name of its own); inside `namespace Ort` (`ns`, the code's enclosing namespaces: ONNX
        Runtime's own C++ header, vendored into many trees) C++ lookup finds `Ort::Value` whatever
        the tree declares, and the header's classes may have lost their namespace to a parse gap."""
        if "::" in name:
            return name
        if ns[:1] == ("Ort",) and (_ORT_CLASSES.match(name) or self.policy.lookup("plain", "Ort::" + name) is not None):
            return "Ort::" + name
        if "Ort" in self.namespaces_used and name not in self.classes and _ORT_CLASSES.match(name):
            return "Ort::" + name
        return name

    def ownership(self, type_text: str) -> Ownership:
        """How an object of this declared type owns what it holds (see `Ownership`)."""
        cached = self._owners.get(type_text)
        if cached is None:
            # A class graph may be recursive (a member whose type names its own class, or another
            # class of the same short name): a type being computed owns nothing for the inner query.
            self._owners[type_text] = NONE
            cached = self._ownership(type_text)
            self._owners[type_text] = cached
        return cached

    def _ownership(self, type_text: str) -> Ownership:
        """Uncached `ownership` (aliases resolved; pointers own nothing)."""
        t = self.resolve_alias(parse_type(type_text))
        if t.pointers or not t.name:
            return NONE
        name = self.qualify_ort(t.name)
        if name in SMART_POINTERS:
            return self._smart(t, shared="shared" in name)
        if name.startswith("Ort::"):
            return Ownership("ort")
        if name in CONTAINERS:
            return Ownership("container", pointee=parse_type(t.args[0]) if t.args else None)
        if name in ("std::function", "function"):
            return Ownership("lambda")
        cls = self.find_class(name)
        if cls is not None and self.class_cleans_up(cls):
            return Ownership("class", cls=cls)
        return NONE

    def owns_what_it_holds(self, type_text: str, depth: int = 0) -> bool:
        """Does an object of this type release what it is built from: a smart pointer, an `Ort::`
        object, a class that cleans up, or a pair or tuple of which one member does
        (`std::pair<std::string, std::unique_ptr<Cap>>`, the element of a vector or map)?"""
        if not type_text:
            return False
        if self.ownership(type_text).what in ("smart", "ort", "class"):
            return True
        t = self.resolve_alias(parse_type(type_text))
        return depth < 4 and not t.pointers and t.name in TUPLES and \
            any(self.owns_what_it_holds(arg, depth + 1) for arg in t.args)

    def class_cleans_up(self, cls: ClassInfo, depth: int = 0) -> bool:
        """A destructor with a body, or a member that releases what it holds."""
        if cls.dtor is not None:
            return True
        if depth > 4:
            return False
        for member in cls.field_order:
            own = self.ownership(cls.fields.get(member, "")) if depth < 4 else NONE
            if own.what == "smart" or (own.what == "class" and own.cls is not cls):
                return True
        return False

    def _smart(self, t: TypeRef, shared: bool) -> Ownership:
        """A std::unique_ptr / shared_ptr type: its pointee and, when the type tells, its deleter."""
        pointee = parse_type(t.args[0]) if t.args else TypeRef("")
        array = pointee.array or (t.args[0].rstrip().endswith("[]") if t.args else False)
        if len(t.args) < 2 or shared:
            if shared:
                return Ownership("smart", self._pointee_release(pointee, array), True, True, pointee=pointee)
            return Ownership("smart", self._default_delete(pointee, array), pointee=pointee)
        deleter = t.args[1]
        release = self.deleter_release(deleter, pointee)
        from_arg = release is None or parse_type(deleter).name in ("<function pointer>", "std::function", "function")
        return Ownership("smart", release, from_arg, pointee=pointee)

    def deleter_release(self, deleter_text: str, pointee: TypeRef) -> ReleaseFn | None:
        """The call a deleter type stands for, or None when only its value can tell."""
        target = decltype_target(deleter_text)
        if target is not None:
            return ReleaseFn(*target)
        d = parse_type(deleter_text)
        if d.name in ("std::default_delete", "default_delete"):
            return self._default_delete(pointee, pointee.array)
        if d.name in ("<function pointer>", "std::function", "function", "decltype"):
            return None
        cls = self.find_class(d.name)
        if cls is not None and cls.call_operator() is not None:
            return ReleaseFn(f"{cls.qualname}::operator()", "plain")
        return self._pointee_release(pointee, False) or ReleaseFn(f"{clean_name(d.name)}::operator()", "plain")

    def _default_delete(self, pointee: TypeRef, array: bool) -> ReleaseFn:
        """What `std::default_delete<T>` does: `delete[]`, or `delete`, which for a class with a
        class-scope `operator delete` is that operator (`delete_operator`)."""
        if array:
            return ReleaseFn("delete[]", "plain")
        operator = self.delete_operator(pointee.name) if not pointee.pointers else None
        return ReleaseFn(operator or "delete", "plain")

    def _pointee_release(self, pointee: TypeRef, array: bool) -> ReleaseFn | None:
        """Fallback: the class's own `operator delete`, else the policy's release call for the
        pointee's kind (OrtSession -> ReleaseSession)."""
        operator = self.delete_operator(pointee.name) if not array and not pointee.pointers else None
        if operator is not None:
            return ReleaseFn(operator, "plain")
        found = self._releaser.get(pointee.name)
        if found is not None:
            return found
        if pointee.name in ("void", ""):
            return None
        return ReleaseFn("delete[]" if array else "delete", "plain")


def strip_template(name: str) -> str:
    """`Base<T>` -> `Base` (base classes are found by name)."""
    return name.split("<", 1)[0].strip()


def _cpp_fields() -> FieldIds:
    """The C++ grammar's field ids (for a model made without the front end's)."""
    import tree_sitter_cpp  # only when no front end passed them
    from tree_sitter import Language

    return field_ids(Language(tree_sitter_cpp.language()))


def _releasers_by_label(policy: Policy) -> dict[str, ReleaseFn]:
    """Type name -> its policy release call (`OrtSession` -> `ReleaseSession`), from kind labels; cached per policy."""
    cached = getattr(policy, "_cpp_releasers", None)
    if cached is None:
        cached = {}
        first: dict[str, tuple[int, object]] = {}  # call name -> its first releasing spec (position, spec)
        for position, spec in enumerate(policy.calls.values()):
            if spec.release is not None and spec.name not in first:
                first[spec.name] = (position, spec)
        for kind in policy.kinds.values():
            if not kind.owned or kind.token:
                continue
            found = [first[name] for name in policy.releasers_of(kind.id) if name in first]
            if found and re.match(r"^[A-Za-z_]\w*$", kind.label):
                spec = min(found, key=lambda item: item[0])[1]  # the first of them in the policy's order
                cached.setdefault(kind.label, ReleaseFn(spec.name, "table" if spec.style == "table" else "plain"))
        policy._cpp_releasers = cached  # type: ignore[attr-defined]
    return cached


def is_rvalue_reference_param(param: Node) -> bool:
    """`T &&x` (not `T &x`): the argument is a temporary or a `std::move`d object."""
    node = param.child_by_field_name("declarator")
    depth = 0
    while node is not None and depth < 20:
        depth += 1
        if node.type in ("reference_declarator", "abstract_reference_declarator"):
            return node.child_count > 0 and node.children[0].type == "&&"
        if node.type in ("function_declarator", "abstract_function_declarator") or not node.child_count:
            return False
        node = inner_declarator(node)
    return False


def is_reference_param(param: Node) -> bool:
    """`T &x` / `T &&x` (a reference to a pointer or an object, not `T *x`)."""
    node = param.child_by_field_name("declarator")
    depth = 0
    while node is not None and depth < 20:
        depth += 1
        kind = node.type
        if kind in ("reference_declarator", "abstract_reference_declarator"):
            return True  # `T *&p` too: there are no pointers to references
        if kind in ("function_declarator", "abstract_function_declarator") or not node.child_count:
            return False
        node = inner_declarator(node)
    return False


# ----------------------------------------------------------------------------- walking declarations

_PASS_THROUGH = ("translation_unit", "declaration_list", "linkage_specification", "preproc_if", "preproc_ifdef",
                 "preproc_else", "preproc_elif", "preproc_elifdef", "template_declaration", "friend_declaration",
                 "ERROR", "export_declaration")


def class_qualname(name: str, ns: tuple[str, ...], outer: str | None) -> str:
    """`ns::Outer::Name` for a class declared in namespace `ns`, maybe nested in `Outer`."""
    if outer:
        return f"{outer}::{name}"
    return "::".join(ns + (name,))


def walk(root: Node, src: bytes) -> Iterator[tuple[Node, tuple[str, ...], str | None, bool]]:
    """Yield every file-level or class-level declaration with its namespace path, the qualified
    name of the class it is declared in, and whether it has internal linkage (anonymous
    namespace). `#if 0` blocks are skipped; a class is yielded before its members."""
    stack: list[tuple[Node, tuple[str, ...], str | None, bool]] = [(root, (), None, False)]
    while stack:
        node, ns, cls, internal = stack.pop()
        kind = node.type
        children: list[Node] = []
        child_ns, child_cls, child_internal = ns, cls, internal
        if kind in _PASS_THROUGH:
            children = node.named_children
            if kind == "preproc_if" and node_text(src, node.child_by_field_name("condition")).strip() in ("0", "(0)"):
                alt = node.child_by_field_name("alternative")
                children = [alt] if alt is not None else []
        elif kind == "namespace_definition":
            name = node.child_by_field_name("name")
            child_ns = ns + tuple(clean_name(node_text(src, name)).split("::")) if name is not None else ns
            child_internal = internal or name is None
            body = node.child_by_field_name("body")
            children = [body] if body is not None else []
        elif kind in ("class_specifier", "struct_specifier", "union_specifier"):
            yield node, ns, cls, internal
            body = node.child_by_field_name("body")
            name = node.child_by_field_name("name")
            if body is not None and name is not None:
                child_cls = class_qualname(clean_name(node_text(src, name)), ns, cls)
                children = body.named_children
        elif kind in ("declaration", "field_declaration", "type_definition"):
            yield node, ns, cls, internal
            type_node = node.child_by_field_name("type")
            if type_node is not None and type_node.type in ("class_specifier", "struct_specifier", "union_specifier"):
                children = [type_node]
        elif kind in ("function_definition", "alias_declaration", "using_declaration"):
            yield node, ns, cls, internal
        for child in reversed(children):
            stack.append((child, child_ns, child_cls, child_internal))


def _add_returns_this(info: ClassInfo, facts: "ClassFacts", macros: Mapping[str, Any],
                      header_macros: Mapping[str, Any]) -> None:
    """The methods of a class that return `this` (defined in its body, or by a function-like
    macro its body invokes, `DEFINE_ORT_GRAPH_IR_TO_EXTERNAL_INTERNAL_FUNCS(OrtNode, ...)`):
    the file's macros first (with libclang's, only those the file itself uses), then the
    headers'."""
    info.returns_this |= facts.returns_this
    for name in facts.macro_uses:
        macro = macros.get(name) or header_macros.get(name)
        if macro is not None and macro.params is not None:
            info.returns_this |= methods_returning_this(macro.body)
