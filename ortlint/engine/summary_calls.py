"""Transfer functions for calls to analyzed functions: applying their summaries.

A summary (`summaries.Summary`) is a list of cases: preconditions on the arguments' NULL-ness,
effects on them (release, escape, clear, consume), acquisitions into out-parameters, the return
value and how the callee exits. Each case whose precondition holds yields a successor state.
"""
from __future__ import annotations

import dataclasses

from .. import ir
from ..ir import AddrOf, Call, Deref, Expr, Field, Index, Op, Opaque, Var
from ..policy import CallSpec, Release
from .addresses import select_cases
from .exprs import dedupe, element_of, in_temp, shown
from .global_relations import global_expr
from .relations import assume_related
from .counts import NOT_ZERO
from .replaced import bind_written_unknown
from .interior import container, interior_of
from .handed_to_releaser import hand_over_dropped
from .member_writes import same_object_call
from .join import join_cases
from .state import BORROWED, CONSUMED, DANGLING, HELD, OPAQUE, RELEASED, Res, State, Val
from .summaries import Case, Effect, Summary

HANDED_OVER = ("<callee>",)  # where a resource an analyzed callee took went


class SummaryTransfer:
    """Part of `FunctionAnalyzer` (see analyze.py for the state it shares)."""

    def _apply_summary(self, block: ir.Block, state: State, ev: Call, summary: Summary, spec: CallSpec | None) -> list[State]:
        plan = self._summary_plans.get(id(ev))
        if plan is None or plan[1] is not summary:
            plan = self._summary_plans[id(ev)] = self._summary_plan(ev, summary)
        _ev, _summary, helper, joined_cases, cases = plan
        out: list[State] = []
        last = len(cases) - 1
        addresses = [arg for arg in ev.args if type(arg) is AddrOf]
        members = self._written_members(ev, summary)
        for i, (case, pre, rel, effects, outs, note) in enumerate(cases):
            s = state.copy() if i < last else state  # the last case needs no copy: `state` is not used after it
            if pre and not self._precondition(s, pre):
                continue
            if rel and not self._relations_hold(s, rel):
                continue
            before = self._returned_location(s, ev, case) if case.ret is not None and case.ret[0] == "param" else None
            for arg in addresses:  # `f(&x)`: the callee may write x (a constant known before is not known after)
                self._forget_written(s, arg)
            for i in summary.unnamed_writes:  # fields the callee may have rewritten (engine/interior.py)
                if i < len(ev.args):
                    self._written_unnamed(s, ev.args[i])
            for effect, e in effects:
                self._apply_effect(s, ev, effect, e, helper)
            for member in members:
                self._replace_location(s, member, ev)
            if case.exit != "throw" or self.fn.language != "csharp":  # C#: a call that throws created nothing
                for target, kind in outs:
                    self._acquire_into(s, ev, target, kind, helper)
            self._summary_return(s, ev, case, summary, before)
            if case.exit == "return":
                if note is not None:
                    s.note(ev.loc.line, ev.loc.col, note)
                out.append(s)
            elif case.exit == "throw":
                # an analyzed callee's own throw (an unchecked `throw new IllegalStateException()`
                # too) leaves the call: the caller's exceptional path, see docs/java.md
                s.note(ev.loc.line, ev.loc.col, f"{ev.callee}() throws")
                self._throw_edge(block, s, ev)
            elif case.exit == "caller_return":
                value = self._eval(s, ev.args[case.pre[0][0][0]]) if case.pre and case.pre[0][0][0] < len(ev.args) else None
                self._escape_val(s, value, ("<return>",))
                self._exit(s, ev.loc, "return", value, f"{ev.callee}() makes {self.fn.name}() return here")
            else:
                self.exits.append((s, "abort", None))
        if out:
            drop = self._drop_key(ev)
            for s in out:
                s.b.pop(drop, None)
                self._gc(s, ev.loc)
        return join_cases(out) if joined_cases else dedupe(out)


    def _written_unnamed(self, state: State, arg: Expr) -> None:
        """The callee wrote the object `arg` points to at places its summary cannot name
        (engine/interior.py): what its fields held that this function released is no longer
        known to be there, and a parameter's object passes the fact on to this summary."""
        if type(arg) is AddrOf:
            self._forget_released_inside(state, arg)
            return
        value = self._eval(state, arg)
        if value is None or value[0] != "r":
            return
        rid = container(value[1]) or value[1]
        prefix = "@" + rid
        for key in [k for k, v in state.b.items() if k[0] == prefix and v[0] == "r"
                    and state.r.get(v[1]) is not None and state.r[v[1]].st in (RELEASED, DANGLING)]:
            del state.b[key]
        self._note_unnamed_write("@" + interior_of(rid))


    def _written_members(self, ev: Call, summary: Summary) -> list[Var]:
        """The caller's members a method of its own object assigns (engine/member_writes.py)."""
        if not summary.writes or not same_object_call(self.fn.name, summary.name, ev.receiver):
            return []
        key = (id(ev), summary.writes)
        found = self._member_writes.get(key)
        if found is None:
            found = self._member_writes[key] = [Var(name) for name in summary.writes
                                                if name not in self.fn.locals and name not in self.fn.params]
        return found


    def _summary_plan(self, ev: Call, summary: Summary) -> tuple:
        """What a summary's cases make of this call's arguments: the same for every state
        that reaches the call, so worked out once per call site (the entry keeps `ev` and
        `summary` alive, so their ids are not reused). (ev, summary, the helper named in
        traces, whether the outcomes are `join_cases`'d, and per case: the case, its
        preconditions as (expression, "is NULL"), its effects with their expressions, its
        acquisitions as (target, kind), the trace note of a return through it or None); a
        path the call has no argument for is left out, as the transfer functions skip it."""
        helper = None if summary.origin.startswith("policy") else ev.callee
        several = len(summary.cases) > 1
        kinds = self.policy.kinds
        cases = []
        for case in summary.cases if ev.dest is not None else hand_over_dropped(summary.cases):
            pre = tuple((e, what != "nonnull") for e, what in ((self._param_expr(ev, path), what) for path, what in case.pre)
                        if e is not None)
            effects = tuple((effect, e) for effect, e in ((effect, self._param_expr(ev, effect.path)) for effect in case.effects)
                            if e is not None)
            outs = tuple((target, kind) for target, kind in ((self._param_expr(ev, path), kind) for path, kind in case.outs)
                         if target is not None and kind in kinds)
            rel = tuple((a, b, eq) for a, b, eq in ((self._param_expr(ev, pa), self._param_expr(ev, pb), eq)
                                                    for pa, pb, eq in case.rel) if a is not None and b is not None)
            note = self._case_note(ev.callee, case) if several and helper and (case.ret is not None or case.pre
                                                                                or case.rel) else None
            cases.append((case, pre, rel, effects, outs, note))
        cases = select_cases(cases)  # `&ctx->cb`: never NULL, but see engine/addresses.py
        return (ev, summary, helper, bool(helper) and self.fn.language in ("java", "csharp"), tuple(cases))


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
        """The caller's expression for a summary's parameter path at this call. The same for
        every state that reaches the call: built once per call site and path (the cache keeps
        `ev` alive, so its id is not reused by another object)."""
        key = (id(ev), path)
        hit = self._param_exprs.get(key)
        if hit is None:
            hit = self._param_exprs[key] = (ev, self._build_param_expr(ev, path))
        return hit[1]


    @staticmethod
    def _build_param_expr(ev: Call, path: tuple) -> Expr | None:
        idx = path[0]
        if type(idx) is str:  # a global's value (engine/global_relations.py)
            return global_expr(path)
        if idx >= len(ev.args):
            return None
        e: Expr = ev.args[idx]
        for op in path[1:]:
            if op == "*":
                element = element_of(e) if type(e) is Op else None  # `names + i`: `names[i]`
                e = e.base if isinstance(e, AddrOf) else element if element is not None else Deref(e)
            elif op == "[]":
                e = e.base if isinstance(e, AddrOf) else Index(e, Opaque("i"))
            else:
                e = Field(e, op[1:])
        return e


    def _precondition(self, state: State, pre: tuple) -> bool:
        """Narrow `state` to a case's preconditions (`_summary_plan`: (expression, is NULL));
        False when the state contradicts one."""
        for e, c_eq in pre:
            v = self._eval(state, e)
            if v is None and not self._is_lvalue(e):
                continue
            if self._refine(state, e, v, eq=c_eq, c=0) is None:
                return False
        return True


    def _relations_hold(self, state: State, rel: tuple) -> bool:
        """Narrow `state` to a case's equalities between argument paths (engine/relations.py):
        the same expression, or the same value, or the same location at this call is one value;
        entry identities of this function's own parameters are remembered as a fact, so its
        summary passes the precondition on. False when the state contradicts one."""
        for a, b, eq in rel:
            if a == b:  # expressions are pure: one expression at one call is one value
                if not eq:
                    return False
                continue
            va, vb = self._eval(state, a), self._eval(state, b)
            decided = self._compare(state, va, vb)
            if decided is None and (self._apart_from_fresh(state, va, b, vb) or self._apart_from_fresh(state, vb, a, va)):
                decided = False  # a block this function holds alone is not the other's value (engine/fresh_blocks.py)
            if decided is None and (va is None or vb is None) and self._is_lvalue(a) and self._is_lvalue(b):
                la, lb = self._resolve(state, a, create=False), self._resolve(state, b, create=False)
                decided = True if la is not None and la == lb else None
            if decided is not None:
                if decided != eq:
                    return False
                continue
            ra = self._entry_identity(state, a, va)
            rb = self._entry_identity(state, b, vb) if ra is not None else None
            if rb is not None and assume_related(state, ra, rb, eq, self.budget.max_conds) is None:
                return False
        return True


    def _apply_effect(self, state: State, ev: Call, effect: Effect, e: Expr, helper: str | None) -> None:
        """`effect` on the argument expression `e` it applies to at this call."""
        if effect.what == "release":
            rel = self._helper_release(effect.relby)
            self._release_expr(state, self._release_call(ev, effect, e), e, rel, effect.relby or ev.callee, helper,
                               effect.where)
        elif effect.what == "escape":
            # handed to the callee, which kept it (in a list node, a registry): returning it
            # afterwards lends it, it does not hand over a new one (`_ret_spec`)
            value = self._eval(state, e)
            if value is None and type(e) is Deref:  # `*j` of this function's parameter: the caller's goes too
                self._hand_on_param_aggregate(state, e, HANDED_OVER)
            self._escape_val(state, value, HANDED_OVER)
            # `post(q, &job)` and the callee took `*job` (copied it whole): job's fields go with it
            self._escape_contents(state, AddrOf(e) if type(e) is Var and e.name in self.fn.locals else e)
        elif effect.what == "clear":
            if self.fn.language == "csharp":  # `ref x` set to null by the callee: it took the object (or disposed it)
                self._escape_val(state, self._eval(state, e), None)
            self._store(state, e, ("k", 0), ev.loc)
        elif effect.what == "replace":
            self._replace_location(state, e, ev)
        elif effect.what == "nonzero":
            self._replace_location(state, e, ev)
            self._store(state, e, NOT_ZERO, ev.loc)
        else:  # a maybe-release (realloc-like helper): also of memory reached through a parameter
            rid, res = self._value_res(state, e, create=True)
            if rid is not None and res is not None and res.st in (HELD, OPAQUE, BORROWED):
                state.r[rid] = res.with_st(CONSUMED)


    def _replace_location(self, state: State, e: Expr, ev: Call) -> None:
        """The callee stored another value at `e` (engine/replaced.py): forget what the caller
        knew was there. In memory a parameter of this function reaches, the new value gets an
        identity, so this function's own summary says the location was replaced too. An object
        the caller still held there and the callee did not release is handed over to the callee
        (`out = nullptr; out = std::make_unique<T>();` into a `std::unique_ptr<T>&` destroys it):
        the caller lost it without losing track of it, so it is no leak of the caller's."""
        rid, res = self._value_res(state, e, create=False)
        if rid is not None and res is not None and res.st == HELD:
            state.r[rid] = res.with_st(CONSUMED)
        key = self._resolve(state, e, create=True)
        if key is None or not bind_written_unknown(state, key, self._retire):
            self._store(state, e, None, ev.loc)
            return
        if key in self._prefixes:
            self._invalidate(state, key)
        self._note_key(key)


    def _release_call(self, ev: Call, effect: Effect, e: Expr) -> Call:
        """The release inside the callee as a call at this call site (for the release checks);
        one per call site and effect, not one per state (the cache keeps both alive)."""
        key = (id(ev), id(effect))
        hit = self._release_calls.get(key)
        if hit is None:
            fake = Call(ev.id, ev.loc, effect.relby or ev.callee, ev.style, None, (e,), None, ev.text)
            hit = self._release_calls[key] = (ev, effect, fake)
        return hit[2]


    def _helper_release(self, name: str | None) -> Release | None:
        """How `name`, called inside a helper, releases; the owner object and mode arguments
        stay inside the helper. The same for every call of every helper: computed once."""
        if name in self._helper_releases:
            return self._helper_releases[name]
        spec = self._release_spec(name)
        rel = spec.release if spec is not None else None
        if rel is not None:
            rel = dataclasses.replace(rel, owner=None, keep_if_arg=None, copy_back_unless_arg=None)
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
        self._retire(state, rid)
        kinfo = self.policy.kinds[kind]
        state.r[rid] = Res(kind, HELD if kinfo.owned else BORROWED)
        self._site(rid, ev, target, kind, helper)
        into = f" into `{shown(target)}`" if not in_temp(target) else ""  # `$3` is no name of the user's
        state.note(ev.loc.line, ev.loc.col, f"{kinfo.label} acquired by {ev.callee}(){into}", rid)
        self._store(state, target, ("r", rid), ev.loc)


    def _returned_location(self, state: State, ev: Call, case: Case) -> Val | None:
        """The value a case returns from memory its parameter reaches (`ret = v->limbo->data;
        list_remove(&v->limbo, ret); return ret;`), read before the case's effects: the callee
        returned what the location held on entry, and a "replace" or "clear" effect changes what
        it holds (`r = s->str; s->str = NULL; free(s); return r;`).
        Memory nothing read yet gets its identity now, so the read after the call is not taken
        for it. None: evaluated after the effects, as before."""
        if not any(e.what in ("replace", "clear", "nonzero") for e in case.effects) or ev.dest is None:
            return None
        if any(path == case.ret[1] for path, _kind in case.outs):
            return None  # the object the case acquires there (`tmp->data = p; return p;`): read after it
        e = self._param_expr(ev, case.ret[1])
        if e is None:
            return None
        v = self._eval(state, e)
        if v is None and self._is_lvalue(e):
            rid, _res = self._value_res(state, e, create=True)
            v = ("r", rid) if rid is not None else None
        return v


    def _summary_return(self, state: State, ev: Call, case: Case, summary: Summary, before: Val | None = None) -> None:
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
            value = before if before is not None else self._eval(state, e) if e is not None else None
            if value is None and e is not None and len(ret[1]) > 1 and self._is_lvalue(e):
                # memory nothing read yet (`s = entry_of(&list, k);` returns `(*list)->value`):
                # named now, a later read of `list->value` is the same object
                rid, _res = self._value_res(state, e, create=True)
                value = ("r", rid) if rid is not None else None
        elif ret[0] == "fresh" and ret[1] in self.policy.kinds:
            target = ev.dest if ev.dest is not None else Var(f"$drop{ev.id}")
            rid = f"{ev.id}:return"
            self._retire(state, rid)
            kinfo = self.policy.kinds[ret[1]]
            old = state.r.get(rid)
            if old is not None and old.st == HELD and not old.coll and kinfo.loop_leak and not kinfo.must_release:
                self._local_ref_again(state, rid, ev)
            # an object made on every iteration and kept in an array stays the one identity of
            # them all (`_retire` leaves it in place), as for an acquisition by a policy call
            state.r[rid] = Res(ret[1], HELD if kinfo.owned else BORROWED,
                               parent=self._open_frame(state) if kinfo.loop_leak else None,
                               coll=old is not None and old.st == HELD and old.coll)
            self._site(rid, ev, target, ret[1], ev.callee)
            state.note(ev.loc.line, ev.loc.col, f"{kinfo.label} returned by {ev.callee}()", rid)
            self._store(state, target, ("r", rid), ev.loc)
            for i, kind in enumerate(ret[3] if len(ret) > 3 else ()):  # what the returned collection keeps
                if kind in self.policy.kinds:
                    kept = f"{ev.id}:return/{i}"
                    state.r[kept] = Res(kind, HELD)
                    self._site(kept, ev, target, kind, ev.callee)
                    state.note(ev.loc.line, ev.loc.col, f"{self.policy.kinds[kind].label} returned by {ev.callee}() "
                                                        f"inside `{shown(target)}`", kept)
                    self._keep_value(state, target, ("r", kept))
            return
        if ev.dest is not None and value is None:
            self._store_unknown_result(state, ev)  # (calls.py: another value, unknown to this function)
        elif ev.dest is not None:
            self._store(state, ev.dest, value, ev.loc)
