"""The Go lowering's bookkeeping: break targets, deferred calls, closures still to lower."""
from __future__ import annotations

from dataclasses import dataclass, field

from tree_sitter import Node

from ... import ir
from ...ir import Var


@dataclass
class Breakable:
    brk: int
    cont: int | None
    labels: tuple[str, ...]
    kills: tuple[str, ...] = ()  # variables of a loop body: they die when it ends


@dataclass
class Deferred:
    """A `defer`: its call (or closure body), the values it bound, and its guard flag."""

    node: Node  # the call_expression
    number: int
    flag: Var | None = None  # set when the defer statement ran (a defer inside a branch or loop)
    keep: Var | None = None  # a defer in a loop: the collection of every receiver it bound
    bound: dict[int, ir.Expr] = field(default_factory=dict)  # node id -> the value bound at `defer`
    scopes: list[dict[str, str]] | None = None  # the names visible at the `defer` (a closure reads those)


@dataclass
class PendingClosure:
    node: Node  # func_literal
    name: str
    drop_returns: bool = False
