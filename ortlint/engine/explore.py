"""Exploration: the worklist over blocks, what is kept apart and what is joined, the bounds.

A block keeps its first `Budget.exact_states` states exactly; past them, a state joins the one
with its property key (`join.property_key`: the life stage of every must-release resource),
and past `Budget.join_held_after` property states, "held if acquired" joins
(`join.join_held`). Blocks run their events in order (`_event`) and end in a terminator that
splits on branch conditions (`_terminator`). The bounds of `Budget` are safety nets far above
real code; reaching one leaves a note naming the function, and statement-level checks
(`_statement_checks`) still cover every reachable statement.
"""
from __future__ import annotations

import heapq
from typing import Callable, Container, Iterable

from dataclasses import dataclass

from .. import ir
from ..findings import LIMIT
from ..ir import Assign, Branch, Call, Halt, Havoc, Jump, Kill, Return, ScopeExit, Use
from .exprs import dedupe
from .interior import interior_value
from .join import (FactScope, coarse_key, covers, fact_matters, join, join_coarse, join_held, key_overlap, pinned_by,
                   property_key, settled)
from .messages import branch_note
from .replaced import released_and_replaced
from .state import (BORROWED, CONSUMED, DANGLING, HELD, OPAQUE, RELEASED, Res, State, is_null_fact, made_outside, referenced_ids,
                    replaced)


@dataclass
class Budget:
    """Limits that keep every function's analysis bounded (see README, "Limits")."""

    exact_states: int = 4  # states kept apart per block before joining by property key
    join_held_after: int = 4  # property states per block before "held vs never acquired" are joined
    # The bound (docs/architecture.md, "The bound"): a block makes at most `keyed_states` property
    # states; past them, an arriving state with a new property key is merged into the most similar
    # one by `join.join_coarse` (what both hold is kept: a leak on every merged path is still found).
    # A property state that has changed `slot_changes` times takes only coarse joins from then on.
    keyed_states: int = 128
    slot_changes: int = 32
    # Safety nets far above real code (bench/run_real.py prints the largest figures reached); past
    # half of either, the function goes on in coarse mode (one more property state per block at
    # most, every join coarse), which ends within blocks x (states kept) x (height of the coarse
    # order) block runs:
    max_block_visits: int = 400_000  # states processed per function
    max_work: int = 20_000_000  # the same, weighted by state size (entries per processed state)
    # bindings looked at by events (each assignment's GC scans the state): bounds one long
    # block, e.g. 10 000 generated `char *pN = NULL;` lines (quadratic, minutes of work),
    # which the per-state budgets above never see. Real functions stay under 20 000.
    max_event_work: int = 2_000_000
    max_conds: int = 6
    # bindings and resources of the states kept at the blocks (what the analysis holds in
    # memory): the real-code corpus peaks at 120 000 (a TensorRT EP `ComputeImpl`); a fuzzed
    # JNI function with 60 strings each acquired under its own NULL test reached 8 M (1 GB).
    # Past half of it, coarse mode too.
    max_retained: int = 1_500_000


class _BlockStates:
    """What has reached one block: the exact states, then one joined state per property key.
    (A plain class: one is made per block of every analyzed function.)"""

    __slots__ = ("exact", "joined", "by_coarse", "coarse_src", "alias", "released", "exact_released", "settled",
                 "created", "changes", "widened", "coarse", "size")

    def __init__(self) -> None:
        self.exact: list[State] = []
        self.joined: dict[tuple, State] = {}
        # coarse key -> property keys, built when the second-level join is first tried here (most
        # blocks never get that many property states): from the state that first had each key
        self.by_coarse: dict[tuple, list[tuple]] | None = None
        self.coarse_src: dict[tuple, State] = {}
        self.alias: dict[tuple, tuple] = {}  # property keys merged into another
        self.released: set[str] = set()  # parameters released on some path here
        self.exact_released = False  # `released` has those of the exact states
        self.settled: dict[tuple, tuple[State, bool]] = {}  # property key -> (its joined state, `join.settled` of it)
        self.created = 0  # property states made here (at most Budget.keyed_states)
        self.changes: dict[tuple, int] = {}  # property key -> how often its state changed
        self.widened: set[tuple] = set()  # property keys merged into another by `join_coarse` (for good)
        self.coarse: set[tuple] = set()  # property keys whose state takes only coarse joins
        self.size = 0  # bindings and resources of the states made here (Budget.max_retained)

    def resolve(self, key: tuple) -> tuple:
        """Where states of property key `key` go (aliases followed, the path shortened)."""
        alias = self.alias
        if key not in alias:  # (most keys: no call)
            return key
        target = alias[key]
        seen = 0
        while target in alias and seen < 64:
            target = alias[target]
            seen += 1
        alias[key] = target
        return target

    def move(self, okey: tuple, nkey: tuple) -> None:
        """The state of `okey` now lives at `nkey`: its counters go with it."""
        changes = self.changes.pop(okey, 0)
        self.changes[nkey] = max(changes, self.changes.get(nkey, 0))
        if okey in self.coarse:
            self.coarse.discard(okey)
            self.coarse.add(nkey)



