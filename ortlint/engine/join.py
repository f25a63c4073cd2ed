"""Joining abstract states: when two states at one program point are kept apart, and how they merge.

See the comments below and docs/architecture.md ("The engine"). Everything here is a pure
function of states; the exploration (explore.py) decides when to call it.
"""
from __future__ import annotations

from functools import lru_cache
from typing import AbstractSet, NamedTuple, Sequence

from .exprs import param_path
from .renaming import renamed as _renamed
from .swapped_holders import align_swapped
from .replaced import WRITTEN, entry_value
from .state import UNKNOWN, BORROWED, CONSUMED, ESCAPED, HELD, OPAQUE, POSITIVE_COUNT, RELEASED, Res, State, Val, _tuple_new, referenced_ids, replaced

Kinds = AbstractSet  # kind ids: those that must be released (`tracked`), JNI local references (`local_ref`)


# ---------------------------------------------------------------------- joining states (engine v2)
#
# Property simulation (Das, Lerner & Seigle, ESP, PLDI 2002): two states at the same program
# point are kept apart only when their *property state* differs, and joined otherwise. Here the
# property state is the life stage of every resource that must be released (handles, buffers,
# statuses, tokens: held / released / escaped; a consumed one, silently gone, decides no finding
# whatever comes next and is not part of it), the parameters already released,
# and which locations hold those resources (an escaped one only while a caller can see it,
# named by where it is held: `_kept_escape`, `escape_names`). Everything else is joined:
# * value facts (integers, NULL facts, excluded values, remembered conditions) are kept where
#   both states agree, forgotten where they differ;
# * resources whose life decides no leak (unknown memory, borrowed pointers, JNI local
#   references) get the upper bound of their stages: escaped beats untouched, a local reference
#   alive on one path is taken as alive (ORT007 is reported per creating call anyway), any other
#   disagreement makes the resource "consumed" (silent: no finding claimed for it).
# Facts that decide a resource's fate stay exact because they split the property state where
# they are first tested: a call's success and failure hold different resources, and
# `if (p) acquire(&x)` keeps p's NULL fact on both sides of the split for `if (p) release(x)`.


def property_key(state: State, tracked: Kinds) -> tuple:
    """The part of `state` that is never joined (see above). `tracked`: the kinds of resources
    that must be released."""
    # `_in_key`, inlined: this runs for every state that reaches a block past the exact ones
    key_res = {rid: res for rid, res in state.r.items()
               if (res.st == RELEASED if res.kind is None else (res.kind in tracked and not (res.coll and res.st == HELD)
                                                                and res.st != CONSUMED
                                                                and (res.st != ESCAPED or _kept_escape(res.esc))))}
    key = _key_of(state, key_res)
    if POSITIVE_COUNT in state.b.values():  # (a test in C; rare: only counters stepped up)
        counts = _counts_of_elements(state, tracked)
        if counts:
            return key + (counts,)
    return key


_NO_PROPERTIES = (frozenset(), frozenset())


def _counts_of_elements(state: State, tracked: Kinds) -> frozenset:
    """The variables known to hold a positive count, when `state` holds array elements a loop
    acquired (`arr[n] = dup(s); if (arr[n]) ++n;`). Elements held are no part of the key (a
    loop that ran zero times joins one that filled them), but then the count goes with them: the
    join of "n > 0, elements held" with "n == 0, none held" forgets n and keeps the elements, and
    `if (n > 0) hand(arr, n); else free(arr);` takes the else arm with them held (a leak that
    cannot happen). So a positive count is part of the key while elements are held: the states
    stay apart exactly where the count says whether anything was stored. Only `POSITIVE_COUNT`
    counts (engine/counts.py), and dead locals are dropped before the key is taken, so a loop's
    own index, dead after it, splits nothing past it."""
    if not any(res.coll and res.st == HELD and res.kind in tracked for res in state.r.values()):
        return frozenset()
    return frozenset([k for k, v in state.b.items() if v == POSITIVE_COUNT])


def _key_of(state: State, key_res: dict) -> tuple:
    """The key of the resources `key_res` of `state`: them, and the locations that hold them
    (escaped ones named by their location, see `escape_names`)."""
    if not key_res:
        return _NO_PROPERTIES
    # (only a resource pointer's id can be a key of `key_res`: no test of the value's tag)
    held_at = [(k, v[1]) for k, v in state.b.items() if v[1] in key_res]
    names = escape_names(key_res, held_at)
    if names:
        return (frozenset([(names.get(rid, rid), res) for rid, res in key_res.items()]),
                frozenset([(k, names.get(rid, rid)) for k, rid in held_at]))
    return (frozenset(key_res.items()), frozenset(held_at))


