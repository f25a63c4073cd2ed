"""Transfer functions for calls: dispatch (policy, summary, neutral, unknown), acquisitions and
releases according to the policy (rules/*.toml).

A call that can fail splits the state into success (out-parameters acquired, status NULL) and
failure (a held status, nothing written). Releases check kind, owner and stage: a second
release is ORT002, a wrong function or owner ORT003, releasing something borrowed ORT005. JNI
local references created again by the same call while the previous one is alive are ORT007.
"""
from __future__ import annotations

from dataclasses import replace

from .. import ir
from ..ir import AddrOf, Call, Const, Deref, Expr, Field, Index, Op, Opaque, Var
from ..policy import Acquire, CallSpec, RECEIVER, Release
from .exprs import (NO_KIND, array_name, dedupe, element_of, in_temp, owner_shown, param_path, same_owner, short_path, shown, strip_value,
                    too_deep)
from .leaks import Site
from .lock_functions import acquired_last, caller_object, releases_kind
from .null_members import releases_never_assigned_member
from .own_api import own_release_entry
from .messages import failure_note, ignored_status_msg, subject
from .state import (BORROWED, CONSUMED, DANGLING, ESCAPED, HELD, OPAQUE, POSITIVE_COUNT, PREV, RELEASED, UNKNOWN, Res, State,
                    Val, made_outside)
from .replaced import bind_written_unknown
from .summaries import Summary, summary_from_status_check


def _var_key(e: Expr) -> tuple[str] | None:
    """The location of a variable expression (what `_use` looks up first), None for others."""
    return (e.name,) if type(e) is Var else None


