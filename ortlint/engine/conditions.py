"""Conditions: what a branch's test says about the state (`_assume`), part of `FunctionAnalyzer`.

Split from values.py (which evaluates and stores values): a test narrows the state it is
assumed on, or contradicts it (None: the arm is infeasible). NULL tests decide "maybe NULL"
results; equality and order tests between values that came in through parameters or globals
are remembered by value (relations.py, orders.py, global_relations.py), so that a re-test
through another expression agrees; tests the state cannot evaluate are remembered by
expression; facts about unknown pointers become summary preconditions.
"""
from __future__ import annotations

from .. import ir
from ..ir import Deref, Expr, Field, Index, Op, Var
from .fresh_blocks import fresh_block, live_other, pointer_base
from .exprs import expr_vars, narrow, param_path, remembered_as, too_deep
from .global_relations import global_identity
from .relations import assume_related, is_entry_identity, root_var
from .orders import assume_ordered
from .summaries import Summary
from .state import (
    OPAQUE,
    POSITIVE_COUNT,
    LocKey,
    State,
    Val,
    replaced,
)

# An order test against a constant, as `value OP c`: the test with the operands swapped, and the
# test that holds when it fails (`!(n < c)` is `n >= c`)
_SWAPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
# Whether `value OP c` excludes zero (`n <= 0` failing: n is not 0)
_EXCLUDES_ZERO = {"<": lambda c: c <= 0, "<=": lambda c: c < 0, ">": lambda c: c >= 0, ">=": lambda c: c > 0}
# Whether `value OP c` leaves no integer above 0 (`!(0 < n)`: n <= 0), for a loop's bound
_ADMITS_ONLY_ZERO = {"<": lambda c: c == 1, "<=": lambda c: c == 0, ">": lambda c: False, ">=": lambda c: False}
# Whether `value OP c` admits no integer from 0 up (`n < 0`): never true of an unsigned one
_BELOW_ZERO = {"<": lambda c: c <= 0, "<=": lambda c: c < 0, ">": lambda c: False, ">=": lambda c: False}
# Whether some integer above 0 satisfies `value OP c` (POSITIVE_COUNT: `n <= 0` cannot hold)
_ADMITS_POSITIVE = {"<": lambda c: c > 1, "<=": lambda c: c >= 1, ">": lambda c: True, ">=": lambda c: True}

_LVALUES = frozenset({Var, Field, Index, Deref})  # (the IR's expression classes have no subclasses)

_UNSEEN = object()  # (a cache miss, where None is a cached answer)
_NO_SUMMARY = Summary("", (), "")


