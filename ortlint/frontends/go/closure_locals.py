"""Locals that name one function literal for the whole function: `check := func(v ort.Value) {
defer v.Destroy() ... }` then `check(t1)`, `check(t2)`. A call through such a local runs that
literal, so it is named after the literal's own function (`Outer$func12`) and the literal's
summary applies, as for `func(){...}()` called where it is written.

Why only locals bound once: a name given another value anywhere in the function (an assignment,
a second declaration in an inner scope, a parameter of a nested literal, a `range` variable)
might hold something else at a call, and such a call stays a call of an unknown function."""
from __future__ import annotations

from typing import Callable

from tree_sitter import Node

from .syntax import F

_BINDING_LISTS = ("short_var_declaration", "assignment_statement", "range_clause", "receive_statement")


def closure_locals(body: Node | None, text: Callable[[Node], str],
                   named: Callable[[Node | None], list[Node]]) -> dict[str, Node]:
    """name -> the func_literal it is bound to, for every name of `body` bound exactly once, and
    to a function literal."""
    if body is None:
        return {}
    bindings: dict[str, int] = {}
    literals: dict[str, Node] = {}

    def bind(name_node: Node, value: Node | None, nested: bool) -> None:
        if name_node.type != "identifier":
            return
        name = text(name_node)
        bindings[name] = bindings.get(name, 0) + 1
        if value is not None and value.type == "func_literal" and not nested:
            literals[name] = value

    stack: list[tuple[Node, bool]] = [(body, False)]
    while stack:  # nested: inside a literal of the body (its names count, but are its own locals)
        n, nested = stack.pop()
        t = n.type
        if t in _BINDING_LISTS:
            lefts = named(n.child_by_field_id(F.left))
            rights = named(n.child_by_field_id(F.right)) if t != "range_clause" else []
            for i, left in enumerate(lefts):
                bind(left, rights[i] if len(rights) == len(lefts) else None, nested)
        elif t == "var_spec":
            values = named(n.child_by_field_id(F.value))
            names = n.children_by_field_id(F.name)
            for i, name_node in enumerate(names):
                bind(name_node, values[i] if len(values) == len(names) else None, nested)
        elif t in ("parameter_declaration", "variadic_parameter_declaration"):
            for name_node in n.children_by_field_id(F.name):
                bind(name_node, None, nested)
        elif t == "type_switch_statement":
            for alias in named(n.child_by_field_id(F.alias)):
                bind(alias, None, nested)
        inner = nested or t == "func_literal"
        stack.extend((c, inner) for c in n.named_children)
    return {name: lit for name, lit in literals.items() if bindings.get(name) == 1}
