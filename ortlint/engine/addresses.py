"""Arguments that are addresses of storage, hence never NULL.

`my_malloc(n, &ctx->callbacks)` and `set_data(&obj->ref, p)` pass the address of a field (or of
a local, or of an array element): whatever the callee does when that parameter is NULL cannot
happen at this call. A summary case with the precondition "parameter == NULL" is infeasible for
it, and "parameter != NULL" holds without narrowing anything.
"""
from __future__ import annotations

from ..ir import AddrOf, Deref, Expr


def never_null(e: Expr) -> bool:
    """`&x`, `&p->f`, `&a[i]`: the address of an object. `&*p` is `p` itself and may be NULL."""
    return type(e) is AddrOf and type(e.base) is not Deref
