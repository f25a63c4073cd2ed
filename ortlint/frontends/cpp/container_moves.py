"""Whole-container moves and stores the C lowering does not see: `a.swap(b)` exchanges the
elements (`std::vector<T*> tmp; tmp.swap(v);` empties v: what a loop released in v before is no
longer in it, so a second pass over v releases nothing); `map_[k] = v` with pointer keys keeps k
(a key the map owns, deleted by a loop over its keys)."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Var
from .containers import ASSOCIATIVE
from .model import parse_type


class CppContainerMoves:
    """Whole-container exchanges lowered as the three assignments they amount to."""

    def swap_containers(self, node: Node, base: Node, arg_nodes: list[Node]) -> ir.Expr | None:
        """`a.swap(b)`: `t = a; a = b; b = t` through an aggregate temporary. None when the
        call is not a one-argument swap."""
        if len(arg_nodes) != 1:
            return None
        left = self.lower_expr(base)
        right = self.lower_expr(arg_nodes[0])
        loc = self.loc(node)
        temp = self.temp()
        self.locals[temp.name] = True  # an aggregate: the elements go with it
        self.emit(ir.Assign(loc, temp, left))
        self.emit(ir.Assign(loc, left, right))
        self.emit(ir.Assign(loc, right, temp))
        return ir.Opaque("void")


class CppMapKeyStores:
    """`map_[k] = v` with pointer keys, on a map the function did not declare (a member, a map
    reached through a pointer): the map keeps k (a key it owns, deleted by a loop over its keys:
    `delete it->first`), as `push_back(k)` keeps an element."""

    def expr_subscript_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        result = super().expr_subscript_expression(node, discard, dest)  # type: ignore[misc]
        if type(result) is ir.Index and type(result.index) is Var and not self.local_map(result.base) \
                and self.keyed_by_pointer(node.child_by_field_id(self.F.argument)):
            self.emit(ir.Assign(self.loc(node), ir.Index(result.base, ir.Opaque("key")), result.index))
        return result

    def local_map(self, base: ir.Expr) -> bool:
        """A map this function declared: it dies here, keeping nothing (its keys leak with it
        unless released), so its keys stay this function's."""
        return type(base) is Var and base.name in self.locals

    def keyed_by_pointer(self, base: Node | None) -> bool:
        """Is `base` an associative container whose key type is a pointer?"""
        type_text = self.expr_type(base) if base is not None else None
        if not type_text:
            return False
        ref = self.model.resolve_alias(parse_type(type_text))
        if ref.pointers or ref.array or ref.name not in ASSOCIATIVE or not ref.args:
            return False
        return bool(parse_type(ref.args[0]).pointers)
