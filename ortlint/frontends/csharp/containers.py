"""C# collections built or filled where the code reads them: arrays, tuples, anonymous objects,
collection expressions and initializers, and `c[k] = v`. Each one made here is a local
collection (`new[]`, `tuple`, `new{}` in the policy) that keeps what goes into it without owning
it: the objects are handed on only when the collection is (returned, stored in an owner)."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Deref, Field, Index, Opaque
from .syntax import F_EXPRESSION, F_LEFT, F_RIGHT, F_SUBSCRIPT, F_TYPE

_SOME_INDEX = Opaque("i")


def value_child(node: Node) -> Node | None:
    """The expression inside an argument or similar wrapper (`ref x`, `name: v`, `this`)."""
    kids = [c for c in node.children if (c.is_named and c.type != "comment") or c.type in ("this", "base")]
    return kids[-1] if kids else None


class CSharpContainers:
    """Part of `CSharpLowering`: collections made and filled here."""

    def emit_store(self, node: Node, coll: ir.Expr, coll_type: str, value: ir.Expr) -> None:
        """`coll[k] = value`, `{ value }` in an initializer: the collection keeps it."""
        self.call_counter += 1
        self.emit(ir.Call(self.call_counter, self.loc(node), "$store", "method", coll, (value,), None,
                          self.short_text(node), False))

    def make_collection(self, node: Node, kind: str, values: list[ir.Expr], dest: ir.Expr | None) -> ir.Expr:
        """An array, tuple or anonymous object built here: a local collection that keeps its
        elements (handed on only when it is)."""
        target = dest if dest is not None else self.temp()
        self.call_counter += 1
        self.emit(ir.Call(self.call_counter, self.loc(node), kind, "plain", None, tuple(values), target,
                          self.short_text(node), False))
        return target

    def store_element(self, left: Node, right: Node | None, node: Node) -> ir.Expr:
        """`c[k] = v`: the collection keeps v (a `stores` call on c, so a local collection
        keeps it this function's and any other one takes it away)."""
        coll_node = left.child_by_field_id(F_EXPRESSION)
        coll = self.lower_expr(coll_node)
        sub = left.child_by_field_id(F_SUBSCRIPT)
        for a in self.named(sub):
            if a.type == "argument":
                self.lower_expr(value_child(a))
        value = self.lower_expr(right)
        self.emit_store(node, coll, self.expr_type(coll_node), value)
        return Index(coll, _SOME_INDEX)

    def expr_tuple_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`(a, b)`: a collection holding both (returning it hands them on)."""
        values = [self.lower_expr(value_child(a)) for a in self.named(node) if a.type == "argument"]
        return self.make_collection(node, "tuple", values, dest)

    def expr_implicit_array_creation_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        init = next((c for c in self.named(node) if c.type == "initializer_expression"), None)
        return self.make_collection(node, "new[]", [self.lower_expr(c) for c in self.named(init)], dest)

    def expr_array_creation_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        init = next((c for c in self.named(node) if c.type == "initializer_expression"), None)
        type_node = node.child_by_field_id(F_TYPE)
        for rank in (c for c in self.named(type_node) if c.type == "array_rank_specifier"):
            for size in self.named(rank):
                self.lower_expr(size)
        return self.make_collection(node, "new[]", [self.lower_expr(c) for c in self.named(init)], dest)
    expr_stackalloc_expression = expr_implicit_stackalloc_expression = expr_array_creation_expression

    def expr_collection_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        values = []
        for el in self.named(node):
            inner = next(iter(self.named(el)), None)
            if inner is not None and inner.type == "expression_element":
                inner = next(iter(self.named(inner)), None)
            if inner is not None:
                values.append(self.lower_expr(inner))
        return self.make_collection(node, "new[]", values, dest)

    def expr_anonymous_object_creation_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        values = []
        for k in self.named(node):  # `new { a, B = v }`: a member name is followed by `=`
            nxt = k.next_sibling
            if not (k.type == "identifier" and nxt is not None and nxt.type == "="):
                values.append(self.lower_expr(k))
        return self.make_collection(node, "new{}", values, dest)

    def lower_initializer(self, node: Node, target: ir.Expr, type_: str) -> None:
        """`{ P = v, ... }` sets members of the new object (which owns nothing of ours unless
        its class disposes them: memory we do not own); `{ a, b }` / `{ [k] = v }` /
        `{ { k, v } }` add to a collection."""
        for item in self.named(node):
            if item.type == "assignment_expression":
                left = item.child_by_field_id(F_LEFT)
                value = self.lower_expr(item.child_by_field_id(F_RIGHT))
                if left is not None and left.type == "element_binding_expression":
                    for a in self.named(left):
                        self.lower_expr(value_child(a))
                    self.emit_store(item, target, type_, value)
                elif left is not None and left.type == "identifier":
                    self.emit(ir.Assign(self.loc(item), Field(Deref(target), self.text(left)), value))
                else:
                    self.emit(ir.Assign(self.loc(item), Field(Deref(target), "?"), value))
            elif item.type == "initializer_expression":
                values = [self.lower_expr(k) for k in self.named(item)]
                for v in values:
                    self.emit_store(item, target, type_, v)
            else:
                self.emit_store(item, target, type_, self.lower_expr(item))
