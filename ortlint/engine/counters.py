"""A counter stepped up from a value that is not negative is above 0.

`for (i = 0; i < n; ++i) { if (fill(&v[i]) != OK) { for (j = 0; j < i; ++j) free(v[j].data); ...
return; } }`: on every round after the first, `i` was stepped up from 0 or more, so the cleanup
loop runs at least once; with `++i` unknown, the path that skips it on a later round was taken
and reported the earlier rounds' blocks lost. The same holds for a count of stored elements
(`arr[n] = dup(s); if (arr[n]) ++n; ... if (n > 0) hand(arr, n); else free(arr);`): where an
element was stored, `n > 0`. The value is `POSITIVE_COUNT` (`n <= 0` cannot hold), never the
exact number (exact counts would make a state per round); the first round, where the counter is
still 0, keeps its own paths (the cleanup loop not run, the current round's block still held).
"""
from __future__ import annotations

from ..ir import Opaque
from .state import POSITIVE_COUNT, State, Val


def counted_up(state: State, e: Opaque) -> Val | None:
    """The value of `++x` / `x++` (the front end's opaque text over the one variable x) when x
    holds an integer known not to be negative, or a positive count; else None (unknown)."""
    name = e.parts[0].name
    if e.text != "++" + name and e.text != name + "++":
        return None
    old = state.b.get((name,))
    if old == POSITIVE_COUNT or (old is not None and old[0] == "k" and type(old[1]) is int and old[1] >= 0):
        return POSITIVE_COUNT
    return None