class CallTransfer:
    """Part of `FunctionAnalyzer` (see analyze.py for the state it shares)."""

    def _call(self, block: ir.Block, state: State, ev: Call) -> list[State]:
        plan = self._call_plans.get(id(ev))
        if plan is None:
            plan = self._call_plans[id(ev)] = self._call_plan(ev)
        _ev, spec, summary, neutral, used_args, used_receiver, zero = plan
        b = state.b
        for arg, key in used_args:
            if key is not None:  # `_use`'s first test, inline: most arguments hold no resource
                v = b.get(key)
                if v is None or v[0] != "r":
                    continue
            self._use(state, arg, ev.loc, "is passed to")
        if used_receiver is not None:
            arg, key = used_receiver
            v = b.get(key) if key is not None else None
            if key is None or (v is not None and v[0] == "r"):
                self._use(state, arg, ev.loc, "is used by")
        if ev.may_throw:
            self._throw_edge(block, state.copy(), ev)
        if summary is not None:
            return self._apply_summary(block, state, ev, summary, spec)
        if spec is not None:
            return self._apply_spec(block, state, ev, spec)
        if zero:  # `return err_t();`: a value-initialized enumeration is 0
            if ev.dest is not None:
                self._store(state, ev.dest, ("k", 0), ev.loc)
            return [state]
        if neutral:
            self._neutral(state, ev)
            return [state]
        return self._unknown(state, ev)


    def _drop_key(self, ev: Call) -> tuple[str]:
        """The location of a call's dropped result (`$dropN`), made once per call id."""
        key = self._drop_keys.get(ev.id)
        if key is None:
            key = self._drop_keys[ev.id] = (f"$drop{ev.id}",)
        return key


    def _call_plan(self, ev: Call) -> tuple:
        """What the policy and the callees' summaries say about a call: the same for every
        state that reaches it (summaries do not change while one function is analyzed), so
        looked up once per call site. (ev, spec, summary, neutral, the arguments a
        use-after-release check looks at: not the released ones, not constants, the receiver
        if it is checked; each with its location if it is a variable, which `_use` reads
        first; whether the call is `E()` or `E{}` of an enumeration of the tree, which is 0);
        the entry keeps `ev` alive, so its id is not reused."""
        spec = self.policy.lookup_in(self.fn.language, ev.style, ev.callee)
        if spec is not None and spec.acquires and self.constants and \
                releases_never_assigned_member(ev, self.constants, self._locals_and_params):
            return (ev, None, None, True, (), None, True)  # it hands back NULL (engine/null_members.py)
        summary = None
        if spec is not None and spec.status_check is not None:
            summary = self._status_summary(spec)
        elif spec is None and ev.style in ("plain", "method", "new", "table"):
            summary = self.summaries(ev)
            if summary is not None:  # `OrtApis::ReleaseStatus(st)` in ONNX Runtime's own tree: the entry, and its body
                spec = own_release_entry(self.policy, ev, summary)
                if spec is not None:
                    summary = None
        neutral = spec is None and summary is None and self.policy.is_neutral(ev.style, ev.callee)
        released_args = self._released_args(spec, summary)
        if summary is not None:  # a key the callee only compares: passing a released pointer is no use
            released_args |= set(summary.compared_only)
        used_args = tuple((arg, _var_key(arg)) for i, arg in enumerate(ev.args)
                          if i not in released_args and type(arg) is not Const) if not ir.is_unread_destructor(ev) else ()
        used_receiver = None
        if ev.receiver is not None and "receiver" not in released_args and ev.style == "method":
            used_receiver = (ev.receiver, _var_key(ev.receiver))
        zero = (spec is None and summary is None and not ev.args and ev.style == "plain"
                and self._is_enumeration(ev.callee))
        return (ev, spec, summary, neutral, used_args, used_receiver, zero)


    @property
    def _locals_and_params(self) -> set[str]:
        return self.fn.locals.keys() | set(self.fn.params)


    def _is_enumeration(self, name: str) -> bool:
        """`extError_t` in `return extError_t();`: an enumeration the tree defines (the front
        ends list each as the constant `NAME()`, valued 0). A helper's success return written
        so is what tells its caller's `err != kOk` apart from the paths that set nothing."""
        return f"{name}()" in self.constants or f"{name.rpartition('::')[2]}()" in self.constants


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
                self._forget_written(state, arg)
                self._forget_released_inside(state, arg)
        if ev.dest is not None:
            self._store(state, ev.dest, None, ev.loc)
            self._gc(state, ev.loc)


    def _status_noun(self, kind: str) -> str:
        """`OrtStatus*`, `OgaResult*`: the label of the status kind a call returns (policy `status_kind`)."""
        return f"{self.policy.kinds[kind].label}*" if kind in self.policy.kinds else "OrtStatus*"

    def _ignored_status(self, callee: str, kind: str) -> str:
        return ignored_status_msg(callee, self._status_noun(kind), self.policy.releasers_of(kind))

    def _unknown(self, state: State, ev: Call) -> list[State]:
        tracked = False
        if self.options.unknown_calls == "escape":
            for arg in (ev.args if not ev.borrows else [a for i, a in enumerate(ev.args) if i not in ev.borrows]):
                v = self._eval(state, arg)
                if v is None and type(arg) is Deref and type(arg.base) is Var and arg.base.name in self.params \
                        and arg.base.name not in self._written_pointees():
                    v = self._param_pointee(state, arg)
                elif v is None and type(arg) is Field:
                    v = self._param_field(state, arg)
                if v is not None and v[0] == "r" and state.r.get(v[1], UNKNOWN).st == HELD:
                    tracked = True
                self._escape_val(state, v, None)
                tracked |= self._contents_held(state, arg)
                self._escape_contents(state, arg)
                if isinstance(arg, AddrOf):
                    self._forget_written(state, arg)
                self._forget_released_inside(state, arg)
        else:
            tracked = any(self._contents_held(state, a) for a in ev.args)
            self._neutral(state, ev)
        if tracked:
            label = ev.callee if ev.style == "plain" else f"{ev.style}:{ev.callee}"
            self.unknown[label] = self.unknown.get(label, 0) + 1
        if ev.dest is not None:
            self._store_unknown_result(state, ev)
            self._gc(state, ev.loc)
        return [state]


    def _store_unknown_result(self, state: State, ev: Call) -> None:
        """`*a = join(pre, post);` with `join` unknown: in memory a parameter reaches, the
        location gets an identity of its own (engine/replaced.py), as a store of an unknown local
        does, so this function's summary says it holds another value now. Dropped, the exit
        state could not tell it from a location never touched, and a caller would keep the object
        the function released there (`unref(*a); *a = join(..);` read as releasing *a twice when
        called twice)."""
        dest = ev.dest
        key = self._resolve(state, dest, create=True) if type(dest) is not Var else None
        if key is None or len(key) < 2 or "[]" in key or not bind_written_unknown(state, key, self._retire):
            self._store(state, dest, None, ev.loc)  # (an array slot: the other elements keep theirs)
            return
        if key in self._prefixes:
            self._invalidate(state, key)
        self._note_key(key)


    def _forget_written(self, state: State, arg: AddrOf) -> None:
        """`f(&x)`: the callee may have written x; a constant known before (`T *x{};`, NULL) is
        not known after (a read through it would end the path as a NULL access)."""
        loc = self._resolve(state, arg.base, create=False)
        if loc is not None and loc in state.b and state.b[loc][0] != "r":
            del state.b[loc]
            self._invalidate(state, loc)


    def _param_field(self, state: State, arg: Field) -> Val | None:
        """`cb(c->user_data)`, `register(c->ud)` with `c` a parameter and the field never read
        before: the unknown callee takes what the caller stored there, as it takes `p` in
        `register(p)`. Named here, the escape shows in this function's summary ("takes
        ownership of c->ud"); unnamed, a caller that filled the field (`cfg.user_data = w;
        f(&cfg);`) lost track of nothing and reported `w` leaked on every path."""
        loc = self._resolve(state, arg, create=True)
        if loc is None or loc[0][:2] != "@p" or "[]" in loc or too_deep(loc) or param_path(loc[0][1:]) is None:
            return None
        bound = state.b.get(loc)
        return bound if bound is not None else ("r", self._new_opaque(state, loc))

    def _param_pointee(self, state: State, arg: Deref) -> Val | None:
        """`*p` of a reference parameter handed to a call that keeps it (`NodeResource{std::move(p)}`
        of a `std::unique_ptr<T>&& p`): the caller's object, given an identity here so that the
        hand-over shows in this function's summary (as `*p` escaping) instead of vanishing."""
        loc = self._resolve(state, arg, create=True)
        if loc is None or loc in state.b or too_deep(loc):
            return state.b.get(loc) if loc is not None else None
        return ("r", self._new_opaque(state, loc))

    def _written_pointees(self) -> frozenset[str]:
        """Parameters `p` whose `*p` this function writes (`*path = Join(...)`): an out-parameter,
        not an object the caller hands in; computed once per function."""
        found = self._written_pointees_memo
        if found is None:
            names = set()
            for block in self.blocks.values():
                for ev in block.events:
                    dest = getattr(ev, "dest", None)
                    if type(dest) is Deref and type(dest.base) is Var:
                        names.add(dest.base.name)
            found = self._written_pointees_memo = frozenset(names)
        return found

    def _contents_held(self, state: State, arg: Expr) -> bool:
        v = self._eval(state, arg)
        if v is not None and v[0] == "r" and state.r.get(v[1], UNKNOWN).st == HELD:
            return True
        if isinstance(arg, AddrOf):
            loc = self._resolve(state, arg.base, create=False)
            if loc is not None:
                return any(k[:len(loc)] == loc and val[0] == "r" and state.r.get(val[1], UNKNOWN).st == HELD
                           for k, val in state.b.items())
        return False


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
            s.b.pop(self._drop_key(ev), None)
            self._gc(s, ev.loc)
        return dedupe(out)


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
            self._note_key(loc + ("#" + v[1],))


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
            self._params_released |= made_outside(rid)
            state.note(loc.line, loc.col, f"released with the other elements of `{shown(strip_value(elem))}` by {by}",
                       rid, release=by.rstrip("()") if by.endswith("()") else None)
        if isinstance(elem, Index):
            self._release_by_elements(state, elem.base, by, loc)

    def _release_by_elements(self, state: State, coll: Expr, by: str, loc: ir.Loc) -> None:
        """A list whose values its holder must close one by one (kind `closed_by_elements`:
        `OnnxSequence.getValue()`) is done with when every element is closed; the list itself
        stays usable (`vals.size()`), so it is consumed, not released."""
        v = self._eval(state, coll)
        res = state.r.get(v[1]) if v is not None and v[0] == "r" else None
        kind = self.policy.kinds.get(res.kind or "") if res is not None else None
        if res is None or kind is None or not kind.closed_by_elements or res.st != HELD:
            return
        state.r[v[1]] = res.with_st(CONSUMED)
        state.note(loc.line, loc.col, f"every value of `{shown(strip_value(coll))}` is closed by {by}", v[1])


    def _list_element_released(self, state: State, rid: str, by: str, loc: ir.Loc) -> None:
        """Closing a value read from an element of a list its holder must close one by one
        (`OnnxTensor t = (OnnxTensor) values.get(0); ...; t.close();`) is closing that list's
        elements, as closing `values.get(0)` itself is (`_release_stored`): the element's
        identity is the one `_new_opaque` gave the list's `[]` slot."""
        owner = rid.rsplit("/[]", 1)[0]
        if state.b.get(("@" + owner, "[]")) != ("r", rid):
            return
        res = state.r.get(owner)
        kind = self.policy.kinds.get(res.kind or "") if res is not None else None
        if res is None or kind is None or not kind.closed_by_elements or res.st != HELD:
            return
        state.r[owner] = res.with_st(CONSUMED)
        state.note(loc.line, loc.col, f"the values of the list are closed one by one by {by}", owner)


    def _outcomes(self, state: State, ev: Call, spec: CallSpec) -> list[State]:
        """Split into success and failure where the call can fail, then acquire on success."""
        if any(a.only_if_null is not None for a in spec.acquires):
            spec = replace(spec, acquires=tuple(a for a in spec.acquires if self._acquires_here(ev, a)))
        ret_acq = None
        for acq in spec.acquires:
            if acq.into == "return" and self.policy.kinds[acq.kind].owned:
                ret_acq = acq
                break
        lazy = ret_acq is not None and not self.policy.kinds[ret_acq.kind].must_release
        can_fail = spec.returns in ("status", "code") or (ret_acq is not None and ret_acq.nullable and not lazy)
        if not can_fail:
            if ret_acq is None and ev.dest is not None:
                self._store(state, ev.dest, ("x", frozenset({0})) if spec.nonzero else None, ev.loc)
            self._neutral_outs(state, ev, spec)
            return self._acquire_all(state, ev, spec)
        ok, bad = state, state.copy()
        ok.note(ev.loc.line, ev.loc.col, f"assuming {ev.callee}() succeeds")
        bad.note(ev.loc.line, ev.loc.col, failure_note(ev.callee, spec))
        # failure: nothing acquired; the result says so
        if spec.returns == "status":
            if ev.dest is not None:
                rid = f"{ev.id}:status"
                self._retire(bad, rid)
                bad.r[rid] = Res(spec.status_kind, HELD)
                self._site(rid, ev, ev.dest, spec.status_kind)
                bad.note(ev.loc.line, ev.loc.col,
                         f"{ev.callee}() returns an {self._status_noun(spec.status_kind)} that must be released", rid)
                self._store(bad, ev.dest, ("r", rid), ev.loc)
            else:
                self._report("ORT004", ev.loc, self._ignored_status(ev.callee, spec.status_kind), bad, None,
                             anchor=f"ignored:{ev.callee}:{ev.text}", macro=ev.macro, macro_at=ev.macro_at,
                             facts=self._status_facts(spec.status_kind), kind=spec.status_kind)
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


    def _neutral_outs(self, state: State, ev: Call, spec: CallSpec) -> None:
        """Scalar out-parameters (`&count`) are written by the call: forget what we knew."""
        acquired_args = {a.arg for a in spec.acquires}
        for i, arg in enumerate(ev.args):
            if isinstance(arg, AddrOf) and i not in acquired_args:
                loc = self._resolve(state, arg.base, create=False)
                if loc is not None and loc in state.b and state.b[loc][0] != "r":
                    del state.b[loc]


    @staticmethod
    def _acquires_here(ev: Call, acq: Acquire) -> bool:
        """An acquisition made only when an argument is NULL (`only_if_null`): made when that
        argument is written as a NULL constant, not when the caller passes its own buffer."""
        if acq.only_if_null is None:
            return True
        if acq.only_if_null >= len(ev.args):
            return False
        arg = ev.args[acq.only_if_null]
        return isinstance(arg, Const) and arg.value == 0


    def _acquire_all(self, state: State, ev: Call, spec: CallSpec) -> list[State]:
        """Acquire everything the call hands out; an out-parameter documented as possibly NULL
        on success (`_Outptr_result_maybenull_`) splits the path once more."""
        empty = self._count_split(state, ev, spec)
        states = [state]
        for acq in spec.acquires:
            if empty is not None and acq.none_if_count_zero is None:
                self._acquire(empty, ev, acq)  # acquired whatever the count
            if acq.nullable and acq.into.startswith("*") and (empty is None or acq.none_if_count_zero is None):
                target = self._acquire_target(ev, acq)
                if target is not None:
                    for s in list(states):
                        null_state = s.copy()
                        self._store(null_state, target, ("k", 0), ev.loc)
                        null_state.note(ev.loc.line, ev.loc.col, f"assuming {ev.callee}() writes NULL to `{shown(target)}`")
                        states.append(null_state)
                    for s in states[: len(states) // 2]:
                        self._acquire(s, ev, acq)
                    continue
            for s in states:
                self._acquire(s, ev, acq)
        return states + ([empty] if empty is not None else [])


    def _count_split(self, state: State, ev: Call, spec: CallSpec) -> State | None:
        """A call that writes a count and, when it is 0, NULL out-pointers (`GetBoundOutputNames`
        with no output bound) acquires nothing on that path: `if (count == 0) return;` leaks
        nothing. Splits off and returns the path where the count is 0 (the out-pointers it names
        are NULL there); on `state` the count is known to be above 0 (`if (n <= 0) return;`
        is not taken there: a count is never negative)."""
        counted = [a for a in spec.acquires if a.none_if_count_zero is not None]
        if not counted:
            return None
        count = self._acquire_target(ev, replace(counted[0], into=f"*{counted[0].none_if_count_zero}"))
        if count is None:
            return None
        empty = state.copy()
        self._store(empty, count, ("k", 0), ev.loc)
        self._store(state, count, POSITIVE_COUNT, ev.loc)
        empty.note(ev.loc.line, ev.loc.col, f"assuming {ev.callee}() writes 0 to `{shown(count)}` and allocates nothing")
        for acq in counted:
            target = self._acquire_target(ev, acq)
            if target is not None:
                self._store(empty, target, ("k", 0), ev.loc)
        return empty


    def _own_allocator_block(self, ev: Call, acq: Acquire) -> Acquire:
        """A block handed out by the program's own OrtAllocator (`ev.own_free`: its Free does
        `delete p`) is of the family that release frees: `delete` on it is no foreign free, and
        it must still be released (a kind that release frees)."""
        if not ev.own_free or not self.policy.kinds[acq.kind].allocator_block:
            return acq
        spec = self.policy.lookup("plain", ev.own_free)
        if spec is None or spec.release is None or not spec.release.kinds:
            return acq
        return replace(acq, kind=min(spec.release.kinds))


    def _acquire(self, state: State, ev: Call, acq: Acquire, via_helper: str | None = None) -> None:
        acq = self._own_allocator_block(ev, acq)
        kind = self.policy.kinds[acq.kind]
        role = acq.into
        rid = f"{ev.id}:{role}"
        owner_text = None
        owner_expr = None
        parent = None
        if acq.owner is not None and (acq.owner < len(ev.args) or acq.owner == RECEIVER and ev.receiver is not None):
            owner_expr = ev.receiver if acq.owner == RECEIVER else ev.args[acq.owner]
            if kind.owned:
                owner_text = self._owner_key(state, owner_expr)
            else:
                prid, pres = self._value_res(state, owner_expr, create=True)
                parent = prid
        if acq.into == "token":
            handed = owner_expr is not None and caller_object(owner_expr, self.params) and self._acquired_last(ev) \
                or kind.kept_unless_released_here and not self._releases_kind(acq.kind)
            state.r[rid] = Res(acq.kind, ESCAPED if handed else HELD, owner=owner_text)
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
                if dest_loc[0][:1] == "@" and self._of_many(state, dest_loc):
                    # a field of an object made on every iteration and kept in an array
                    # (`m = alloc(); m->id = strdup(..); out[k] = m;`): the earlier objects'
                    # field still holds the earlier block, as `_store` keeps a value it replaces
                    self._keep_in_collection(state, rid, dest_loc)
                else:
                    self._leak(state, rid, ev.loc, "overwritten", "it is overwritten here while still held")
        if old is not None:
            self._retire(state, rid, self._resolve(state, target, create=False))
            old = state.r.get(rid)
            if parent == rid:
                parent = rid + PREV
        lazy_null = acq.nullable and acq.into == "return" and kind.owned and not kind.must_release
        if kind.loop_leak and parent is None:
            parent = self._open_frame(state)
        state.r[rid] = Res(acq.kind, st, owner=owner_text, parent=parent,
                           coll=(old.coll if old is not None and old.st == HELD else False), maybe_null=lazy_null,
                           keeps=self._kept_by_call(state, ev, acq))
        self._site(rid, ev, target, acq.kind, via_helper)
        if kind.owned:
            into = f" into `{shown(target)}`" if not in_temp(target) else ""  # `$3` is no name of the user's
            state.note(ev.loc.line, ev.loc.col, f"{kind.label} acquired by {ev.callee}(){into}", rid)
        self._store(state, target, ("r", rid), ev.loc)


    def _acquired_last(self, ev: Call) -> bool:
        """Is the token call `ev` the function's last act (lock_functions.py: a lock function
        hands its token to its caller)? Asked once per call site."""
        hit = self._last_acts.get(ev.id)
        if hit is None:
            hit = self._last_acts[ev.id] = acquired_last(ev, self.blocks[self._block], self.blocks, self._succs)
        return hit


    def _releases_kind(self, kind: str) -> bool:
        """Does this function release `kind` anywhere (lock_functions.releases_kind)? Once per kind."""
        hit = self._released_kinds.get(kind)
        if hit is None:
            hit = self._released_kinds[kind] = releases_kind(self.fn, kind, self.policy)
        return hit


    def _kept_by_call(self, state: State, ev: Call, acq: Acquire) -> str | None:
        """`Acquire.keeps`: the resource of the argument whose object the new one co-owns
        (`OgaCreateGeneratorParams(model, &params)`: params hold a reference to the model)."""
        if acq.keeps is None or acq.keeps >= len(ev.args):
            return None
        v = self._eval(state, ev.args[acq.keeps])
        return v[1] if v is not None and v[0] == "r" else None


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
                    out.append(owner_shown(res.owner))
        return out


    def _open_frame(self, state: State) -> str | None:
        """The innermost local frame this path holds (PushLocalFrame), if any: its release
        frees what is created now."""
        frames = [rid for rid, res in state.r.items()
                  if res.st == HELD and (self.policy.kinds.get(res.kind or "") or NO_KIND).frame]
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
        if type(arg) is Op:
            element = element_of(arg)  # `names + i`: the element `names[i]`
            if element is not None:
                return element
        return Deref(arg)


    def _site(self, rid: str, ev: Call, target: Expr | None, kind: str | None, via_helper: str | None = None) -> None:
        if rid not in self.sites:
            self.sites[rid] = Site(ev.loc.line, ev.loc.col, ev.loc.end_line, ev.loc.end_col, ev.callee,
                                   shown(target) if target is not None and not in_temp(target) else "",
                                   kind, bool(via_helper), ev.macro, ev.macro_at, self._owner_text(ev, kind))

    def _owner_text(self, ev: Call, kind: str | None) -> str:
        """The acquiring call's owner argument as written (JNI: the array), for fixes."""
        spec = self.policy.lookup_in(self.fn.language, ev.style, ev.callee)
        for acq in spec.acquires if spec is not None else ():
            if acq.kind == kind and acq.owner is not None and acq.owner < len(ev.args):
                return ir.expr_text(ev.args[acq.owner])
        return ""


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
        # what `_value_res(create=True)` finds, without evaluating `arg` again
        rid, res = (v[1], state.r.get(v[1])) if v is not None else self._new_value_res(state, arg)
        if rid is None or res is None:
            return
        name, via, released_note = self._release_texts(arg, callee, helper, where)
        if res.coll and "/[]" in rid:
            self._list_element_released(state, rid, f"{callee}()", ev.loc)
        kind = self.policy.kinds.get(res.kind) if res.kind else None
        label = kind.label if kind else None
        if res.st in (RELEASED, DANGLING):
            if res.coll and not res.swept:
                return  # the next element of an array that a loop is releasing
            if res.coll:
                where = self._last_note(state, rid, "released")
                self._report("ORT002", ev.loc, f"the elements of {subject(array_name(arg), None, label)} are released "
                             f"a second time by {callee}(){via}; every element was already released by the loop{where}",
                             state, rid, anchor=f"double:{name}")
                state.r[rid] = res.with_st(CONSUMED)
                return
            where = self._last_note(state, rid, "released")
            self._report("ORT002", ev.loc, f"{self._subject(name, rid, label)} is released a second time by {callee}(){via}; "
                         f"it was already released{where}", state, rid, anchor=f"double:{name}")
            state.r[rid] = res.with_st(CONSUMED)
            return
        if res.st == CONSUMED:
            return
        if res.st == BORROWED and self._is_java(res.kind):  # Java: closing a Result's output early is allowed
            state.r[rid] = res.with_st(RELEASED)
            self._params_released |= made_outside(rid)
            state.note(ev.loc.line, ev.loc.col, f"`{name}` closed by {callee}(){via}", rid, release=callee)
            return
        if res.st == BORROWED:
            site = self.sites.get(rid)
            src = f" (from {site.callee}() at line {site.line})" if site else ""
            self._report("ORT005", ev.loc, f"{callee}(){via} releases {self._subject(name, rid)}, a {label or 'value'}{src} that the caller does not own; "
                         f"it must not be released", state, rid, anchor=f"foreign:{callee}:{name}")
            state.r[rid] = res.with_st(CONSUMED)
            return
        if res.st == HELD and rel is not None and res.kind is not None:
            if res.kind not in rel.kinds:
                self._wrong_release(state, ev, rid, res, name, callee, via, rel.kinds)
                return
            if rel.owner is not None and res.owner is not None and rel.owner < len(ev.args):
                owner = self._owner_key(state, ev.args[rel.owner])
                if not same_owner(owner, res.owner):
                    site = self.sites.get(rid)
                    self._report("ORT003", ev.loc, f"{callee}(){via} releases {self._subject(name, rid)} against `{owner_shown(owner)}`, "
                                 f"but it was acquired from `{owner_shown(res.owner)}`"
                                 + (f" at line {site.line}" if site else ""),
                                 state, rid, anchor=f"owner:{callee}:{name}")
                    state.r[rid] = res.with_st(CONSUMED)
                    return
            if rel.copy_back:
                self._copy_back(state, ev, rel, rid)
            if rel.keep_if_arg is not None and rel.keep_if_arg < len(ev.args):
                mode = self._eval(state, ev.args[rel.keep_if_arg])
                if mode is not None and mode == ("k", rel.keep_if_value):
                    state.note(ev.loc.line, ev.loc.col, f"{callee}() with this mode copies back but does not release {self._subject(name, rid)}", rid)
                    return
        if res.st == ESCAPED and res.kind is None:
            return
        state.r[rid] = res.with_st(RELEASED)
        self._params_released |= made_outside(rid)
        state.note(ev.loc.line, ev.loc.col, released_note, rid, release=callee)
        borrowed = [other for other, ores in state.r.items() if ores.parent == rid and ores.st == BORROWED]
        for other in borrowed:
            state.r[other] = state.r[other].with_st(DANGLING)


    def _copy_back(self, state: State, ev: Call, rel: Release, rid: str) -> None:
        """A buffer released back to the object it was taken from (`ReleaseLongArrayElements(env,
        arr, elems, 0)`): what was stored into it (`elems[i] = (jlong)value`) now belongs to
        that object (a Java `long[]` of handles), unless the mode drops the changes."""
        if rel.copy_back_unless_arg is not None and rel.copy_back_unless_arg < len(ev.args):
            mode = self._eval(state, ev.args[rel.copy_back_unless_arg])
            if mode is not None and mode == ("k", rel.copy_back_unless_value):
                return
        memory = "@" + rid
        for k, v in list(state.b.items()):
            if k[0] == memory and v[0] == "r" and v[1] != rid:
                self._escape_val(state, v, None)


    def _release_texts(self, arg: Expr, callee: str, helper: str | None, where: str) -> tuple[str, str, str]:
        """The released expression's text, where the release happens (" inside helper() at
        file:line") and the trace step of a release: the same for every state through one call
        site, so made once (the entry keeps `arg` alive, so its id is not reused)."""
        key = (id(arg), callee, helper, where)
        hit = self._release_text_memo.get(key)
        if hit is None:
            name = shown(strip_value(arg))
            via = f" inside {helper}()" + (f" at {short_path(where)}" if where else "") if helper else ""
            note = f"`{name}` released by {callee}(){via}" if name and name[:1] != "$" else f"released by {callee}(){via}"
            hit = self._release_text_memo[key] = (arg, (name, via, note))
        return hit[1]

    def _subject(self, name: str, rid: str, label: str | None = None) -> str:
        """How a message names the value `name` (`messages.subject`): for a temporary, by the
        call that made it."""
        site = self.sites.get(rid.split("#")[0]) if not name or name[:1] == "$" else None
        return subject(name, site.callee if site is not None else None, label)


    def _wrong_release(self, state: State, ev: Call, rid: str, res: Res, name: str, callee: str, via: str,
                       released: frozenset[str]) -> None:
        kind = self.policy.kinds[res.kind]  # type: ignore[index]
        site = self.sites.get(rid)
        right = self.policy.releasers_of(kind.id)
        hint = f"; use {' or '.join(r + '()' for r in right[:2])}" if right else ""
        origin = f" from {site.callee}() at line {site.line}" if site else ""
        rule = kind.wrong_release_rule
        if rule == "ORT005":
            msg = f"{callee}(){via} frees {self._subject(name, rid)}, {kind.label}{origin} that does not belong to the caller's {callee.split('::')[-1]} family{hint}"
        elif not name or name[:1] == "$":
            msg = f"{callee}(){via} does not release {kind.label}: it was acquired{origin}{hint}"
        else:
            msg = f"{callee}(){via} does not release {kind.label}: `{name}` was acquired{origin}{hint}"
        self._report(rule, ev.loc, msg, state, rid, anchor=f"mismatch:{callee}:{name}", released_as=tuple(sorted(released)))
        state.r[rid] = res.with_st(CONSUMED)


    def _release_token(self, state: State, ev: Call, rel: Release) -> None:
        owner = None
        if rel.owner is not None and rel.owner < len(ev.args):
            owner = self._owner_key(state, ev.args[rel.owner])
        candidates = [rid for rid, res in state.r.items()
                      if res.st == HELD and res.kind in rel.kinds and same_owner(owner, res.owner)]
        if candidates:
            rid = sorted(candidates)[-1]
            state.r[rid] = state.r[rid].with_st(RELEASED)
            self._params_released |= made_outside(rid)
            state.note(ev.loc.line, ev.loc.col, f"released by {ev.callee}()", rid)
            del state.r[rid]
            for other, ores in list(state.r.items()):  # PopLocalFrame: what the frame held is gone
                if ores.parent == rid and ores.st == HELD:
                    state.r[other] = ores.with_st(CONSUMED)