def successors(blocks: dict[int, ir.Block]) -> Callable[[int], list[int]]:
    """A block's successors (its handler included), computed once per block. A plain function
    of the blocks, not a method: kept by the analyzer's helpers (`Ahead`, `LoopForest`), a
    bound method would make every analyzer a reference cycle that only the cyclic garbage
    collector frees (a fifth of the analysis time went to collections)."""
    cache: dict[int, list[int]] = {}

    def succs(bid: int) -> list[int]:
        out = cache.get(bid)
        if out is None:
            block = blocks[bid]
            term = block.term
            out = []
            if isinstance(term, ir.Jump):
                out.append(term.target)
            elif isinstance(term, ir.Branch):
                out.extend((term.then, term.orelse))
            if block.handler is not None:
                out.append(block.handler)
            cache[bid] = out
        return out
    return succs


_RESOURCE = ("r",)
_FREE_AFTER = 64  # blocks from which a function's finished blocks drop their states (`_explore`)
# blocks from which states lose what dead locals hold (`_trim_dead`): in a function of fewer, the
# liveness it needs costs more than the states it merges save
TRIM_FROM = 32
_GONE = Res(None, CONSUMED)  # (the stage of a binding's resource the state no longer has)
_TRIMMED = frozenset((RELEASED, CONSUMED, DANGLING, BORROWED, OPAQUE))  # what a dead local may lose


