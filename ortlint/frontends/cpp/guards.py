"""Status guard objects in C++: tie a guard's test to the success of the call it holds.

Why: `Ort::Status st{api->SessionGetInputTypeInfo(s, 0, &ti)}; if (!st.IsOK()) return;` and
hand-written guards (`StatusGuard g(api, api->CreateX(&x)); if (!g) return;`) test the status
through an object. Unless the test is lowered as "the held status is NULL", the engine cannot tell
the failure branch (where the out-parameter was never written) from the success branch, and
reports the out-parameter as leaked where it does not exist.

Two sources of knowledge, the same IR:

* a class whose body is visible: its constructor, destructor and methods are already lowered in
  place by `CppLowering`; what remains is `if (g)` / `if (!g)` on the object itself, lowered
  here as the object's `operator bool` body (the cpp model records `operator bool` as a method);
* a class known only from policy (`[[guard]]` in rules/cpp.toml, e.g. `Ort::Status` with
  `IsOK()`): constructing it from a status copies the status into the pseudo-member
  `$held` of the object (the constructor still adopts the status, so the status never leaks),
  and its tests compare `$held` with NULL.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from tree_sitter import Node

from ... import ir
from ...ir import Const, Deref, Field, Loc, Op
from ...policy_guards import HELD_FIELD, GuardSpec
from .model import clean_name, parse_type

if TYPE_CHECKING:
    from .lowering import CppLowering

OPERATOR_BOOL = "operator bool"
_NULL = Const(0, "nullptr")


def guard_spec(low: "CppLowering", type_text: str | None) -> GuardSpec | None:
    """The `[[guard]]` policy entry of a type (values only: a pointer to a guard is not one)."""
    if not type_text or not low.unit.policy.guards:
        return None
    ref = low.model.resolve_alias(parse_type(type_text))
    if ref.pointers or not ref.name:
        return None
    guards = low.unit.policy.guards
    return guards.get(ref.name) or guards.get(low.model.qualify_ort(ref.name, low.ns))


def hold_status(low: "CppLowering", obj: ir.Expr, type_text: str, args: tuple[ir.Expr, ...], loc: Loc) -> None:
    """`Ort::Status st{call}`: remember the adopted status in `st.$held` (before the constructor
    call adopts it), so that `st.IsOK()` can be decided by the state of that status."""
    if len(args) == 1 and guard_spec(low, type_text) is not None:
        low.emit(ir.Assign(loc, Field(obj, HELD_FIELD), args[0]))


def hold_constructed_status(low: "CppLowering", node: Node, callee: str, args: tuple[ir.Expr, ...],
                            result: ir.Expr) -> None:
    """`Ort::Status(call)` / `Ort::Status{call}` as an expression (`auto st = Ort::Status(...)`,
    `Ort::Status(...).IsOK()`): the constructed object remembers the status like a declared one."""
    if len(args) == 1 and isinstance(result, (ir.Var, Field)) and guard_spec(low, callee) is not None:
        low.emit(ir.Assign(low.loc(node), Field(result, HELD_FIELD), args[0]))


def construction_args(low: "CppLowering", type_text: str, value: Node | None) -> list[Node] | None:
    """`Ort::Status st = Ort::Status{call};`: the arguments of a copy-initialization that
    constructs the declared guard type (lowered like `Ort::Status st{call};`), else None."""
    if value is None or guard_spec(low, type_text) is None or guard_type_of(low, value) is None:
        return None
    inner = low.strip_casts(value)
    if inner.type == "call_expression":
        return low.call_args(inner)
    body = inner.child_by_field_name("value")
    return [a for a in body.named_children if a.type != "comment"] if body is not None else None


def guard_type_of(low: "CppLowering", node: Node | None) -> str | None:
    """The guard type a receiver expression has when the usual type lookup does not say:
    `auto st = Ort::Status(...)` (a declared `auto`) or a temporary `Ort::Status(...)`."""
    if node is None:
        return None
    node = low.strip_casts(node)
    if node.type in ("call_expression", "compound_literal_expression"):
        fn = node.child_by_field_name("function" if node.type == "call_expression" else "type")
        name = clean_name(low.text(fn)) if fn is not None else ""
        return name if guard_spec(low, name) is not None else None
    return None


def guard_method(low: "CppLowering", type_text: str | None, name: str, base: Node | None, op: str,
                 arg_nodes: list[Node], discard: bool, dest: ir.Expr | None) -> ir.Expr | None:
    """`st.IsOK()` on a policy guard: `st.$held == NULL`; None when this is not such a test."""
    spec = guard_spec(low, type_text)
    test = spec.test_of(name) if spec is not None and base is not None and not arg_nodes else None
    if test is None:
        return None
    obj = low.lower_expr(base)
    obj = Deref(obj) if op == "->" else obj
    value = Op(test, (Field(obj, HELD_FIELD), _NULL))
    if dest is not None and not discard:
        low.emit(ir.Assign(low.loc(base), dest, value))
        return dest
    return value


def guard_condition(low: "CppLowering", node: Node) -> ir.Expr | None:
    """`if (g)` on a guard object: the value of its `operator bool` (a visible body lowered in
    place, or the policy's `bool_is_ok`); None when `node` is not a guard object."""
    if node.type != "identifier":
        return None
    name = clean_name(low.text(node))
    own = low.owner_of(name)
    if own is not None and own.what == "class" and own.cls is not None:
        defs = own.cls.methods.get(OPERATOR_BOOL)
        if not defs:
            return None
        obj = low.lower_expr(node)
        result = low.temp()
        if not low.inline_method(defs[0], own.cls, obj, [], low.loc(node), result):
            return None
        return result
    spec = guard_spec(low, low.type_of_name(name))
    if spec is None or spec.bool_is_ok is None:
        return None
    return Op("==" if spec.bool_is_ok else "!=", (Field(low.lower_expr(node), HELD_FIELD), _NULL))
