"""The release-pairing engine: a path-sensitive walk of one function's control-flow graph.

States split where a call can succeed or fail (the status-linked out-parameter of the ORT API,
the NULL result of JNI and libc acquisitions) and where a branch tests something the state
knows; infeasible branches are pruned, identical states are merged at block entries, and a
budget bounds the work per function. Findings are raised at the transitions of each resource's
state machine: a held resource at an exit or losing its last reference (ORT001/ORT004/ORT010),
a second release (ORT002), a release of the wrong kind or owner (ORT003), a release of
something borrowed (ORT005), and a use after release (ORT006).
"""
from __future__ import annotations

import dataclasses
import functools
import heapq
import re
import time
from dataclasses import dataclass, field
from typing import Callable

from .. import ir
from ..findings import Finding, Step
from ..ir import AddrOf, Call, Const, Deref, Expr, Field, Index, Op, Opaque, Var
from ..policy import RECEIVER, Acquire, CallSpec, Kind, Policy, Release
from .state import (BORROWED, CONSUMED, DANGLING, ESCAPED, HELD, OPAQUE, RELEASED, LocKey, Res, State, Val,
                    is_nonnull_fact, is_null_fact, join, join_held, coarse_key, property_key, replaced)
from .loops import LoopForest
from .slots import CONSTRUCTOR_THROW_NOTE, leaks_on_throw
from .summaries import MAX_CASES, Case, Effect, Summary, simplify_cases, summary_from_status_check

STATUS_KIND = "ort.Status"


@dataclass
class Budget:
    """Limits that keep every function's analysis bounded (see README, "Limits")."""

    exact_states: int = 8  # states kept apart per block before joining by property key
    join_held_after: int = 4  # property states per block before "held vs never acquired" are joined
    # Safety nets far above real code (bench/run_real.py prints the largest figures reached):
    max_block_visits: int = 400_000  # states processed per function
    max_work: int = 20_000_000  # the same, weighted by state size (entries per processed state)
    max_states_per_block: int = 2000  # distinct property states (resource configurations) per block
    # bindings looked at by events (each assignment's GC scans the state): bounds one long
    # block, e.g. 10 000 generated `char *pN = NULL;` lines (quadratic, minutes of work),
    # which the per-state budgets above never see. Real functions stay under 20 000.
    max_event_work: int = 2_000_000
    max_conds: int = 6


@dataclass
class Options:
    unknown_calls: str = "escape"  # "escape" (default, like the Clang analyzer) | "keep"
    budget: Budget = field(default_factory=Budget)


@dataclass
class _BlockStates:
    """What has reached one block: the exact states, then one joined state per property key."""

    exact: list[State] = field(default_factory=list)
    joined: dict[tuple, State] = field(default_factory=dict)
    by_coarse: dict[tuple, list[tuple]] = field(default_factory=dict)  # coarse key -> property keys
    alias: dict[tuple, tuple] = field(default_factory=dict)  # property keys merged into another
    released: set[str] = field(default_factory=set)  # parameters released on some path here

    def resolve(self, key: tuple) -> tuple:
        seen = 0
        while key in self.alias and seen < 64:
            key = self.alias[key]
            seen += 1
        return key


@dataclass
class Site:
    """Where a resource came from, for messages."""

    line: int
    col: int
    end_line: int
    end_col: int
    callee: str
    target: str
    kind: str | None
    via_helper: bool = False


@dataclass
class LeakRecord:
    rid_site: str
    exits: list[tuple[int, int, str, str]] = field(default_factory=list)  # (line, col, text, how)
    trace: tuple | None = None
    exceptional_only: bool = True
    bound: bool = False


@dataclass
class FunctionResult:
    findings: list[Finding]
    summary: Summary | None
    unknown_callees: dict[str, int]
    notes: list[tuple[int, str]]
    seconds: float = field(default=0.0, compare=False)  # wall time of the analysis (ORTLINT_STATS, bench/)
    summary_seconds: float = field(default=0.0, compare=False)  # of which building the summary


SummaryLookup = Callable[[Call], "Summary | None"]


