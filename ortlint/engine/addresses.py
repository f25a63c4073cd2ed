"""Arguments that are addresses of storage: the same arm of a callee at every call.

`p = my_malloc(n, &ctx->hooks); ... my_free(p, &ctx->hooks);` where both wrappers test the
hooks pointer against NULL (hooks, else malloc/free). The address of a field or a local is never
NULL; but the hooks arm allocates through a function pointer the analysis cannot follow, so the
malloc arm is the one that models "allocates" and "releases". What must not happen is the two
calls taking different arms (the malloc arm for the allocation, the hooks arm, which releases
nothing, for the release): a false leak. So a path that took the NULL arm remembers it like a
condition the state cannot evaluate, and every later call given the same address takes the NULL
arm too. The non-NULL arm (the truth) is remembered by nothing: it adds no condition that would
keep otherwise equal states apart. A real leak (a path that never calls `my_free`) is still found.
"""
from __future__ import annotations

from functools import lru_cache

from typing import Any

from ..ir import AddrOf, Const, Deref, Expr, Op
from .state import State

_NULL = Const(0, "NULL")


def never_null(e: Expr) -> bool:
    """`&x`, `&p->f`, `&a[i]`: the address of an object. `&*p` is `p` itself and may be NULL."""
    return type(e) is AddrOf and type(e.base) is not Deref


@lru_cache(maxsize=4096)
def null_test(e: Expr) -> Op:
    """`e == NULL`, the remembered condition for an address argument (one object per address)."""
    return Op("==", (e, _NULL))


def address_arm(analyzer: Any, state: State, e: Expr, is_null: bool) -> bool:
    """Whether the case of a callee that assumes `e` (an address) NULL / non-NULL is feasible on
    this path, narrowing `state` to it: the NULL arm is remembered, the other must not contradict
    an earlier NULL arm. (`analyzer`: the FunctionAnalyzer, for its remembered conditions.)"""
    test = null_test(e)
    if is_null:
        return analyzer._assume_memo(state, test, True) is not None
    return (test, True) not in state.conds
