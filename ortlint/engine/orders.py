"""Order tests between two values the function did not make, remembered by value.

`if (s->leng >= l) break; ... head = s; ... if (head->leng < l) free(head);`: the second test
reads the same value as the first (the node `head` and `s` both hold, its entry field), but it
is another expression, so a condition remembered by its text (`_assume_memo`) cannot decide
it, and the path that frees the node the first test kept looks feasible. As engine/relations.py
does for `==`, the answer is a fact about the two entry identities (`p0/*/.leng`, `p1`), which
never change: `a < b` is kept as "lt(a, b)" true, `a >= b` as lt(a, b) false, `a > b` as
lt(b, a) true, `a <= b` as lt(b, a) false; lt(a, b) and lt(b, a) cannot both hold.
"""
from __future__ import annotations

from ..ir import Op, Opaque
from .state import State

_KEYS: dict[tuple[str, str], Op] = {}  # one condition object per ordered pair

# op -> (swap the operands, truth of lt(first, second) when the test holds)
_AS_LT = {"<": (False, True), ">=": (False, False), ">": (True, True), "<=": (True, False)}


def lt_key(ra: str, rb: str) -> Op:
    """The remembered condition standing for `ra < rb`: a `<` of two opaque texts no store
    invalidates and no test spells."""
    pair = (ra, rb)
    key = _KEYS.get(pair)
    if key is None:
        if len(_KEYS) > 4096:  # (a bounded memo: keys compare by value anyway)
            _KEYS.clear()
        key = _KEYS[pair] = Op("<", (Opaque("<" + ra), Opaque("<" + rb)))
    return key


def assume_ordered(state: State, op: str, ra: str, rb: str, truth: bool, max_conds: int) -> State | None:
    """Narrow `state` to `ra OP rb` having this truth value; None when it contradicts what the
    state remembers of the pair."""
    swap, lt = _AS_LT[op]
    a, b = (rb, ra) if swap else (ra, rb)
    holds = lt if truth else not lt  # the truth of lt(a, b)
    if a == b:
        return None if holds else state
    key, mirror = lt_key(a, b), lt_key(b, a)
    conds = state.conds
    if conds:
        if (key, not holds) in conds:
            return None
        if holds and (mirror, True) in conds:
            return None
        if (key, holds) in conds:
            return state
    if len(conds) < max_conds:
        state.conds = conds | {(key, holds)}
    return state
