"""Equality between two values the function did not make, as a summary precondition.

`list_remove(L **list, void *data)` frees the head and stores the next node into `*list` when
`(*list)->data == data`, and otherwise walks the list. A caller that removes the head's own
data (`while (t->lines) { free(t->lines->data); list_remove(&t->lines, t->lines->data); }`)
can only take the first path; without the equality, the summary's second case (nothing
released, `*list` unchanged) keeps the caller's `t->lines` on the released node, and the next
iteration reads as a second release. The condition compares the entry values of two locations
reached through parameters (identities named by their access path, `p0/*/*/.data` and `p1`):
the function remembers it as a fact about those two identities (it never changes, as an entry
value never does), its summary states it as a precondition on two parameter paths, and a
caller whose arguments make the two paths the same value (or values that are themselves facts
about its own parameters) drops the cases that contradict it.
"""
from __future__ import annotations

from ..ir import AddrOf, Deref, Expr, Field, Index, Opaque, Op, Var
from .exprs import param_path
from .global_relations import global_path
from .state import State

ParamPath = tuple
Relation = tuple  # (path, path, equal: bool), the paths in sorted order

_KEYS: dict[tuple[str, str], Op] = {}  # one condition object per pair (remembered conditions hash it)


def relation_key(ra: str, rb: str) -> Op:
    """The remembered condition that stands for `ra == rb` (two entry identities): an `==` of
    two opaque texts, which no variable store invalidates and no later test spells."""
    pair = (ra, rb) if ra <= rb else (rb, ra)
    key = _KEYS.get(pair)
    if key is None:
        if len(_KEYS) > 4096:  # (a bounded memo: the keys compare by value anyway)
            _KEYS.clear()
        key = _KEYS[pair] = Op("==", (Opaque("=" + pair[0]), Opaque("=" + pair[1])))
    return key


def assume_related(state: State, ra: str, rb: str, eq: bool, max_conds: int) -> State | None:
    """Narrow `state` to `ra == rb` (eq) or `ra != rb`: None when it knows the opposite. Both
    are entry identities (`is_entry_identity`); the fact is kept while the state has room for
    remembered conditions (a full state keeps the path without it, as an unknown test does)."""
    if ra == rb:
        return state if eq else None
    key = relation_key(ra, rb)
    conds = state.conds
    if conds:
        if (key, not eq) in conds:
            return None
        if (key, eq) in conds:
            return state
    if len(conds) < max_conds:
        state.conds = conds | {(key, eq)}
    return state


def is_entry_identity(rid: str) -> bool:
    """A parameter's value, or the value a location reached through one held on entry. Not an
    array element's (`p0/[]`): one identity for every element, so two of them may differ."""
    return "[]" not in rid and param_path(rid) is not None


def case_relations(state: State, nparams: int) -> tuple[Relation, ...]:
    """The relations this exit state remembers between parameter paths, for its summary case."""
    out = []
    for cond, eq in state.conds:
        if type(cond) is not Op or cond.op != "==" or len(cond.operands) != 2:
            continue
        a, b = cond.operands
        if type(a) is not Opaque or type(b) is not Opaque or a.text[:1] != "=" or b.text[:1] != "=":
            continue
        pa, pb = param_path(a.text[1:]), param_path(b.text[1:])
        if pa is None and pb is not None:  # a parameter's value against a global's (engine/global_relations.py)
            pa = global_path(a.text[1:])
        elif pb is None and pa is not None:
            pb = global_path(b.text[1:])
        if pa is None or pb is None or "[]" in pa or "[]" in pb:
            continue
        if any(type(p[0]) is int and p[0] >= nparams for p in (pa, pb)):
            continue
        out.append((pa, pb, eq))
    out.sort(key=repr)
    return tuple(out)


def root_var(e: Expr) -> Var | None:
    """The variable an access path starts from (`(*list)->data` -> `list`), or None."""
    while True:
        cls = type(e)
        if cls is Var:
            return e
        if cls is Field or cls is Deref or cls is AddrOf:
            e = e.base
        elif cls is Index:
            e = e.base
        else:
            return None
