"""Objects that own themselves: a class whose own code deletes `this` (`delete this;`,
`std::unique_ptr<T> self(this);`), a class derived from a library base the policy lists as
self-owning (`[[self_owning]]`: `Napi::AsyncWorker`, deleted by the library once queued), and an
object whose constructor registers `this` with someone else (`loop_attach(loop, this)`,
`Connect(sender, Receiver{this})`).

Why: `auto *w = new Worker(env); w->Queue(); return;` and `new Watcher(loop, fd);` release
nothing and leak nothing; read as plain `new`, every such function is a false ORT001.

What hands the object over:
* a library self-owning base: one of the methods its table lists (`Queue`), since the library
  deletes the object only once that work started;
* a class of the tree that deletes itself: a call of any of its methods. The member that deletes
  it usually runs later, from a callback or a virtual the analysis cannot follow (`Start()` posts
  work whose completion calls `Finish()`), so any started object may be gone. Before any method
  runs (an early return right after `new`) it is still the caller's and its loss is a leak;
* a constructor that gives `this` to a call or to another object: owned by that one as soon as it
  is built.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tree_sitter import Node

from ... import ir
from ..c.syntax import declarator_name, find_function_declarator
from .model import ClassInfo, FileModel, clean_name, innermost_name, parse_type, strip_template
from .syntax import _expr_vars as _vars_of

if TYPE_CHECKING:
    from ...policy import Policy
    from ...policy_self_owning import SelfOwningSpec

# `delete this`, or `this` adopted by a smart pointer (`std::unique_ptr<T> self(this)`, `{this}`,
# `std::unique_ptr<T>(this)`)
_DELETES_THIS = re.compile(rb"\bdelete\s+this\b|\b(?:unique_ptr|shared_ptr)\s*<[^;{}()]*>\s*\w*\s*[({]\s*this\s*[)}]")


# `*out = this;`, `*ppv = static_cast<IUnknown*>(this);`, `*ppv = (IFoo *)this;`: the method
# stores its object through a pointer (group 1 names it; a parameter of the method, checked)
_STORES_THIS = re.compile(rb"\*\s*(\w+)\s*=\s*(?:\w+_cast\s*<[^;<>]*>\s*\(\s*|\(\s*[\w:]+\s*\*\s*\)\s*)?\(?\s*this\b")

_TEMPLATE_ARGS = re.compile(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>")
# the cache keys of may_start_themselves / may_register_themselves (no class has an empty name)
_STARTS = ("", ("start",))
_REGISTERS = ("", ("register",))
_STORES = ("", ("stores-this",))


@dataclass(frozen=True)
class SelfOwnership:
    """How an object of a class hands itself over: by calling one of `methods` (None: any
    method), or `on_construction` (its constructor registered `this` elsewhere)."""

    methods: frozenset[str] | None
    on_construction: bool = False
    parent_argument: bool = False  # owned from construction when built with a parent (Qt)

    def handed_over_by(self, method: str) -> bool:
        return self.methods is None or method in self.methods


def may_start_themselves(model: FileModel) -> bool:
    """Could a method call hand an object of this file over to itself? Only with a `delete this`
    (or `unique_ptr(this)`) in the file or a class of the file derived from a listed library base
    with `handed_over_by` methods; most files have neither, and their member calls are never
    asked about (remembered per model)."""
    return _cached_flag(model, _STARTS, _may_start_themselves)


def may_register_themselves(model: FileModel) -> bool:
    """Could a `new` of this file build an object owned from its construction? Only with a
    constructor that mentions `this`, or a listed `on_construction` class named in the file."""
    return _cached_flag(model, _REGISTERS, _may_register_themselves)


def _cached_flag(model: FileModel, key: tuple[str, tuple[str, ...]], compute) -> bool:
    found = model.self_owning_cache.get(key)
    if found is None:
        found = model.self_owning_cache[key] = bool(compute(model))
    return bool(found)


def _listed_bases(model: FileModel, qualname: str) -> list["SelfOwningSpec"]:
    listed = model.policy.self_owning
    if not listed:
        return []
    return [listed[n] for n in (clean_name(strip_template(b)) for b in model.base_names(qualname)) if n in listed]


def _may_start_themselves(model: FileModel) -> bool:
    if _DELETES_THIS.search(model.src):
        return True
    return any(spec.handed_over_by for qualname in {info.qualname for info in model.classes.values()}
               for spec in _listed_bases(model, qualname))


_CONSTRUCTION_NAMES: dict[int, tuple[object, "re.Pattern[bytes] | None"]] = {}


def _construction_names(listed: dict[str, "SelfOwningSpec"]) -> "re.Pattern[bytes] | None":
    """One pattern for the listed classes owned from their construction (80-odd Qt classes: one
    scan of the file instead of one per name), made once per policy table."""
    hit = _CONSTRUCTION_NAMES.get(id(listed))
    if hit is None or hit[0] is not listed:
        names = sorted((n for n, spec in listed.items() if spec.on_construction or spec.parent_argument), key=len, reverse=True)
        pattern = re.compile(b"|".join(re.escape(n.encode()) for n in names)) if names else None
        hit = _CONSTRUCTION_NAMES[id(listed)] = (listed, pattern)
    return hit[1]  # type: ignore[return-value]


def _may_register_themselves(model: FileModel) -> bool:
    listed = model.policy.self_owning
    pattern = _construction_names(listed) if listed else None
    if pattern is not None and pattern.search(model.src):
        return True  # (`new torch::jit::ProfileOp(...)`, as written; classes of the file derived from one below)
    for qualname in {info.qualname for info in model.classes.values()}:
        if any(spec.on_construction or spec.parent_argument for spec in _listed_bases(model, qualname)):
            return True
        if any(b"this" in model.src[c.start_byte:c.end_byte] for c in _constructors(model.classes[qualname])):
            return True
    return False


def self_ownership(model: FileModel, policy: "Policy", type_text: str, ns: tuple[str, ...]) -> SelfOwnership | None:
    """The self-ownership of the class `type_text` names (pointers and templates dropped), or None
    when its objects are their creator's to delete (remembered per model: asked for every `new`
    and every member call on a typed receiver)."""
    name = clean_name(strip_template(parse_type(type_text).name or ""))
    if not name:
        return None
    key = (name, ns)
    cache = model.self_owning_cache
    if key not in cache:
        cache[key] = _self_ownership(model, policy, name, ns)
    return cache[key]


def _find_class(model: FileModel, name: str, ns: tuple[str, ...]) -> ClassInfo | None:
    """The class `name` means, through an alias template (`operation_t<S, R>` = `typename
    _Operation<S, R>::type`) and a member class of a template defined out of line
    (`struct _Operation<S, R>::type {...}`, recorded with its template arguments)."""
    cls = model.find_class(name, ns)
    if cls is not None:
        return cls
    alias = model.aliases.get(name) or model.aliases.get(name.rsplit("::", 1)[-1])
    if alias is not None:
        name = clean_name(parse_type(alias.removeprefix("typename ")).name or "")
        cls = model.find_class(name, ns) if name else None
        if cls is not None or "::" not in name:
            return cls
    for key, info in model.classes.items():
        if "<" in key and _TEMPLATE_ARGS.sub("", key).endswith(name):
            return info
    return None


def _constructors(cls: ClassInfo) -> list[Node]:
    """The constructors of `cls`, those of a class named with its template's arguments too
    (`_Operation<S, R>::type`'s `type(...)` is recorded as a method)."""
    last = _TEMPLATE_ARGS.sub("", cls.name).rsplit("::", 1)[-1]
    return cls.ctors + (cls.methods.get(last, []) if last != cls.name else [])


def _listed(policy: "Policy", name: str, ns: tuple[str, ...]) -> "SelfOwningSpec | None":
    """The `[[self_owning]]` entry of the library class `name` (as written, or qualified by one
    of the enclosing namespaces `ns`)."""
    listed = policy.self_owning
    if not listed:
        return None
    for i in range(len(ns), -1, -1):
        spec = listed.get("::".join(ns[:i] + (name,)))
        if spec is not None:
            return spec
    return None


def _self_ownership(model: FileModel, policy: "Policy", name: str, ns: tuple[str, ...]) -> SelfOwnership | None:
    cls = _find_class(model, name, ns)
    if cls is None:
        spec = _listed(policy, name, ns)  # a library class (`new torch::jit::ProfileOp(graph, ...)`)
        if spec is None:
            return None
        return SelfOwnership(spec.handed_over_by if spec.handed_over_by else frozenset(), spec.on_construction,
                             spec.parent_argument)
    methods: set[str] = set()
    any_method = False
    registered = False  # (a listed base owned from its construction)
    parented = False  # (a listed base owned by the parent it is built with)
    seen: set[str] = set()
    todo: list[ClassInfo] = [cls]
    while todo and len(seen) < 16:
        info = todo.pop()
        if info.qualname in seen:
            continue
        seen.add(info.qualname)
        any_method = any_method or _deletes_itself(model.src, info)
        for base in model.base_names(info.qualname):
            base_name = clean_name(strip_template(base))
            spec = policy.self_owning.get(base_name)
            if spec is not None:
                methods |= spec.handed_over_by
                registered = registered or spec.on_construction
                parented = parented or spec.parent_argument
            found = model.find_class(base_name, ns)
            if found is not None:
                todo.append(found)
    on_construction = registered or any(_gives_this_away(model, ctor) for ctor in _constructors(cls))
    if not (any_method or methods or on_construction or parented):
        return None
    return SelfOwnership(None if any_method else frozenset(methods), on_construction, parented)


def _deletes_itself(src: bytes, cls: ClassInfo) -> bool:
    """Does a member of `cls` whose body this file holds delete `this`?"""
    for defs in cls.methods.values():
        for node in defs:
            if _DELETES_THIS.search(src, node.start_byte, node.end_byte):
                return True
    return False


def _gives_this_away(model: FileModel, ctor: Node) -> bool:
    """Does the constructor pass `this` to a call (`attach(loop, this)`), possibly inside an
    aggregate (`Connect(s, Receiver{this})`)? `this->x`, `*this` and a member initialized with
    `this` itself (`self_(this)`) keep it inside the object."""
    if b"this" not in model.src[ctor.start_byte:ctor.end_byte]:
        return False
    stack = [ctor]
    while stack:
        node = stack.pop()
        if node.type == "this" and _passed_to_call(node):
            return True
        stack.extend(node.named_children)
    return False


def _passed_to_call(node: Node) -> bool:
    parent = node.parent
    while parent is not None and parent.type in ("initializer_list", "parenthesized_expression", "compound_literal_expression"):
        parent = parent.parent
    if parent is None or parent.type != "argument_list":
        return False
    owner = parent.parent
    return owner is not None and owner.type in ("call_expression", "new_expression")


def hand_over_self(lowering, receiver: ir.Expr, loc: ir.Loc, why: str) -> None:
    """The object `receiver` designates is its own now: what it holds is no longer checked."""
    names = tuple(sorted(_vars_of(receiver)))
    if names and lowering.cur is not None:
        lowering.emit(ir.Havoc(loc, names, why))


def may_store_themselves(model: FileModel) -> bool:
    """Could a method of this file store `this` through a pointer (`*ppv = this`)? Most files
    have no such text, and their member calls are never asked about (remembered per model)."""
    return _cached_flag(model, _STORES, lambda m: _STORES_THIS.search(m.src) is not None)


def stores_this_through_param(model: FileModel, cls: ClassInfo, method: str) -> bool:
    """Does a definition of `cls::method` in this file store `this` through one of its pointer
    parameters (`*ppv = static_cast<IUnknown*>(this)`, COM's QueryInterface)? Then the object is
    the caller's out-parameter's: the call hands the receiver on, like a free function given the
    object and storing it through its out-parameter (remembered per model)."""
    key = (f"{cls.qualname}::{method}", ("stores-this",))
    cache = model.self_owning_cache
    if key not in cache:
        cache[key] = any(_stores_this(model, node) for node in _definitions(model, cls, method))
    return bool(cache[key])


def _definitions(model: FileModel, cls: ClassInfo, method: str) -> list[Node]:
    """The definitions of `cls::method` in this file: attached to the class, or, for a class
    declared in a header (whose members are merged after the file's definitions were attached),
    the out-of-class `T Cls::method(...) {...}` of the file that store `this` somewhere."""
    found = cls.methods.get(method)
    if found or not cls.from_header:
        return found or []
    index = _out_of_class_storing(model)
    return index.get(f"{cls.name}::{method}", []) + index.get(f"{cls.qualname}::{method}", []) \
        if cls.qualname != cls.name else index.get(f"{cls.name}::{method}", [])


def _out_of_class_storing(model: FileModel) -> dict[str, list[Node]]:
    """Out-of-class function definitions whose text stores `this` through a pointer, by their
    declared name (`Cls::method`): built once per model from the pattern's matches, so a file
    with many member calls does not walk its definitions once per call."""
    key = ("", ("stores-this-index",))
    cache = model.self_owning_cache
    index = cache.get(key)
    if index is None:
        starts = [m.start() for m in _STORES_THIS.finditer(model.src)]
        index = {}
        if starts:
            for node, _ns, cls_name, _internal in model.declarations:
                if cls_name is not None or node.type != "function_definition":
                    continue
                at = bisect.bisect_left(starts, node.start_byte)
                if at == len(starts) or starts[at] >= node.end_byte:
                    continue
                named = innermost_name(model.src, node.child_by_field_id(model.F.declarator))
                if named is not None:
                    index.setdefault(named[0], []).append(node)
        cache[key] = index
    return index


def _stores_this(model: FileModel, node: Node) -> bool:
    body = node.child_by_field_id(model.F.body)
    func = find_function_declarator(node.child_by_field_id(model.F.declarator))
    params = func.child_by_field_id(model.F.parameters) if func is not None else None
    if body is None or params is None:
        return False
    names = {declarator_name(p.child_by_field_id(model.F.declarator), model.src)
             for p in params.named_children if p.type == "parameter_declaration"}
    return any(m.group(1).decode("utf-8", "replace") in names
               for m in _STORES_THIS.finditer(model.src, body.start_byte, body.end_byte))