class FunctionAnalyzer:
    """Analyzes one `ir.Function` against a policy and the summaries of its callees."""

    def __init__(self, fn: ir.Function, policy: Policy, summaries: SummaryLookup, options: Options | None = None,
                 constants: dict[str, int] | None = None):
        self.fn = fn
        self.constants = constants or {}
        self.policy = policy
        self.summaries = summaries
        self.options = options or Options()
        self.budget = self.options.budget
        self.blocks = {b.id: b for b in fn.blocks}
        self.params = {name: i for i, name in enumerate(fn.params)}
        self.sites: dict[str, Site] = {}
        self.findings: dict[tuple, Finding] = {}
        self.leaks: dict[str, LeakRecord] = {}
        self.exits: list[tuple[State, str, Val | None]] = []
        self.unknown: dict[str, int] = {}
        self.notes: list[tuple[int, str]] = []
        self.incomplete = False
        self._loop_release_cache: dict[frozenset, list[Expr]] = {}
        self._cond_vars: dict[Expr, frozenset[str]] = {}
        self._status_summaries: dict[str, Summary] = {}
        self._extra: list[tuple[State, int]] = []
        self._event_work = 0
        self._stopped = False
        self._helper_releases: dict[str | None, Release | None] = {}
        self._work = 0
        self.order = self._reverse_postorder()
        self._kind_tracked: dict[str | None, bool] = {}
        self._branch_vars, self._retested = _retested(fn)
        self._block = fn.entry  # the block being run (loop questions are asked about it)
        self._loops: LoopForest | None = None

    # ================================================================== driver

    def run(self, summarize: bool = True) -> FunctionResult:
        """`summarize=False`: no caller needs this function's summary (a run without a cache
        analyzing a function nobody calls): the findings are the same, the summary is None."""
        entry_state = State()
        for i, name in enumerate(self.fn.params):
            rid = f"p{i}"
            entry_state.r[rid] = Res(None, OPAQUE)
            entry_state.b[(name,)] = ("r", rid)
        self._explore(entry_state)
        self._emit_leaks()
        started = time.perf_counter()
        summary = None if self.incomplete or not summarize else self._summary()
        summary_seconds = time.perf_counter() - started
        findings = sorted(self.findings.values(), key=Finding.sort_key)
        return FunctionResult(findings, summary, self.unknown, self.notes, summary_seconds=summary_seconds)

    @property
    def loops(self) -> LoopForest:
        """The function's loops, computed on first need (most functions never ask)."""
        if self._loops is None:
            self._loops = LoopForest(self.blocks, self.fn.entry, self._succs)
        return self._loops

    def _reverse_postorder(self) -> dict[int, int]:
        seen: set[int] = set()
        post: list[int] = []
        stack = [(self.fn.entry, iter(self._succs(self.fn.entry)))]
        seen.add(self.fn.entry)
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                post.append(node)
                stack.pop()
            elif nxt not in seen and nxt in self.blocks:
                seen.add(nxt)
                stack.append((nxt, iter(self._succs(nxt))))
        order = {b: i for i, b in enumerate(reversed(post))}
        for b in self.blocks:
            order.setdefault(b, len(order))
        return order

    def _succs(self, bid: int) -> list[int]:
        block = self.blocks[bid]
        term = block.term
        out = []
        if isinstance(term, ir.Jump):
            out.append(term.target)
        elif isinstance(term, ir.Branch):
            out.extend((term.then, term.orelse))
        if block.handler is not None:
            out.append(block.handler)
        return out

    def _explore(self, entry: State) -> None:
        """A worklist over blocks in reverse postorder. Each block keeps its first
        `exact_states` states as they are (full path sensitivity where it is cheap); past that,
        arriving states are joined with the one of the same property key (see
        `state.property_key`), so the work per block is bounded by the number of distinct
        resource configurations, not of paths."""
        tables: dict[int, _BlockStates] = {}
        pending: dict[int, dict] = {}
        self._admit(self.fn.entry, entry, tables, pending)
        queue = [(self.order[self.fn.entry], self.fn.entry)]
        queued = {self.fn.entry}
        steps = 0
        self._work = 0
        while queue and not self._stopped:
            _, bid = heapq.heappop(queue)
            queued.discard(bid)
            states = pending.pop(bid, {})
            for state in list(states.values()):
                if self._stopped:
                    return
                steps += 1
                self._work += len(state.b) + len(state.r)
                if steps > self.budget.max_block_visits or self._work > self.budget.max_work:
                    self._give_up(f"analysis of {self.fn.name}() stopped at its work budget ({steps} states); "
                                  f"findings for it may be incomplete")
                    return
                for succ_state, succ in self._run_block(bid, state):
                    if self._admit(succ, succ_state, tables, pending) and succ not in queued:
                        heapq.heappush(queue, (self.order.get(succ, 0), succ))
                        queued.add(succ)

    def _admit(self, bid: int, state: State, tables: dict[int, "_BlockStates"], pending: dict[int, dict]) -> bool:
        """Record `state` at block `bid`; True when something new is to be explored there.

        The first states are kept exact and compared directly (`State.same` stops at the first
        difference and mostly compares shared objects by identity). Past `exact_states`, a
        state joins the one with its property key; a join that adds nothing is dropped, one that
        weakens the state replaces it (also in the pending list, if it was not run yet)."""
        self._work += len(state.b) + len(state.r)
        table = tables.get(bid)
        if table is None:
            table = tables[bid] = _BlockStates()
        released = {rid for rid, res in state.r.items() if rid[0] == "p" and res.st == RELEASED}
        if released:
            table.released |= released
        if len(table.exact) < self.budget.exact_states:
            for other in table.exact:
                if state.same(other):
                    return False
            table.exact.append(state)  # admitted states are never changed afterwards (blocks run on copies)
            pending.setdefault(bid, {})[("e", len(table.exact))] = state
            return True
        self._collapse_released_params(state, table.released)
        key = table.resolve(property_key(state, self._tracked_kind))
        old = table.joined.get(key)
        if old is not None:
            merged = join(old, state, self._tracked_kind, self._local_ref_kind)
            if merged.same(old):
                return False
            table.joined[key] = merged
            pending.setdefault(bid, {})[("j", key)] = merged
            return True
        coarse = coarse_key(state, self._tracked_kind)
        if len(table.joined) >= self.budget.join_held_after:
            admitted = self._join_held(bid, table, pending, key, coarse, state)
            if admitted is not None:
                return admitted
        if len(table.joined) >= self.budget.max_states_per_block:
            self._give_up(f"{self.fn.name}() has too many distinct resource states to analyze completely; "
                          f"findings for it may be incomplete")
            return False
        table.joined[key] = state
        table.by_coarse.setdefault(coarse, []).append(key)
        pending.setdefault(bid, {})[("j", key)] = state
        return True

    def _join_held(self, bid: int, table: "_BlockStates", pending: dict[int, dict], key: tuple, coarse: tuple,
                   state: State) -> bool | None:
        """The second-level join (see `state.join_held`): merge `state` into a compatible
        property state of the same coarse key. None when there is none."""
        for okey in table.by_coarse.get(coarse, ()):
            other = table.joined[okey]
            merged = join_held(other, state, self._tracked_kind, self._local_ref_kind, self._branch_vars,
                               self._retested)
            if merged is None:
                continue
            if merged.same(other):
                table.alias[key] = okey
                return False
            nkey = property_key(merged, self._tracked_kind)
            del table.joined[okey]
            table.by_coarse[coarse].remove(okey)
            pending.get(bid, {}).pop(("j", okey), None)
            table.alias[okey] = nkey
            table.alias[key] = nkey
            existing = table.joined.get(nkey)
            if existing is not None:
                merged = join(existing, merged, self._tracked_kind, self._local_ref_kind)
                if merged.same(existing):
                    return False
            else:
                table.by_coarse[coarse].append(nkey)
            table.joined[nkey] = merged
            pending.setdefault(bid, {})[("j", nkey)] = merged
            return True
        return None

    def _tracked_kind(self, kind_id: str | None) -> bool:
        """Resources of this kind must be released: their life stage splits states."""
        cached = self._kind_tracked.get(kind_id)
        if cached is None:
            kind = self.policy.kinds.get(kind_id or "")
            cached = self._kind_tracked[kind_id] = kind is not None and kind.owned and kind.must_release
        return cached

    def _local_ref_kind(self, kind_id: str | None) -> bool:
        kind = self.policy.kinds.get(kind_id or "")
        return kind is not None and kind.loop_leak and not kind.must_release

    def _give_up(self, message: str) -> None:
        if not self.incomplete:
            self.incomplete = True
            self.notes.append((self.fn.loc.line, message))

    @staticmethod
    def _collapse_released_params(state: State, released_elsewhere: set[str]) -> None:
        """A cleanup helper's `if (p->x) Release(p->x);` lines double the paths each time. For a
        value the caller owns, "known NULL here" and "released on the other path here" mean the
        same to the caller (releasing NULL does nothing): both become "released if not NULL"."""
        if not released_elsewhere:
            return
        for rid, res in list(state.r.items()):
            if rid in released_elsewhere and (res.st == RELEASED or (res.st == OPAQUE and is_null_fact(res.fact))):
                state.r[rid] = replaced(res, st=RELEASED, fact=None)

    # ================================================================== blocks and events

    def _run_block(self, bid: int, state: State) -> list[tuple[State, int]]:
        block = self.blocks[bid]
        self._block = bid
        states = [state.copy()]
        self._extra = []
        limit = self.budget.max_event_work
        for ev in block.events:
            if len(states) == 1:  # the common case, without the list plumbing
                s = states[0]
                self._event_work += len(s.b) + len(s.r)
                nxt = self._event(block, s, ev)
            else:
                nxt = []
                for s in states:
                    self._event_work += len(s.b) + len(s.r)
                    nxt.extend(self._event(block, s, ev))
            if self._event_work > limit:
                self._give_up(f"analysis of {self.fn.name}() stopped at its work budget (a very long function); "
                              f"findings for it may be incomplete")
                self._stopped = True
                self._extra = []
                return []
            states = _dedupe(nxt)
            if not states:
                break
        out: list[tuple[State, int]] = list(self._extra)
        self._extra = []
        for s in states:
            out.extend(self._terminator(block, s))
        return out

    def _event(self, block: ir.Block, state: State, ev: ir.Event) -> list[State]:
        if isinstance(ev, Call):
            return self._call(block, state, ev)
        if isinstance(ev, ir.Assign):
            self._store(state, ev.dest, self._eval(state, ev.value), ev.loc, value_expr=ev.value)
            self._gc(state, ev.loc)
            return [state]
        if isinstance(ev, ir.Use):
            self._use(state, ev.pointer, ev.loc, "is read through")
            return [state]
        if isinstance(ev, ir.Kill):
            for name in ev.names:
                state.b.pop((name,), None)
                if self.fn.locals.get(name):  # an aggregate temporary (a Go slice literal): its slots go too
                    for key in [k for k in state.b if k[0] == name]:
                        del state.b[key]
            self._gc(state, ev.loc, lost=True)
            return [state]
        if isinstance(ev, ir.Havoc):
            self._havoc(state, ev.names)
            return [state]
        if isinstance(ev, ir.ScopeExit):
            self._loop_exit(state, ev)
            return [state]
        return [state]

    def _terminator(self, block: ir.Block, state: State) -> list[tuple[State, int]]:
        term = block.term
        if isinstance(term, ir.Jump):
            return [(state, term.target)]
        if isinstance(term, ir.Branch):
            out = []
            memo = term.kind != "loop"  # a loop test changes from one iteration to the next
            for truth, target in ((True, term.then), (False, term.orelse)):
                s = self._assume(state.copy() if truth else state, term.cond, truth, memo)  # the last one needs no copy
                if s is None:
                    continue
                s.note(term.loc.line, term.loc.col, _branch_note(term, truth))
                out.append((s, target))
            return out
        if isinstance(term, ir.Return):
            self._return(state, term)
            return []
        if isinstance(term, ir.Halt):
            if term.how == "throw":
                self._exit(state, term.loc, "throw", None, f"leaving {self.fn.name}() by a throw")
            else:
                self.exits.append((state, "abort", None))
            return []
        return []

    # ================================================================== values and locations

    def _eval(self, state: State, e: Expr | None) -> Val | None:
        if e is None:
            return None
        if isinstance(e, Const):
            return ("k", e.value) if e.value is not None else None
        if isinstance(e, Var):
            v = state.b.get((e.name,))
            if v is not None:
                return v
            if not self._is_known_var(e.name):
                if e.name in self.policy.constants:
                    return ("k", self.policy.constants[e.name])
                if e.name in self.constants:
                    return ("k", self.constants[e.name])
            return None
        if isinstance(e, (Field, Index, Deref)):
            loc = self._resolve(state, e, create=False)
            if loc is not None and loc not in state.b and isinstance(e, Index):
                return self._contained(state, loc)
            return state.b.get(loc) if loc is not None else None
        if isinstance(e, Op):
            return self._eval_op(state, e)
        return None

    def _contained(self, state: State, loc: LocKey) -> Val | None:
        """An element of a resource whose kind `contains` values it owns (a Java Result's
        outputs): one borrowed value per container, created when first read."""
        if len(loc) != 2 or loc[1] != "[]" or not loc[0].startswith("@"):
            return None
        owner = state.r.get(loc[0][1:])
        kind = self.policy.kinds.get(owner.kind or "") if owner is not None else None
        if kind is None or kind.contains not in self.policy.kinds or owner.st != HELD:
            return None
        rid = loc[0][1:] + "/[]"
        state.r[rid] = Res(kind.contains, BORROWED, parent=loc[0][1:])
        state.b[loc] = ("r", rid)
        return ("r", rid)

    def _is_known_var(self, name: str) -> bool:
        return name in self.fn.locals or name in self.params or name.startswith("$")

    def _eval_op(self, state: State, e: Op) -> Val | None:
        vals = [self._eval(state, o) for o in e.operands]
        ints = [v[1] if v is not None and v[0] == "k" else None for v in vals]
        if e.op == "!" and len(vals) == 1:
            truth = self._truth(state, vals[0])
            return ("k", int(not truth)) if truth is not None else None
        if e.op == "?:" and len(vals) == 3:
            truth = self._truth(state, vals[0])
            if truth is None:
                return vals[1] if vals[1] == vals[2] else None
            return vals[1] if truth else vals[2]
        if len(vals) == 2 and e.op in ("==", "!="):
            decided = self._compare(state, vals[0], vals[1])
            if decided is not None:
                return ("k", int(decided if e.op == "==" else not decided))
            return None
        if len(ints) == 2 and None not in ints:
            a, b = ints
            try:
                result = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "|": lambda: a | b,
                          "&": lambda: a & b, "<": lambda: int(a < b), ">": lambda: int(a > b),
                          "<=": lambda: int(a <= b), ">=": lambda: int(a >= b), "&&": lambda: int(bool(a and b)),
                          "||": lambda: int(bool(a or b)), "<<": lambda: a << b if 0 <= b < 64 else None,
                          "^": lambda: a ^ b}.get(e.op, lambda: None)()
            except (ArithmeticError, ValueError):
                result = None
            return ("k", result) if result is not None else None
        if len(ints) == 1 and ints[0] is not None and e.op == "-":
            return ("k", -ints[0])
        return None

    def _truth(self, state: State, v: Val | None) -> bool | None:
        if v is None:
            return None
        if v[0] == "k":
            return v[1] != 0
        if v[0] == "x":
            return True if 0 in v[1] else None
        res = state.r.get(v[1])
        if res is None:
            return None
        if res.st == OPAQUE:
            if is_null_fact(res.fact):
                return False
            if is_nonnull_fact(res.fact):
                return True
            return None
        return None if res.maybe_null else True

    def _compare(self, state: State, a: Val | None, b: Val | None) -> bool | None:
        """Are a and b equal? None when unknown."""
        if a is None or b is None:
            return None
        if a == b and a[0] in ("k", "r"):
            return True
        for x, y in ((a, b), (b, a)):
            if y[0] == "k":
                if x[0] == "k":
                    return x[1] == y[1]
                if x[0] == "x" and y[1] in x[1]:
                    return False
                if x[0] == "r":
                    truth = self._truth(state, x)
                    if y[1] == 0 and truth is not None:
                        return not truth
        return None

    def _resolve(self, state: State, e: Expr, create: bool) -> LocKey | None:
        """The location an lvalue expression denotes, or None for memory the state cannot name."""
        if isinstance(e, Var):
            return (e.name,)
        if isinstance(e, Field):
            base = self._resolve(state, e.base, create)
            return base + ("." + e.name,) if base is not None else None
        if isinstance(e, (Deref, Index)):
            op = "*" if isinstance(e, Deref) else "[]"
            if isinstance(e.base, AddrOf):
                return self._resolve(state, e.base.base, create)
            if isinstance(e, Index) and isinstance(e.base, Var) and self.fn.locals.get(e.base.name):
                return (e.base.name, "[]")
            base = self._resolve(state, e.base, create)
            if base is None:
                return None
            v = state.b.get(base)
            if v is not None and v[0] == "r":
                return ("@" + v[1], op)
            if not create or (v is not None and v[0] == "k" and v[1] == 0) or _too_deep(base):
                return None
            rid = self._new_opaque(state, base)
            return ("@" + rid, op)
        return None

    def _new_opaque(self, state: State, loc: LocKey) -> str:
        """Give an unknown pointer an identity so facts and releases about it stick."""
        root = loc[0][1:] if loc[0].startswith("@") else "v:" + loc[0]
        rid = root + ("/" + "/".join(loc[1:]) if len(loc) > 1 else "")
        base, n = rid, 1
        while rid in state.r:
            n += 1
            rid = f"{base}#{n}"
        state.r[rid] = Res(None, OPAQUE, coll="[]" in loc)
        state.b[loc] = ("r", rid)
        return rid

    def _owner_key(self, state: State, e: Expr) -> str:
        """How the owner object of a JNI buffer is recognized at its release: its value when the
        state knows it (so `a = data; ...; Release(data, ...)` matches), else its text."""
        text = _owner_text(e)
        v = self._eval(state, e)
        return f"{text}|@{v[1]}" if v is not None and v[0] == "r" else text

    def _value_res(self, state: State, e: Expr, create: bool) -> tuple[str | None, Res | None]:
        """The resource an argument expression points to (creating an opaque one on demand)."""
        v = self._eval(state, e)
        if v is not None and v[0] == "r":
            return v[1], state.r.get(v[1])
        if v is not None or not create:
            return None, None
        loc = self._resolve(state, _strip_value(e), create=True)
        if loc is None or _too_deep(loc):
            return None, None
        rid = self._new_opaque(state, loc)
        return rid, state.r[rid]

    def _is_local_loc(self, state: State, loc: LocKey) -> bool:
        """Storing a resource here keeps it in this function's hands (not an escape)."""
        root = loc[0]
        if root.startswith("@"):
            res = state.r.get(root[1:])
            if res is None or res.st != HELD or res.kind is None:
                return False
            kind = self.policy.kinds.get(res.kind)
            return kind is not None and kind.owned
        if root.startswith("$") or root in self.fn.locals:
            return True
        return root in self.params and len(loc) == 1

    # ================================================================== stores, escapes, GC

    def _store(self, state: State, dest: Expr, value: Val | None, loc: ir.Loc, value_expr: Expr | None = None) -> None:
        key = self._resolve(state, dest, create=True)
        if key is None:
            self._escape_val(state, value, None)
            if value_expr is not None:
                self._escape_contents(state, value_expr)
            return
        local = self._is_local_loc(state, key)
        self._invalidate(state, key)
        old = state.b.get(key)
        if "[]" in key and old is not None and old[0] == "r" and (value is None or value[0] != "r"):
            pass  # one slot of many: the other elements still hold what the array held
        elif value is None:
            state.b.pop(key, None)
        else:
            if "[]" in key and old is not None and old[0] == "r" and old != value:
                self._keep_in_collection(state, old[1], key)
            state.b[key] = value
        if value is not None and value[0] == "r":
            res = state.r.get(value[1])
            if res is not None:
                named = not key[0].startswith("$")
                coll = "[]" in key
                if (named and not res.bound) or (coll and not res.coll):
                    res = replaced(res, bound=res.bound or named, coll=res.coll or coll)
                    state.r[value[1]] = res
        if not local:
            self._escape_val(state, value, key)
            if value_expr is not None:
                self._escape_contents(state, value_expr, key)

    @staticmethod
    def _keep_in_collection(state: State, rid: str, key: LocKey) -> None:
        """`v[0] = a; v[1] = b;`: the array's one abstract element now names b, but a is still
        in the array. Its fate is the array's, which the state can no longer tell: a is given
        to the array (no leak or double release is claimed for it)."""
        res = state.r.get(rid)
        if res is not None and res.st == HELD:
            state.r[rid] = replaced(res, st=ESCAPED, esc=key)

    def _invalidate(self, state: State, key: LocKey) -> None:
        """A location is overwritten: drop remembered conditions and sub-locations that read it."""
        if len(key) > 1:  # a struct stored through a pointer or into a field: its old fields are gone
            for k in [k for k in state.b if len(k) > len(key) and k[:len(key)] == key]:
                del state.b[k]
        if len(key) == 1:
            name = key[0]
            if state.conds:
                state.conds = frozenset(c for c in state.conds if name not in self._vars_of(c[0]))
            if self.fn.locals.get(name):
                for k in [k for k in state.b if k[0] == name and len(k) > 1]:
                    del state.b[k]

    def _escape_val(self, state: State, value: Val | None, where: LocKey | None, depth: int = 0) -> None:
        if value is None or value[0] != "r" or depth > 6:
            return
        rid = value[1]
        res = state.r.get(rid)
        if res is None:
            return
        if res.st in (HELD, BORROWED, OPAQUE):
            state.r[rid] = replaced(res, st=ESCAPED, esc=where)
            if res.st == BORROWED and res.parent and self._is_java(res.kind):
                # a Result's output handed to another owner: whoever takes the values out of
                # a Result takes over closing them (the Result has nothing else to close)
                self._escape_val(state, ("r", res.parent), where, depth + 1)
        elif res.st == ESCAPED and res.esc is None and where is not None:
            state.r[rid] = replaced(res, esc=where)
        prefix = "@" + rid
        for k, v in list(state.b.items()):
            if k[0] == prefix and v[0] == "r" and v[1] != rid:
                self._escape_val(state, v, where, depth + 1)

    def _is_local_ref(self, state: State, value: Val | None) -> bool:
        """A value that is a live JNI local reference (a kind that piles up in loops)."""
        if value is None or value[0] != "r":
            return False
        res = state.r.get(value[1])
        if res is None or res.st != HELD:
            return False
        kind = self.policy.kinds.get(res.kind or "")
        return kind is not None and kind.loop_leak and not kind.must_release

    def _is_java(self, kind_id: str | None) -> bool:
        kind = self.policy.kinds.get(kind_id or "")
        return kind is not None and kind.language == "java"

    def _escape_contents(self, state: State, e: Expr, where: LocKey | None = None) -> None:
        """`&x` or an array `a` handed away: everything stored inside x / a escapes too."""
        target = e.base if isinstance(e, AddrOf) else e
        if not isinstance(e, AddrOf) and not (isinstance(e, Var) and self.fn.locals.get(e.name)):
            return
        loc = self._resolve(state, target, create=False)
        if loc is None:
            return
        for k, v in list(state.b.items()):
            if k[:len(loc)] == loc and v[0] == "r":
                self._escape_val(state, v, where)

    def _gc(self, state: State, loc: ir.Loc, lost: bool = True) -> None:
        """Forget resources nothing refers to; a held one losing its last reference is a leak."""
        b, r = state.b, state.r
        orphans = [k for k in b if k[0][:1] == "@" and k[0][1:] not in r]
        for k in orphans:  # memory of resources already forgotten
            del b[k]
        referenced = {v[1] for v in b.values() if v[0] == "r"}
        if len(referenced) >= len(r) and referenced.issuperset(r):
            return  # the common case: everything is still referenced
        for rid, res in list(r.items()):
            if rid in referenced or rid[0] == "p":
                continue
            if res.st == HELD:
                kind = self.policy.kinds.get(res.kind or "")
                if kind is None or kind.token or (kind.loop_leak and not kind.must_release and not res.coll):
                    continue  # a local reference keeps its slot until deleted, referenced or not
                if lost and kind.owned and kind.must_release and not res.coll:
                    self._leak(state, rid, loc, "lost", "the last reference to it is lost here")
                del state.r[rid]
            else:  # released, escaped, consumed: nothing can refer to it any more
                del state.r[rid]

    def _havoc(self, state: State, names: tuple[str, ...]) -> None:
        wanted = set(names)
        for k, v in list(state.b.items()):
            if k[0] in wanted:
                if v[0] == "r":
                    self._consume_tree(state, v[1])
                if len(k) == 1 and v[0] != "r":
                    del state.b[k]
        state.conds = frozenset(c for c in state.conds if not (self._vars_of(c[0]) & wanted))

    def _consume_tree(self, state: State, rid: str, depth: int = 0) -> None:
        res = state.r.get(rid)
        if res is None or depth > 6:
            return
        if res.st in (HELD, BORROWED, RELEASED, DANGLING, OPAQUE):
            state.r[rid] = res.with_st(CONSUMED)
        for k, v in list(state.b.items()):
            if k[0] == "@" + rid and v[0] == "r":
                self._consume_tree(state, v[1], depth + 1)

    # ================================================================== conditions

    def _assume(self, state: State, cond: Expr, truth: bool, memo: bool = True) -> State | None:
        """Narrow `state` to the paths where `cond` has this truth value (None: none). `memo`:
        remember the answer for conditions the state cannot evaluate, so that a re-test agrees
        (`#ifdef X` twice, `if (flag)` twice); never for loop tests, whose value changes from
        one iteration to the next without an assignment the state could notice: every
        `range-for` would otherwise be the same remembered condition, and the exit of a range-for
        nested in another (or the body of a second one) would never be explored."""
        if isinstance(cond, Op):
            if cond.op == "!" and len(cond.operands) == 1:
                return self._assume(state, cond.operands[0], not truth, memo)
            if cond.op in ("==", "!=") and len(cond.operands) == 2:
                eq = truth if cond.op == "==" else not truth
                return self._assume_eq(state, cond.operands[0], cond.operands[1], eq, cond, memo)
        v = self._eval(state, cond)
        decided = self._truth(state, v)
        if decided is not None:
            return state if decided == truth else None
        if v is not None and v[0] == "r" or self._is_lvalue(cond):
            return self._refine(state, cond, v, eq=not truth, c=0)
        return self._assume_memo(state, cond, truth) if memo else state

    def _assume_eq(self, state: State, a: Expr, b: Expr, eq: bool, whole: Expr, memo: bool = True) -> State | None:
        va, vb = self._eval(state, a), self._eval(state, b)
        decided = self._compare(state, va, vb)
        if decided is not None:
            return state if decided == eq else None
        if vb is not None and vb[0] == "k" and (va is None or va[0] != "k"):
            if va is not None or self._is_lvalue(a):
                return self._refine(state, a, va, eq, vb[1])
        elif va is not None and va[0] == "k" and (vb is None or vb[0] != "k"):
            if vb is not None or self._is_lvalue(b):
                return self._refine(state, b, vb, eq, va[1])
        return self._assume_memo(state, whole, eq) if memo else state

    def _refine(self, state: State, e: Expr, v: Val | None, eq: bool, c: int) -> State | None:
        """Assume `e == c` (eq) or `e != c` (not eq)."""
        if v is not None and v[0] == "r":
            rid = v[1]
            res = state.r.get(rid)
            if res is None:
                return state
            if res.maybe_null and c == 0:  # decided only now: NULL means the call failed
                if eq:
                    for k, val in list(state.b.items()):
                        if val == ("r", rid):
                            state.b[k] = ("k", 0)
                    del state.r[rid]
                else:
                    state.r[rid] = replaced(res, maybe_null=False)
                return state
            if res.st != OPAQUE:  # something this function acquired: a valid, non-NULL pointer
                if c == 0:
                    return None if eq else state
                return state
            fact = _narrow(res.fact, eq, c)
            if fact is False:
                return None
            state.r[rid] = replaced(res, fact=fact)
            return state
        fact = _narrow(v, eq, c)
        if fact is False:
            return None
        loc = self._resolve(state, e, create=True)
        if loc is None or fact is None:
            return state
        if v is None and c == 0 and (loc[0].startswith("@") or not self._is_known_var(loc[0])) and not _too_deep(loc):
            # memory reached through a parameter or a global: give it an identity, so the
            # NULL test shows up in this function's summary as a precondition
            rid = self._new_opaque(state, loc)
            state.r[rid] = replaced(state.r[rid], fact=fact)
            return state
        state.b[loc] = fact
        return state

    def _is_lvalue(self, e: Expr) -> bool:
        return isinstance(e, (Var, Field, Index, Deref))

    def _assume_memo(self, state: State, cond: Expr, truth: bool) -> State | None:
        """Conditions the state cannot evaluate: remember the answer so a re-test agrees."""
        key = cond
        if (key, not truth) in state.conds:
            return None
        if (key, truth) in state.conds:
            return state
        if len(state.conds) < self.budget.max_conds:
            state.conds = state.conds | {(key, truth)}
        return state

    def _vars_of(self, e: Expr) -> frozenset[str]:
        cached = self._cond_vars.get(e)
        if cached is None:
            cached = frozenset(_vars(e))
            self._cond_vars[e] = cached
        return cached

    # ================================================================== uses

    def _use(self, state: State, pointer: Expr, loc: ir.Loc, how: str) -> None:
        v = self._eval(state, pointer)
        if v is None or v[0] != "r":
            return
        rid = v[1]
        res = state.r.get(rid)
        if res is None or res.coll or res.st not in (RELEASED, DANGLING):
            return
        name = ir.expr_text(_strip_value(pointer))
        if res.st == RELEASED:
            where = self._last_note(state, rid, "released")
            msg = f"`{name}` is used after it was released{where}"
        else:
            parent = res.parent or ""
            where = self._last_note(state, parent, "released")
            msg = f"`{name}` is used after its owner was released{where}; it was borrowed from it"
        self._report("ORT006", loc, msg, state, rid, anchor=f"use:{name}")
        state.r[rid] = res.with_st(CONSUMED)

    def _last_note(self, state: State, rid: str, word: str) -> str:
        node = state.trace
        while node is not None:
            if node.rid == rid and word in node.text:
                return f" at line {node.line}"
            node = node.prev
        return ""

    # ================================================================== calls

    def _call(self, block: ir.Block, state: State, ev: Call) -> list[State]:
        spec = self.policy.lookup(ev.style, ev.callee)
        summary = None
        if spec is not None and spec.status_check is not None:
            summary = self._status_summary(spec)
        elif spec is None and ev.style in ("plain", "method", "new", "table"):
            summary = self.summaries(ev)
        released_args = self._released_args(spec, summary)
        for i, arg in enumerate(ev.args):
            if i not in released_args:
                self._use(state, arg, ev.loc, "is passed to")
        if ev.receiver is not None and "receiver" not in released_args and ev.style == "method":
            self._use(state, ev.receiver, ev.loc, "is used by")
        if ev.may_throw:
            self._throw_edge(block, state.copy(), ev)
        if summary is not None:
            return self._apply_summary(block, state, ev, summary, spec)
        if spec is not None:
            return self._apply_spec(block, state, ev, spec)
        if self.policy.is_neutral(ev.style, ev.callee):
            self._neutral(state, ev)
            return [state]
        return self._unknown(state, ev)

    def _status_summary(self, spec: CallSpec) -> Summary:
        cached = self._status_summaries.get(spec.name)
        if cached is None:
            cached = summary_from_status_check(spec)
            self._status_summaries[spec.name] = cached
        return cached

    @staticmethod
    def _released_args(spec: CallSpec | None, summary: Summary | None) -> set:
        out: set = set()
        if spec is not None and spec.release is not None:
            out.add("receiver" if spec.release.receiver else spec.release.arg)
        if spec is not None and spec.moves is not None:
            out.add(spec.moves)
        if summary is not None:
            for case in summary.cases:
                for e in case.effects:
                    if len(e.path) == 1:
                        out.add(e.path[0])
        return out

    def _neutral(self, state: State, ev: Call) -> None:
        """A known call that keeps nothing: `&x` arguments may have been written, though."""
        for arg in ev.args:
            if isinstance(arg, AddrOf):
                loc = self._resolve(state, arg.base, create=False)
                if loc is not None and loc in state.b and state.b[loc][0] != "r":
                    del state.b[loc]
                    self._invalidate(state, loc)
        if ev.dest is not None:
            self._store(state, ev.dest, None, ev.loc)
            self._gc(state, ev.loc)

    def _unknown(self, state: State, ev: Call) -> list[State]:
        tracked = False
        if self.options.unknown_calls == "escape":
            for arg in (ev.args if not ev.borrows else [a for i, a in enumerate(ev.args) if i not in ev.borrows]):
                v = self._eval(state, arg)
                if v is not None and v[0] == "r" and state.r.get(v[1], Res(None, OPAQUE)).st == HELD:
                    tracked = True
                self._escape_val(state, v, None)
                tracked |= self._contents_held(state, arg)
                self._escape_contents(state, arg)
        else:
            tracked = any(self._contents_held(state, a) for a in ev.args)
            self._neutral(state, ev)
        if tracked:
            label = ev.callee if ev.style == "plain" else f"{ev.style}:{ev.callee}"
            self.unknown[label] = self.unknown.get(label, 0) + 1
        if ev.dest is not None:
            self._store(state, ev.dest, None, ev.loc)
            self._gc(state, ev.loc)
        return [state]

    def _contents_held(self, state: State, arg: Expr) -> bool:
        v = self._eval(state, arg)
        if v is not None and v[0] == "r" and state.r.get(v[1], Res(None, OPAQUE)).st == HELD:
            return True
        if isinstance(arg, AddrOf):
            loc = self._resolve(state, arg.base, create=False)
            if loc is not None:
                return any(k[:len(loc)] == loc and val[0] == "r" and state.r.get(val[1], Res(None, OPAQUE)).st == HELD
                           for k, val in state.b.items())
        return False

    # ------------------------------------------------------------------ policy calls

    def _apply_spec(self, block: ir.Block, state: State, ev: Call, spec: CallSpec) -> list[State]:
        if spec.noreturn:
            if spec.noreturn == "throw":
                self._exit(state, ev.loc, "throw", None, f"{ev.callee}() throws")
            else:
                self.exits.append((state, "abort", None))
            return []
        states = [state]
        if spec.assume is not None and spec.assume < len(ev.args):
            s = self._assume(state, ev.args[spec.assume], True)
            states = [s] if s is not None else []
        for s in states:
            if spec.release is not None:
                self._release(s, ev, spec.release, spec.name)
            for i in sorted(spec.escapes) if not spec.escapes_all else range(len(ev.args)):
                if i < len(ev.args):
                    value = self._eval(s, ev.args[i])
                    if not self._is_local_ref(s, value):  # JNI copies a local reference; its slot stays taken
                        self._escape_val(s, value, None)
                    self._escape_contents(s, ev.args[i])
        out: list[State] = []
        for s in states:
            out.extend(self._outcomes(s, ev, spec))
        for s in out:
            if spec.stores:
                self._keep_args(s, ev, spec.stores)
            if spec.view and ev.dest is not None and ev.receiver is not None:
                self._store(s, ev.dest, self._eval(s, ev.receiver), ev.loc)
            s.b.pop((f"$drop{ev.id}",), None)
            self._gc(s, ev.loc)
        return _dedupe(out)

    def _keep_args(self, state: State, ev: Call, into: str) -> None:
        """`list.add(t)`, `Map.of("x", t)`: the collection keeps its arguments, one slot per
        resource (`@C [] #rid`). Keeping is not owning: a collection created here keeps them
        this function's; any other collection (a field, a parameter's) takes them away."""
        coll = ev.receiver if into == "receiver" else (ev.dest if ev.dest is not None else Var(f"$drop{ev.id}"))
        if coll is None:
            return
        for arg in ev.args:
            self._keep_value(state, coll, self._eval(state, arg))

    def _keep_value(self, state: State, coll: Expr, v: Val | None) -> None:
        if v is None or v[0] != "r" or v[1] not in state.r:
            return
        loc = self._resolve(state, Index(coll, Opaque("i")), create=True)
        if loc is None or not self._is_local_loc(state, loc):
            self._escape_val(state, v, loc)
        else:
            state.b[loc + ("#" + v[1],)] = v

    def _stored(self, state: State, elem: Expr) -> list[str]:
        """Resources kept one-per-slot in the collection whose elements `elem` (`c[i]`) names."""
        loc = self._resolve(state, elem, create=False)
        if loc is None:
            return []
        n = len(loc)
        return sorted({v[1] for k, v in state.b.items()
                       if len(k) == n + 1 and k[:n] == loc and k[n].startswith("#") and v[0] == "r"})

    def _release_stored(self, state: State, elem: Expr, kinds: frozenset | None, by: str, loc: ir.Loc) -> None:
        """Closing every element of a collection (`OnnxValue.close(map)`, a closing loop)."""
        for rid in self._stored(state, elem):
            res = state.r.get(rid)
            if res is None or res.st not in (HELD, OPAQUE) or (kinds and res.kind and res.kind not in kinds):
                continue
            state.r[rid] = res.with_st(RELEASED)
            state.note(loc.line, loc.col, f"released with the other elements of `{ir.expr_text(_strip_value(elem))}` by {by}",
                       rid, release=by.rstrip("()") if by.endswith("()") else None)

    def _outcomes(self, state: State, ev: Call, spec: CallSpec) -> list[State]:
        """Split into success and failure where the call can fail, then acquire on success."""
        ret_acq = None
        for acq in spec.acquires:
            if acq.into == "return" and self.policy.kinds[acq.kind].owned:
                ret_acq = acq
                break
        lazy = ret_acq is not None and not self.policy.kinds[ret_acq.kind].must_release
        can_fail = spec.returns in ("status", "code") or (ret_acq is not None and ret_acq.nullable and not lazy)
        if not can_fail:
            if ret_acq is None and ev.dest is not None:
                self._store(state, ev.dest, None, ev.loc)
            self._neutral_outs(state, ev, spec)
            return self._acquire_all(state, ev, spec)
        ok, bad = state, state.copy()
        ok.note(ev.loc.line, ev.loc.col, f"assuming {ev.callee}() succeeds")
        bad.note(ev.loc.line, ev.loc.col, _failure_note(ev.callee, spec))
        # failure: nothing acquired; the result says so
        if spec.returns == "status":
            if ev.dest is not None:
                rid = f"{ev.id}:status"
                bad.r[rid] = Res(spec.status_kind, HELD)
                self._site(rid, ev, ev.dest, spec.status_kind)
                bad.note(ev.loc.line, ev.loc.col, f"{ev.callee}() returns an {self._status_noun(spec.status_kind)} that must be released", rid)
                self._store(bad, ev.dest, ("r", rid), ev.loc)
            else:
                self._report("ORT004", ev.loc, _ignored_status_msg(ev.callee, self._status_noun(spec.status_kind),
                                                                   self.policy.releasers_of(spec.status_kind)),
                             bad, None, anchor=f"ignored:{ev.callee}:{ev.text}")
        elif spec.returns == "code":
            if ev.dest is not None:
                self._store(bad, ev.dest, ("x", frozenset({spec.success})), ev.loc)
        elif ev.dest is not None:
            self._store(bad, ev.dest, ("k", 0), ev.loc)
        # success
        if spec.returns == "status" and ev.dest is not None:
            self._store(ok, ev.dest, ("k", 0), ev.loc)
        elif spec.returns == "code" and ev.dest is not None:
            self._store(ok, ev.dest, ("k", spec.success), ev.loc)
        if spec.moves is not None and spec.moves < len(ev.args):
            rid, res = self._value_res(ok, ev.args[spec.moves], create=True)  # also `p->data`: a summary says so
            if rid is not None and res is not None and res.st in (HELD, OPAQUE):
                ok.r[rid] = res.with_st(CONSUMED)
        self._neutral_outs(ok, ev, spec)
        self._neutral_outs(bad, ev, spec)
        return self._acquire_all(ok, ev, spec) + [bad]

    def _status_noun(self, kind: str) -> str:
        """`OrtStatus*`, `OgaResult*`: the label of the status kind a call returns (policy `status_kind`)."""
        return f"{self.policy.kinds[kind].label}*" if kind in self.policy.kinds else "OrtStatus*"

    def _neutral_outs(self, state: State, ev: Call, spec: CallSpec) -> None:
        """Scalar out-parameters (`&count`) are written by the call: forget what we knew."""
        acquired_args = {a.arg for a in spec.acquires}
        for i, arg in enumerate(ev.args):
            if isinstance(arg, AddrOf) and i not in acquired_args:
                loc = self._resolve(state, arg.base, create=False)
                if loc is not None and loc in state.b and state.b[loc][0] != "r":
                    del state.b[loc]

    def _acquire_all(self, state: State, ev: Call, spec: CallSpec) -> list[State]:
        """Acquire everything the call hands out; an out-parameter documented as possibly NULL
        on success (`_Outptr_result_maybenull_`) splits the path once more."""
        states = [state]
        for acq in spec.acquires:
            if acq.nullable and acq.into.startswith("*"):
                target = self._acquire_target(ev, acq)
                if target is not None:
                    for s in list(states):
                        null_state = s.copy()
                        self._store(null_state, target, ("k", 0), ev.loc)
                        null_state.note(ev.loc.line, ev.loc.col, f"assuming {ev.callee}() writes NULL to `{ir.expr_text(target)}`")
                        states.append(null_state)
                    for s in states[: len(states) // 2]:
                        self._acquire(s, ev, acq)
                    continue
            for s in states:
                self._acquire(s, ev, acq)
        return states

    def _acquire(self, state: State, ev: Call, acq: Acquire, via_helper: str | None = None) -> None:
        kind = self.policy.kinds[acq.kind]
        role = acq.into
        rid = f"{ev.id}:{role}"
        owner_text = None
        parent = None
        if acq.owner is not None and (acq.owner < len(ev.args) or acq.owner == RECEIVER and ev.receiver is not None):
            owner_expr = ev.receiver if acq.owner == RECEIVER else ev.args[acq.owner]
            if kind.owned:
                owner_text = self._owner_key(state, owner_expr)
            else:
                prid, pres = self._value_res(state, owner_expr, create=True)
                parent = prid
        if acq.into == "token":
            state.r[rid] = Res(acq.kind, HELD, owner=owner_text)
            self._site(rid, ev, None, acq.kind, via_helper)
            state.note(ev.loc.line, ev.loc.col, f"{kind.label} acquired by {ev.callee}()", rid)
            return
        target = self._acquire_target(ev, acq)
        if target is None:
            return
        if owner_text is not None and isinstance(target, Index):
            # one abstract resource for every element: each element has its own owner object
            # (`strings[i] = GetStringUTFChars(env, s_i)`), so only the owner's text can match
            owner_text = owner_text.partition("|@")[0]
        st = HELD if kind.owned else BORROWED
        old = state.r.get(rid)
        if old is not None and old.st == HELD and not old.coll and kind.owned and kind.loop_leak and not kind.must_release:
            self._local_ref_again(state, rid, ev)
        elif old is not None and old.st == HELD and not old.coll and kind.owned and kind.must_release:
            dest_loc = self._resolve(state, target, create=False)
            if dest_loc is not None and state.b.get(dest_loc) == ("r", rid) and state.refs(rid) == 1:
                self._leak(state, rid, ev.loc, "overwritten", "it is overwritten here while still held")
        lazy_null = acq.nullable and acq.into == "return" and kind.owned and not kind.must_release
        if kind.loop_leak and parent is None:
            parent = self._open_frame(state)
        state.r[rid] = Res(acq.kind, st, owner=owner_text, parent=parent,
                           coll=(old.coll if old is not None and old.st == HELD else False), maybe_null=lazy_null)
        self._site(rid, ev, target, acq.kind, via_helper)
        if kind.owned:
            state.note(ev.loc.line, ev.loc.col, f"{kind.label} acquired by {ev.callee}() into `{ir.expr_text(target)}`", rid)
        self._store(state, target, ("r", rid), ev.loc)

    def _local_ref_again(self, state: State, rid: str, ev: Call) -> None:
        """The call that created `rid` runs again while the reference it made last time is
        still alive: the loop piles up one local reference per iteration (ORT007), unless the
        loop's trip count is a small constant or a successful EnsureLocalCapacity covers it."""
        loops = self.loops.enclosing(self._block)
        if not loops or self.loops.small_constant(loops, self._constant):
            return
        if self.loops.covered(loops, self._capacities(state)):
            return
        self._leak(state, rid, ev.loc, "again", f"{ev.callee}() creates another one here")

    def _constant(self, e: Expr) -> int | None:
        v = self._eval(State(), e)
        return v[1] if v is not None and v[0] == "k" else None

    def _capacities(self, state: State) -> list[str]:
        """Owner texts of the EnsureLocalCapacity-like tokens this path holds."""
        out = []
        for res in state.r.values():
            if res.st == HELD and res.owner is not None:
                kind = self.policy.kinds.get(res.kind or "")
                if kind is not None and kind.capacity:
                    out.append(_owner_shown(res.owner))
        return out

    def _open_frame(self, state: State) -> str | None:
        """The innermost local frame this path holds (PushLocalFrame), if any: its release
        frees what is created now."""
        frames = [rid for rid, res in state.r.items()
                  if res.st == HELD and (self.policy.kinds.get(res.kind or "") or _NO_KIND).frame]
        return max(frames) if frames else None

    def _acquire_target(self, ev: Call, acq: Acquire) -> Expr | None:
        if acq.into == "return":
            if ev.dest is None:
                return Var(f"$drop{ev.id}")
            return ev.dest
        if acq.into == "receiver":
            return ev.receiver
        idx = acq.arg
        if idx is None or idx >= len(ev.args):
            return None
        arg = ev.args[idx]
        if acq.into.endswith("[]"):
            if isinstance(arg, AddrOf):
                return arg.base
            return Index(arg, Opaque("i"))
        if isinstance(arg, AddrOf):
            return arg.base
        if isinstance(arg, Const):
            return None  # NULL out-parameter: nothing is written
        return Deref(arg)

    def _site(self, rid: str, ev: Call, target: Expr | None, kind: str | None, via_helper: str | None = None) -> None:
        if rid not in self.sites:
            self.sites[rid] = Site(ev.loc.line, ev.loc.col, ev.loc.end_line, ev.loc.end_col, ev.callee,
                                   ir.expr_text(target) if target is not None and not _is_temp(target) else "",
                                   kind, bool(via_helper))

    # ------------------------------------------------------------------ releases

    def _release(self, state: State, ev: Call, rel: Release, callee: str, helper: str | None = None) -> None:
        if rel.arg is None and not rel.receiver:
            self._release_token(state, ev, rel)
            return
        arg = ev.receiver if rel.receiver else (ev.args[rel.arg] if rel.arg is not None and rel.arg < len(ev.args) else None)
        if arg is None:
            return
        if rel.elements:  # OnnxValue.close(map): the elements, not the collection
            arg = Index(arg, Opaque("i"))
        self._release_expr(state, ev, arg, rel, callee, helper)

    def _release_expr(self, state: State, ev: Call, arg: Expr, rel: Release | None, callee: str,
                      helper: str | None, where: str = "") -> None:
        if isinstance(arg, Index):
            self._release_stored(state, arg, rel.kinds if rel is not None else None, f"{callee}()", ev.loc)
        v = self._eval(state, arg)
        if v is not None and v[0] == "k" and v[1] == 0:
            return  # releasing NULL does nothing
        if v is not None and v[0] != "r":
            return
        rid, res = self._value_res(state, arg, create=True)
        if rid is None or res is None:
            return
        name = ir.expr_text(_strip_value(arg))
        via = f" inside {helper}()" + (f" at {_short_path(where)}" if where else "") if helper else ""
        kind = self.policy.kinds.get(res.kind) if res.kind else None
        label = kind.label if kind else "it"
        if res.st in (RELEASED, DANGLING):
            if res.coll and not res.swept:
                return  # the next element of an array that a loop is releasing
            if res.coll:
                where = self._last_note(state, rid, "released")
                self._report("ORT002", ev.loc, f"the elements of `{_array_name(arg)}` ({label}) are released "
                             f"a second time by {callee}(){via}; every element was already released by the loop{where}",
                             state, rid, anchor=f"double:{callee}:{name}")
                state.r[rid] = res.with_st(CONSUMED)
                return
            where = self._last_note(state, rid, "released")
            self._report("ORT002", ev.loc, f"`{name}` ({label}) is released a second time by {callee}(){via}; "
                         f"it was already released{where}", state, rid, anchor=f"double:{callee}:{name}")
            state.r[rid] = res.with_st(CONSUMED)
            return
        if res.st == CONSUMED:
            return
        if res.st == BORROWED and self._is_java(res.kind):  # Java: closing a Result's output early is allowed
            state.r[rid] = res.with_st(RELEASED)
            state.note(ev.loc.line, ev.loc.col, f"`{name}` closed by {callee}(){via}", rid, release=callee)
            return
        if res.st == BORROWED:
            site = self.sites.get(rid)
            src = f" (from {site.callee}() at line {site.line})" if site else ""
            self._report("ORT005", ev.loc, f"{callee}(){via} releases `{name}`, a {label}{src} that the caller does not own; "
                         f"it must not be released", state, rid, anchor=f"foreign:{callee}:{name}")
            state.r[rid] = res.with_st(CONSUMED)
            return
        if res.st == HELD and rel is not None and res.kind is not None:
            if res.kind not in rel.kinds:
                self._wrong_release(state, ev, rid, res, name, callee, via)
                return
            if rel.owner is not None and res.owner is not None and rel.owner < len(ev.args):
                owner = self._owner_key(state, ev.args[rel.owner])
                if not _same_owner(owner, res.owner):
                    site = self.sites.get(rid)
                    self._report("ORT003", ev.loc, f"{callee}(){via} releases `{name}` against `{_owner_shown(owner)}`, "
                                 f"but it was acquired from `{_owner_shown(res.owner)}`"
                                 + (f" at line {site.line}" if site else ""),
                                 state, rid, anchor=f"owner:{callee}:{name}")
                    state.r[rid] = res.with_st(CONSUMED)
                    return
            if rel.keep_if_arg is not None and rel.keep_if_arg < len(ev.args):
                mode = self._eval(state, ev.args[rel.keep_if_arg])
                if mode is not None and mode == ("k", rel.keep_if_value):
                    state.note(ev.loc.line, ev.loc.col, f"{callee}() with this mode copies back but does not release `{name}`", rid)
                    return
        if res.st == ESCAPED and res.kind is None:
            return
        state.r[rid] = res.with_st(RELEASED)
        state.note(ev.loc.line, ev.loc.col, f"`{name}` released by {callee}(){via}", rid, release=callee)
        for other, ores in list(state.r.items()):
            if ores.parent == rid and ores.st == BORROWED:
                state.r[other] = ores.with_st(DANGLING)

    def _wrong_release(self, state: State, ev: Call, rid: str, res: Res, name: str, callee: str, via: str) -> None:
        kind = self.policy.kinds[res.kind]  # type: ignore[index]
        site = self.sites.get(rid)
        right = self.policy.releasers_of(kind.id)
        hint = f"; use {' or '.join(r + '()' for r in right[:2])}" if right else ""
        origin = f" from {site.callee}() at line {site.line}" if site else ""
        rule = kind.wrong_release_rule
        if rule == "ORT005":
            msg = f"{callee}(){via} frees `{name}`, {kind.label}{origin} that does not belong to the caller's {callee.split('::')[-1]} family{hint}"
        else:
            msg = f"{callee}(){via} does not release {kind.label}: `{name}` was acquired{origin}{hint}"
        self._report(rule, ev.loc, msg, state, rid, anchor=f"mismatch:{callee}:{name}")
        state.r[rid] = res.with_st(CONSUMED)

    def _release_token(self, state: State, ev: Call, rel: Release) -> None:
        owner = None
        if rel.owner is not None and rel.owner < len(ev.args):
            owner = self._owner_key(state, ev.args[rel.owner])
        candidates = [rid for rid, res in state.r.items()
                      if res.st == HELD and res.kind in rel.kinds and _same_owner(owner, res.owner)]
        if candidates:
            rid = sorted(candidates)[-1]
            state.r[rid] = state.r[rid].with_st(RELEASED)
            state.note(ev.loc.line, ev.loc.col, f"released by {ev.callee}()", rid)
            del state.r[rid]
            for other, ores in list(state.r.items()):  # PopLocalFrame: what the frame held is gone
                if ores.parent == rid and ores.st == HELD:
                    state.r[other] = ores.with_st(CONSUMED)

    # ------------------------------------------------------------------ summaries

    def _apply_summary(self, block: ir.Block, state: State, ev: Call, summary: Summary, spec: CallSpec | None) -> list[State]:
        out: list[State] = []
        helper = None if summary.origin.startswith("policy") else ev.callee
        for case in summary.cases:
            s = state.copy()
            if not self._precondition(s, ev, case):
                continue
            for effect in case.effects:
                self._apply_effect(s, ev, effect, helper)
            for path, kind in case.outs:
                target = self._param_expr(ev, path)
                if target is not None and kind in self.policy.kinds:
                    self._acquire_into(s, ev, target, kind, helper)
            self._summary_return(s, ev, case, summary)
            if case.exit == "return":
                if len(summary.cases) > 1 and helper and (case.ret is not None or case.pre):
                    s.note(ev.loc.line, ev.loc.col, self._case_note(ev.callee, case))
                out.append(s)
            elif case.exit == "throw":
                s.note(ev.loc.line, ev.loc.col, f"{ev.callee}() throws")
                self._throw_edge(block, s, ev)
            elif case.exit == "caller_return":
                value = self._eval(s, ev.args[case.pre[0][0][0]]) if case.pre and case.pre[0][0][0] < len(ev.args) else None
                self._escape_val(s, value, ("<return>",))
                self._exit(s, ev.loc, "return", value, f"{ev.callee}() makes {self.fn.name}() return here")
            else:
                self.exits.append((s, "abort", None))
        for s in out:
            s.b.pop((f"$drop{ev.id}",), None)
            self._gc(s, ev.loc)
        return _join_cases(out) if helper and self.fn.language == "java" else _dedupe(out)

    def _case_note(self, callee: str, case: Case) -> str:
        ret = case.ret
        if ret is not None and ret[0] == "k":
            return f"assuming {callee}() returns {'NULL' if ret[1] == 0 else ret[1]}"
        if ret is not None and ret[0] == "x":
            return f"assuming {callee}() returns a value other than {', '.join(map(str, sorted(ret[1])))}"
        if ret is not None and ret[0] == "fresh":
            kind = self.policy.kinds.get(ret[1])
            return f"assuming {callee}() returns a new {kind.label if kind else ret[1]}"
        return f"assuming the path through {callee}() that depends on its arguments"

    def _param_expr(self, ev: Call, path: tuple) -> Expr | None:
        idx = path[0]
        if idx >= len(ev.args):
            return None
        e: Expr = ev.args[idx]
        for op in path[1:]:
            if op == "*":
                e = e.base if isinstance(e, AddrOf) else Deref(e)
            elif op == "[]":
                e = e.base if isinstance(e, AddrOf) else Index(e, Opaque("i"))
            else:
                e = Field(e, op[1:])
        return e

    def _precondition(self, state: State, ev: Call, case: Case) -> bool:
        for path, what in case.pre:
            e = self._param_expr(ev, path)
            if e is None:
                continue
            v = self._eval(state, e)
            c_eq = what == "null"
            if v is None and not self._is_lvalue(e):
                continue
            if self._refine(state, e, v, eq=c_eq, c=0) is None:
                return False
        return True

    def _apply_effect(self, state: State, ev: Call, effect: Effect, helper: str | None) -> None:
        e = self._param_expr(ev, effect.path)
        if e is None:
            return
        if effect.what == "release":
            rel = self._helper_release(effect.relby)
            fake = Call(ev.id, ev.loc, effect.relby or ev.callee, ev.style, None, (e,), None, ev.text)
            self._release_expr(state, fake, e, rel, effect.relby or ev.callee, helper, effect.where)
        elif effect.what == "escape":
            self._escape_val(state, self._eval(state, e), None)
            self._escape_contents(state, e)
        elif effect.what == "clear":
            self._store(state, e, ("k", 0), ev.loc)
        else:  # a maybe-release (realloc-like helper): also of memory reached through a parameter
            rid, res = self._value_res(state, e, create=True)
            if rid is not None and res is not None and res.st in (HELD, OPAQUE, BORROWED):
                state.r[rid] = res.with_st(CONSUMED)

    def _helper_release(self, name: str | None) -> Release | None:
        """How `name`, called inside a helper, releases; the owner object and mode arguments
        stay inside the helper. The same for every call of every helper: computed once."""
        if name in self._helper_releases:
            return self._helper_releases[name]
        spec = self._release_spec(name)
        rel = spec.release if spec is not None else None
        if rel is not None:
            rel = dataclasses.replace(rel, owner=None, keep_if_arg=None)
        self._helper_releases[name] = rel
        return rel

    def _release_spec(self, name: str | None) -> CallSpec | None:
        if name is None:
            return None
        for style in ("table", "plain", "method", "any"):
            spec = self.policy.lookup(style, name)
            if spec is not None and spec.release is not None:
                return spec
        return None

    def _acquire_into(self, state: State, ev: Call, target: Expr, kind: str, helper: str | None) -> None:
        rid = f"{ev.id}:{ir.expr_text(target)}"
        kinfo = self.policy.kinds[kind]
        state.r[rid] = Res(kind, HELD if kinfo.owned else BORROWED)
        self._site(rid, ev, target, kind, helper)
        state.note(ev.loc.line, ev.loc.col, f"{kinfo.label} acquired by {ev.callee}() into `{ir.expr_text(target)}`", rid)
        self._store(state, target, ("r", rid), ev.loc)

    def _summary_return(self, state: State, ev: Call, case: Case, summary: Summary) -> None:
        if ev.dest is None and (case.ret is None or case.ret[0] != "fresh"):
            return
        ret = case.ret
        value: Val | None = None
        if ret is None:
            value = None
        elif ret[0] in ("k", "x"):
            value = ret
        elif ret[0] == "param":
            e = self._param_expr(ev, ret[1])
            value = self._eval(state, e) if e is not None else None
        elif ret[0] == "fresh" and ret[1] in self.policy.kinds:
            target = ev.dest if ev.dest is not None else Var(f"$drop{ev.id}")
            rid = f"{ev.id}:return"
            kinfo = self.policy.kinds[ret[1]]
            old = state.r.get(rid)
            if old is not None and old.st == HELD and not old.coll and kinfo.loop_leak and not kinfo.must_release:
                self._local_ref_again(state, rid, ev)
            state.r[rid] = Res(ret[1], HELD if kinfo.owned else BORROWED,
                               parent=self._open_frame(state) if kinfo.loop_leak else None)
            self._site(rid, ev, target, ret[1], ev.callee)
            state.note(ev.loc.line, ev.loc.col, f"{kinfo.label} returned by {ev.callee}()", rid)
            self._store(state, target, ("r", rid), ev.loc)
            return
        if ev.dest is not None:
            self._store(state, ev.dest, value, ev.loc)

    # ------------------------------------------------------------------ loops, exits

    def _loop_exit(self, state: State, ev: ir.ScopeExit) -> None:
        """A loop that releases `a[i]` (or hands it to a call that takes ownership) is taken to
        do so for every element of `a`, including on the path that runs it zero times (then the
        loop that filled `a` ran zero times too)."""
        blocks = self._iterated(ev.loop_blocks)
        for arg, what in self._loop_releases(blocks):
            if what == "release":
                self._release_stored(state, arg, None, "the loop above", ev.loc)
            else:
                for rid in self._stored(state, arg):
                    self._escape_val(state, ("r", rid), None)
            v = self._eval(state, arg)
            if v is None:
                loc = self._resolve(state, arg, create=True)
                if loc is None:
                    continue
                self._new_opaque(state, loc)
                v = state.b.get(loc)
            if v is not None and v[0] == "r":
                res = state.r.get(v[1])
                if res is not None and res.coll and (res.st in (HELD, OPAQUE) or (res.st == RELEASED and not res.swept)):
                    if what == "release":
                        state.r[v[1]] = replaced(res, st=RELEASED, swept=True)
                        state.note(ev.loc.line, ev.loc.col, "every element is released by the loop above", v[1])
                    else:
                        self._escape_val(state, v, None)
        for elem, keeper in self._loop_keeps(blocks):
            # `for (e : result) out.add(e.getValue())`: what the loop keeps elsewhere is kept
            # there on every path, the one that runs the loop zero times included
            self._keep_value(state, keeper, self._eval(state, elem))

    def _iterated(self, blocks: frozenset) -> frozenset:
        """The blocks of a front end's loop region that run again on the next iteration: its
        natural loop (the CFG's). A region may also hold code on the way out of the loop, such
        as the deferred calls a `return` inside the body runs (Go), which run once, after the
        loop: what they release is not released per element by the loop."""
        headed = [lp for lp in self.loops.loops if lp.header in blocks]
        if not headed:
            return blocks
        loop = min(headed, key=lambda lp: lp.header)
        return frozenset(blocks & loop.body)

    def _loop_keeps(self, blocks: frozenset) -> list[tuple[Expr, Expr]]:
        """(element `a[i]`, collection) pairs: a `stores` call in the loop keeps an element."""
        out: list[tuple[Expr, Expr]] = []
        for bid in sorted(blocks):
            for ev in self.blocks[bid].events if bid in self.blocks else ():
                if not isinstance(ev, Call) or ev.receiver is None:
                    continue
                spec = self.policy.lookup(ev.style, ev.callee)
                if spec is None or spec.stores != "receiver":
                    continue
                for arg in ev.args:
                    elem = self._loop_element(arg, blocks)
                    if elem is not None:
                        out.append((elem, ev.receiver))
        return out

    def _loop_releases(self, blocks: frozenset) -> list[tuple[Expr, str]]:
        """Array elements `a[i]` that calls in the loop body release or take ownership of."""
        cached = self._loop_release_cache.get(blocks)
        if cached is not None:
            return cached
        found: list[tuple[Expr, str]] = []
        for bid in sorted(blocks):
            block = self.blocks.get(bid)
            if block is None:
                continue
            for ev in block.events:
                if isinstance(ev, Call):
                    for i, what in self._element_effects(ev).items():
                        elem = self._loop_element(ev.args[i], blocks) if i < len(ev.args) else None
                        if elem is not None:
                            found.append((elem, what))
                    spec = self.policy.lookup(ev.style, ev.callee)
                    if spec is not None and spec.release is not None and spec.release.receiver and ev.receiver is not None:
                        elem = self._loop_element(ev.receiver, blocks)
                        if elem is not None:
                            found.append((elem, "release"))
        self._loop_release_cache[blocks] = found
        return found

    def _loop_element(self, e: Expr, blocks: frozenset, depth: int = 0) -> Expr | None:
        """`a[i]`, or a variable the loop loads from `a[i]` (`for (T v : a)`, `p = a[i]`), also
        through views of it (`v.getValue()` of a map entry `v`)."""
        if isinstance(e, Index):
            return e
        if not isinstance(e, Var) or depth > 3:
            return None
        for bid in sorted(blocks):
            for other in self.blocks[bid].events if bid in self.blocks else ():
                if isinstance(other, ir.Assign) and other.dest == e and isinstance(other.value, Index):
                    return other.value
                if isinstance(other, Call) and other.dest == e and other.receiver is not None:
                    spec = self.policy.lookup(other.style, other.callee)
                    if spec is not None and spec.view:
                        return self._loop_element(other.receiver, blocks, depth + 1)
                    if spec is not None and spec.element:  # `it.next()`
                        return Index(other.receiver, Opaque("i"))
        return None

    def _element_effects(self, ev: Call) -> dict[int, str]:
        """Which arguments a call releases ("release") or takes ownership of ("escape")."""
        spec = self.policy.lookup(ev.style, ev.callee)
        out: dict[int, str] = {}
        if spec is not None and spec.status_check is None:
            if spec.release is not None and spec.release.arg is not None:
                out[spec.release.arg] = "release"
            for i in (range(len(ev.args)) if spec.escapes_all else spec.escapes):
                out.setdefault(i, "escape")
            return out
        summary = self._status_summary(spec) if spec is not None else self.summaries(ev)
        if summary is not None:
            for case in summary.cases:
                for e in case.effects:
                    if len(e.path) == 1 and e.what in ("release", "escape"):
                        out.setdefault(e.path[0], e.what)
            return out
        if self.options.unknown_calls == "escape" and not self.policy.is_neutral(ev.style, ev.callee):
            return {i: "escape" for i in range(len(ev.args)) if i not in ev.borrows}
        return out

    def _throw_edge(self, block: ir.Block, state: State, ev: Call) -> None:
        if block.handler is not None:
            state.note(ev.loc.line, ev.loc.col, f"if {ev.callee}() throws")
            self._extra.append((state, block.handler))
            return
        self._exit(state, ev.loc, "throw", None, f"leaving {self.fn.name}() when {ev.callee}() throws")

    def _return(self, state: State, term: ir.Return) -> None:
        value = self._eval(state, term.value) if term.value is not None else None
        if term.value is not None:
            self._escape_val(state, value, ("<return>",))
            self._escape_contents(state, term.value, ("<return>",))
        self._exit(state, term.loc, "return", value, f"returning from {self.fn.name}()")

    def _exit(self, state: State, loc: ir.Loc, how: str, value: Val | None, text: str) -> None:
        self.exits.append((state, how, value))
        for rid, res in state.r.items():
            member = res.st == ESCAPED and how == "throw" and res.kind is not None and \
                leaks_on_throw(self.fn, res.esc, self.sites.get(rid.split("#")[0]))
            if member:  # acquired straight into a raw member of the object a constructor builds (slots.py)
                res = res.with_st(HELD)
            if res.st != HELD or res.kind is None:
                continue
            kind = self.policy.kinds.get(res.kind)
            if kind is None or not kind.owned or not kind.must_release:
                continue
            self._leak(state, rid, loc, how, text + (CONSTRUCTOR_THROW_NOTE if member else ""))

    # ================================================================== findings

    def _leak(self, state: State, rid: str, loc: ir.Loc, how: str, text: str) -> None:
        site_key = rid.split("#")[0]
        record = self.leaks.get(site_key)
        if record is None:
            record = LeakRecord(site_key)
            self.leaks[site_key] = record
        exit_entry = (loc.line, loc.col, text, how)
        if exit_entry not in record.exits:
            record.exits.append(exit_entry)
        if how != "throw":
            record.exceptional_only = False
        res = state.r.get(rid)
        if res is not None and res.bound:
            record.bound = True
        if record.trace is None or (how != "throw" and record.exceptional_only is False and record.trace[1] == "throw"):
            record.trace = (self._trace_for(state, rid, (loc.line, loc.col, text)), how)

    def _emit_leaks(self) -> None:
        for site_key, record in self.leaks.items():
            site = self.sites.get(site_key)
            if site is None:
                continue
            res_kind = self.policy.kinds.get(site.kind or "")
            if res_kind is None:
                continue
            exits = sorted(record.exits)
            trace = record.trace[0] if record.trace else ()
            first = next((e for e in exits if e[3] != "throw"), exits[0])
            where = _exit_phrase(first)
            more = f" (and on {len(exits) - 1} more path{'s' if len(exits) > 2 else ''})" if len(exits) > 1 else ""
            target = f" into `{site.target}`" if site.target else ""
            if res_kind.language == "go":
                rule = "ORT020"
                msg = f"{res_kind.label} created by {site.callee}(){target} is not destroyed {where}{more}"
            elif res_kind.language == "java":
                rule = "ORT010"
                msg = f"{res_kind.label} created by {site.callee}(){target} is not closed {where}{more}"
                if record.exceptional_only:
                    msg += "; close it in a finally block or use try-with-resources"
            elif site.kind in self.policy.status_kinds and not record.bound:
                rule = "ORT004"
                msg = (f"the {self._status_noun(site.kind)} returned by {site.callee}() is never stored, so a failure status cannot be "
                       f"released: it leaks {where}{more}")
            elif res_kind.loop_leak and not res_kind.must_release:
                rule = "ORT007"
                right = self.policy.releasers_of(res_kind.id)
                msg = (f"{res_kind.label} created by {site.callee}(){target} inside a loop is not deleted before the "
                       f"next iteration: one more piles up on every iteration until the native method returns and "
                       f"the local reference table can overflow"
                       + (f"; delete it with {right[0]}() in the loop body, or run the iteration inside "
                          f"PushLocalFrame/PopLocalFrame" if right else ""))
            else:
                rule = "ORT001"
                right = self.policy.releasers_of(res_kind.id)
                hint = f"; release it with {right[0]}()" if right else ""
                msg = f"{res_kind.label} acquired by {site.callee}(){target} is not released {where}{more}{hint}"
            related = tuple(Step(self.fn.path, line, col, _exit_phrase((line, col, text, how)).capitalize())
                            for line, col, text, how in exits)
            level = "warning" if record.exceptional_only and rule == "ORT010" else ""
            finding = Finding(rule, self.fn.path, site.line, site.col, site.end_line, site.end_col, msg, self.fn.name,
                              trace, related, level, anchor=f"leak:{site.callee}:{site.target}:{site_key.split(':', 1)[-1]}")
            # Go: one finding per creating call, even for the several values one `Run` allocates
            key = (rule, site.line, site.col, site.callee) if rule == "ORT020" else (rule, site.line, site.col, site_key)
            if key not in self.findings:
                self.findings[key] = finding

    def _report(self, rule: str, loc: ir.Loc, message: str, state: State, rid: str | None, anchor: str) -> None:
        key = (rule, loc.line, loc.col, anchor)
        if key in self.findings:
            return
        if self.fn.language == "go":
            return  # Go code: only ORT020 (Destroy() twice or a use after it is the binding's own business)
        trace = self._trace_for(state, rid, (loc.line, loc.col, message)) if rid else (Step(self.fn.path, loc.line, loc.col, message),)
        self.findings[key] = Finding(rule, self.fn.path, loc.line, loc.col, loc.end_line, loc.end_col, message,
                                     self.fn.name, trace, anchor=anchor)

    def _trace_for(self, state: State, rid: str | None, final: tuple[int, int, str]) -> tuple[Step, ...]:
        steps: list[tuple[int, int, str]] = []
        node = state.trace
        while node is not None:
            if node.rid is None or node.rid == rid:
                steps.append((node.line, node.col, node.text))
            if node.rid == rid and ("acquired by" in node.text or "returned by" in node.text or "returns an" in node.text):
                break
            node = node.prev
        steps.reverse()
        if len(steps) > 24:
            steps = steps[:1] + steps[-23:]
        steps.append(final)
        return tuple(Step(self.fn.path, line, col, text) for line, col, text in steps)

    # ================================================================== summary of this function

    def _summary(self) -> Summary | None:
        cases: list[Case] = []
        many = len(self.exits) > MAX_CASES
        released = {rid for state, _how, _v in self.exits for rid, res in state.r.items()
                    if rid[0] == "p" and res.st == RELEASED}
        for state, how, value in self.exits:
            if many:  # the same merge as under path explosion, so the cases agree
                state = state.copy()
                self._collapse_released_params(state, released)
            cases.append(self._case_of(state, how, value))
        if not cases:
            return None
        return Summary(self.fn.name, simplify_cases(cases), f"{self.fn.path}:{self.fn.loc.line}", tuple(self.fn.params))

    def _case_of(self, state: State, how: str, value: Val | None) -> Case:
        pre: list = []
        effects: list[Effect] = []
        outs: list = []
        for rid, res in sorted(state.r.items()):
            path = _param_path(rid)
            if path is not None:
                if path[0] >= len(self.fn.params):
                    continue
                if is_null_fact(res.fact):
                    pre.append((path, "null"))
                elif is_nonnull_fact(res.fact):
                    pre.append((path, "nonnull"))
                if res.st == RELEASED:
                    relby, where = self._release_site(state, rid)
                    effects.append(Effect(path, "release", relby, where))
                elif res.st == ESCAPED and not (res.esc == ("<return>",) and value == ("r", rid)):
                    effects.append(Effect(path, "escape"))  # stored somewhere, or into returned memory
                elif res.st == CONSUMED:
                    effects.append(Effect(path, "consume"))
            elif res.st == ESCAPED and res.esc and res.kind and res.esc[0].startswith("@"):
                out_path = _param_path(res.esc[0][1:])
                if out_path is not None and out_path[0] < len(self.fn.params):
                    outs.append((out_path + tuple(res.esc[1:]), res.kind))
        effects.extend(self._cleared_params(state))
        ret = self._ret_spec(state, value) if how == "return" else None
        exit_kind = {"return": "return", "throw": "throw", "abort": "abort"}.get(how, "return")
        return Case(tuple(pre), tuple(effects), tuple(sorted(set(outs))), ret, exit_kind)

    def _cleared_params(self, state: State) -> list[Effect]:
        """Memory reached through a parameter that this path set to NULL (`info->palette = 0`
        after freeing it): the caller must see that too, or it would think it still points
        to the released block."""
        out = []
        # filter before sorting by repr (the same order; repr of every binding of every exit
        # state was a tenth of the summary work)
        cleared = [(key, val) for key, val in state.b.items()
                   if val == ("k", 0) and len(key) >= 2 and key[0].startswith("@")]
        for key, val in sorted(cleared, key=repr) if len(cleared) > 1 else cleared:
            path = _param_path(key[0][1:])
            if path is not None and path[0] < len(self.fn.params):
                out.append(Effect(path + tuple(key[1:]), "clear"))
        return out

    def _release_site(self, state: State, rid: str) -> tuple[str | None, str]:
        """Which call released `rid` on this path, and where (from the path's trace)."""
        node = state.trace
        while node is not None:
            if node.rid == rid and node.release is not None:
                return node.release, f"{self.fn.path}:{node.line}"
            node = node.prev
        return None, ""

    def _ret_spec(self, state: State, value: Val | None) -> tuple | None:
        if value is None:
            return None
        if value[0] in ("k", "x"):
            return value
        rid = value[1]
        path = _param_path(rid)
        if path is not None:
            return ("param", path) if path[0] < len(self.fn.params) else None
        res = state.r.get(rid)
        if res is not None and res.kind and res.esc == ("<return>",):
            return ("fresh", res.kind)
        return None


# ---------------------------------------------------------------------- module helpers

MAX_ACCESS_DEPTH = 6  # identities for unknown memory stop here (k-limiting: `p->next->next->...`)


def _too_deep(loc: LocKey) -> bool:
    depth = len(loc) - 1
    if loc[0].startswith("@"):
        depth += loc[0].count("/")
    return depth > MAX_ACCESS_DEPTH


def _drop_blank_opaques(state: State) -> None:
    """An unknown pointer we know nothing about (not released, no NULL fact) and that only one
    location refers to is the same as no entry at all: it is recreated on demand with the same
    name. Dropping it lets paths that merely touched different pointers merge."""
    counts: dict[str, int] = {}
    for v in state.b.values():
        if v[0] == "r":
            counts[v[1]] = counts.get(v[1], 0) + 1
    blank = {rid for rid, res in state.r.items()
             if res.st == OPAQUE and res.fact is None and counts.get(rid, 0) <= 1 and not _TOP_PARAM.match(rid)}
    if not blank:
        return
    for rid in blank:
        del state.r[rid]
    prefixes = tuple("@" + rid for rid in blank)
    state.b = {k: v for k, v in state.b.items()
               if not (v[0] == "r" and v[1] in blank) and not k[0].startswith(prefixes)}


def _join_cases(states: list[State]) -> list[State]:
    """The outcomes of a helper's summary that hold the same resources in the same states, as
    one: the least constrained of them (fewest facts). Cases that differ only in what they
    assumed about an argument (`value != null` on one branch of a protobuf setter) otherwise
    double the states at every such call: 2^13 copies of one straight-line Java method that
    builds a model with generated protobuf builders. Java only for now (the C side keeps its
    facts: measured, one C++ leak's path was lost with them)."""
    if len(states) < 2:
        return states
    best: dict[tuple, State] = {}
    for s in states:
        key = s.core_key()
        kept = best.get(key)
        if kept is None or (len(s.b), len(s.conds)) < (len(kept.b), len(kept.conds)):
            best[key] = s
    return list(best.values())


def _dedupe(states: list[State]) -> list[State]:
    """Identical states once, first occurrence first (a call's outcomes: a handful of states,
    compared directly; hashed keys only for many)."""
    if len(states) < 2:
        return states
    if len(states) <= 8:
        out: list[State] = []
        for s in states:
            if not any(s.same(kept) for kept in out):
                out.append(s)
        return out
    seen: dict[tuple, State] = {}
    for s in states:
        seen.setdefault(s.key(), s)
    return list(seen.values())


def _narrow(fact: Val | None, eq: bool, c: int):
    """Combine a value fact with `== c` / `!= c`; False when contradictory, None when unknown."""
    if fact is None:
        return ("k", c) if eq else ("x", frozenset({c}))
    if fact[0] == "k":
        return fact if (fact[1] == c) == eq else False
    if fact[0] == "x":
        if eq:
            return False if c in fact[1] else ("k", c)
        return ("x", fact[1] | {c})
    return fact


def _strip_value(e: Expr) -> Expr:
    return e


def _short_path(where: str) -> str:
    """`a/b/util.c:42` -> `util.c:42`: traces stay readable."""
    return where.replace("\\", "/").rsplit("/", 1)[-1]


def _same_owner(a: str | None, b: str | None) -> bool:
    """Owner keys are `text` or `text|@rid`: the same value (an alias) or, failing that, the
    same text."""
    if a is None or b is None:
        return True
    ta, _, ra = a.partition("|@")
    tb, _, rb = b.partition("|@")
    if ra and rb:
        return ra == rb
    return ta == tb


def _owner_shown(key: str | None) -> str:
    return (key or "").partition("|@")[0]


def _owner_text(e: Expr) -> str:
    """The owner object as text; any index counts as the same slot (`a[i]` and `a[j]`)."""
    return re.sub(r"\[[^\[\]]*\]", "[]", ir.expr_text(e))


def _retested(fn: ir.Function) -> tuple[frozenset, frozenset]:
    """Variables and conditions that more than one `if` of the function tests: the facts whose
    loss a join must avoid (a fact tested once decides nothing after its own split)."""
    var_sites: dict[str, int] = {}
    cond_sites: dict[Expr, int] = {}
    for b in fn.blocks:
        term = b.term
        if isinstance(term, ir.Branch) and term.kind != "loop":
            for name in _vars(term.cond):
                var_sites[name] = var_sites.get(name, 0) + 1
            for part in _conjuncts(term.cond):
                cond_sites[part] = cond_sites.get(part, 0) + 1
    return (frozenset(n for n, k in var_sites.items() if k > 1), frozenset(c for c, k in cond_sites.items() if k > 1))


def _conjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Op) and e.op in ("&&", "||", "!") :
        return [p for o in e.operands for p in _conjuncts(o)] + [e]
    return [e]


