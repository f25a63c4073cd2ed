"""Per-function summaries: what a call does to the caller's resources, without re-analyzing it.

A summary is a short list of *cases*, one per distinguishable way the function can end (like
Infer's disjunctive specs): a precondition on the nullness of its parameters, the effects on
what the parameters point to (released, escaped), resources it hands back through
out-parameters, its return value, and how it exits (returns, throws, aborts). Status-checking
helpers fall out naturally: `if (st == NULL) return 0; Release(st); return 1;` is two cases.

Policy `status_check` entries are compiled into the same form, so hand-written entries and
inferred summaries are applied by one piece of code in the engine.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..pickling import pickle_by_fields
from ..policy import CallSpec

MAX_CASES = 12

# A precondition's words: "zero" is a loop bound's "is 0" (the loop not entered: an element count)
_PRE_TEXT = {"null": "== NULL", "nonnull": "!= NULL", "zero": "== 0"}

ParamPath = tuple  # (param index, op, op, ...)


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class Effect:
    path: ParamPath
    what: str  # "release" | "escape" | "consume" | "clear" (*path is NULL after the call)
    # | "replace" (*path holds another value, unknown to the caller: engine/replaced.py)
    # | "nonzero" (*path holds an integer other than 0, such as an incremented count: engine/counts.py)
    relby: str | None = None  # the policy call that performs the release (for kind checks)
    where: str = ""  # "file:line" of that release inside the callee, for traces


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class Case:
    pre: tuple[tuple[ParamPath, str], ...] = ()  # (path, "null" | "nonnull" | "zero": a count of 0)
    effects: tuple[Effect, ...] = ()
    outs: tuple[tuple[ParamPath, str], ...] = ()  # (path written through, kind acquired)
    ret: tuple | None = None  # ("k", n) | ("x", set) | ("fresh", kind) | ("param", path) | None
    exit: str = "return"  # "return" | "throw" | "abort" | "caller_return"
    rel: tuple[tuple[ParamPath, ParamPath, bool], ...] = ()  # (path, path, equal): engine/relations.py


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class Summary:
    name: str
    cases: tuple[Case, ...]
    origin: str  # "policy <file:line>" or "<path>:<line>"
    params: tuple[str, ...] = ()
    compared_only: tuple[int, ...] = ()  # parameters only compared (engine/compared_only.py)
    writes: tuple[str, ...] = ()  # members a C++ method assigns (engine/member_writes.py)
    unnamed_writes: tuple[int, ...] = ()  # parameters whose object it writes at computed places (engine/interior.py)

    @property
    def noreturn(self) -> bool:
        return bool(self.cases) and all(c.exit != "return" for c in self.cases)

    def releases(self) -> set[int]:
        """Parameter indexes released on every path (for the `releases` column of explanations)."""
        indexes: set[int] = set()
        for i in {e.path[0] for c in self.cases for e in c.effects if e.what == "release" and len(e.path) == 1}:
            if all(any(e.path == (i,) and e.what == "release" for e in c.effects) or (((i,), "null") in c.pre)
                   for c in self.cases):
                indexes.add(i)
        return indexes

    def describe(self) -> list[str]:
        """Human-readable lines, for `ortlint --explain-summaries`."""
        lines = []
        for i, case in enumerate(self.cases, 1):
            parts = []
            if case.pre or case.rel:
                parts.append("when " + " and ".join(
                    [f"{self.param_text(p)} {_PRE_TEXT[v]}" for p, v in case.pre]
                    + [f"{self.param_text(a)} {'==' if eq else '!='} {self.param_text(b)}" for a, b, eq in case.rel]))
            for e in case.effects:
                verb = {"release": "releases", "escape": "takes ownership of", "consume": "may release",
                        "clear": "sets to NULL", "replace": "stores another value into",
                        "nonzero": "stores a value other than 0 into"}[e.what]
                via = f" with {e.relby}()" if e.relby and e.what == "release" else ""
                at = f" at {e.where}" if e.where else ""
                parts.append(f"{verb} {self.param_text(e.path)}{via}{at}")
            for path, kind in case.outs:
                parts.append(f"acquires {kind} into {self.param_text(path)}")
            if case.ret is not None:
                parts.append("returns " + ret_text(case.ret, self))
            parts.append({"return": "returns normally", "throw": "throws", "abort": "does not return",
                          "caller_return": "makes the caller return"}[case.exit])
            lines.append(f"case {i}: " + "; ".join(parts))
        return lines

    def param_text(self, path: ParamPath) -> str:
        """(1, "*", ".next", "*", ".text") -> "p->next->text" for parameter p."""
        idx = path[0]
        text = idx[2:] if type(idx) is str else self.params[idx] if idx < len(self.params) else f"arg{idx}"
        ops = list(path[1:])
        i = 0
        while i < len(ops):
            op = ops[i]
            if op == "*" and i + 1 < len(ops) and ops[i + 1].startswith("."):
                text = f"{text}->{ops[i + 1][1:]}"
                i += 2
                continue
            text = f"*{text}" if op == "*" else f"{text}[]" if op == "[]" else f"{text}{op}"
            i += 1
        return text


def ret_text(ret: tuple, summary: Summary) -> str:
    if ret[0] == "k":
        return str(ret[1])
    if ret[0] == "x":
        return "a value other than " + ", ".join(str(v) for v in sorted(ret[1]))
    if ret[0] == "fresh":
        return f"a new {ret[1]}" + (" or NULL" if len(ret) > 2 and ret[2] else "")
    if ret[0] == "param":
        return summary.param_text(ret[1])
    return "?"


MAX_DISTINCT_CODES = 2


def simplify_cases(cases: list[Case]) -> tuple[Case, ...]:
    """Deduplicate, then coarsen until there are at most MAX_CASES cases."""
    unique = _merge_error_codes(list(dict.fromkeys(cases)))
    if len(unique) <= MAX_CASES:
        return tuple(unique)
    weakened = _shared_preconditions(unique)
    if len(weakened) <= MAX_CASES:
        return tuple(weakened)
    merged = []
    for exit_kind in ("return", "throw", "abort", "caller_return"):
        group = [c for c in unique if c.exit == exit_kind]
        if group:
            merged.append(merge_cases(group, exit_kind))
    return tuple(merged)


def _shared_preconditions(cases: list[Case]) -> list[Case]:
    """One case per outcome (effects, acquisitions, returned value, exit), under the
    preconditions all its cases share: a weaker condition admits every path the cases did, and
    keeps what always goes with the outcome (a helper that acquires only when its handle
    parameter is not NULL says so, and its caller's later `destroy(handle, x)` knows which
    case it is in). Only preconditions on the parameters' own values are kept: one on memory a
    parameter reaches (`*list != NULL`) can be changed by the callee's own effects on that
    memory, and a case kept under it that the caller then rules out leaves the others, which
    release that memory without the replacement (a list-removal helper called in a loop read as
    freeing the list head twice). Relations between values are dropped, as the preconditions
    they share are not worth the cost."""
    groups: dict[tuple, list[Case]] = {}
    for case in cases:
        groups.setdefault((case.effects, case.outs, case.ret, case.exit), []).append(case)
    out = []
    for (effects, outs, ret, exit_kind), group in groups.items():
        shared = set(group[0].pre).intersection(*(c.pre for c in group[1:]))
        kept = tuple(p for p in group[0].pre if p in shared and len(p[0]) == 1)
        out.append(Case(kept, effects, outs, ret, exit_kind))
    return out


def _merge_error_codes(cases: list[Case]) -> list[Case]:
    """`return 83;`, `return 9;`, ...: a helper returning many distinct error codes would split
    every caller's path once per code. Callers test success (0) against failure, so cases that
    differ only in a non-zero constant become one case returning "non-zero"."""
    groups: dict[tuple, list[Case]] = {}
    for case in cases:
        groups.setdefault((case.pre, case.effects, case.outs, case.exit, case.rel), []).append(case)
    out: list[Case] = []
    for group in groups.values():
        codes = [c for c in group if c.ret is not None and c.ret[0] == "k" and c.ret[1] != 0]
        if len(codes) <= MAX_DISTINCT_CODES:
            out.extend(group)
            continue
        first = codes[0]
        out.extend(c for c in group if c not in codes)
        out.append(Case(first.pre, first.effects, first.outs, ("x", frozenset({0})), first.exit, first.rel))
    return list(dict.fromkeys(out))


def merge_cases(group: list[Case], exit_kind: str) -> Case:
    """One approximate case: released everywhere stays a release, released somewhere becomes a
    'may release' (nothing is claimed about it afterwards), any escape is an escape."""
    paths = {e.path for c in group for e in c.effects}
    effects = []
    for path in sorted(paths, key=repr):
        whats = [next((e for e in c.effects if e.path == path), None) for c in group]
        if all(e is not None and e.what == "clear" for e in whats):
            effects.append(Effect(path, "clear"))
        elif any(e is not None and e.what == "clear" for e in whats):
            continue  # NULL on some paths only: nothing is claimed
        elif all(e is not None and e.what in ("replace", "nonzero") for e in whats):
            effects.append(Effect(path, "nonzero" if all(e.what == "nonzero" for e in whats) else "replace"))
        elif any(e is not None and e.what == "escape" for e in whats):
            effects.append(Effect(path, "escape"))
        elif all(e is not None and e.what == "release" for e in whats):
            effects.append(Effect(path, "release", whats[0].relby if whats[0] else None))
        else:
            effects.append(Effect(path, "consume"))
    rets = {c.ret for c in group}
    ret = rets.pop() if len(rets) == 1 else None
    return Case((), tuple(sorted(effects, key=_entry_effects_first)), (), ret, exit_kind)


_ON_ENTRY_VALUE = frozenset({"release", "escape", "consume"})


def _entry_effects_first(effect: Effect) -> int:
    """A case's effects are applied in order. What the callee did to the object a path held on
    entry (released, kept, consumed) comes before what the path holds at the end (NULL, another
    value): `info_cleanup(dest); *dest = *source;` releases the old `dest->color.palette`, then
    `dest->color` holds the copy. Ordered by path alone, the replacement of `dest->color` came
    first and the release then hit the caller's new palette (a double release reported later)."""
    return 0 if effect.what in _ON_ENTRY_VALUE else 1


def summary_from_status_check(spec: CallSpec) -> Summary:
    """`checkOrtStatus(env, api, status)`: NULL status -> success value; otherwise release it and
    return a failure value, abort, throw or make the caller return, as the policy says."""
    check = spec.status_check
    assert check is not None
    arg = (check.arg,)
    ok_ret = ("k", check.success_returns) if check.success_returns is not None else None
    if check.passes is not None:  # `must.M1(v, err)` returns v when err is nil
        ok_ret = ("param", (check.passes,))
    if check.failure_returns is not None:
        bad_ret = ("k", check.failure_returns)
    elif check.success_returns is not None:
        bad_ret = ("x", frozenset({check.success_returns}))
    else:
        bad_ret = None
    effects = (Effect(arg, "release", check.release_with),) if check.releases else ()
    exit_kind = {"continue": "return", "abort": "abort", "throw": "throw", "return": "caller_return"}[check.on_failure]
    return Summary(spec.name, (
        Case(((arg, "null"),), (), (), ok_ret, "return"),
        Case(((arg, "nonnull"),), effects, (), bad_ret, exit_kind),
    ), f"policy {spec.origin}")
