"""Two paths that hold the same resources in swapped variables hold them alike.

`tmp = prev; prev = cur; cur = tmp;` once per loop round (double buffering, the two rows of a
dynamic program): after an odd number of rounds `cur` holds what `prev` held after an even
number. Both blocks are held, and freed after the loop, on every path. When the loop's states
are merged (the coarse join keeps only the bindings both states agree on), `cur` bound to one
block on one path and to the other on the other path was dropped on both: the two blocks were
then held by nothing and reported lost at the next statement.

The variables are names for the blocks, not the blocks themselves: a state that holds block B
in `cur` and block A in `prev` says the same of the program as one that holds A in `cur` and B in
`prev`, when A and B are held resources of one kind (a leak of either is then reported at one
of their acquisitions, as a joined location's resource is). So the second state is renamed
(B <-> A) before the merge. Only a permutation of resources both states hold in variables:
anything else (a resource held on one side only, a released one) keeps its meaning.
"""
from __future__ import annotations

from typing import AbstractSet

from .renaming import renamed
from .state import HELD, State


def align_swapped(a: State, b: State, tracked: AbstractSet[str]) -> State:
    """`b` with resources renamed so that each variable holds `a`'s, when the variables of
    the two states hold the same held resources in another arrangement; else `b`."""
    rename: dict[str, str] = {}
    for k, va in a.b.items():
        if len(k) != 1 or va[0] != "r":
            continue  # variables only: memory locations follow their roots when renamed
        vb = b.b.get(k)
        if vb is None or vb[0] != "r" or vb[1] == va[1]:
            continue
        if not _swappable(a, b, va[1], vb[1], tracked):
            return b
        if rename.setdefault(vb[1], va[1]) != va[1]:
            return b  # one resource of `b` would take two names
    if not rename or set(rename) != set(rename.values()):
        return b  # not a permutation of the same resources
    return renamed(b, rename)


def _swappable(a: State, b: State, rid_a: str, rid_b: str, tracked: AbstractSet[str]) -> bool:
    """Both resources held, alike, by both states."""
    pairs = ((a.r.get(rid_a), b.r.get(rid_a)), (a.r.get(rid_b), b.r.get(rid_b)))
    kinds = set()
    for x, y in pairs:
        if x is None or y is None or x.st != HELD or y.st != HELD or x.coll or y.coll:
            return False
        kinds.update((x.kind, y.kind))
    return len(kinds) == 1 and next(iter(kinds)) in tracked