def _kept_escape(esc: tuple | None) -> bool:
    """Whether a resource that escaped to `esc` still belongs to the property state: only if it
    is the function's result, returned or left in memory a parameter reaches (an out-parameter:
    the summary's cases name those, and a caller leaks or releases them). Handed to an unknown
    call, stored in a global or in memory the function made, it is nobody's business here any
    more; kept in the key, each optional step that hands one over (`if (flag) register(buf)`)
    would double the property states for nothing."""
    return esc is not None and (esc == _RETURN or (esc[0][:2] == "@p" and _is_param_memory(esc[0])))


_RETURN = ("<return>",)


@lru_cache(maxsize=1 << 12)
def _is_param_memory(root: str) -> bool:
    return param_path(root[1:]) is not None


def escape_names(key_res: dict, held_at: list) -> dict:
    """Escaped resources by where they are held, not by which call made them: `v->data` after
    whichever of several `vector_push(v)` calls reallocated it last holds one escaped block
    whatever call made it; kept apart by call, the property states multiply by the number of
    such calls, for nothing (the function is done with them; its summary names the location).
    Only a resource held at exactly one location that is not itself memory of a key resource."""
    escaped = [rid for rid, res in key_res.items() if res.st == ESCAPED and not res.coll]
    if not escaped:
        return {}
    where: dict = {}
    for k, rid in held_at:
        if rid in where:
            where[rid] = None
        else:
            where[rid] = k
    out = {}
    for rid in escaped:
        k = where.get(rid)
        if k is not None and not (k[0][:1] == "@" and k[0][1:] in key_res):
            out[rid] = ("@", k)
    return out


def align_escaped(a: State, b: State, tracked: Kinds) -> State:
    """`b` with its escaped resources renamed to `a`'s held at the same location (see
    `escape_names`), so `join` keeps the location's value."""
    if a.r.keys() <= b.r.keys() or b.r.keys() <= a.r.keys():
        return b  # a renaming needs a resource each state has and the other has not (tests in C)
    rename: dict[str, str] = {}
    for k, va in a.b.items():
        if va[0] != "r":
            continue
        vb = b.b.get(k)
        if vb is None or vb[0] != "r" or vb[1] == va[1] or va[1] in b.r or vb[1] in a.r:
            continue  # (a name both states use for something else is left alone)
        ra, rb = a.r.get(va[1]), b.r.get(vb[1])
        if ra is None or rb is None or ra.st != ESCAPED or rb.st != ESCAPED or ra.coll or rb.coll:
            continue
        if ra.kind not in tracked or ra.kind != rb.kind:
            continue
        rename[vb[1]] = va[1]
    if not rename:
        return b
    return _renamed(b, rename)


def _in_key(res: Res, tracked: Kinds) -> bool:
    if res.kind is None:
        return res.st == RELEASED
    if res.coll and res.st == HELD:
        # array elements a loop acquired: "the loop ran zero times" (nothing held) joins with
        # "held": the paths that ran it report whatever leaks, at the same exits
        return False
    if res.st == CONSUMED:
        return False  # silently gone: no finding is ever made about it, whatever path comes next
    return res.kind in tracked and (res.st != ESCAPED or _kept_escape(res.esc))


