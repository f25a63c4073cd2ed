"""Locations reached through a parameter that a callee overwrote with another value.

`prev = (*list)->next; free(*list); *list = prev;` releases the object `*list` held and stores
the next node there; `free(d->buf); d->buf = grow(..);` stores a block the summary cannot name.
A summary that said only "releases *list" would leave the caller's `*list` bound to the released
object, so the next read of it (the next removal, a loop over the list) looks like a use after
release or a second release. The "replace" effect tells the caller that the location now holds
a value it does not know (it reads it afresh), the same way "clear" tells it that it holds NULL.
"""
from __future__ import annotations

from typing import Callable

from .exprs import param_path
from .state import UNKNOWN, State, Val
from .summaries import Effect


def replaced_param_locations(state: State, nparams: int, claimed: set[tuple]) -> list[Effect]:
    """"replace" effects for this exit state: every location reached through a parameter whose
    binding is not the value it held on entry. A location still bound to its entry value is
    bound to the identity the first read gave it (`p0/*` for `("@p0", "*")`); NULL is a "clear"
    effect and a resource the callee acquired into it an acquisition (both in `claimed`)."""
    out = []
    for key, val in state.b.items():
        if len(key) < 2 or key[0][:2] != "@p":
            continue
        path = param_path(key[0][1:])
        if path is None or path[0] >= nparams:
            continue
        full = path + tuple(key[1:])
        if full in claimed or entry_value(key, val):
            continue
        out.append(Effect(full, "nonzero" if _not_zero(val) else "replace"))
    out.sort(key=repr)
    return out


def _not_zero(val: Val) -> bool:
    """An integer known to differ from 0 (a count the function incremented: engine/counts.py)."""
    return (val[0] == "k" and val[1] != 0) or (val[0] == "x" and 0 in val[1])


def entry_value(key: tuple, val: Val) -> bool:
    """The binding is the one made by reading the location (not by writing it)."""
    if val[0] != "r":
        return False
    return val[1] == key[0][1:] + "/" + "/".join(key[1:])


WRITTEN = "#w"  # suffix of the identity of an unknown value a function stored into a parameter's memory


def bind_written_unknown(state: State, key: tuple, retire: Callable[[State, str], None]) -> bool:
    """`*list = prev;` with `prev` unknown (read before it was ever named; the caller passes only
    copies of a variable or of memory, not arithmetic on integers): a store of an unknown
    value would just drop the binding, and the exit state could not tell the location from one
    never touched. Inside a parameter's memory it gets an identity of its own instead (never
    the one a read makes, `entry_value`), so the summary says it was replaced. One name per location: `retire` (the analyzer's
    `_retire`) renames what an earlier write bound there. True when bound."""
    if key[0][:2] != "@p" or param_path(key[0][1:]) is None:
        return False
    rid = key[0][1:] + "/" + "/".join(key[1:]) + WRITTEN
    if rid in state.r:  # written before (a loop): the earlier value becomes `rid#prev`, so names converge
        retire(state, rid)
    state.r[rid] = UNKNOWN
    state.b[key] = ("r", rid)
    return True



def own_location(rid: str) -> tuple | None:
    """The location whose first read named `rid` (`p0/*/*/.data` -> `("@p0/*", "*", ".data")`),
    or None for a name no read of memory made (a parameter itself, a call site's resource)."""
    cut = max(rid.rfind("/*"), rid.rfind("/[]"))
    if cut <= 0:
        return None
    op, _, fields = rid[cut + 1:].partition("/")
    return ("@" + rid[:cut], op) + (tuple(fields.split("/")) if fields else ())


def released_and_replaced(state: State, rid: str) -> bool:
    """`rid` was released and its location now holds another value (a list head freed and
    advanced): "released on this path" is then not what "known NULL on that path" is to a
    caller (engine/explore.py keeps the two apart), since the location no longer holds it."""
    key = own_location(rid)
    if key is None:
        return False
    now = state.b.get(key)
    return now is not None and now != ("r", rid)
