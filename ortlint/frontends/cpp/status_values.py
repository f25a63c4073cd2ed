"""Status objects returned by value, read as integer statuses (0: success).

Why: C++ code around ONNX Runtime reports failure through value classes of its own tree
(`onnxruntime::common::Status`, onnxruntime-extensions' `OrtxStatus`): a helper writes its
out-parameter only on success (`if (st.IsOk()) *out = p.release(); return st.Code();`,
`buf = p.release(); return Status::OK();`, `out = img; return {};`) and its caller returns early
on failure (`if (!st.IsOK()) return st;`). Unless the object has a value the engine can compare,
the helper's success case and its failures return the same unknown value, and the caller's
failure branch is read as leaking the out-parameter of the success case.

The policy (`[status_object]` in rules/cpp.toml) names the tests (`IsOK`, `IsOk`, `ok`) and the
code getters (`Code`); a class of the analyzed tree that declares one of the tests is a status
class. Its value is what the engine tracks for the variable itself: `x.IsOK()` is `x == 0`,
`x.Code()` is `x`, and `return {};`, `return T();`, `return T{};` in a function returning the
class is 0 (a default-constructed status is a success, by the convention these classes share),
and one built with a code and a message (`Status(category, code, text)`, `return {code, text};`)
is a failure, some value other than 0.
Templates (`StatusOr<T>`, which also holds a value), pointers and `[[guard]]` classes (their
own lowering, `guards.py`) are never status classes here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from tree_sitter import Node

from ... import ir
from ...ir import Const, Op
from .guards import guard_spec
from .model import ClassInfo, clean_name, parse_type

if TYPE_CHECKING:
    from .lowering import CppLowering

_SUCCESS = Const(0, "{}")
_FAILURE = Op(ir.NONZERO, ())


def status_class(low: "CppLowering", type_text: str | None) -> ClassInfo | None:
    """The class of the tree `type_text` names when it is a status class (a plain value type that
    declares one of the policy's tests), else None."""
    spec = low.unit.policy.status_objects
    if not type_text or not spec.ok_tests:
        return None
    ref = low.model.resolve_alias(parse_type(type_text))
    if ref.pointers or ref.array or ref.args or not ref.name or guard_spec(low, type_text) is not None:
        return None
    cls = low.model.find_class(ref.name, low.ns)
    if cls is None or not any(cls.has_method(m) for m in spec.ok_tests):
        return None
    return cls


def status_method(low: "CppLowering", type_text: str | None, name: str, base: Node | None, op: str,
                  arg_nodes: list[Node], discard: bool, dest: ir.Expr | None) -> ir.Expr | None:
    """`st.IsOK()` on a local or parameter of a status class: `st == 0`; `st.Code()`: `st`.
    None when this is no such call."""
    spec = low.unit.policy.status_objects
    if op != "." or arg_nodes or base is None or (name not in spec.ok_tests and name not in spec.codes):
        return None
    base = low.unparen(base)
    if base.type != "identifier":
        return None
    cls = status_class(low, type_text)
    if cls is None or not cls.has_method(name):
        return None
    obj = low.lower_expr(base)
    value: ir.Expr = Op("==", (obj, Const(0, "0"))) if name in spec.ok_tests else obj
    if name not in spec.ok_tests and (dest is None or discard):
        dest = low.temp()  # `return st.Code();` reads the code before the destructors run
    if dest is not None and not discard:
        low.emit(ir.Assign(low.loc(base), dest, value))
        return dest
    return value


def status_factory(low: "CppLowering", name: str) -> str:
    """`Status::OK()` where `Status` is a status class the file sees under another name than its
    own (`using common::Status;` in the enclosing namespace): the static method spelled with the
    class's full name, so that the call binds to it (its summary returns the success status).
    Any other name is returned as it is."""
    qual, sep, last = name.rpartition("::")
    if not sep or not qual:
        return name
    cls = status_class(low, qual)
    if cls is None or not cls.has_method(last):
        return name
    full = cls.qualname if "::" in cls.qualname else _only_qualified(low, cls.qualname)
    return f"{full}::{last}" if full and full != qual else name


def _only_qualified(low: "CppLowering", short: str) -> str | None:
    """The one namespace-qualified name under which the file's headers declare the class known
    here by its short name (header classes are listed under both), None when none or several."""
    classes = low.model.classes
    key = (short, len(classes))  # (`classes` only ever gains keys: its size says when to look again)
    cache = low.model.qualified_cache
    if key not in cache:
        suffix = "::" + short
        found = {k for k in classes if k.endswith(suffix)}
        cache[key] = found.pop() if len(found) == 1 else None
    return cache[key]


def returned_status(low: "CppLowering", node: Node) -> ir.Expr | None:
    """`return {};`, `return T();`, `return T{};` in a function declared to return the status
    class T by value: the success status, 0; `return {code, text};`: a failure, not 0. None
    otherwise (the value is lowered as usual; `return T(code, text);` is a construction,
    `constructed_status`)."""
    if low.node.type != "function_definition" or low.inline_target is not None:
        return None
    type_node = low.node.child_by_field_id(low.F.type)
    declarator = low.node.child_by_field_id(low.F.declarator)
    if type_node is None or declarator is None or declarator.type != "function_declarator":
        return None  # `T *f()`, `T &f()`: no status value
    type_text = clean_name(low.text(type_node))
    inner = low.unparen(node)
    braced = inner.type == "initializer_list"
    items = [c for c in inner.named_children if c.type != "comment"] if braced else []
    if not (len(items) >= 2 or _default_construction(low, node, type_text)):
        return None
    if status_class(low, type_text) is None:
        return None
    if not items:
        return _SUCCESS
    for item in items:
        low.lower_expr(item, discard=True)
    return _FAILURE


def constructed_status(low: "CppLowering", name: str, arg_nodes: list[Node], discard: bool,
                       dest: ir.Expr | None) -> ir.Expr | None:
    """`Status(category, code, text)`, `OrtxStatus{code, text}`: a status class built with a code
    (two arguments or more; one is a copy or a conversion) is a failure, not 0. None when this
    is no such construction."""
    if len(arg_nodes) < 2 or status_class(low, name) is None:
        return None
    for a in arg_nodes:
        low.lower_expr(a, discard=True)
    if dest is not None and not discard:
        low.emit(ir.Assign(low.loc(arg_nodes[0]), dest, _FAILURE))
        return dest
    return _FAILURE


def _default_construction(low: "CppLowering", node: Node, type_text: str) -> bool:
    """`{}`, `T()` or `T{}` with nothing inside, T the declared return type (as written, or its
    last name)."""
    node = low.unparen(node)
    if node.type == "initializer_list":
        return not any(c.type != "comment" for c in node.named_children)
    if node.type == "call_expression":
        fn, args = node.child_by_field_id(low.F.function), node.child_by_field_id(low.F.arguments)
    elif node.type == "compound_literal_expression":
        fn, args = node.child_by_field_id(low.F.type), node.child_by_field_id(low.F.value)
    else:
        return False
    if fn is None or args is None or any(c.type != "comment" for c in args.named_children):
        return False
    written = clean_name(low.text(fn))
    return written == type_text or written.rsplit("::", 1)[-1] == type_text.rsplit("::", 1)[-1]