def join(a: State, b: State, tracked: Kinds, local_ref: Kinds) -> State:
    """The upper bound of two states with the same property key (see above). The path of `a`
    explains the result, unless `b` made everything the result keeps from one side only (a JNI
    local reference alive on one path: then `b`'s path shows where it came from)."""
    b = align_escaped(a, b, tracked)
    if not a.b.items() <= b.b.items():
        b = align_swapped(a, b, tracked)
    bb, br = b.b, b.r
    # Fast paths (half the joins): every binding / resource of `a` is the same in `b`, so the
    # loops below would keep exactly `a`'s entries, in `a`'s order (the subset tests run in C).
    nullable: dict = {}
    out_b: dict = a.b.copy() if a.b.items() <= bb.items() else _join_bindings(a.b, bb, nullable)
    referenced = referenced_ids(out_b)
    trace = a.trace
    if a.r == br:
        out_r: dict = a.r.copy()
    else:
        out_r = a.r.copy() if a.r.items() <= br.items() else _join_resources(a.r, br, tracked, local_ref)
        added = False
        if not br.keys() <= a.r.keys():  # (else `b` has no resource `a` lacks: a test in C, not a loop)
            for rid, rb in br.items():
                if rid not in a.r and rb.st == HELD and (rb.coll or rb.kind in local_ref):
                    out_r[rid] = rb
                    added = True
                elif rid not in a.r and rb.st == CONSUMED and _untouched_entry(rid):
                    out_r[rid] = rb  # (as in `_join_resources`)
        if added and not any(ra.st == HELD and (ra.coll or ra.kind in local_ref) and rid not in br
                             for rid, ra in a.r.items()):
            trace = b.trace  # `b` made all the joined state holds on one side only: its path explains them
    if nullable:
        _borrowed_or_null(out_b, out_r, nullable, a.r, br, local_ref)
        referenced = referenced_ids(out_b)
    if (len(out_b) < len(a.b) or not bb.keys() <= out_b.keys()) and _written_param_memory(out_b, out_r, a.b, bb):
        referenced = referenced_ids(out_b)
    one_side = a.r.keys() ^ br.keys()
    if one_side and not one_side.isdisjoint(out_r):
        _keep_one_side_bindings(out_b, a.b, bb, out_r, one_side)
        referenced = referenced_ids(out_b)
    if _elements_out_of_slots(out_b, a.b, bb, out_r):
        referenced = referenced_ids(out_b)
    for rid in [rid for rid, res in out_r.items()
                if res.st == OPAQUE and rid[0] != "p" and rid not in referenced]:
        del out_r[rid]
    for k in [k for k, v in out_b.items()
              if (k[0][:1] == "@" and k[0][1:] not in out_r) or (v[0] == "r" and v[1] not in out_r)]:
        del out_b[k]
    return State(out_b, out_r, a.conds & b.conds, trace)


def _written_param_memory(out_b: dict, out_r: dict, ba: dict, bb: dict) -> bool:
    """Memory reached through a parameter that a path wrote and the join dropped (NULL after a
    clear on one path, the copy of another parameter's struct `*out = *in;` or a new block on
    the other; the struct rewritten whole on one path and field by field on the other): the
    location then read its entry value again, which a path may have released (`free(out->buf);
    out->buf = 0;` joined with `*out = *in;`): a use after release, and a release for the
    caller of what the location no longer holds. Written on both paths, it holds a value the
    function wrote, unknown (`replaced.bind_written_unknown`'s identity). Still holding its
    entry value on one path, it is left to read that value (a block freed there and never
    replaced is still found in use)."""
    dropped = sorted({k for side in (ba, bb) for k in side
                      if k not in out_b and k[0][:2] == "@p" and len(k) >= 2}, key=lambda k: (len(k), repr(k)))
    added = False
    for k in dropped:
        if "[]" in k[0] or "[]" in k or param_path(k[0][1:]) is None or _under_bound(k, out_b):
            continue  # an element's memory stands for every element: what one round wrote is no other's
        if not (_written_on(k, ba) and _written_on(k, bb)):
            continue
        rid = k[0][1:] + "/" + "/".join(k[1:]) + WRITTEN
        out_r[rid] = UNKNOWN
        out_b[k] = ("r", rid)
        added = True
    return added


def _under_bound(key: tuple, b: dict) -> bool:
    """A proper prefix of `key` is bound in `b` (the struct holding the field was written whole)."""
    return any(key[:n] in b for n in range(2, len(key)))


def _written_on(key: tuple, b: dict) -> bool:
    """The path of `b` wrote the location: bound to another value than its entry one, or inside
    a struct it wrote whole."""
    v = b.get(key)
    if v is None:
        return _under_bound(key, b)
    return not entry_value(key, v)


def _keep_one_side_bindings(out_b: dict, ba: dict, bb: dict, out_r: dict, one_side: AbstractSet) -> None:
    """Array elements the join keeps from one side only (a loop filled them on that side)
    keep the locations that hold them there (`v[i].buf` after the loop): without them they
    are held by nothing, and an exit reports them as leaked although the array that holds
    them was returned or freed with its elements. A location the other side binds to no
    resource (a NULL, an unknown value) holds them too: one abstract slot stands for many
    elements, some of which hold them."""
    for side in (ba, bb):
        for k, v in side.items():
            if v[0] == "r" and v[1] in one_side and k not in out_b:
                res = out_r.get(v[1])
                if res is not None and res.coll:
                    out_b[k] = v


