"""Findings: exits, leak collection per acquisition site, traces.

Leaks are collected per acquisition site with every leaking exit and emitted once
(`_emit_leaks`): ORT001 (handles, buffers, bound statuses), ORT004 (a status never bound),
ORT010 (Java), ORT007 (a JNI local reference created again in a loop). Other findings are
reported at the transition that causes them (`_report`). Traces are the path notes of the state
that found the problem, from the acquisition on.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import ir
from ..findings import Finding, FixFacts, Step
from ..ir import Call
from .messages import exit_phrase
from .slots import CONSTRUCTOR_THROW_NOTE, leaks_on_throw
from .state import ESCAPED, HELD, PREV, State, Val


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
    macro: str = ""  # the macro whose expansion made the call (ir.Call.macro)
    macro_at: str = ""  # where that macro is defined (ir.Call.macro_at)
    owner: str = ""  # the acquiring call's owner argument as written (JNI: the array), for fixes


MAX_EXITS_LISTED = 64  # leaking exits a finding lists as related locations (its message counts them all)


@dataclass
class LeakRecord:
    rid_site: str
    exits: list[tuple[int, int, str, str]] = field(default_factory=list)  # (line, col, text, how), the first few
    exit_bits: int = 0  # every distinct leaking exit, as bits of the function's exit numbers
    trace: tuple | None = None
    exceptional_only: bool = True
    bound: bool = False
    shows_site: bool = False  # `trace` starts at the acquisition (a joined state's path may not)



class LeakCollection:
    """Part of `FunctionAnalyzer` (see analyze.py for the state it shares)."""

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
            self._escape_aggregate(state, term.value, ("<return>",))
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


    def _leak(self, state: State, rid: str, loc: ir.Loc, how: str, text: str) -> None:
        site_key = rid.split("#")[0]
        record = self.leaks.get(site_key)
        if record is None:
            record = LeakRecord(site_key)
            self.leaks[site_key] = record
        exit_entry = (loc.line, loc.col, text, how)
        numbers = self.__dict__.setdefault("_exit_numbers", {})
        bit = 1 << numbers.setdefault(exit_entry, len(numbers))
        if not record.exit_bits & bit:  # a list of every exit made this cubic (exits x resources x exits)
            record.exit_bits |= bit
            if len(record.exits) < MAX_EXITS_LISTED:
                record.exits.append(exit_entry)
        if how != "throw":
            record.exceptional_only = False
        res = state.r.get(rid)
        if res is not None and res.bound:
            record.bound = True
        # the first trace that starts at the acquisition, preferably not through a throw: a state
        # joined from paths that did and did not acquire (join.join_held) may follow one that did not
        if record.trace is None or not record.shows_site or (how != "throw" and record.trace[1] == "throw"):
            trace, shows_site = self._trace_steps(state, rid, (loc.line, loc.col, text))
            if record.trace is None or (shows_site, how != "throw") > (record.shows_site, record.trace[1] != "throw"):
                record.trace = (trace, how)
                record.shows_site = shows_site


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
            if trace and not record.shows_site:  # no leaking path showed the acquisition: show it, then the exit
                target = f" into `{site.target}`" if site.target else ""
                trace = (Step(self.fn.path, site.line, site.col, f"{res_kind.label} acquired by {site.callee}(){target}"),
                         trace[-1])
            if site.macro:
                trace = (Step(self.fn.path, site.line, site.col, f"in the expansion of {site.macro}"),) + tuple(trace)
            first = next((e for e in exits if e[3] != "throw"), exits[0])
            where = exit_phrase(first)
            count = record.exit_bits.bit_count()
            more = f" (and on {count - 1} more path{'s' if count > 2 else ''})" if count > 1 else ""
            target = f" into `{site.target}`" if site.target else ""
            if res_kind.language == "go":
                rule = "ORT020"
                msg = f"{res_kind.label} created by {site.callee}(){target} is not destroyed {where}{more}"
            elif res_kind.language == "java":
                rule = "ORT010"
                msg = f"{res_kind.label} created by {site.callee}(){target} is not closed {where}{more}"
                if record.exceptional_only:
                    msg += "; close it in a finally block or use try-with-resources"
            elif res_kind.language == "csharp":
                rule = "ORT030"
                msg = f"{res_kind.label} created by {site.callee}(){target} is not disposed {where}{more}"
                if record.exceptional_only:
                    msg += "; dispose it in a finally block or with a using statement"
            elif site.kind in self.policy.status_kinds and not record.bound:
                rule = "ORT004"
                msg = (f"the {self._status_noun(site.kind)} returned by {site.callee}() is never stored, so a failure "
                       f"status cannot be released: it leaks {where}{more}")
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
            related = tuple(Step(self.fn.path, line, col, exit_phrase((line, col, text, how)).capitalize())
                            for line, col, text, how in exits)
            level = "warning" if record.exceptional_only and rule in ("ORT010", "ORT030") else ""
            facts = self._leak_facts(site, tuple(how for _line, _col, _text, how in exits)) if rule == "ORT001" else None
            finding = Finding(rule, self.fn.path, site.line, site.col, site.end_line, site.end_col, msg, self.fn.name,
                              trace, related, level, anchor=f"leak:{site.callee}:{site.target}:{site_key.split(':', 1)[-1]}",
                              macro=site.macro, macro_at=site.macro_at, facts=facts, kind=res_kind.id)
            # Go and C#: one finding per creating call, even for the several values one `Run` allocates
            # or one helper returns in a collection
            key = (rule, site.line, site.col, site.callee) if rule in ("ORT020", "ORT030") \
                else (rule, site.line, site.col, site_key)
            if key not in self.findings:
                self.findings[key] = finding


    def _leak_facts(self, site: Site, exits: tuple[str, ...]) -> FixFacts | None:
        """What a fix for a missing release needs: the variable, the releasing call and where its
        arguments go (from the policy), how each leaking exit leaves. None when there is no
        variable to release or no single releasing call."""
        right = self.policy.releasers_of(site.kind or "")
        if not site.target or len(right) != 1 or site.via_helper or site.macro:
            return None
        spec = next((s for s in (self.policy.lookup(style, right[0]) for style in ("table", "plain", "any"))
                     if s is not None and s.release is not None), None)
        if spec is None or spec.release is None or spec.release.arg is None:
            return None
        rel = spec.release
        arity = 1 + max(rel.arg, rel.owner if rel.owner is not None else -1,
                        rel.keep_if_arg if rel.keep_if_arg is not None else -1)
        return FixFacts("leak", right[0], site.target, rel.arg, rel.owner if rel.owner is not None else -1,
                        site.owner, arity, exits)


    def _status_facts(self, kind: str) -> FixFacts | None:
        """A dropped status: the call that releases it."""
        right = self.policy.releasers_of(kind)
        return FixFacts("dropped-status", right[0]) if len(right) == 1 else None


    def _report(self, rule: str, loc: ir.Loc, message: str, state: State, rid: str | None, anchor: str,
                macro: str = "", macro_at: str = "", facts: FixFacts | None = None, kind: str = "",
                released_as: tuple[str, ...] = ()) -> None:
        key = (rule, loc.line, loc.col, anchor)
        if key in self.findings or (rule, loc.line, loc.col, message) in self.shown:
            return  # two released identities met at one call read the same to the user: one finding
        if self.fn.language in ("go", "csharp"):
            return  # Go and C# code: only ORT020/ORT030 (disposing twice or a use after it is the binding's own business)
        trace = self._trace_for(state, rid, (loc.line, loc.col, message)) if rid else (Step(self.fn.path, loc.line, loc.col, message),)
        if not macro and rid is not None:  # made in the same expansion as the event: that macro's too
            site = self.sites.get(rid)
            if site is not None and site.macro_at and (site.line, site.col, site.end_line, site.end_col) == tuple(loc):
                macro, macro_at = site.macro, site.macro_at
        if macro:
            trace = (Step(self.fn.path, loc.line, loc.col, f"in the expansion of {macro}"),) + tuple(trace)
        self.shown.add((rule, loc.line, loc.col, message))
        res = state.r.get(rid) if rid is not None else None
        self.findings[key] = Finding(rule, self.fn.path, loc.line, loc.col, loc.end_line, loc.end_col, message,
                                     self.fn.name, trace, anchor=anchor, macro=macro, macro_at=macro_at,
                                     facts=None if macro else facts,
                                     kind=kind or ((res.kind or "") if res is not None else "")
                                     or self._kind_by_release(state, rid), released_as=released_as)


    def _kind_by_release(self, state: State, rid: str | None) -> str:
        """The kind of a resource the analysis never saw acquired (a field a loop deletes twice), as
        the call that released it tells: `delete` releases only C++ `new` memory, so a double
        release or use of it is a finding about that kind (and is scoped like it)."""
        node = state.trace
        while node is not None and rid is not None:
            if node.rid == rid and node.release:
                kinds = self.policy.kinds_released_by(node.release)
                return kinds[0] if len(kinds) == 1 else ""
            node = node.prev
        return ""


    def _trace_for(self, state: State, rid: str | None, final: tuple[int, int, str]) -> tuple[Step, ...]:
        return self._trace_steps(state, rid, final)[0]


    def _trace_steps(self, state: State, rid: str | None, final: tuple[int, int, str]) -> tuple[tuple[Step, ...], bool]:
        """The path notes of `state` that concern `rid`, from its acquisition on, then `final`;
        and whether the acquisition was on the path."""
        steps: list[tuple[int, int, str]] = []
        found = False
        node = state.trace
        # an earlier run's resource (`rid#prev`) was acquired under the call site's own
        # identity, before the run that made the current one
        made_as = rid[:-len(PREV)] if rid is not None and rid.endswith(PREV) else rid
        newer = 1 if made_as != rid else 0
        while node is not None:
            made = node.rid == made_as and ("acquired by" in node.text or "returned by" in node.text or "returns an" in node.text)
            if made and newer:
                newer -= 1
            else:
                if node.rid is None or node.rid == rid or made:
                    steps.append((node.line, node.col, node.text))
                if made:
                    found = True
                    break
            node = node.prev
        steps.reverse()
        if len(steps) > 24:
            steps = steps[:1] + steps[-23:]
        steps.append(final)
        return tuple(Step(self.fn.path, line, col, text) for line, col, text in steps), found
