"""What a loop does to array elements as a whole.

Array elements (`names[i]`) are one abstract resource; a loop that releases (or hands away)
`a[i]` does so for every element at its exit (`ir.ScopeExit`), including on the path that runs it
zero times. A finished release loop marks the elements "swept", so a second loop releasing them
again is ORT002. The loop body is scanned once per loop (cached), never once per call.
"""
from __future__ import annotations

import re

from .. import ir
from ..ir import Call, Expr, Index, Opaque, Var
from .exprs import expr_vars
from .loops import Loop
from .state import HELD, OPAQUE, RELEASED, State, made_outside, replaced


class LoopEffects:
    """Part of `FunctionAnalyzer` (see analyze.py for the state it shares)."""

    def _loop_exit(self, state: State, ev: ir.ScopeExit) -> None:
        """A loop that releases `a[i]` (or hands it to a call that takes ownership) is taken to
        do so for every element of `a`, including on the path that runs it zero times (then the
        loop that filled `a` ran zero times too)."""
        blocks = self._iterated(ev.loop_blocks)
        for arg, what, releaser in self._loop_releases(blocks):
            if what == "release" and not self._bound_tied(blocks, arg):
                # counted by something else than what filled the array (`for (i < out.size())`
                # after `for (i < imgs.size) w.push_back(make())`): the elements are released
                # only on the paths that ran the body, each by its own release
                continue
            if what == "release":
                self._release_stored(state, arg, None, "the loop above", ev.loc)
            else:
                for rid in self._stored(state, arg):
                    self._escape_val(state, ("r", rid), None)
                self._elements_handed_on(state, arg, None)
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
                        # every element of this array is released; of this one array only if the
                        # array is not itself one of many (`p->stems[s].samples` for each `s`)
                        swept = not self._one_of_many(state, arg)
                        state.r[v[1]] = replaced(res, st=RELEASED, swept=swept)
                        self._params_released |= made_outside(v[1])
                        state.note(ev.loc.line, ev.loc.col, "every element is released by the loop above", v[1],
                                   release=releaser)
                    else:
                        self._escape_val(state, v, None)
        for elem, dest in self._loop_stores(blocks):
            # `*slot = values[i]` into memory this function does not own (a Lua userdata, a
            # caller's array): each element is handed on, on every path out of the loop
            loc = self._resolve(state, dest, create=False)
            if loc is not None and self._is_local_loc(state, loc):
                continue
            for rid in self._stored(state, elem):
                self._escape_val(state, ("r", rid), None)
            v = self._eval(state, elem)
            res = state.r.get(v[1]) if v is not None and v[0] == "r" else None
            if res is not None and res.coll and res.st == HELD:
                self._escape_val(state, v, None)
        for elem, keeper in self._loop_keeps(blocks):
            # `for (e : result) out.add(e.getValue())`: what the loop keeps elsewhere is kept
            # there on every path, the one that runs the loop zero times included
            self._keep_value(state, keeper, self._eval(state, elem))
            self._elements_handed_on(state, elem, keeper)

    def _elements_handed_on(self, state: State, elem: Expr, keeper: Expr | None) -> None:
        """A loop that hands every value of a list its holder must close one by one
        (`closed_by_elements`: `for (OnnxValue v : seq.getValue()) out.add(wrap(v));`) to a
        call that takes ownership of it, or keeps each one in another collection: the list is
        done with here (handed on), or its values live on in that collection (kept there)."""
        if not isinstance(elem, Index):
            return
        v = self._eval(state, elem.base)
        res = state.r.get(v[1]) if v is not None and v[0] == "r" else None
        kind = self.policy.kinds.get(res.kind or "") if res is not None else None
        if res is None or kind is None or not kind.closed_by_elements or res.st != HELD:
            return
        if keeper is not None:
            self._keep_value(state, keeper, v)
        else:
            self._escape_val(state, v, None)


    def _bound_tied(self, blocks: frozenset, elem: Expr) -> bool:
        """Whether the loop that releases `a[i]` runs once per element `a` holds, so that its
        exit releases every element, on the path that runs it zero times too: its limit names
        `a` itself (`i < a.size()`), or is the limit of the loop of this function that filled
        `a` (`for (i < n) a[i] = make(); ... for (j < n) free(a[j]);`), or nothing says
        otherwise (no counted limit, no loop here filled `a`, or one filled it with no counted
        limit, as a range-for over another container does). A loop counted by another
        array's size (`for (i < results.size()) destroy(wrappers[i])` after
        `for (i < imgs.size) wrappers.push_back(make())`) may stop short of what was filled."""
        key = (blocks, elem)
        hit = self._tied_memo.get(key)
        if hit is None:
            hit = self._tied_memo[key] = self._compute_tied(blocks, elem)
        return hit

    def _compute_tied(self, blocks: frozenset, elem: Expr) -> bool:
        if not isinstance(elem, Index):
            return True
        loop = self._loop_of(blocks)
        if loop is None or not loop.limits:
            return True
        base = ir.expr_text(elem.base)
        limits = {ir.expr_text(e) for e in loop.limits}
        if any(_mentions(text, _last_name(elem.base)) for text in limits):
            return True
        # loops around this one fill other arrays on other rounds, not this round's
        fillers = [lp for lp in self.loops.loops
                   if loop.header not in lp.body and self._fills(lp, base)]
        if not fillers:
            return True
        # a filling loop of unknown count (a range-for over another container) may match
        if any(not lp.limits or limits & {ir.expr_text(e) for e in lp.limits} for lp in fillers):
            return True
        # another container filled in the same rounds as `a` has as many elements
        # (`names.push_back(..); values.push_back(v);` then `for (i < names.size()) free(values[i])`)
        if any(self._fills(lp, name) for lp in fillers for name in _objects_read(limits)):
            return True
        # a count in a plain variable may equal the filler's through a check the state does
        # not keep (`if (n != m) return;`); another container's size is another count
        return not any(_reads_other_object(text) for text in limits)

    def _loop_of(self, blocks: frozenset) -> Loop | None:
        headed = [lp for lp in self.loops.loops if lp.header in blocks]
        return min(headed, key=lambda lp: lp.header) if headed else None

    def _fills(self, loop: Loop, base: str) -> bool:
        """Whether the body of `loop` stores into an element of the array named `base`."""
        for bid in loop.body:
            for ev in self.blocks[bid].events if bid in self.blocks else ():
                if isinstance(ev, ir.Assign) and isinstance(ev.dest, Index) and ir.expr_text(ev.dest.base) == base:
                    return True
        return False

    def _one_of_many(self, state: State, elem: Expr) -> bool:
        """Whether the array whose elements `elem` (`a[i]`) names is itself one abstract
        identity for many arrays (reached through another array's element)."""
        if not isinstance(elem, Index):
            return False
        v = self._eval(state, elem.base)
        res = state.r.get(v[1]) if v is not None and v[0] == "r" else None
        return res is not None and res.coll

    def _loop_exit_reads(self, loop_blocks: frozenset) -> set[str]:
        """The variables `_loop_exit` reads at the end of this loop (liveness.Ahead.value_dead)."""
        blocks = self._iterated(loop_blocks)
        names: set[str] = set()
        for arg, _what, _releaser in self._loop_releases(blocks):
            names |= expr_vars(arg)
        for elem, keeper in self._loop_keeps(blocks):
            names |= expr_vars(elem) | expr_vars(keeper)
        for elem, dest in self._loop_stores(blocks):
            names |= expr_vars(elem) | expr_vars(dest)
        return names

    def _iterated(self, blocks: frozenset) -> frozenset:
        """The blocks of a front end's loop region that run again on the next iteration: its
        natural loop (the CFG's). A region may also hold code on the way out of the loop, such
        as the deferred calls a `return` inside the body runs (Go), which run once, after the
        loop: what they release is not released per element by the loop. Once per region (every
        state through a loop's exit asks; the same set object also keeps the caches below cheap)."""
        hit = self._iterated_memo.get(blocks)
        if hit is None:
            hit = self._iterated_memo[blocks] = self._natural_part(blocks)
        return hit

    def _natural_part(self, blocks: frozenset) -> frozenset:
        headed = [lp for lp in self.loops.loops if lp.header in blocks]
        if not headed:
            return blocks
        loop = min(headed, key=lambda lp: lp.header)
        return frozenset(blocks & loop.body)

    def _loop_keeps(self, blocks: frozenset) -> list[tuple[Expr, Expr]]:
        """(element `a[i]`, collection) pairs: a `stores` call in the loop keeps an element."""
        cached = self._loop_keep_cache.get(blocks)
        if cached is not None:
            return cached
        out: list[tuple[Expr, Expr]] = []
        for bid in sorted(blocks):
            for ev in self.blocks[bid].events if bid in self.blocks else ():
                if not isinstance(ev, Call) or ev.receiver is None:
                    continue
                spec = self.policy.lookup_in(self.fn.language, ev.style, ev.callee)
                if spec is None or spec.stores != "receiver":
                    continue
                for arg in ev.args:
                    elem = self._loop_element(arg, blocks)
                    if elem is not None:
                        out.append((elem, ev.receiver))
        self._loop_keep_cache[blocks] = out
        return out


    def _loop_stores(self, blocks: frozenset) -> list[tuple[Expr, Expr]]:
        """(element `a[i]`, destination) pairs: the loop stores an element somewhere other than
        a variable (`*ud = a[i]`, `out[i] = a[i]`); whether that memory is this function's is
        the state's to say at the loop's exit."""
        cached = self._loop_store_cache.get(blocks)
        if cached is not None:
            return cached
        out: list[tuple[Expr, Expr]] = []
        for bid in sorted(blocks):
            for ev in self.blocks[bid].events if bid in self.blocks else ():
                if isinstance(ev, ir.Assign) and type(ev.dest) is not Var:
                    elem = self._loop_element(ev.value, blocks)
                    if elem is not None:
                        out.append((elem, ev.dest))
        self._loop_store_cache[blocks] = out
        return out


    def _loop_releases(self, blocks: frozenset) -> list[tuple[Expr, str, str | None]]:
        """Array elements `a[i]` that calls in the loop body release or take ownership of, with
        the call that releases them (a summary's own release call, for a helper's summary)."""
        cached = self._loop_release_cache.get(blocks)
        if cached is not None:
            return cached
        found: list[tuple[Expr, str, str | None]] = []
        for bid in sorted(blocks):
            block = self.blocks.get(bid)
            if block is None:
                continue
            for ev in block.events:
                if isinstance(ev, Call):
                    for i, (what, releaser) in self._element_effects(ev).items():
                        elem = self._loop_element(ev.args[i], blocks) if i < len(ev.args) else None
                        if elem is not None:
                            found.append((elem, what, releaser))
                    spec = self.policy.lookup_in(self.fn.language, ev.style, ev.callee)
                    if spec is not None and spec.release is not None and spec.release.receiver and ev.receiver is not None:
                        elem = self._loop_element(ev.receiver, blocks)
                        if elem is not None:
                            found.append((elem, "release", ev.callee))
        if found:
            renewed = self._renewed_arrays(blocks)
            if renewed:
                found = [f for f in found if not (isinstance(f[0], Index) and type(f[0].base) is Var
                                                  and f[0].base.name in renewed)]
        self._loop_release_cache[blocks] = found
        return found

    def _renewed_arrays(self, blocks: frozenset) -> set[str]:
        """Variables the loop body assigns as a whole (`v.clear()`, `v = std::vector<T*>()`): an array the
        loop empties and fills again on each iteration (`for (..) { for (t : v) t.reset();
        v.clear(); ...; v.push_back(std::move(out)); }`) holds, after the loop, what the last
        iteration put there, not the elements its releases saw. The nested loop that releases
        them still does so at its own exit."""
        out: set[str] = set()
        for bid in blocks:
            block = self.blocks.get(bid)
            for ev in block.events if block is not None else ():
                if type(ev) in (ir.Assign, Call) and type(ev.dest) is Var:
                    out.add(ev.dest.name)
        return out


    def _loop_element(self, e: Expr, blocks: frozenset, depth: int = 0) -> Expr | None:
        """`a[i]`, or a variable the loop loads from `a[i]` (`for (T v : a)`, `p = a[i]`), also
        through views of it (`v.getValue()` of a map entry `v`)."""
        if isinstance(e, Index):
            return e
        if not isinstance(e, Var) or depth > 3:
            return None
        found = self._loop_loads(blocks).get(e.name)
        if found is None:
            return None
        how, value = found
        if how == "view":
            return self._loop_element(value, blocks, depth + 1)
        return value


    def _loop_loads(self, blocks: frozenset) -> dict[str, tuple[str, Expr]]:
        """For each variable, the first load in the loop body that makes it an element: one
        pass over the body per loop (a query per call argument made this quadratic in the
        size of the body: 8 000 calls in one loop took 13 s)."""
        cached = self._loop_load_cache.get(blocks)
        if cached is not None:
            return cached
        loads: dict[str, tuple[str, Expr]] = {}
        for bid in sorted(blocks):
            for other in self.blocks[bid].events if bid in self.blocks else ():
                dest = getattr(other, "dest", None)
                if not isinstance(dest, Var) or dest.name in loads:
                    continue
                if isinstance(other, ir.Assign) and isinstance(other.value, Index):
                    loads[dest.name] = ("index", other.value)
                elif isinstance(other, Call) and other.receiver is not None:
                    spec = self.policy.lookup_in(self.fn.language, other.style, other.callee)
                    if spec is not None and spec.view:
                        loads[dest.name] = ("view", other.receiver)
                    elif spec is not None and spec.element:  # `it.next()`
                        loads[dest.name] = ("index", Index(other.receiver, Opaque("i")))
        self._loop_load_cache[blocks] = loads
        return loads


    def _element_effects(self, ev: Call) -> dict[int, tuple[str, str | None]]:
        """Which arguments a call releases ("release") or takes ownership of ("escape"), with
        the call that releases them."""
        spec = self.policy.lookup_in(self.fn.language, ev.style, ev.callee)
        out: dict[int, tuple[str, str | None]] = {}
        if spec is not None and spec.status_check is None:
            if spec.release is not None and spec.release.arg is not None:
                out[spec.release.arg] = ("release", ev.callee)
            for i in (range(len(ev.args)) if spec.escapes_all else spec.escapes):
                out.setdefault(i, ("escape", None))
            return out
        summary = self._status_summary(spec) if spec is not None else self.summaries(ev)
        if summary is not None:
            for case in summary.cases:
                for e in case.effects:
                    if len(e.path) == 1 and e.what in ("release", "escape"):
                        out.setdefault(e.path[0], (e.what, e.relby))
            return out
        if self.options.unknown_calls == "escape" and not self.policy.is_neutral(ev.style, ev.callee):
            return {i: ("escape", None) for i in range(len(ev.args)) if i not in ev.borrows}
        return out


def _last_name(e: Expr) -> str:
    """The name an array is last reached by: `cells_` of `this->cells_` or `grid.cells_` (a
    limit's text is not renamed when a method is inlined into its caller)."""
    if isinstance(e, ir.Field):
        return e.name
    return ir.expr_text(e)


def _reads_other_object(text: str) -> bool:
    """Whether a loop limit's text reads an object (`out.size()`, `v->count`, `len(xs)`)
    rather than a plain count variable (`n_inputs`)."""
    return re.search(r"[.(\[]|->", text) is not None


def _objects_read(limits: set[str]) -> set[str]:
    """The containers whose size loop limits read (`names` in `names.size()`, `v->count`)."""
    found: set[str] = set()
    for text in limits:
        found.update(m.group(1) for m in re.finditer(r"([A-Za-z_]\w*)\s*(?:\.|->)\s*\w+\s*\(\s*\)", text))
    return found


def _mentions(text: str, name: str) -> bool:
    """Whether expression text `text` names `name` as a whole word."""
    return re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text) is not None
