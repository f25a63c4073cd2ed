"""Parameters a function only compares: passing a released pointer there is not a use.

`free(d); list_remove(&list, d);` where `list_remove` looks for the node whose `data == d`:
the freed pointer is a key, its value is compared and the memory it pointed to is never read.
A parameter qualifies when every occurrence of it in the function's body is an operand of
`==` / `!=` or a branch's whole condition (`if (key)`), and it is never assigned: no
dereference, no call argument, no store, no return.
"""
from __future__ import annotations

from .. import ir
from ..ir import AddrOf, Assign, Branch, Call, Deref, Expr, Field, Index, Op, Opaque, Return, Use, Var

_COMPARISONS = frozenset({"==", "!="})


def compared_only_params(fn: ir.Function) -> tuple[int, ...]:
    """Indexes of `fn`'s parameters used only as values that are compared."""
    names = set(fn.params)
    if not names:
        return ()
    other: set[str] = set()  # parameters seen anywhere else
    for block in fn.blocks:
        for ev in block.events:
            _event_uses(ev, other)
        term = block.term
        if type(term) is Branch:
            if type(term.cond) is not Var:
                _uses(term.cond, other, compared=False)
        elif type(term) is Return and term.value is not None:
            _uses(term.value, other, compared=False)
    return tuple(i for i, p in enumerate(fn.params) if p not in other)


def _event_uses(ev: object, other: set[str]) -> None:
    cls = type(ev)
    if cls is Call:
        if ev.receiver is not None:
            _uses(ev.receiver, other, compared=False)
        for arg in ev.args:
            _uses(arg, other, compared=False)
        if ev.dest is not None:
            _uses(ev.dest, other, compared=False)
    elif cls is Assign:
        _uses(ev.dest, other, compared=False)
        _uses(ev.value, other, compared=False)
    elif cls is Use:
        _uses(ev.pointer, other, compared=False)
    else:  # Kill, Havoc: a parameter named there is not left alone
        other.update(getattr(ev, "names", ()))


def _uses(e: Expr, other: set[str], compared: bool) -> None:
    """Add to `other` the names `e` uses in any way but as a compared operand."""
    cls = type(e)
    if cls is Var:
        if not compared:
            other.add(e.name)
    elif cls is Op:
        inner = e.op in _COMPARISONS
        for o in e.operands:
            _uses(o, other, compared=inner)
    elif cls is Field or cls is Deref or cls is AddrOf:
        _uses(e.base, other, compared=False)
    elif cls is Index:
        _uses(e.base, other, compared=False)
        _uses(e.index, other, compared=False)
    elif cls is Opaque:
        for o in e.parts:
            _uses(o, other, compared=False)
