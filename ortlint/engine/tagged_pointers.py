"""A pointer with tag bits in its low bits is still the same object (pointer tagging).

C code that knows its blocks are aligned keeps a flag in the low bits of a pointer:
`#define SET_LEAF(x) ((void*)((uintptr_t)(x) | 1))` stores a tagged leaf into a tree slot, and
`free((void*)((uintptr_t)(x) & ~1))` releases it after clearing the tag. Casts are transparent
in the IR, so the tagged value is `Op("|", (p, 1))`; without this it evaluated to nothing, the
block stored into the slot did not escape (reported lost) and the untagged pointer handed to
`free` was not the block (reported not released).

Only the forms that keep the address: setting bits below an allocation's alignment
(`p | k` with 0 < k < ALIGN) and clearing them (`p & ~k`, a mask whose high bits are all set).
`p & 1` (testing the tag) is a small integer, not the object; `p + n` (an address inside the
block) is another pointer and stays unknown.
"""
from __future__ import annotations

from .state import Val

ALIGN = 16  # malloc's alignment on every platform ortlint models: bits below it are free for tags


def tagged_pointer(op: str, vals: list[Val | None]) -> Val | None:
    """The object a tagging operation on a resource pointer still denotes, else None."""
    if op != "|" and op != "&":
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
    bits = other[1]
    if op == "|":
        return pointer if 0 < bits < ALIGN else None
    return pointer if -ALIGN <= bits < 0 else None  # `& ~k`: ~k is -(k + 1)


def complement(vals: list[Val | None]) -> Val | None:
    """`~k` of a known integer (the mask of `p & ~1`)."""
    v = vals[0]
    if v is not None and v[0] == "k" and type(v[1]) is int:
        return ("k", ~v[1])
    return None
