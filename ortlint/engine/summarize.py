"""The summary of the analyzed function, from its exit states (see `summaries.Summary`)."""
from __future__ import annotations

from .compared_only import compared_only_params
from .member_writes import member_writes
from .relations import case_relations
from .exprs import param_path
from .replaced import released_and_replaced, replaced_param_locations
from .state import CONSUMED, ESCAPED, HELD, RELEASED, State, Val, is_nonnull_fact, is_null_fact
from .summaries import Case, Effect, MAX_CASES, Summary, simplify_cases


class Summarizing:
    """Part of `FunctionAnalyzer` (see analyze.py for the state it shares)."""

    def _summary(self) -> Summary | None:
        cases: list[Case] = []
        many = len(self.exits) > MAX_CASES
        released = {rid for state, _how, _v in self.exits for rid, res in state.r.items()
                    if rid[0] == "p" and res.st == RELEASED and not released_and_replaced(state, rid)}
        for state, how, value in self.exits:
            if many:  # the same merge as under path explosion, so the cases agree
                state = state.copy()
                self._collapse_released_params(state, released)
            cases.append(self._case_of(state, how, value))
        if not cases:
            return None
        return Summary(self.fn.name, simplify_cases(cases), f"{self.fn.path}:{self.fn.loc.line}", tuple(self.fn.params),
                       compared_only_params(self.fn), member_writes(self.fn), tuple(sorted(self._unnamed_writes)))


    def _case_of(self, state: State, how: str, value: Val | None) -> Case:
        pre: list = []
        effects: list[Effect] = []
        outs: list = []
        for rid, res in sorted(state.r.items()):
            path = param_path(rid)
            if path is not None:
                if path[0] >= len(self.fn.params):
                    continue
                if is_null_fact(res.fact):
                    pre.append((path, "zero" if rid in self._zero_trip_bounds else "null"))
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
                out_path = param_path(res.esc[0][1:])
                if out_path is not None and out_path[0] < len(self.fn.params):
                    outs.append((out_path + tuple(res.esc[1:]), res.kind))
        effects.extend(self._cleared_params(state))
        claimed = {e.path for e in effects if e.what == "clear"} | {path for path, _kind in outs}
        # `*out = list` with the new objects in list's elements: the acquisition into `(*out)[]`
        # says what the caller's variable now holds (a "replace" of `*out` before it would
        # make the elements memory of an unknown object, which nobody must release)
        claimed |= {path[:-1] for path, _kind in outs if path[-1] == "[]"}
        effects.extend(replaced_param_locations(state, len(self.fn.params), claimed))
        ret = self._ret_spec(state, value) if how == "return" else None
        exit_kind = {"return": "return", "throw": "throw", "abort": "abort"}.get(how, "return")
        rel = case_relations(state, len(self.fn.params)) if state.conds else ()
        return Case(tuple(pre), tuple(effects), tuple(sorted(set(outs))), ret, exit_kind, rel)


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
            path = param_path(key[0][1:])
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
        path = param_path(rid)
        if path is not None:
            return ("param", path) if path[0] < len(self.fn.params) else None
        res = state.r.get(rid)
        if res is not None and res.kind and res.esc == ("<return>",):
            held = self._held_elements(state, rid)
            return ("fresh", res.kind, False, held) if held else ("fresh", res.kind)
        if res is not None and res.st == ESCAPED and res.kind and res.esc and res.esc[0].startswith("@"):
            return self._returned_out(state, rid, res.esc)
        return None

    def _returned_out(self, state: State, rid: str, esc: tuple) -> tuple | None:
        """A new object stored into an out-parameter and also returned (`tmp->data = p;
        return p;`): the return value is what the out location holds, one object the caller
        releases through either name (not a second, unknown one). An object that went there
        inside another one (`n->text = new_text(); *list = n; return n->text;`) has the escape
        location of its container: the location that holds it is the container's field, found
        from the bindings (`_held_at`); None when no binding shows it (nothing is claimed)."""
        out_path = param_path(esc[0][1:])
        if out_path is None or out_path[0] >= len(self.fn.params):
            return None
        where = esc if state.b.get(esc) == ("r", rid) else self._held_at(state, rid, esc)
        return ("param", out_path + tuple(where[1:])) if where is not None else None

    @staticmethod
    def _held_at(state: State, rid: str, esc: tuple) -> tuple | None:
        """The location that holds `rid` in the object stored at `esc` (a parameter's memory, as
        `("@p0", "*")`): `("@p0", "*", "*", ".text")` for a field of the object `*p0` holds
        (one level); None when no field of it does."""
        holder = state.b.get(esc)
        if holder is None or holder[0] != "r":
            return None
        prefix = "@" + holder[1]
        inner = [k for k, v in state.b.items() if k[0] == prefix and v == ("r", rid)]
        return esc + min(inner)[1:] if inner else None

    def _held_elements(self, state: State, rid: str) -> tuple[str, ...]:
        """Kinds of the resources a returned collection keeps (`m.put("x", createTensor(..));
        return m;`): they are the caller's to close, as the collection is (Java, C#)."""
        if self.fn.language not in ("java", "csharp"):
            return ()
        prefix = ("@" + rid, "[]")
        kinds = []
        for key, val in state.b.items():
            if len(key) == 3 and key[:2] == prefix and key[2].startswith("#") and val[0] == "r":
                res = state.r.get(val[1])
                kind = self.policy.kinds.get(res.kind or "") if res is not None else None
                if kind is not None and kind.owned and kind.must_release and res.st in (HELD, ESCAPED):
                    kinds.append(kind.id)
        return tuple(sorted(kinds))