def _elements_out_of_slots(out_b: dict, ba: dict, bb: dict, out_r: dict) -> bool:
    """Array elements held on both sides that the join left in no array slot: the two paths
    stored different elements into the slot last (`lines[n] = dup(s);` in a loop, the block a
    growth helper returned on one path and the caller's own on the other; a find-or-append
    helper's new entry on one path, a later call's on the other). Both are in the array (a
    block's, not a local array's, whose elements the exit checks as before). A slot
    the join dropped names the element again (one abstract slot stands for many elements); one
    that names another element gives this one to the array, as a second store into the slot
    does (values._keep_in_collection). Without this the element was held by nothing but maybe
    a local pointer to it, and the next return reported it leaked although the array was freed
    with its elements or returned. True when a binding was added."""
    elements = {rid for rid, res in out_r.items() if res.coll and res.st == HELD}
    if not elements:
        return False
    elements.difference_update(v[1] for k, v in out_b.items() if v[0] == "r" and "[]" in k)
    added = False
    for side in (ba, bb) if elements else ():
        for k, v in side.items():
            if v[0] != "r" or v[1] not in elements or "[]" not in k or k[0][:1] != "@":
                continue  # (a local array's elements die with it: left to the exit's leak check)
            if k[0][1:] not in out_r:
                continue  # the array itself is gone
            now = out_b.get(k)
            if now is None:
                out_b[k] = v
                added = True
            elif now != v:
                out_r[v[1]] = replaced(out_r[v[1]], st=ESCAPED, esc=k)
            elements.discard(v[1])
    return added


def covers(a: State, b: State) -> bool:
    """Whether `b` has `a`'s resources and all of its bindings and conditions: then `join(a, b)`
    keeps `a`'s entries as they are, and is `a` again if `a` is `settled` (a block's joined state
    is mostly met again by states that add nothing; these tests run in C)."""
    return a.r == b.r and a.conds <= b.conds and a.b.items() <= b.b.items()


def settled(s: State) -> bool:
    """Whether `join`'s clean-up keeps all of `s`: no unknown value that nothing refers to, no
    binding of a resource (or memory of one) that `s` does not have."""
    referenced = referenced_ids(s.b)
    r = s.r
    for rid, res in r.items():
        if res.st == OPAQUE and rid[0] != "p" and rid not in referenced:
            return False
    for k, v in s.b.items():
        if (k[0][:1] == "@" and k[0][1:] not in r) or (v[0] == "r" and v[1] not in r):
            return False
    return True


def _join_bindings(ba: dict, bb: dict, nullable: dict) -> dict:
    """The bindings of both states, values joined (in `ba`'s order). A location that holds a
    resource on one side and NULL on the other goes into `nullable` (`_borrowed_or_null`)."""
    out_b: dict = {}
    for k, va in ba.items():
        vb = bb.get(k)
        if vb is None:
            continue
        if va == vb:
            out_b[k] = va
        else:
            v = _join_value(va, vb)
            if v is not None:
                out_b[k] = v
            elif va[0] == "r" and vb == _NULL:
                nullable[k] = va
            elif vb[0] == "r" and va == _NULL:
                nullable[k] = vb
    return out_b


_NULL = ("k", 0)


def _borrowed_or_null(out_b: dict, out_r: dict, nullable: dict, ra: dict, rb: dict, local_ref: Kinds = frozenset()) -> None:
    """A borrowed pointer on one path and NULL on the other (`CastTypeInfoToTensorInfo` may
    write NULL on success) is that borrowed pointer, "maybe NULL": a NULL test decides, and a
    use after its owner was released is still one. Joined away to an unknown value, the view
    lost its owner and such a use went unseen. So is a JNI local reference alive on one path
    and NULL on the other (`key` after `if (key != nullptr) {...}`): `DeleteLocalRef(key)`
    after the join deletes it (deleting NULL does nothing), where an unknown value made every
    iteration pile one up. Whatever else a location holds on one path only is joined as before."""
    for k, v in nullable.items():
        res = out_r.get(v[1]) or ra.get(v[1]) or rb.get(v[1])
        if res is None:
            continue
        view = res.st == BORROWED and (res.parent is None or res.parent in out_r)
        if view or (res.st == HELD and res.kind in local_ref and v[1] in out_r):
            out_b[k] = v
            if not res.maybe_null or v[1] not in out_r:
                out_r[v[1]] = replaced(res, maybe_null=True)