def _array_name(e: Expr) -> str:
    """`outputs` for `outputs[i]`: what a loop over the elements is about."""
    return ir.expr_text(e.base if isinstance(e, Index) else e)


def _is_drop(e: Expr) -> bool:
    return isinstance(e, Var) and e.name.startswith("$drop")


def _is_temp(e: Expr) -> bool:
    """A front-end temporary (`$3`, `$drop7`): not a name to show the user."""
    return isinstance(e, Var) and e.name.startswith("$")


def _vars(e: Expr) -> set[str]:
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, (Field, Deref, AddrOf)):
        return _vars(e.base)
    if isinstance(e, Index):
        return _vars(e.base) | _vars(e.index)
    if isinstance(e, Op):
        out: set[str] = set()
        for o in e.operands:
            out |= _vars(o)
        return out
    if isinstance(e, Opaque):
        out = set()
        for o in e.parts:
            out |= _vars(o)
        return out
    return set()


_NO_KIND = Kind("", "")
_TOP_PARAM = re.compile(r"^p\d+$")
_PARAM_RID = re.compile(r"^p(\d+)((?:/[^/#]+)*)")


@functools.lru_cache(maxsize=4096)
def _param_path(rid: str) -> tuple | None:
    """`p1/*/.data` -> (1, "*", ".data"): the parameter and the access path a resource id names."""
    if rid[:1] != "p":
        return None
    m = _PARAM_RID.match(rid)
    if not m or "#" in rid:
        return None
    ops = tuple(op for op in m.group(2).split("/") if op)
    return (int(m.group(1)),) + ops


