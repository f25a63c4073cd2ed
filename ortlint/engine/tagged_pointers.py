"""A pointer whose low bits are set to a tag is handed to the tagging scheme (pointer tagging).

C code that knows its blocks are aligned keeps a flag in the low bits of a pointer:
`#define SET_LEAF(x) ((void*)((uintptr_t)(x) | 1))` stores a tagged leaf into a tree slot, and
the code that later reads the slot tests the bit (`(uintptr_t)p & 1`) to tell a leaf from an
inner node, clears it and frees the block with `free` or `delete` according to the tag. Casts are
transparent in the IR, so the tagged value is `Op("|", (p, 1))`, which evaluated to nothing: the
block stored into the slot did not escape and was reported lost.

Following the block through the tag would need the tag tests too (which release matches the
block depends on a bit the analysis cannot see), so setting tag bits on a held block hands it
over, as passing it to code the analysis does not see would: its owner is now the tagged
structure. Only the tagging form: bits below an allocation's alignment (`p | k`, 0 < k < ALIGN).
"""
from __future__ import annotations

from .state import Val

ALIGN = 16  # malloc's alignment on every platform ortlint models: bits below it are free for tags


def tagged_pointer(op: str, vals: list[Val | None]) -> Val | None:
    """The resource pointer that `op` sets tag bits on, else None."""
    if op != "|":
        return None
    a, b = vals
    if a is not None and a[0] == "r":
        pointer, other = a, b
    elif b is not None and b[0] == "r":
        pointer, other = b, a
    else:
        return None
    if other is None or other[0] != "k" or type(other[1]) is not int:
        return None
    return pointer if 0 < other[1] < ALIGN else None