def _join_resources(ra_all: dict, br: dict, tracked: Kinds, local_ref: Kinds) -> dict:
    """The resources of the first state, each joined with the second's (in the first's order;
    those only the second has are `join`'s to add)."""
    out_r: dict = {}
    for rid, ra in ra_all.items():
        rb = br.get(rid)
        if rb is None:
            if ra.st == HELD and (ra.coll or ra.kind in local_ref):
                out_r[rid] = ra  # alive on one path: elements a loop filled, a local reference's slot
            elif ra.st == CONSUMED and _untouched_entry(rid):
                out_r[rid] = ra  # maybe released on one path, untouched on the other: maybe released
            continue
        if ra == rb or _in_key(ra, tracked):
            out_r[rid] = ra  # (key resources are the same in both)
        elif ra.st == rb.st:
            out_r[rid] = _tuple_new(Res, ra[:5] + (_join_value(ra.fact, rb.fact),) + ra[6:]) if ra.fact != rb.fact else ra
        else:
            out_r[rid] = _join_stage(ra, rb, ra.kind in local_ref)
    return out_r


def _untouched_entry(rid: str) -> bool:
    """`rid` is a parameter's value or what memory reached through one held on entry: a state
    without it never read it, so there it is still the caller's object, untouched. Joined with a
    state that may have released it (`mem = realloc(mem, n)` on one path, a fresh block without
    reading `mem` on the other), it may have been released: dropped instead, the summary said
    nothing of it, and the caller's block looked overwritten while held."""
    return rid[:1] == "p" and "#" not in rid and param_path(rid) is not None


def _join_stage(ra: Res, rb: Res, local_ref: bool) -> Res:
    stages = {ra.st, rb.st}
    if local_ref and HELD in stages:
        return ra if ra.st == HELD else rb
    if stages == {OPAQUE, ESCAPED}:
        return ra if ra.st == ESCAPED else rb
    return _tuple_new(Res, (ra[0], CONSUMED) + ra[2:5] + (None,) + ra[6:])


def _join_value(x: Val | None, y: Val | None) -> Val | None:
    if x == y:
        return x
    if x is None or y is None:
        return None
    if x[0] == "x" and y[0] == "x":
        common = x[1] & y[1]
        return ("x", common) if common else None
    if x[0] == "k" and y[0] == "x" and x[1] not in y[1]:
        return y if len(y) == 2 or type(x[1]) is not int or x[1] > 0 else ("x", y[1])  # (POSITIVE_COUNT: > 0)
    if y[0] == "k" and x[0] == "x" and y[1] not in x[1]:
        return x if len(x) == 2 or type(y[1]) is not int or y[1] > 0 else ("x", x[1])
    if x[0] == "k" and y[0] == "k" and type(x[1]) is int and type(y[1]) is int and x[1] and y[1]:
        # two failure codes (`-3` from one callee, `-2` from another): both are not 0, which is
        # what a later `if (result != OK) return result;` asks; unknown, it let the paths that
        # freed on failure through as if they had succeeded
        return _NONZERO
    return None


_NONZERO = ("x", frozenset({0}))


# ---------------------------------------------------------------------- the second-level join
#
# Property simulation alone is exponential when many independent resources are each acquired
# or not (a cleanup ladder over a dozen buffers, each step able to fail). Past a number of
# property states at one block, a state may join one that differs from it only in resources
# held (or released) on one side and never acquired on the other: the result holds (or has
# released) them "if acquired"
# (`maybe_null`: a NULL test decides, a release is a no-op on NULL, an exit still reports a
# leak). The join is refused when it would lose a correlation that decides a fate: two of the
# differing resources come from the same call (a status and the out-parameters it guards), a
# variable an `if` ahead tests has different values, remembered conditions it tests differ, or an
# unknown pointer's NULL fact differs.


def coarse_key(state: State, tracked: Kinds) -> tuple:
    """`property_key` without the held resources (and what holds them)."""
    # `_in_key(res) and not _joinable(res)`, inlined (every state past the first property states)
    key_res = {rid: res for rid, res in state.r.items()
               if (res.st == RELEASED if res.kind is None else
                   (res.kind in tracked and (res.st != HELD if res.coll else res.st not in (HELD, RELEASED, CONSUMED))
                    and res.st != CONSUMED and (res.st != ESCAPED or _kept_escape(res.esc))))}
    return _key_of(state, key_res)


