"""Associative containers of RAII values (`std::map<K, std::unique_ptr<T>>`): storing into them
hands the value on.

Why: a helper that keeps objects in a cache (`cache.emplace(k, std::move(ctx)); return out;`,
with `out = ctx.get()`) returns a pointer *borrowed* from the cache. Unless the store is
understood, the moved-from object looks like the helper's own and its summary says "returns a
new object the caller must delete": every caller is then reported for a leak it cannot fix.
Sequence containers (`std::vector`) are handled by `CppOwnership.container_op`; this covers the
maps, whose element is the mapped type (the second template argument).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from tree_sitter import Node

from ... import ir
from ...ir import AddrOf, Deref, Field, Index, Opaque, Var
from .model import parse_type

if TYPE_CHECKING:
    from .lowering import CppLowering

ASSOCIATIVE = frozenset({"std::map", "std::unordered_map", "std::multimap", "std::unordered_multimap", "map",
                         "unordered_map", "absl::flat_hash_map", "absl::node_hash_map"})
_STORES = frozenset({"emplace", "insert", "try_emplace", "insert_or_assign", "emplace_hint"})
_OWNING = ("smart", "ort", "class")


def mapped_type(low: "CppLowering", type_text: str | None) -> str | None:
    """The mapped type of a map type (`std::unique_ptr<Ctx>` for `std::unordered_map<size_t,
    std::unique_ptr<Ctx>>&`), None for anything else."""
    if not type_text:
        return None
    ref = low.model.resolve_alias(parse_type(type_text))
    if ref.pointers or ref.array or ref.name not in ASSOCIATIVE or len(ref.args) < 2:
        return None
    return ref.args[1]


def owning_map_store(low: "CppLowering", node: Node, base: Node | None, name: str,
                     arg_nodes: list[Node]) -> ir.Expr | None:
    """`cache.emplace(k, std::move(p))` on a map of RAII values: the values are the map's now
    (no longer this function's to release, nor leaked by it). None when this is not such a store."""
    if name not in _STORES or not arg_nodes or base is None:
        return None
    mapped = mapped_type(low, low.expr_type(base))
    if mapped is None or low.model.ownership(mapped).what not in _OWNING:
        return None
    low.lower_expr(base)
    names: set[str] = set()
    for a in arg_nodes:
        names |= _vars(low.lower_expr(a))
    if names:
        low.emit(ir.Havoc(low.loc(node), tuple(sorted(names)), "owned by a map of RAII objects"))
    return Opaque("void")


def _vars(e: ir.Expr) -> set[str]:
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, (Field, Deref, AddrOf)):
        return _vars(e.base)
    if isinstance(e, Index):
        return _vars(e.base) | _vars(e.index)
    if isinstance(e, (ir.Op, Opaque)):
        parts = e.operands if isinstance(e, ir.Op) else e.parts
        return set().union(*(_vars(p) for p in parts)) if parts else set()
    return set()
