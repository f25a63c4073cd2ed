"""Loops of a function's control-flow graph, and what their exit conditions say.

The engine needs loop structure for one question: how many times can a loop body run? A JNI
local reference created on every iteration and never deleted overflows the local reference
table only when the trip count can grow with the input (ORT007). A loop is recognized from the
CFG alone (natural loops of back edges), so `for`, `while`, `do`/`while` and `goto` loops are all
seen the same way; its *limits* are the comparisons of its exiting branches (`i < n`, `i != 4`,
`!(i >= count)`), oriented so that they state the condition for staying in the loop.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from .. import ir
from ..ir import Const, Expr, Op, Var

SMALL_TRIP_COUNT = 16  # the local references the JNI specification guarantees to every native method

# op of `counter OP limit` that keeps the loop running -> how the trip count follows from the limit
# (`!=` is no bound: `p != NULL`, `state != DONE` say nothing about a count)
_STAY_BOUND = {"<": 0, "<=": 1}
_MIRROR = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}
_NEGATE = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}
_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass
class Loop:
    header: int
    body: frozenset[int]
    limits: list[Expr] = field(default_factory=list)  # `n` of `i < n`: what bounds the counter


class LoopForest:
    """The natural loops of one function, computed once and queried per block."""

    def __init__(self, blocks: dict[int, ir.Block], entry: int, succs: Callable[[int], list[int]]):
        self._blocks = blocks
        self._succs = succs
        self.loops = self._natural_loops(entry)
        self._by_block: dict[int, tuple[Loop, ...]] = {}

    def enclosing(self, bid: int) -> tuple[Loop, ...]:
        """The loops whose body contains block `bid`, outermost first."""
        cached = self._by_block.get(bid)
        if cached is None:
            cached = tuple(sorted((lp for lp in self.loops if bid in lp.body), key=lambda lp: -len(lp.body)))
            self._by_block[bid] = cached
        return cached

    @staticmethod
    def small_constant(loops: tuple[Loop, ...], constant: Callable[[Expr], int | None]) -> bool:
        """Do these nested loops together run at most SMALL_TRIP_COUNT times? Every one needs a
        constant limit (a literal, an enumerator or a `#define`)."""
        total = 1
        for lp in loops:
            bounds = [c for c in (constant(e) for e in lp.limits) if c is not None]
            if not bounds:
                return False
            total *= max(min(bounds), 0)
        return total <= SMALL_TRIP_COUNT

    @staticmethod
    def covered(loops: tuple[Loop, ...], capacities: list[str]) -> bool:
        """Did a successful EnsureLocalCapacity(x) reserve room for these loops? `x` must
        mention every variable of some limit of every loop (`EnsureLocalCapacity(env, n)` covers
        `i < n`; `EnsureLocalCapacity(env, 16)` covers no input-sized loop)."""
        if not capacities:
            return False
        reserved = [set(_IDENT.findall(text)) for text in capacities]
        for lp in loops:
            ok = False
            for limit in lp.limits:
                names = _names(limit)
                if names and any(names <= r for r in reserved):
                    ok = True
                    break
            if not ok:
                return False
        return True

    # ------------------------------------------------------------------ construction

    def _natural_loops(self, entry: int) -> list[Loop]:
        preds: dict[int, list[int]] = {b: [] for b in self._blocks}
        for b in self._blocks:
            for s in self._succs(b):
                if s in preds:
                    preds[s].append(b)
        back_edges = self._back_edges(entry)
        bodies: dict[int, set[int]] = {}
        for tail, header in back_edges:
            body = bodies.setdefault(header, {header})
            stack = [tail]
            while stack:
                n = stack.pop()
                if n in body:
                    continue
                body.add(n)
                stack.extend(preds.get(n, ()))
        loops = []
        for header in sorted(bodies):
            body = frozenset(bodies[header])
            loops.append(Loop(header, body, self._limits(body)))
        return loops

    def _back_edges(self, entry: int) -> list[tuple[int, int]]:
        """Edges to a block on the current depth-first path (iterative: no recursion limit)."""
        if entry not in self._blocks:
            return []
        out: list[tuple[int, int]] = []
        on_path: set[int] = {entry}
        seen: set[int] = {entry}
        stack = [(entry, iter(self._succs(entry)))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                on_path.discard(node)
                stack.pop()
            elif nxt in on_path:
                out.append((node, nxt))
            elif nxt not in seen and nxt in self._blocks:
                seen.add(nxt)
                on_path.add(nxt)
                stack.append((nxt, iter(self._succs(nxt))))
        return out

    def _limits(self, body: frozenset[int]) -> list[Expr]:
        limits: list[Expr] = []
        for bid in sorted(body):
            term = self._blocks[bid].term
            if not isinstance(term, ir.Branch):
                continue
            inside = (term.then in body, term.orelse in body)
            if inside[0] == inside[1]:
                continue  # not an exit of this loop
            limits.extend(_stay_limits(term.cond, stay=inside[0]))
        return limits


def _stay_limits(cond: Expr, stay: bool) -> list[Expr]:
    """Limits of `counter OP limit` comparisons that must hold to stay in the loop."""
    if isinstance(cond, Op) and cond.op == "!" and len(cond.operands) == 1:
        return _stay_limits(cond.operands[0], not stay)
    if isinstance(cond, Op) and len(cond.operands) == 2:
        if cond.op in ("&&", "||"):
            if (cond.op == "&&") == stay:  # every conjunct must hold to stay: each one bounds
                return _stay_limits(cond.operands[0], stay) + _stay_limits(cond.operands[1], stay)
            return []
        op = cond.op if stay else _NEGATE.get(cond.op)
        if op is None:
            return []
        left, right = cond.operands
        if op in _STAY_BOUND and isinstance(left, Var):
            return [_plus(right, _STAY_BOUND[op])]
        mirrored = _MIRROR.get(op)
        if mirrored in _STAY_BOUND and isinstance(right, Var):
            return [_plus(left, _STAY_BOUND[mirrored])]
    return []


def _plus(e: Expr, k: int) -> Expr:
    if k == 0:
        return e
    if isinstance(e, Const) and e.value is not None:
        return Const(e.value + k, str(e.value + k))
    return Op("+", (e, Const(k, str(k))))


def _names(e: Expr) -> set[str]:
    return set(_IDENT.findall(ir.expr_text(e)))