def join_held(a: State, b: State, tracked: Kinds, local_ref: Kinds,
              relevant: frozenset, retested: frozenset, dead: frozenset = frozenset(),
              scope: FactScope | None = None) -> State | None:
    """Join states with the same `coarse_key` (see above), or None when that would lose a
    correlation. `relevant`: variables that an `if` ahead tests; `retested`: conditions that an
    `if` ahead tests (the others decide nothing any more); `dead`: locals nothing ahead mentions
    (see liveness.py); `scope`: what an unknown value's fact may decide ahead (see
    `fact_matters`; without it, a differing fact always refuses)."""
    if a.conds != b.conds and any(c[0] in retested for c in a.conds ^ b.conds):
        return None
    b = align_swapped(a, b, tracked)
    diff: list[str] = []
    pinned: dict[str, list[str]] | None = None
    # only the resources the states disagree on (in one or both): the symmetric difference of
    # the items, in C (the states share most entries; a loop over all of them was most of this)
    differ = {rid for rid, _ in a.r.items() ^ b.r.items()}
    for rid in sorted(differ):  # a stable order: the result must not depend on hashing
        ra, rb = a.r.get(rid), b.r.get(rid)
        if ra is not None and rb is not None:
            if ra.st == OPAQUE and rb.st == OPAQUE:
                if ra.fact != rb.fact:
                    if pinned is None:
                        pinned = pinned_by(a, relevant) | pinned_by(b, relevant)
                    if fact_matters(rid, scope, pinned):
                        return None
                continue
            if _joinable(ra, tracked) or _joinable(rb, tracked):
                if replaced(ra, maybe_null=False) != replaced(rb, maybe_null=False):
                    return None  # held on one path, released on the other: that decides a fate
                diff.append(rid)
            continue  # resources outside the key: `join` handles them
        if _joinable(ra if ra is not None else rb, tracked):
            diff.append(rid)
    b, diff = _rename_successors(a, b, diff, dead)
    sides: dict[str, set[bool]] = {}
    for rid in diff:  # a call's status and its out-parameters: held on opposite sides
        if rid in a.r and rid in b.r:
            continue
        sides.setdefault(rid.split(":", 1)[0], set()).add(rid in a.r)
    if any(len(s) > 1 for s in sides.values()):
        return None
    differing = set(diff)
    # (the bindings the states disagree on, as above; each either refuses or passes, so their
    # order does not matter)
    for k in {k for k, _ in a.b.items() ^ b.b.items()}:
        va, vb = a.b.get(k), b.b.get(k)
        if (va is not None and va[0] == "r" and va[1] in differing) or (vb is not None and vb[0] == "r" and vb[1] in differing):
            other = vb if va is not None and va[0] == "r" and va[1] in differing else va
            if other is not None and other != ("k", 0):
                return None  # the location holds something else on the other path
            continue
        if k[0] in relevant and (len(k) == 1 or scope is None or k in scope.paths):
            return None  # a variable an `if` ahead tests, or a member it tests (`if (g.owned_)`)
    # the path that acquired them explains the result (its leaks' traces show the acquisition)
    swap = sum(rid in b.r and rid not in a.r for rid in diff) > sum(rid in a.r and rid not in b.r for rid in diff)
    a, b = _complete(a, b, diff), _complete(b, a, diff)
    out = join(a, b, tracked, local_ref)
    if swap:
        out.trace = b.trace
    return out


class FactScope(NamedTuple):
    """What lies ahead of a block that an unknown value's fact could still decide (see
    `fact_matters`): the function's parameter names, the access paths `if`s ahead read (every
    prefix, liveness.Ahead.tested_paths) and the variables they read in unparsed parts."""

    params: Sequence[str]
    paths: AbstractSet[tuple[str, ...]]
    wholes: AbstractSet[str]


def pinned_by(state: State, relevant: AbstractSet[str]) -> dict[str, list[str]]:
    """The unknown values that variables an `if` ahead reads hold, with those variables
    (`q = s->ptr; ... if (q->f)`: `s->ptr`'s identity, read again as `q`)."""
    out: dict[str, list[str]] = {}
    for k, v in state.b.items():
        if v[0] == "r" and len(k) == 1 and k[0] in relevant:
            out.setdefault(v[1], []).append(k[0])
    return out


def fact_matters(rid: str, scope: FactScope | None, pinned: dict[str, list[str]]) -> bool:
    """Whether the value fact of the unknown pointer or integer `rid` (`state->flag == 0`, a
    parameter known non-NULL) can still decide a branch: only if an `if` ahead reads it, by the
    access path it was reached through (`p5/*/.flag` is `state->flag` when the sixth parameter
    is `state`) or through a variable that holds it or a pointer it was reached through
    (`pinned`: `q->flag` when `q` holds `p5`). Facts nothing ahead can read are joined away
    like other value facts: kept, they split states that hold the same resources by flags
    tested before (a PNG encoder's optional chunk writers, each reallocating the output
    buffer). Without a scope, every fact matters."""
    if scope is None:
        return True
    path = _rid_path(rid)
    if path is None:
        return True  # memory of a resource the function made, a collection slot: kept, to be safe
    param, root, rest = path
    if param is not None:
        if param >= len(scope.params):
            return True
        root = scope.params[param]
    if root in scope.wholes or (root, *rest) in scope.paths:
        return True
    if pinned:
        cut = len(rid)
        while cut > 0:
            names = pinned.get(rid[:cut])
            if names is not None:
                tail = tuple(part.split("#", 1)[0] for part in rid[cut + 1:].split("/")) if cut < len(rid) else ()
                if any(name in scope.wholes or (name, *tail) in scope.paths for name in names):
                    return True
            cut = rid.rfind("/", 0, cut)
    return False


