"""Counts: what an increment says about a value, so that a later test of it takes the right arm.

In memory a function was handed: `d->n++` after testing `d->n == 0` leaves `d->n` other than 0.
A growth helper (`if (d->n == 0) d->v = malloc(..); else d->v = realloc(d->v, ..);
d->v[d->n] = x; d->n++;`) has one summary case per outcome of its test of the count. Without
the increment the caller keeps the count the test assumed: after a call taken with "count is
0" (the first allocation) the next call may take "count is 0" again, and its `malloc` looks
like it overwrote the first block. An increment by a positive constant of a value known to be 0
gives that constant; of any other value it gives a value other than 0: a value a program
increments in memory it was handed is a count (`(*count)++`, `d->n++`), never negative, so at
least 1 afterwards (the one integer whose successor is 0, -1, is no count). The summary then
says "stores a value other than 0" (engine/replaced.py) and the caller's next call takes the
realloc case.

In a local: a counter stepped up from a value that is not negative is above 0 (`counted_up`).
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

from ..ir import Const, Expr, Op, Opaque, Var
from .state import POSITIVE_COUNT, State, Val

NOT_ZERO: Val = ("x", frozenset({0}))


def increment_step(dest: Expr, value: Expr) -> int | None:
    """The positive constant `value` adds to `dest` (`dest++`, `++dest`, `dest += 2`,
    `dest = dest + 1`), or None when `value` is anything else."""
    if type(value) is Op and value.op == "+" and len(value.operands) == 2:
        a, b = value.operands
        other = b if a == dest else a if b == dest else None
        return _positive(other)
    if type(value) is not Opaque or not value.parts or value.parts[0] != dest:
        return None
    text = value.text.strip()
    if len(value.parts) == 1 and (text.endswith("++") or text.startswith("++")):
        return 1
    if len(value.parts) == 2 and "+=" in text:
        return _positive(value.parts[1])
    return None


def _positive(e: Expr | None) -> int | None:
    if type(e) is Const and e.value is not None and e.value > 0:
        return e.value
    return None


def count_after(old: Val | None, truth: bool | None, step: int) -> Val:
    """The value of a count that held `old` (of truth `truth`: known 0, known not 0, unknown)
    after adding `step` > 0."""
    if old is not None and old[0] == "k":
        return ("k", old[1] + step)
    if old == POSITIVE_COUNT:
        return POSITIVE_COUNT
    if truth is False:
        return ("k", step)
    return NOT_ZERO


def self_step(name: str, e: Expr) -> bool:
    """Whether `e` is `++name` / `name++` (the front end's opaque text over the one variable):
    the value `counted_up` makes from the variable's own."""
    return (type(e) is Opaque and len(e.parts) == 1 and type(e.parts[0]) is Var and e.parts[0].name == name
            and (e.text == "++" + name or e.text == name + "++"))


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
