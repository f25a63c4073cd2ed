"""Arguments that are addresses of storage: which arm of a callee they take.

The address of a field, a local or an element (`&ctx->hooks`, `&box`, `&a[i]`) is never NULL,
so a callee's "parameter is NULL" cases cannot happen for it: a setter that refuses NULL
(`if (v == NULL) return ERR; v->data = p;`) stores, a helper that refuses a NULL owner releases.

One exception keeps real leaks visible: allocation wrappers that dispatch on a hooks pointer
(`my_malloc(n, &ctx->hooks)`: the hook when non-NULL, else malloc). The hook arm allocates
through a function pointer the analysis cannot follow, so it acquires nothing (or some of its
cases return NULL without allocating), and the malloc arm is the one that models what the hook
does. When the NULL arm acquires or releases something that some non-NULL case of the callee
neither acquires nor releases or hands on, the NULL arm stands in for the hook arm and is the
one taken. The choice depends only on the callee's summary, never on the path, so every call
of one wrapper with an address takes the same arm, in this function and in its callees (the
block a helper got through `&ctx->hooks` is released by its caller's `my_free(p, &ctx->hooks)`).
A setter whose NULL arm only returns an error, or one that releases on every arm (hands on
otherwise), takes the true arm.
"""
from __future__ import annotations

from ..ir import AddrOf, Deref, Expr


def never_null(e: Expr) -> bool:
    """`&x`, `&p->f`, `&a[i]`: the address of an object. `&*p` is `p` itself and may be NULL."""
    return type(e) is AddrOf and type(e.base) is not Deref


def _acquires(case) -> bool:
    return bool(case.outs) or (case.ret is not None and case.ret[0] == "fresh")


def _released(case) -> set:
    return {e.path for e in case.effects if e.what == "release"}


def _kept(case) -> set:
    """Paths the case releases, hands on or may release: the block is taken care of."""
    return {e.path for e in case.effects if e.what in ("release", "escape", "consume")}


def null_arm_stands_in(null_cases: list, other_cases: list) -> bool:
    """Whether the callee's cases for a NULL address argument (`null_cases`) model a callback
    arm its non-NULL cases (`other_cases`) go through: they acquire where a non-NULL case does
    not, or release a path that some non-NULL case leaves alone."""
    if not null_cases or not other_cases:
        return False
    if any(_acquires(c) for c in null_cases) and not all(_acquires(c) for c in other_cases):
        return True
    released = set().union(*(_released(c) for c in null_cases))
    return any(released - _kept(c) for c in other_cases)


def address_arms(cases: list[tuple], addresses: set) -> dict:
    """For each address expression in `addresses`: True when the callee's NULL arm is taken for
    it, False for the non-NULL one. `cases` are (case, preconditions as (expression, is NULL))."""
    arms = {}
    for e in addresses:
        null_cases = [case for case, pre in cases if (e, True) in pre]
        other_cases = [case for case, pre in cases if (e, False) in pre]
        # (a callee whose every case assumes the address NULL, its summary coarsened: that arm,
        # rather than no path at all)
        only_null = not other_cases and all((e, True) in pre for _case, pre in cases)
        arms[e] = only_null or null_arm_stands_in(null_cases, other_cases)
    return arms


def select_cases(cases: list[tuple]) -> list[tuple]:
    """`cases` ((case, pre, ...) as `summary_calls._summary_plan` builds them) without the ones
    whose precondition on an address argument is the arm not taken; the preconditions on
    addresses that hold are dropped (nothing to test on the path)."""
    addresses = {e for c in cases for e, _ in c[1] if never_null(e)}
    if not addresses:
        return cases
    arms = address_arms([(c[0], c[1]) for c in cases], addresses)
    out = []
    for c in cases:
        if any(e in arms and arms[e] != is_null for e, is_null in c[1]):
            continue
        out.append((c[0], tuple((e, is_null) for e, is_null in c[1] if e not in arms)) + c[2:])
    return out