@lru_cache(maxsize=1 << 16)
def _rid_path(rid: str) -> tuple[int | None, str, tuple[str, ...]] | None:
    """`(5, "", ("*", ".flag"))` for `p5/*/.flag#3` (a parameter, by index), `(None, "info",
    (".f",))` for `v:info/.f`; None for identities not rooted at a variable."""
    parts = [part.split("#", 1)[0] for part in rid.split("/")]
    if not all(parts[1:]):  # an op that is all suffix: a collection's slot
        return None
    root = parts[0]
    if root[:2] == "v:":
        return None, root[2:], tuple(parts[1:])
    if root[:1] == "p" and root[1:].isdigit():
        return int(root[1:]), "", tuple(parts[1:])
    return None


def _rename_successors(a: State, b: State, diff: list[str], dead: frozenset) -> tuple[State, list[str]]:
    """A location that holds, on the two paths, held resources of the same kind made by
    different calls (`v.data` after whichever of several `vector_push(&v)` calls reallocated it
    last) holds one resource whichever call made it: `b`'s is renamed to `a`'s. A leak of it is
    then reported at one of those calls. Not for a local nothing ahead mentions: its resource
    can only leak, and each acquisition is reported at its own call (ten `CHECK(status)`
    macros that throw into one `catch` leak ten statuses)."""
    in_a, in_b = {rid for rid in diff if rid not in b.r}, {rid for rid in diff if rid not in a.r}
    if not in_a or not in_b:
        return b, diff
    rename: dict[str, str] = {}
    held_a, held_b = _holders(a.b, in_a), _holders(b.b, in_b)
    for k, va in a.b.items():
        if va[0] != "r" or va[1] not in in_a or k[0] in dead:
            continue
        vb = b.b.get(k)
        if vb is None or vb[0] != "r" or vb[1] not in in_b or vb[1] in rename:
            continue
        if held_a[va[1]] != held_b[vb[1]]:
            continue  # each also held elsewhere (`c.model = p` vs `c.tokens = p`): two buffers, not one
        ra, rb = a.r[va[1]], b.r[vb[1]]
        if ra.kind == rb.kind and ra.st == rb.st == HELD and ra.owner == rb.owner:
            rename[vb[1]] = va[1]
    if not rename:
        return b, diff
    # renamed everywhere `b` names them, the memory they point to included (`("@R", ...)`):
    # renamed in the values only, `p = open_a()` / `p = open_b()` kept what the paths stored in
    # `p->list` under the old name, which nothing reaches after the join (the block was then
    # "lost" at the close function that frees `p->list`)
    out = _renamed(b, rename)
    for old, new in rename.items():
        out.r[new] = replaced(a.r[new], maybe_null=a.r[new].maybe_null or b.r[old].maybe_null)
    kept = [rid for rid in diff if rid not in rename and rid not in rename.values()]
    return out, kept


def _holders(b: dict, rids: AbstractSet[str]) -> dict[str, frozenset]:
    """The locations that hold each of `rids` (one pass over the bindings)."""
    out: dict[str, set] = {rid: set() for rid in rids}
    for k, v in b.items():
        if v[0] == "r" and v[1] in out:
            out[v[1]].add(k)
    return {rid: frozenset(ks) for rid, ks in out.items()}


def _joinable(res: Res, tracked: Kinds) -> bool:
    """Held or released resources that must be released, one per location: the ones
    `join_held` may merge with "never acquired"."""
    return res.st in (HELD, RELEASED) and res.kind is not None and not res.coll and res.kind in tracked


def _complete(x: State, y: State, diff: list[str]) -> State:
    """`x` with the differing resources as "held if acquired", bound where either state binds them."""
    out = State(dict(x.b), dict(x.r), x.conds, x.trace)
    for rid in diff:
        res = x.r.get(rid) or y.r.get(rid)
        other = y.r.get(rid)
        maybe = (x.r.get(rid) is None or other is None or res.maybe_null or other.maybe_null)
        out.r[rid] = replaced(res, maybe_null=maybe)
    wanted = set(diff)
    for k, v in y.b.items():  # one pass over the bindings, not one per differing resource
        if v is not None and v[0] == "r" and v[1] in wanted:
            out.b[k] = v
    return out


