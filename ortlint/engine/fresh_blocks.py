"""A block this path acquired and still holds alone is not the value of any other pointer.

`r = replace(text, ..); if (r != text) free(r);`: a helper returns its argument when there is
nothing to change and a new block otherwise. On the path where the call returned a new block,
`r == text` cannot hold: while the function holds the block (never stored where other code
reaches it, never handed to a callee that could keep it) only the locations that the state binds
to it hold its address, and a live block's address is no other live object's. Without this the
`r == text` arm kept the new block and reported it lost.

What counts as "another object" is kept narrow, for soundness:
* a different identity that is live: unknown memory the function did not create and did not
  release (a parameter, what a read of memory gave), or another block it holds; never a
  released or consumed one (`q = realloc(p, n); if (q != p)`: the new block may sit where the
  old one was), nor an unknown value the function stored itself (`#w`: may be derived from the
  block, `strchr(r, c)`);
* an address inside such an object (`&rp[i]`, `p + n`, `&s->f`), or inside an aggregate local
  (an array or struct on the stack is no heap block);
* memory reached through a parameter or a global that the path never wrote (`names[i]`): it
  held what the caller put there, before the block existed.
"""
from __future__ import annotations

from ..ir import AddrOf, Deref, Expr, Field, Index, Op
from .replaced import WRITTEN
from .state import HELD, OPAQUE, State, Val

_MEMORY_READS = (Field, Index, Deref)


def fresh_block(state: State, v: Val | None, owned_kinds: frozenset[str] | set[str]) -> str | None:
    """The identity of the block `v` is when it is one this path acquired and holds alone (not
    an element of a collection, not possibly NULL, of a kind the function owns); else None."""
    if v is None or v[0] != "r":
        return None
    res = state.r.get(v[1])
    if res is None or res.st != HELD or res.coll or res.maybe_null or res.kind not in owned_kinds:
        return None
    return v[1]


def pointer_base(e: Expr) -> Expr:
    """The pointer an address is computed from: `&rp[i]` -> `rp`, `&s->f` -> `s`, `p + n` -> `p`;
    other expressions are their own base."""
    while True:
        cls = type(e)
        if cls is AddrOf and type(e.base) is Index:
            e = e.base.base
        elif cls is AddrOf and type(e.base) is Field and type(e.base.base) is Deref:
            e = e.base.base.base
        elif cls is Op and e.op in ("+", "-") and len(e.operands) == 2:
            e = e.operands[0]
        else:
            return e


def live_other(state: State, rid: str, fresh: str) -> bool:
    """`rid` names a live object other than the block `fresh`."""
    if rid == fresh or rid.endswith(WRITTEN):
        return False
    res = state.r.get(rid)
    if res is None:
        return False
    if res.st == OPAQUE:
        return True
    return res.st == HELD and not res.coll and not res.maybe_null
