"""Pointers into the middle of an object: `slot = (char**)(rec + f->offset); *slot = list;`.

Pointer arithmetic on a pointer with an identity (`p + k`) gives a pointer into the same object,
at a place the analysis cannot name. Without a value, `*slot` was memory of its own, and a
callee that fills its caller's record through computed offsets (the generic reader of a file
format: `*(char**)(elem + prop->offset) = list;`) had a summary that said nothing about what it
wrote: the caller kept the field it had freed on the previous iteration bound to the released
block, and the refilled field's next read was a "use after release". Such a pointer gets an
identity of its own, `R#in` ("somewhere in R's object"); a store through it is kept under that
identity (no field of R is claimed), and the summary says "writes parameter i's memory at
places it cannot name" (`Summary.unnamed_writes`). A caller of such a function cannot tell which
fields were rewritten, nor on which of its paths (that depends on data such as the offsets), so
at every case it forgets what the object's fields held that it had released, as it does for
an unknown function given `&rec`. Two such pointers are never known equal (`p + i`, `p + j`).
"""
from __future__ import annotations

from typing import Callable

from ..ir import Expr, Op
from .exprs import element_of, param_path
from .state import OPAQUE, Res, State, Val

INTERIOR = "#in"  # suffix of the identity of a pointer into the object of the identity it extends


def interior_of(rid: str) -> str:
    """The identity of a pointer somewhere into `rid`'s object (one per object: `p + 1 + k` is
    in the same object as `p + 1`)."""
    return rid if rid.endswith(INTERIOR) else rid + INTERIOR


def container(rid: str) -> str | None:
    """The object an interior pointer's identity points into, or None for any other identity."""
    return rid[:-len(INTERIOR)] if rid.endswith(INTERIOR) else None


def interior_value(state: State, value: Expr, eval_base: Callable[[State, Expr], Val | None]) -> Val | None:
    """The value of `base + k` (an element's address, exprs.element_of) when `base` is a pointer
    with an identity: a pointer into that object. None for anything else (integers, a sum whose
    first operand is no location). `eval_base` is the analyzer's `_eval`."""
    if type(value) is not Op:
        return None
    element = element_of(value)
    if element is None:
        return None
    base = eval_base(state, element.base)
    if base is None or base[0] != "r":
        return None
    return ("r", _interior(state, base[1]))


def _interior(state: State, rid: str) -> str:
    """The interior identity of `rid`, with a resource state of its own (an opaque pointer, like
    any pointer the function did not create): memory stored through it is kept as long as it."""
    inner = interior_of(rid)
    if inner not in state.r:
        state.r[inner] = Res(None, OPAQUE)
    return inner


def unnamed_write_param(root: str, nparams: int) -> int | None:
    """The parameter whose object a store at a location with root `root` writes through an
    interior pointer (`"@p2#in"` -> 2), or None (another object, or memory the parameter's
    object points to: `(*out) + k` is not claimed)."""
    if root[:2] != "@p" or not root.endswith(INTERIOR):
        return None
    path = param_path(root[1:-len(INTERIOR)])
    return path[0] if path is not None and len(path) == 1 and path[0] < nparams else None