class ConditionTransfer:
    """Part of `FunctionAnalyzer` (see analyze.py for the state it shares)."""

    def _assume(self, state: State, cond: Expr, truth: bool, memo: bool = True) -> State | None:
        """Narrow `state` to the paths where `cond` has this truth value (None: none). `memo`:
        remember the answer for conditions the state cannot evaluate, so that a re-test agrees
        (`#ifdef X` twice, `if (flag)` twice); never for loop tests, whose value changes from
        one iteration to the next without an assignment the state could notice: every
        `range-for` would otherwise be the same remembered condition, and the exit of a range-for
        nested in another (or the body of a second one) would never be explored."""
        if type(cond) is Op:  # (no subclasses in the IR)
            if cond.op == "!" and len(cond.operands) == 1:
                return self._assume(state, cond.operands[0], not truth, memo)
            if cond.op in ("==", "!=") and len(cond.operands) == 2:
                eq = truth if cond.op == "==" else not truth
                return self._assume_eq(state, cond.operands[0], cond.operands[1], eq, cond, memo)
            if cond.op in _NEGATED and len(cond.operands) == 2:
                ordered = self._assume_ordered_identities(state, cond, truth)
                if ordered is not _UNSEEN:
                    return ordered
                state = self._assume_order(state, cond, truth, loop=not memo)
                if state is None:
                    return None
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
        if self._apart_from_fresh(state, va, b, vb) or self._apart_from_fresh(state, vb, a, va):
            return None if eq else state  # (engine/fresh_blocks.py)
        if vb is not None and vb[0] == "k" and (va is None or va[0] != "k"):
            if va is not None or self._is_lvalue(a):
                return self._refine(state, a, va, eq, vb[1])
        elif va is not None and va[0] == "k" and (vb is None or vb[0] != "k"):
            if vb is not None or self._is_lvalue(b):
                return self._refine(state, b, vb, eq, va[1])
        else:
            ra = self._entry_identity(state, a, va)
            rb = self._entry_identity(state, b, vb) if ra is not None else None
            if ra is None and self._global_root(state, a, va):
                rb = self._entry_identity(state, b, vb)
                ra = self._global_identity(state, a, va) if rb is not None else None
            elif ra is not None and rb is None:
                rb = self._global_identity(state, b, vb)
            if rb is not None and ra is not None:
                return assume_related(state, ra, rb, eq, self.budget.max_conds)
        return self._assume_memo(state, remembered_as(whole), eq) if memo else state


    def _apart_from_fresh(self, state: State, va: Val | None, b: Expr, vb: Val | None) -> bool:
        """`va` is a block this path acquired and holds alone, and `b` is the address of
        another object (engine/fresh_blocks.py): `r == text` cannot hold."""
        fresh = fresh_block(state, va, self._owned_kinds)
        if fresh is None:
            return False
        base = pointer_base(b)
        vbase = vb if base is b else self._eval(state, base)
        if vbase is not None:
            return vbase[0] == "r" and live_other(state, vbase[1], fresh)
        cls = type(base)
        if cls is Var:  # an array or struct on the stack
            return self.fn.locals.get(base.name) is True
        if cls is not Field and cls is not Index and cls is not Deref:
            return False
        root = root_var(base)
        if root is None or root.name in self.fn.locals or root.name.startswith("$"):
            return False
        index = self.params.get(root.name)
        held = state.b.get((root.name,))
        # memory a parameter (still its entry value) or a global reaches, never written on this path
        return held == ("r", f"p{index}") if index is not None else held is None


    @property
    def _owned_kinds(self) -> frozenset[str]:
        kinds = self.__dict__.get("_owned_kind_ids")
        if kinds is None:
            kinds = self.__dict__["_owned_kind_ids"] = frozenset(k for k, kind in self.policy.kinds.items() if kind.owned)
        return kinds


    @property
    def _relates_arguments(self) -> bool:
        """Some callee's summary has a case that relates two of its arguments (engine/relations.py):
        only then is a local given the identity of what it reads (`_named_read`). Asked once."""
        hit = self._relating
        if hit is None:
            hit = self._relating = any(type(ev) is ir.Call and ir.program_name(ev) is not None
                                       and any(c.rel for c in (self.summaries(ev) or _NO_SUMMARY).cases)
                                       for block in self.fn.blocks for ev in block.events)
        return hit


    def _rewritten_read(self, name: str, e: Expr) -> bool:
        """Should the local `name`, given `e`, carry the identity of what `e` held on entry
        (`_named_read`)? Yes when `e` is memory this function also writes (a store or a call's
        result) and the local is handed to a call that may release it (`old = s->buf; s->buf =
        regrow(old, n);`, `free(old)`): that release is then what the function did to `s->buf`,
        and its summary says so; unnamed, `old` was a value of its own, the summary said only
        "acquires into s->buf", and a caller's block there looked lost at each call (ctx's
        growing strings). Yes too when the local is returned (`r = s->buf; free(s); return r;`):
        the summary returns `s->buf`, which the caller knows, not an unknown value. Other reads
        stay unnamed: an identity for every field a loop reads and writes (`ox = m->x; ...
        m->x = ..;`) multiplies the states for nothing."""
        plan = self._named_reads
        if plan is None:
            plan = self._named_reads = self._named_reads_plan()
        written, released, returned = plan
        return (name in released and e in written) or (name in returned and (type(e) is Field or type(e) is Deref))


    def _named_reads_plan(self) -> tuple[frozenset, frozenset, frozenset]:
        """For `_rewritten_read`, once per function: the fields and pointees it writes, the
        locals it passes where a call may release them (the policy's release or realloc-like
        argument, or a summary's release or maybe-release of that parameter), the locals it returns."""
        written, released = set(), set()
        for block in self.fn.blocks:
            for ev in block.events:
                if type(ev) is not ir.Assign and type(ev) is not ir.Call:
                    continue
                dest = ev.dest
                if dest is not None and (type(dest) is Field or type(dest) is Deref):
                    written.add(dest)
                if type(ev) is ir.Call and any(type(a) is Var for a in ev.args):
                    released.update(ev.args[i].name for i in self._releasing_args(ev)
                                    if i < len(ev.args) and type(ev.args[i]) is Var)
        returned = frozenset(term.value.name for block in self.fn.blocks
                             if type(term := block.term) is ir.Return and type(term.value) is Var)
        return frozenset(written), frozenset(released), returned


    def _releasing_args(self, ev: ir.Call) -> set[int]:
        """The argument positions where `ev` may release what it is given."""
        out = set()
        spec = self.policy.lookup_in(self.fn.language, ev.style, ev.callee)
        if spec is not None:
            if spec.release is not None and spec.release.arg is not None:
                out.add(spec.release.arg)
            if spec.moves is not None:
                out.add(spec.moves)
        if ir.program_name(ev) is not None:
            for case in (self.summaries(ev) or _NO_SUMMARY).cases:
                out.update(eff.path[0] for eff in case.effects if len(eff.path) == 1 and eff.what in ("release", "consume"))
        return out


    def _named_read(self, state: State, key: LocKey, e: Expr) -> Val | None:
        """`void *ret = v->limbo->data; list_remove(&v->limbo, ret);`: a scalar local given the
        value of memory reached through a parameter that nothing read before gets that value's
        entry identity, so the callee's relation between `ret` and `v->limbo->data` is decided
        (unbound, the local would be a value of its own). None when `e` is no such read."""
        if self.fn.locals.get(key[0]) is not False or (type(e) is not Field and type(e) is not Deref):
            return None
        rid = self._entry_identity(state, e, None)
        return ("r", rid) if rid is not None else None


    def _entry_identity(self, state: State, e: Expr, v: Val | None) -> str | None:
        """The entry identity (engine/relations.py) `e` has in `state`: its value's when that is
        one, else the one reading it gives when it is memory reached from one (`(*list)->data`
        before anything read it), else None."""
        if v is not None:
            return v[1] if v[0] == "r" and is_entry_identity(v[1]) else None
        if type(e) not in _LVALUES:
            return None
        root = root_var(e)
        bound = state.b.get((root.name,)) if root is not None else None
        if bound is None or bound[0] != "r" or not is_entry_identity(bound[1]):
            return None
        rid = self._read_identity(state, e)
        return rid if rid is not None and is_entry_identity(rid) else None


    def _read_identity(self, state: State, e: Expr) -> str | None:
        """The resource reading the lvalue `e` gives: the one its location holds, or a new
        opaque one where it holds nothing yet (a first read); None for a location that holds
        another kind of value or cannot be named."""
        loc = self._resolve(state, e, create=True)
        if loc is None or too_deep(loc):
            return None
        v = state.b.get(loc)
        if v is None:
            return self._new_opaque(state, loc)
        return v[1] if v[0] == "r" else None


    def _global_identity(self, state: State, e: Expr, v: Val | None) -> str | None:
        """The relation identity of a global's value as first read on this path
        (engine/global_relations.py), or None."""
        if v is None:
            if not self._global_root(state, e, v):
                return None
            rid = self._read_identity(state, e)
            return global_identity(rid) if rid is not None else None
        return global_identity(v[1]) if v[0] == "r" else None


    def _global_root(self, state: State, e: Expr, v: Val | None) -> bool:
        """`e` may be a global's value as first read: a first-read identity, or an lvalue whose
        root is no local, parameter or temporary and was never written on this path."""
        if v is not None:
            return v[0] == "r" and v[1][:2] == "v:"
        root = root_var(e) if type(e) in _LVALUES else None
        return not (root is None or root.name in self.fn.locals or root.name in self.params or root.name[:1] == "$"
                    or root.name == "this" or (root.name,) in state.b)


    def _assume_ordered_identities(self, state: State, cond: Op, truth: bool) -> object:
        """`s->leng >= l` with both sides entry identities (engine/orders.py): the narrowed
        state (None: contradicted); `_UNSEEN` when the test is not one."""
        a, b = cond.operands
        va = self._eval(state, a)
        if va is not None and va[0] != "r":
            return _UNSEEN
        vb = self._eval(state, b)
        if vb is not None and vb[0] != "r":
            return _UNSEEN
        ra = self._entry_identity(state, a, va)
        rb = self._entry_identity(state, b, vb) if ra is not None else None
        if rb is None:
            return _UNSEEN
        return assume_ordered(state, cond.op, ra, rb, truth, self.budget.max_conds)


    def _assume_order(self, state: State, cond: Op, truth: bool, loop: bool = False) -> State | None:
        """`n <= 0` failing, `n > 0` or `n >= 1` holding: n is not 0. The only fact an order test
        gives the value domain (known integers and excluded ones), and the one that matters: a
        helper whose every failure returns 0 before it writes its out-parameters, and whose
        success returns a count its own range checks proved positive (`if (size <= 0) return 0;
        ... *out = buf; return size;`), tells its caller's `if (!n)` apart from its success only
        through it. None when the state contradicts the test."""
        a, b = cond.operands
        va, vb = self._eval(state, a), self._eval(state, b)
        op = cond.op
        if vb is not None and vb[0] == "k" and (va is None or va[0] != "k"):
            e, v, c = a, va, vb[1]
        elif va is not None and va[0] == "k" and (vb is None or vb[0] != "k"):
            e, v, c, op = b, vb, va[1], _SWAPPED[op]
        else:
            return state
        if not truth:
            op = _NEGATED[op]
        if v == POSITIVE_COUNT and not _ADMITS_POSITIVE[op](c):
            return None
        if loop and _ADMITS_ONLY_ZERO[op](c) and self._entry_count(state, e, v):
            first = v is None or state.r[v[1]].fact is None  # no test of it before
            state = self._refine(state, e, v, eq=True, c=0)
            if first and state is not None:
                bound = self._eval(state, e)
                if bound is not None and bound[0] == "r":
                    self._zero_trip_bounds.add(bound[1])
            return state
        if v is not None and v[0] == "r" or v is None and not (type(e) is Var and e.name in self.fn.locals):
            return state  # a parameter, memory it reaches, a pointer: `i < n` is no NULL test of n
        if type(e) is Var and e.name in self.fn.unsigned:  # never below 0
            if _BELOW_ZERO[op](c):
                return None
            if _ADMITS_ONLY_ZERO[op](c):
                return self._refine(state, e, v, eq=True, c=0)  # `size > 0` failing: size is 0
        if not _EXCLUDES_ZERO[op](c):
            return state
        return self._refine(state, e, v, eq=False, c=0)


    def _entry_count(self, state: State, e: Expr, v: Val | None) -> bool:
        """Whether `e`, the bound of a loop test, is an element count the caller gave: a
        parameter still holding its value at entry (not memory reached through one: naming
        `src->count` gives it an identity, and storing it (`dst->n = src->count`) then reads as
        handing a resource over, which changed a copying helper's summary). A loop
        `for (i = 0; i < count; i++)` not entered on its first test has `count <= 0`, and a
        count below 0 counts nothing: the path that skips the loop is the `count == 0` case of
        the summary (`free_all(items, count)` frees every element's fields whenever the caller
        knows `count` is not 0). Locals stay as they are (`n = read(..)` may be -1)."""
        if type(e) is not Var or e.name not in self.params or e.name in self.fn.locals:
            return False
        if v is None:
            return (e.name,) not in state.b
        if v[0] != "r":
            return False
        res = state.r.get(v[1])
        path = param_path(v[1])
        return res is not None and res.st == OPAQUE and path is not None and len(path) == 1


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
            fact = narrow(res.fact, eq, c)
            if fact is False:
                return None
            state.r[rid] = replaced(res, fact=fact)
            return state
        fact = narrow(v, eq, c)
        if fact is False:
            return None
        loc = self._resolve(state, e, create=True)
        if loc is None or fact is None:
            return state
        if v is None and c == 0 and (loc[0].startswith("@") or not self._is_known_var(loc[0])) and not too_deep(loc):
            # memory reached through a parameter or a global: give it an identity, so the
            # NULL test shows up in this function's summary as a precondition
            rid = self._new_opaque(state, loc)
            state.r[rid] = replaced(state.r[rid], fact=fact)
            return state
        state.b[loc] = fact
        if len(loc) > 1:
            self._note_key(loc)
        return state


    def _is_lvalue(self, e: Expr) -> bool:
        return type(e) in _LVALUES


    def _assume_memo(self, state: State, cond: Expr, truth: bool) -> State | None:
        """Conditions the state cannot evaluate: remember the answer so a re-test agrees."""
        key = cond
        if state.conds:  # (a membership test hashes the whole expression, even in an empty set)
            if (key, not truth) in state.conds:
                return None
            if (key, truth) in state.conds:
                return state
        if len(state.conds) < self.budget.max_conds:
            state.conds = state.conds | {(key, truth)}
            self._memo_names |= self._vars_of(key)
        return state


    def _vars_of(self, e: Expr) -> frozenset[str]:
        """The variables a condition reads, by the condition's identity: hashing an expression
        walks all of it, and the remembered conditions are a handful of IR objects (the entry
        keeps `e` alive, so its id is not reused)."""
        cached = self._cond_vars.get(id(e))
        if cached is None:
            cached = self._cond_vars[id(e)] = (e, frozenset(expr_vars(e)))
        return cached[1]
