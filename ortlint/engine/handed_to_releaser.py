"""A call of a release function whose result is dropped hands the object over on every path.

A release function of the program can stop before releasing for reasons of its own: the
shutdown call inside it fails (`if (uninit(&c->ctx) != OK) return r;` before `delete c`), or the
object is of a kind it does not handle (`if (o->kind() >= KIND_END) return ERR;`). Its summary
then has a case that releases the argument and a case that does not, with the same
preconditions on the arguments (or fewer: `for (i = 0; i < count; i++) free(a[i].name);` has a
case where the loop does not run, with no precondition at all): nothing the caller passes tells
them apart, only the value the function returns. A caller that drops that value cannot tell them apart either and has nothing
else to do with the object, so on the case that does not release, the object is the callee's
(escaped), as on the case that does. Reporting the caller would blame it for the callee's path
(Infer's "latent" issue: it depends on a value the caller never sees). A caller that keeps the
result (`if (close(d) != 0) ...`) sees both cases as before, and a case its arguments decide
(`free_if(p, flag)`, a NULL arm) is left alone.
"""
from __future__ import annotations

from .summaries import Case, Effect, ParamPath

_HANDING = ("release", "escape")  # what a case may do with the object the caller handed it
_TOUCHING = ("release", "escape", "consume", "clear", "replace", "nonzero")


def hand_over_dropped(cases: tuple[Case, ...]) -> tuple[Case, ...]:
    """`cases` for a call whose result is dropped: a case that leaves a parameter path alone,
    where another case that holds whenever it holds (the same preconditions, or more: a loop
    over `count` elements that may run zero times has none) releases it or takes it (a
    `Dispose<T>(o)` the engine does not follow), escapes it instead."""
    handing = [(_preconditions(case), {e.path for e in case.effects if e.what in _HANDING})
               for case in cases if case.exit == "return"]
    handing = [(pre, paths) for pre, paths in handing if paths]
    if not handing:
        return cases
    out = []
    for case in cases:
        paths: set[ParamPath] = set()
        if case.exit == "return":
            mine = _preconditions(case, counts=False)
            for pre, released in handing:
                if mine[0] <= pre[0] and mine[1] <= pre[1]:
                    paths |= released
        touched = {e.path for e in case.effects if e.what in _TOUCHING}
        extra = tuple(Effect(path, "escape") for path in sorted(paths, key=repr)
                      if path not in touched and not _under(path, touched))
        out.append(Case(case.pre, case.effects + extra, case.outs, case.ret, case.exit, case.rel) if extra else case)
    return tuple(out)


def _preconditions(case: Case, counts: bool = True) -> tuple[frozenset, frozenset]:
    """`counts=False`: without a count's "is 0" (a loop not entered, `summarize`'s "zero"): a
    caller that got the count from the function that made the elements (`n = fill(a);
    free_all(a, n);`) cannot tell that case apart either, the count being 0 exactly when
    nothing was made."""
    pre = case.pre if counts else tuple(p for p in case.pre if p[1] != "zero")
    return frozenset(pre), frozenset(case.rel)


def _under(path: ParamPath, touched: set[ParamPath]) -> bool:
    """Whether `path` lies inside memory the case already did something with."""
    return any(path[:len(t)] == t for t in touched)
