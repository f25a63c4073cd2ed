"""Renaming resources in a state (two paths' names for the same objects made to agree)."""
from __future__ import annotations

from .state import State, replaced


def renamed(s: State, rename: dict[str, str]) -> State:
    """`s` with resources renamed (`rename`: old id -> new id) everywhere a state names them:
    bindings' values, memory locations (`("@R", ...)`, ids derived from R: `R/[]`), where a
    resource escaped to and the owner a borrowed one depends on."""
    def rid_of(rid: str) -> str:
        new = rename.get(rid)
        if new is not None:
            return new
        cut = rid.find("/")
        if cut > 0 and rid[:cut] in rename:
            return rename[rid[:cut]] + rid[cut:]
        return rid

    def loc_of(k: tuple) -> tuple:
        if k[0][:1] == "@":
            root = rid_of(k[0][1:])
            if root != k[0][1:]:
                return ("@" + root,) + k[1:]
        return k

    out_b = {loc_of(k): (("r", rid_of(v[1])) if v[0] == "r" else v) for k, v in s.b.items()}
    out_r = {}
    for rid, res in s.r.items():
        if res.esc is not None or res.parent is not None:
            esc = loc_of(res.esc) if res.esc else res.esc
            parent = rid_of(res.parent) if res.parent else res.parent
            if esc != res.esc or parent != res.parent:
                res = replaced(res, esc=esc, parent=parent)
        out_r[rid_of(rid)] = res
    return State(out_b, out_r, s.conds, s.trace)