# ---------------------------------------------------------------------- the coarse join (the bound)
#
# Where a block has had as many property states as the bound allows (explore.Budget.keyed_states),
# or one of them has changed too often (`Budget.slot_changes`), states are merged by `join_coarse`:
# what the two states agree on is kept, everything else is given up. A resource held (or released)
# on both paths stays so, and still leaks (or is released twice) from here on, whatever path came
# in; one held on one path only, or in different stages, is forgotten or "consumed" (silent). It
# never adds a binding, a condition or a resource of the arriving state (a JNI local reference or
# loop-filled elements alive on one path included), so a state merged this way only goes down a
# finite chain: fewer bindings, conditions and resources, weaker values and later stages
# (docs/architecture.md, "The bound").


def join_coarse(a: State, b: State, tracked: Kinds, local_ref: Kinds, dead: frozenset = frozenset()) -> State:
    """`a` merged with `b` keeping only what both hold (see above); `a`'s path explains it."""
    b = align_swapped(a, align_escaped(a, b, tracked), tracked)
    differ = sorted({rid for rid, _ in a.r.items() ^ b.r.items()})
    b, _ = _rename_successors(a, b, [rid for rid in differ if _side_joinable(a, b, rid, tracked)], dead)
    br = b.r
    out_b: dict = a.b.copy() if a.b.items() <= b.b.items() else _join_bindings(a.b, b.b, {})  # no view-or-NULL kept
    out_r: dict = {}
    for rid, ra in a.r.items():
        rb = br.get(rid)
        if rb is None:
            if ra.st == HELD and (ra.coll or ra.kind in local_ref) or ra.st == CONSUMED:
                out_r[rid] = ra  # (kept as `join` keeps it; never added from `b`)
            continue
        if ra == rb or ra.st == CONSUMED:
            out_r[rid] = ra
        elif ra[:3] == rb[:3] and ra[4] == rb[4] and ra[6:8] == rb[6:8]:  # the same but for facts and flags
            fact = _join_value(ra.fact, rb.fact) if ra.fact != rb.fact else ra.fact
            out_r[rid] = replaced(ra, fact=fact, bound=ra.bound or rb.bound, maybe_null=ra.maybe_null or rb.maybe_null,
                                  swept=ra.swept and rb.swept)
        else:
            out_r[rid] = _join_stage(ra, rb, ra.kind in local_ref)
    referenced = referenced_ids(out_b)
    for rid in [rid for rid, res in out_r.items()
                if res.st == OPAQUE and rid[0] != "p" and rid not in referenced]:
        del out_r[rid]
    for k in [k for k, v in out_b.items()
              if (k[0][:1] == "@" and k[0][1:] not in out_r) or (v[0] == "r" and v[1] not in out_r)]:
        del out_b[k]
    return State(out_b, out_r, a.conds & b.conds, a.trace)


def _side_joinable(a: State, b: State, rid: str, tracked: Kinds) -> bool:
    """A resource one state holds and the other has not: `_rename_successors` may pair it."""
    res = a.r.get(rid)
    other = b.r.get(rid)
    return (res is None) != (other is None) and _joinable(res if res is not None else other, tracked)


def key_overlap(x: tuple, y: tuple) -> int:
    """How much two property keys share (the coarse join merges a state into the most similar)."""
    if x is _NO_PROPERTIES or y is _NO_PROPERTIES:
        return 0
    return len(x[0] & y[0]) + len(x[1] & y[1])


def join_cases(states: list[State]) -> list[State]:
    """The outcomes of a helper's summary that hold the same resources in the same states, as
    one: the least constrained of them (fewest facts). Cases that differ only in what they
    assumed about an argument (`value != null` on one branch of a protobuf setter) otherwise
    double the states at every such call: 2^13 copies of one straight-line Java method that
    builds a model with generated protobuf builders. Java only for now (the C side keeps its
    facts: measured, one C++ leak's path was lost with them)."""
    if len(states) < 2:
        return states
    best: dict[tuple, State] = {}
    for s in states:
        key = s.core_key()
        kept = best.get(key)
        if kept is None or (len(s.b), len(s.conds)) < (len(kept.b), len(kept.conds)):
            best[key] = s
    return list(best.values())
