"""Members a C++ method assigns: a call of it on the same object replaces what they held.

`auto old = _items; grow(n + 1); ... delete[] old; _items[n] = c;` where `grow` does
`_items = new Child*[n];`: the caller's `_items` holds the new array after the call, not the one
it released through `old`. Members are plain names in the IR (the implicit `this`), and a summary
speaks of parameters only, so without this list the caller would keep `_items` bound to the old
array and read the next store as a use after release. A name the method assigns that is neither
one of its parameters nor one of its locals is a member (or a global, which the same reasoning
covers): after the call the caller knows nothing of its value (a "replace", engine/replaced.py).
"""
from __future__ import annotations

from .. import ir
from ..ir import Var


def member_writes(fn: ir.Function) -> tuple[str, ...]:
    """The members `fn`, a C++ method, assigns directly (sorted); () for anything else."""
    if fn.language != "cpp" or "::" not in fn.name:
        return ()
    own = set(fn.params) | set(fn.locals)
    names: set[str] = set()
    for block in fn.blocks:
        for ev in block.events:
            dest = getattr(ev, "dest", None)
            if type(dest) is Var and dest.name not in own and dest.name.isidentifier() and dest.name != "this":
                names.add(dest.name)
    return tuple(sorted(names))


def same_object_call(caller: str, callee: str, receiver: ir.Expr | None) -> bool:
    """Is the call a method of the caller's own class on its own object (`grow(..)`, `this->grow(..)`)?"""
    if receiver is not None and not (type(receiver) is Var and receiver.name == "this"):
        return False
    cls, sep, _ = caller.rpartition("::")
    return bool(sep) and callee.rpartition("::")[0] == cls