def _branch_note(term: ir.Branch, truth: bool) -> str:
    if term.kind == "pp":
        return f"assuming {'`' + term.text + '`'} is {'taken' if truth else 'not taken'}"
    if term.kind == "loop":
        return f"loop condition `{term.text}` is {'true' if truth else 'false'}"
    if term.kind == "case":
        return f"{'taking' if truth else 'not taking'} `{term.text}`"
    return f"assuming `{term.text}` is {'true' if truth else 'false'}"


def _failure_note(callee: str, spec: CallSpec) -> str:
    if spec.returns == "status":
        return f"assuming {callee}() fails (returns a non-NULL OrtStatus*)"
    if spec.returns == "code":
        return f"assuming {callee}() fails"
    return f"assuming {callee}() fails (returns NULL)"


def _ignored_status_msg(callee: str, noun: str = "OrtStatus*", releasers: list[str] | None = None) -> str:
    release = (releasers or ["ReleaseStatus"])[0]
    return (f"the {noun} returned by {callee}() is ignored; a failure status leaks and the error goes unnoticed "
            f"(check it and release it with {release}())")


def _exit_phrase(exit_entry: tuple) -> str:
    line, _col, text, how = exit_entry
    if how == "lost":
        return f"when its last reference is lost at line {line}"
    if how == "overwritten":
        return f"when it is overwritten at line {line}"
    if how == "throw":
        note = CONSTRUCTOR_THROW_NOTE if text.endswith(CONSTRUCTOR_THROW_NOTE) else ""
        return f"when an exception leaves the function at line {line}{note}"
    return f"when returning at line {line}"