def postorder(roots: Iterable[int], known: Container[int], succs: Callable[[int], list[int]]) -> list[int]:
    """The blocks reachable from `roots` (each root in turn, skipping what an earlier one
    reached), every block after the blocks it reaches first; only blocks in `known`.
    Iterative: no recursion limit."""
    seen: set[int] = set()
    out: list[int] = []
    for root in roots:
        if root in seen or root not in known:
            continue
        seen.add(root)
        stack = [(root, iter(succs(root)))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                out.append(node)
                stack.pop()
            elif nxt not in seen and nxt in known:
                seen.add(nxt)
                stack.append((nxt, iter(succs(nxt))))
    return out


def components(root: int, succs: Callable[[int], list[int]], known: Container[int]) -> list[list[int]]:
    """The strongly connected components of the blocks reachable from `root`, in topological
    order: an edge between two components goes to a later one (Tarjan's algorithm, iterative:
    no recursion limit)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    index[root] = low[root] = 0
    stack.append(root)
    on_stack.add(root)
    work = [(root, iter(succs(root)))]
    while work:
        node, it = work[-1]
        for nxt in it:
            if nxt not in known:
                continue
            if nxt not in index:
                index[nxt] = low[nxt] = len(index)
                stack.append(nxt)
                on_stack.add(nxt)
                work.append((nxt, iter(succs(nxt))))
                break
            if nxt in on_stack and index[nxt] < low[node]:
                low[node] = index[nxt]
        else:
            work.pop()
            if work and low[node] < low[work[-1][0]]:
                low[work[-1][0]] = low[node]
            if low[node] == index[node]:
                members = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    members.append(w)
                    if w == node:
                        break
                out.append(members)
    out.reverse()  # (Tarjan's algorithm finds them in reverse topological order)
    return out


def merge_points(blocks: dict[int, ir.Block], succs: Callable[[int], list[int]]) -> frozenset[int]:
    """The blocks that more than one edge enters (a handler's edges included): where states of
    different paths meet, loop heads among them."""
    seen: set[int] = set()
    merges: set[int] = set()
    for bid in blocks:
        for nxt in succs(bid):
            if nxt in seen:
                merges.add(nxt)
            seen.add(nxt)
    return frozenset(merges)


def _unreachable_outside(state: State) -> list[str]:
    """Values made outside the function under a renamed identity (`#2`, `#w`, `#prev`: a second
    read of a location, a value a callee stored, an earlier iteration's) that no binding holds
    and no other resource depends on (`parent`). Nothing can reach them again: an event reaches
    a resource only through a binding, and a read of an unbound location makes a new identity.
    Nor can a caller: the summary names a parameter's memory by its access path, never a renamed
    identity (`exprs.param_path`). Only a must-release one could still matter (it leaks), and a
    value made outside never is one."""
    r = state.r
    renamed = [rid for rid in r if rid[0] == "p" and "#" in rid]
    if not renamed:
        return []
    referenced = referenced_ids(state.b)
    gone = [rid for rid in renamed if rid not in referenced and r[rid].st in _TRIMMED]
    if gone:
        # kept: what another resource depends on, and memory that holds a resource still held
        # (dropping its binding would make that one look lost)
        keep = {res.parent for res in r.values() if res.parent is not None}
        keep.update(k[0][1:] for k, v in state.b.items() if k[0][:2] == "@p" and v[0] == "r"
                    and r.get(v[1], _GONE).st == HELD)
        gone = [rid for rid in gone if rid not in keep]
    return gone


def _drop_unreachable_outside(state: State) -> State:
    """`state` without the unreachable values of `_unreachable_outside` and the memory they had
    (and so on: what only that memory held); at the blocks where paths meet (`merge_points`). Kept, each iteration of a loop over a list that a
    callee unlinks node by node (`while (l->head) remove(&l->head, l->head->data);`) left one
    more released identity (`data#2`, `data#3`, ...): the names never converged, and the states at
    the loop head differed only in which of those dead identities they had released, growing
    exponentially until the bound of `Budget.keyed_states` merged them. Dropped, the next
    iteration's read gets the same name again, and the loop reaches its fixpoint."""
    gone = _unreachable_outside(state)
    if not gone:
        return state
    out = state.copy()
    b, r = out.b, out.r
    for _ in range(16):
        prefixes = set()
        for rid in gone:
            del r[rid]
            prefixes.add("@" + rid)
        for k in [k for k in b if k[0] in prefixes]:
            del b[k]
        gone = _unreachable_outside(out)
        if not gone:
            break
    return out


def _released_params(state: State) -> set[str]:
    """Values made outside the function (parameters, globals, members) that `state` released."""
    return {rid for rid, res in state.r.items()
            if res.st == RELEASED and made_outside(rid) and not released_and_replaced(state, rid)}


class Exploration:
    """Part of `FunctionAnalyzer` (see analyze.py for the state it shares)."""

    def _reverse_postorder(self) -> dict[int, int]:
        post = postorder([self.fn.entry], self.blocks, self._succs)
        order = {b: i for i, b in enumerate(reversed(post))}
        for b in self.blocks:
            order.setdefault(b, len(order))
        return order


    def _explore(self, entry: State) -> None:
        """A worklist over blocks in reverse postorder. Each block keeps its first
        `exact_states` states as they are (full path sensitivity where it is cheap); past that,
        arriving states are joined with the one of the same property key (see
        `state.property_key`), so the work per block is bounded by the number of distinct
        resource configurations, not of paths."""
        tables: dict[int, _BlockStates] = {}
        pending: dict[int, dict] = {}
        self._retained = 0
        self._coarse_mode = False
        self.widened = 0
        # one object per distinct property key: the tables' lookups then compare keys by
        # identity, not element by element (a key is a set of (id, Res) pairs, rehashed per compare)
        self._keys: dict[tuple, tuple] = {}
        self.order = self._reverse_postorder()
        self._merges = merge_points(self.blocks, self._succs)
        self._admit(self.fn.entry, entry, tables, pending)
        queue = [(self.order[self.fn.entry], self.fn.entry)]
        queued = {self.fn.entry}
        steps = 0
        self._work = 0
        max_visits, max_work = self.budget.max_block_visits, self.budget.max_work
        coarse_visits, coarse_work = max_visits // 2, max_work // 2
        run_block, admit, order = self._run_block, self._admit, self.order  # (the hottest loop: bound once)
        # What is kept at a block serves only states that may still arrive there: once no block of
        # its strongly connected component or of an earlier one waits, none can (edges between
        # components go forward), and its states are dropped (a long function kept them all).
        comps = components(self.fn.entry, self._succs, self.blocks) if len(self.blocks) >= _FREE_AFTER else None
        scc: dict[int, int] = {}
        waiting: list[int] = []
        done = 0
        if comps is not None:
            scc = {b: i for i, members in enumerate(comps) for b in members}
            waiting = [0] * len(comps)
            waiting[scc[self.fn.entry]] = 1
        while queue and not self._stopped:
            _, bid = heapq.heappop(queue)
            queued.discard(bid)
            if comps is not None:
                waiting[scc[bid]] -= 1
            states = pending.pop(bid, None)
            if states is None:
                continue
            for state in states.values():  # (popped: admissions to `bid` from here on go to a new dict)
                if self._stopped:
                    return
                steps += 1
                self._work += len(state.b) + len(state.r)
                if steps > coarse_visits or self._work > coarse_work:
                    if steps > max_visits or self._work > max_work:
                        self._give_up(f"analysis of {self.fn.name}() stopped at its work budget ({steps} states); "
                                      f"findings for it may be incomplete")
                        return
                    self._coarse_mode = True
                for succ_state, succ in run_block(bid, state):
                    if admit(succ, succ_state, tables, pending) and succ not in queued:
                        heapq.heappush(queue, (order.get(succ, 0), succ))
                        queued.add(succ)
                        if comps is not None:
                            waiting[scc[succ]] += 1
            if comps is not None:
                while done < len(comps) and waiting[done] == 0:
                    for b in comps[done]:
                        table = tables.pop(b, None)
                        if table is not None:
                            self._retained -= table.size
                    done += 1


    def _admit(self, bid: int, state: State, tables: dict[int, "_BlockStates"], pending: dict[int, dict]) -> bool:
        """Record `state` at block `bid`; True when something new is to be explored there.

        The first states are kept exact and compared directly (`State.same` stops at the first
        difference and mostly compares shared objects by identity). Past `exact_states`, a
        state joins the one with its property key; a join that adds nothing is dropped, one that
        weakens the state replaces it (also in the pending list, if it was not run yet)."""
        state = self._trim_dead(bid, state)
        if bid in self._merges:  # (where states of several paths meet: elsewhere nothing is to be gained)
            state = _drop_unreachable_outside(state)
        size = len(state.b) + len(state.r)
        self._work += size
        table = tables.get(bid)
        if table is None:
            table = tables[bid] = _BlockStates()
        exact = table.exact
        if len(exact) < self.budget.exact_states and not self._coarse_mode:
            for other in exact:
                if state.same(other):
                    return False
            exact.append(state)  # admitted states are never changed afterwards (blocks run on copies)
            pending.setdefault(bid, {})[("e", len(exact))] = state
            table.size += size
            return self._retain(size)
        if self._params_released:  # (a scan of every state, for the few functions that release a parameter)
            if not table.exact_released:  # the exact states' released parameters, once they are all in
                table.exact_released = True
                for s in table.exact:
                    table.released |= _released_params(s)
            before = len(table.released)
            table.released |= _released_params(state)
            self._collapse_released_params(state, table.released)
            if len(table.released) > before and table.joined:
                self._recollapse(bid, table, pending)
        raw = property_key(state, self._tracked_kinds)
        raw = self._keys.setdefault(raw, raw)
        key = table.resolve(raw)
        old = table.joined.get(key)
        if old is not None and (key in table.coarse or raw in table.widened or self._coarse_mode):
            return self._widen(bid, table, pending, key, state)
        if old is not None and key == raw:
            if covers(old, state) and self._settled(table, key, old):
                return False  # `join(old, state)` would be `old` again
            merged = join(old, state, self._tracked_kinds, self._local_ref_kinds)
            if merged.same(old):
                return False
            table.joined[key] = merged
            pending.setdefault(bid, {})[("j", key)] = merged
            self._changed(table, key)
            return True
        if old is not None:
            relevant, retested = self._ahead.tested(bid)  # (asked only here and below: most blocks never need it)
            # `raw` was merged into `key` by the second-level join: a state with it joins the
            # same way ("held if acquired"), not by `join`, which would drop what it lacks
            merged = join_held(old, state, self._tracked_kinds, self._local_ref_kinds, relevant, retested,
                               self._ahead.dead(bid), self._fact_scope(bid))
            if merged is not None:
                return self._merge_into(bid, table, pending, key, raw, merged)
            del table.alias[raw]  # a correlation decides: kept apart after all
            key = raw
        if table.joined and (table.created >= self.budget.keyed_states or self._coarse_mode):
            # the bound: no new property state here; the most similar one takes this state
            # coarsely, and so do all later states of this key
            target = max(table.joined, key=lambda k: key_overlap(k, raw))
            table.alias[raw] = target
            table.widened.add(raw)
            return self._widen(bid, table, pending, target, state)
        coarse = None
        if len(table.joined) >= self.budget.join_held_after:
            relevant, retested = self._ahead.tested(bid)
            self._index_coarse(bid, table, relevant, retested)
            coarse = self._coarse(bid, state, relevant, retested)
            admitted = self._join_held(bid, table, pending, key, coarse, state, relevant, retested)
            if admitted is not None:
                return admitted
        table.created += 1
        table.joined[key] = state
        table.coarse_src[key] = state
        if table.by_coarse is not None:
            if coarse is None:
                coarse = self._coarse(bid, state, *self._ahead.tested(bid))
            table.by_coarse.setdefault(coarse, []).append(key)
        pending.setdefault(bid, {})[("j", key)] = state
        table.size += size
        return self._retain(size)


    def _trim_dead(self, bid: int, state: State) -> State:
        """`state` without what locals, or fields of local values, hold that nothing from the
        block's entry on reads (liveness.Ahead.value_dead, fields_dead): integers, NULL facts, released, consumed, dangling, borrowed
        or unknown pointers, and the remembered conditions about them. A resource that must still
        be released stays where it is (it can only leak there, and is reported at the exit as
        always), and so does an escaped one (the summary names where it went). A released
        resource nothing else points to is forgotten, as `_gc` would forget it."""
        if self._small:
            return state
        plan = self._trim_plans.get(bid)
        if plan is None:
            plan = self._trim_plans[bid] = (self._ahead.value_dead(bid, self._loop_exit_reads),
                                            self._ahead.fields_dead(bid, self._loop_exit_reads))
        dead, fields = plan
        b, r = state.b, state.r
        if dead:
            bits = self._ahead.value_keys()
            drop = [k for k in b.keys() & bits.keys()
                    if dead & bits[k] and ((v := b[k])[0] != "r" or r.get(v[1], _GONE).st in _TRIMMED)]
        else:
            drop = []
        if fields and not fields.isdisjoint(self._field_roots):  # (a scan only where a local has fields)
            drop += [k for k, v in b.items() if len(k) > 1 and k[0] in fields
                     and (v[0] != "r" or r.get(v[1], _GONE).st in _TRIMMED)]
        if len(drop) > 1:
            drop.sort()  # (a stable order: the dict's order after the pops does not depend on it)
        conds = None
        if state.conds and dead:
            hit = self._dead_conds.get((bid, state.conds))  # (states share their condition sets)
            if hit is None:
                bits = self._ahead.value_keys()
                hit = self._dead_conds[(bid, state.conds)] = tuple(
                    c for c in state.conds if any(dead & bits.get((name,), 0) for name in self._vars_of(c[0])))
            conds = hit
        if not drop and not conds:
            return state
        out = state.copy()
        lost = set()
        for k in drop:
            v = out.b.pop(k)
            if v[0] == "r":
                lost.add(v[1])
        if conds:
            out.conds = state.conds - frozenset(conds)
        if lost:
            self._forget(out, lost)
        return out


    @staticmethod
    def _forget(state: State, rids: set[str]) -> None:
        """Resources that lost references (not held: see `_trim_dead`), forgotten when nothing
        refers to them any more, with the memory they had (and so on, a few levels)."""
        b, r = state.b, state.r
        for _ in range(8):
            referenced = referenced_ids(b)
            gone = [rid for rid in sorted(rids)
                    if rid not in referenced and rid[0] != "p" and rid in r and r[rid].st in _TRIMMED]
            if not gone:
                return
            rids = set()
            for rid in gone:
                del r[rid]
                prefix = "@" + rid
                for k in [k for k in b if k[0] == prefix]:
                    v = b.pop(k)
                    if v[0] == "r":
                        rids.add(v[1])


    def _recollapse(self, bid: int, table: "_BlockStates", pending: dict[int, dict]) -> None:
        """The property states kept here before a value made outside was first seen released
        here, collapsed the same way now (`_collapse_released_params`): else each `if (m) delete
        m;` of a destructor's fifty made one more property state at every block after it."""
        for key in list(table.joined):
            kept = table.joined.get(key)
            if kept is None:
                continue  # (merged into another meanwhile)
            collapsed = kept.copy()
            self._collapse_released_params(collapsed, table.released)
            if not collapsed.same(kept):
                self._replace(bid, table, pending, key, collapsed)


    def _changed(self, table: "_BlockStates", key: tuple) -> None:
        """Count a change of the state at `key`; past `Budget.slot_changes`, it takes only coarse joins."""
        n = table.changes.get(key, 0) + 1
        table.changes[key] = n
        if n >= self.budget.slot_changes:
            table.coarse.add(key)


    def _widen(self, bid: int, table: "_BlockStates", pending: dict[int, dict], key: tuple, state: State) -> bool:
        """`state` merged into the state at `key` by `join_coarse`; True when something new is to
        be explored."""
        self.widened += 1
        old = table.joined[key]
        merged = join_coarse(old, state, self._tracked_kinds, self._local_ref_kinds, self._ahead.dead(bid))
        if merged.same(old):
            return False
        return self._replace(bid, table, pending, key, merged, coarse=True)


    @staticmethod
    def _settled(table: "_BlockStates", key: tuple, state: State) -> bool:
        """`join.settled` of the state joined at `key`, once per state (states arriving there
        are compared with the same one until a join changes it)."""
        hit = table.settled.get(key)
        if hit is None or hit[0] is not state:
            hit = table.settled[key] = (state, settled(state))
        return hit[1]


    def _retain(self, size: int) -> bool:
        """Count a state kept at a block (`size`: its bindings and resources) against
        `Budget.max_retained`; False (and a note) once past it: the analysis stops, the
        statement-level checks still run."""
        self._retained += size
        if self._retained > self.budget.max_retained // 2:
            self._coarse_mode = True
        if self._retained > self.budget.max_retained:
            self._give_up(f"{self.fn.name}() has too many distinct resource states to keep; "
                          f"findings for it may be incomplete")
            self._stopped = True
            return False
        return True


    def _coarse(self, bid: int, state: State, relevant: frozenset, retested: frozenset) -> tuple:
        return (coarse_key(state, self._tracked_kinds), self._signature(bid, state, relevant, retested))


    def _index_coarse(self, bid: int, table: "_BlockStates", relevant: frozenset, retested: frozenset) -> None:
        """`table.by_coarse`, on its first need (see `_BlockStates`)."""
        if table.by_coarse is None:
            table.by_coarse = {}
            for key in table.joined:
                table.by_coarse.setdefault(self._coarse(bid, table.coarse_src[key], relevant, retested), []).append(key)


    def _join_held(self, bid: int, table: "_BlockStates", pending: dict[int, dict], key: tuple, coarse: tuple,
                   state: State, relevant: frozenset, retested: frozenset) -> bool | None:
        """The second-level join (see `state.join_held`): merge `state` into a compatible
        property state of the same coarse key. None when there is none."""
        assert table.by_coarse is not None
        for okey in table.by_coarse.get(coarse, ())[-3:]:  # the latest few: a bounded effort per state
            merged = join_held(table.joined[okey], state, self._tracked_kinds, self._local_ref_kinds,
                               relevant, retested, self._ahead.dead(bid), self._fact_scope(bid))
            if merged is not None:
                return self._merge_into(bid, table, pending, okey, key, merged)
        return None


    def _merge_into(self, bid: int, table: "_BlockStates", pending: dict[int, dict], okey: tuple, key: tuple,
                    merged: State) -> bool:
        """`merged` (a second-level join of the state at `okey` and a state of property key
        `key`) replaces the state at `okey`, under its own property key; both old keys lead
        there from now on. True when something new is to be explored."""
        other = table.joined[okey]
        if merged.same(other):
            table.alias[key] = okey
            return False
        table.alias[key] = okey
        return self._replace(bid, table, pending, okey, merged)


    def _replace(self, bid: int, table: "_BlockStates", pending: dict[int, dict], okey: tuple, merged: State,
                 coarse: bool = False) -> bool:
        """`merged` (the state at `okey` joined with another) replaces it, under its own property
        key; keys that led to `okey` lead there from now on. If another state has that key, the
        two are joined (coarsely if either was). True when something new is to be explored."""
        nkey = property_key(merged, self._tracked_kinds)
        nkey = self._keys.setdefault(nkey, nkey)
        self._changed(table, okey)
        del table.joined[okey]
        bucket = next((b for b in (table.by_coarse or {}).values() if okey in b), None)
        if bucket is not None:
            bucket.remove(okey)
        pending.get(bid, {}).pop(("j", okey), None)
        if nkey == okey:  # (it becomes the latest of its bucket, and the last to run here)
            if bucket is not None:
                bucket.append(okey)
            table.joined[okey] = merged
            pending.setdefault(bid, {})[("j", okey)] = merged
            return True
        table.alias[okey] = nkey
        table.alias.pop(nkey, None)  # (a key never leads to itself)
        existing = table.joined.get(nkey)
        coarse = coarse or okey in table.coarse or nkey in table.coarse
        table.move(okey, nkey)
        if existing is not None:
            if coarse:
                merged = join_coarse(existing, merged, self._tracked_kinds, self._local_ref_kinds, self._ahead.dead(bid))
            else:
                merged = join(existing, merged, self._tracked_kinds, self._local_ref_kinds)
            if merged.same(existing):
                return False
            self._changed(table, nkey)
        else:
            table.coarse_src[nkey] = table.coarse_src[okey]
            if bucket is not None:
                bucket.append(nkey)
        table.joined[nkey] = merged
        pending.setdefault(bid, {})[("j", nkey)] = merged
        return True


    def _signature(self, bid: int, state: State, relevant: frozenset, retested: frozenset,
                   scope: FactScope | None = None) -> tuple:
        """The facts `join_held` must not lose, so states that differ in them are never even
        tried: values of variables and remembered conditions that an `if` ahead tests
        (liveness.Ahead), NULL facts of unknown pointers."""
        locs = self._signature_order.get(relevant)
        if locs is None:  # the tested variables' locations, in a stable order, made once
            locs = self._signature_order[relevant] = tuple([(name,) for name in sorted(relevant)])
        # which resource a tested variable holds is join_held's to weigh (it renames a location's
        # successive acquisitions into one); only that it holds one belongs here
        values = tuple([_RESOURCE if v is not None and v[0] == "r" else v for v in map(state.b.get, locs)])
        conds = frozenset([c for c in state.conds if c[0] in retested]) if state.conds else frozenset()
        facts = [(rid, res.fact) for rid, res in state.r.items() if res.st == OPAQUE and res.fact is not None]
        if facts:
            pinned = pinned_by(state, relevant)
            if scope is None:
                scope = self._fact_scope(bid)
            facts = [f for f in facts if fact_matters(f[0], scope, pinned)]
        return (values, conds, frozenset(facts))

    def _fact_scope(self, bid: int, within: bool = False) -> FactScope:
        """What an unknown value's fact may still decide from the block's entry on (join.fact_matters);
        `within`: from any point inside it."""
        paths, wholes = self._ahead.tested_paths(bid, within)
        return FactScope(self.fn.params, paths, wholes)

    def _statement_checks(self) -> None:
        """Findings that need no path, for every reachable statement, when exploration stopped
        early: a dropped OrtStatus* (ORT004) is a property of the call statement itself. (When
        exploration completes, it reports the same findings, from feasible paths only.)"""
        for bid in sorted(self._reachable()):
            for ev in self.blocks[bid].events:
                if not isinstance(ev, Call) or ev.dest is not None:
                    continue
                spec = self.policy.lookup_in(self.fn.language, ev.style, ev.callee)
                if spec is not None and spec.returns == "status" and spec.status_check is None and not spec.noreturn:
                    self._report("ORT004", ev.loc, self._ignored_status(ev.callee, spec.status_kind), State(), None,
                                 anchor=f"ignored:{ev.callee}:{ev.text}", macro=ev.macro, macro_at=ev.macro_at,
                                 facts=self._status_facts(spec.status_kind), kind=spec.status_kind)


    def _reachable(self) -> set[int]:
        seen = {self.fn.entry}
        stack = [self.fn.entry]
        while stack:
            for nxt in self._succs(stack.pop()):
                if nxt not in seen and nxt in self.blocks:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen


    def _local_ref_kind(self, kind_id: str | None) -> bool:
        """A JNI local reference: freed by the return, a problem only when piling up in a loop."""
        return kind_id in self._local_ref_kinds


    def _give_up(self, message: str) -> None:
        """Exploration stops at a bound of `Budget`: a note that says so, once per function. The
        bounds count work (states, bindings, events), never time, so the same function stops at
        the same point on any machine; the note is a limit (`findings.LIMIT`): a warning about
        this function, not a failure of the run."""
        if not self.incomplete:
            self.incomplete = True
            self.notes.append((self.fn.loc.line, LIMIT + message))


    @staticmethod
    def _collapse_released_params(state: State, released_elsewhere: set[str]) -> None:
        """A cleanup helper's `if (p->x) Release(p->x);` lines double the paths each time (a
        destructor's `if (member) delete[] member;` too). For a value made outside the function
        (`state.made_outside`), "known NULL here" and "released on the other path here" mean the
        same to the caller (releasing NULL does nothing): both become "released if not NULL"."""
        r = state.r
        for rid in released_elsewhere:  # (a few parameters: not a scan of the state)
            res = r.get(rid)
            if res is not None and (res.st == RELEASED or (res.st == OPAQUE and is_null_fact(res.fact))) \
                    and (res.st != RELEASED or res.fact is not None):  # (else: no change)
                r[rid] = replaced(res, st=RELEASED, fact=None)


    def _run_block(self, bid: int, state: State) -> list[tuple[State, int]]:
        block = self.blocks[bid]
        self._block = bid
        states = [state.copy()]
        self._extra = []
        limit, exact = self.budget.max_event_work, self.budget.exact_states
        event = self._event  # (run for every event of every state: bound once)
        for ev in block.events:
            if len(states) == 1:  # the common case, without the list plumbing
                self._event_work += 1
                nxt = event(block, states[0], ev)
            else:
                nxt = []
                for s in states:
                    self._event_work += 1
                    nxt.extend(event(block, s, ev))
            if self._event_work > limit:
                self._give_up(f"analysis of {self.fn.name}() stopped at its work budget (a very long function); "
                              f"findings for it may be incomplete")
                self._stopped = True
                self._extra = []
                return []
            states = nxt if len(nxt) == 1 else dedupe(nxt)
            if len(states) > exact:
                states = self._join_within_block(states)
            if not states:
                break
        out: list[tuple[State, int]] = self._extra
        self._extra = []
        terminator = self._terminator
        for s in states:
            out.extend(terminator(block, s))
        return out


    def _join_within_block(self, states: list[State]) -> list[State]:
        """A call with many summary cases multiplies the states inside one block (three
        outcomes per call, ten calls in a row); they are joined like at a block entry."""
        groups: dict[tuple, State] = {}
        for s in states:
            key = property_key(s, self._tracked_kinds)
            old = groups.get(key)
            groups[key] = s if old is None else join(old, s, self._tracked_kinds, self._local_ref_kinds)
        if len(groups) <= self.budget.join_held_after and not self._coarse_mode:
            return list(groups.values())
        # Calls that each acquire or fail, one after the other with no test in between, give
        # 2^n property states inside one block: the second-level join applies here as at a
        # block's entry, with the same refusals (so a status and its out-parameters stay tied).
        buckets: dict[tuple, list[State]] = {}
        relevant, retested = self._ahead.tested(self._block, within=True)
        scope = self._fact_scope(self._block, within=True)
        for s in groups.values():
            bucket = buckets.setdefault((coarse_key(s, self._tracked_kinds),
                                         self._signature(self._block, s, relevant, retested, scope)), [])
            for i in range(len(bucket) - 1, max(-1, len(bucket) - 4), -1):  # the latest few: bounded effort
                merged = join_held(bucket[i], s, self._tracked_kinds, self._local_ref_kinds, relevant, retested,
                                   self._ahead.dead(self._block), scope)
                if merged is not None:
                    bucket[i] = merged
                    break
            else:
                bucket.append(s)
        out = [s for bucket in buckets.values() for s in bucket]
        limit = 1 if self._coarse_mode else self.budget.keyed_states
        if len(out) > limit:
            out = self._coarsened(out, limit)
        return out


    def _coarsened(self, states: list[State], limit: int) -> list[State]:
        """The bound inside one block (twenty calls in a row that may each release an unknown
        value double the property states twenty times): the first `limit` states stay, each
        later one is merged into the most similar of them by `join_coarse`."""
        kept = states[:limit]
        keys = [property_key(s, self._tracked_kinds) for s in kept]
        dead = self._ahead.dead(self._block)
        for s in states[limit:]:
            raw = property_key(s, self._tracked_kinds)
            i = max(range(len(kept)), key=lambda j: key_overlap(keys[j], raw))
            kept[i] = join_coarse(kept[i], s, self._tracked_kinds, self._local_ref_kinds, dead)
            self.widened += 1
        return kept


    def _event(self, block: ir.Block, state: State, ev: ir.Event) -> list[State]:
        cls = type(ev)  # the IR's event classes have no subclasses: `is` tests, most frequent first
        if cls is Call:
            return self._call(block, state, ev)
        if cls is Assign:
            key = self._resolve(state, ev.dest, create=False)
            old = state.b.get(key) if key is not None else None
            value = self._eval(state, ev.value)
            if value is None and key is not None and len(key) == 1:
                value = interior_value(state, ev.value, self._eval)  # `slot = rec + off` (engine/interior.py)
            if value is None and key is not None and len(key) == 1 and (self._relates_arguments
                                                                        or self._rewritten_read(key[0], ev.value)):
                value = self._named_read(state, key, ev.value)  # engine/relations.py
            self._store(state, ev.dest, value, ev.loc, value_expr=ev.value, key=key)
            if key is None or len(key) > 1 or (old is not None and old[0] == "r") or self.fn.locals.get(key[0]):
                self._gc(state, ev.loc)  # else no reference can have been lost: `int n = 0;` costs no scan
            return [state]
        if cls is Use:
            if self._null_read(state, ev.pointer):
                return []  # the process crashed here: no path goes on (values._null_read)
            self._use(state, ev.pointer, ev.loc, "is read through")
            self._dereferenced(state, ev.pointer)
            return [state]
        if cls is Kill:
            if self._ends_process(block):
                return [state]  # kept bound until the process ends: nothing is lost
            lost = False
            for name in ev.names:
                v = state.b.pop((name,), None)
                lost = lost or (v is not None and v[0] == "r")
                if self.fn.locals.get(name):  # an aggregate temporary (a Go slice literal): its slots go too
                    for key in [k for k in state.b if k[0] == name]:
                        slot = state.b.pop(key)
                        lost = lost or slot[0] == "r"
            if lost:
                self._gc(state, ev.loc, lost=True)
            return [state]
        if cls is Havoc:
            self._havoc(state, ev.names)
            return [state]
        if cls is ScopeExit:
            self._loop_exit(state, ev)
            return [state]
        return [state]


    def _ends_process(self, block: ir.Block) -> bool:
        """Whether the block ends the process (`abort()`, `exit(1)`, a helper that never returns
        but by aborting, a `Halt(abort)`): the temporaries it kills first hold nothing that can
        leak. `if (!(api->F(o) == NULL)) abort();`, an assertion macro's shape, kills the status
        it tested before the abort; reported there, a status checked by an assertion was
        'ignored'. Once per block (the entry keeps `block` alive, so its id is not reused)."""
        hit = self._aborting_blocks.get(id(block))
        if hit is None:
            ends = type(block.term) is Halt and block.term.how == "abort"
            for ev in block.events:
                if ends:
                    break
                if type(ev) is Call:
                    plan = self._call_plans.get(id(ev))
                    if plan is None:
                        plan = self._call_plans[id(ev)] = self._call_plan(ev)
                    spec, summary = plan[1], plan[2]
                    ends = (spec is not None and spec.noreturn == "abort" or summary is not None and
                            bool(summary.cases) and all(c.exit == "abort" for c in summary.cases))
            hit = self._aborting_blocks[id(block)] = (block, ends)
        return hit[1]


    def _branch_notes_of(self, term: ir.Branch) -> tuple[str, str]:
        """`branch_note` of both sides, made once per branch, not once per state through it (the
        entry keeps `term` alive, so its id is not reused)."""
        hit = self._branch_notes.get(id(term))
        if hit is None:
            hit = self._branch_notes[id(term)] = (term, branch_note(term, True), branch_note(term, False))
        return hit[1], hit[2]


    def _terminator(self, block: ir.Block, state: State) -> list[tuple[State, int]]:
        term = block.term
        cls = type(term)  # (no subclasses in the IR: `is` tests)
        if cls is Jump:
            return [(state, term.target)]
        if cls is Branch:
            out = []
            memo = term.kind != "loop"  # a loop test changes from one iteration to the next
            notes = self._branch_notes_of(term)
            line, col = term.loc.line, term.loc.col
            s = self._assume(state.copy(), term.cond, True, memo)
            if s is not None:
                s.note(line, col, notes[0])
                out.append((s, term.then))
            s = self._assume(state, term.cond, False, memo)  # the last side needs no copy
            if s is not None:
                s.note(line, col, notes[1])
                out.append((s, term.orelse))
            return out
        if cls is Return:
            self._return(state, term)
            return []
        if cls is Halt:
            if term.how == "throw":
                self._exit(state, term.loc, "throw", None, f"leaving {self.fn.name}() by a throw")
            else:
                self.exits.append((state, "abort", None))
            return []
        return []
