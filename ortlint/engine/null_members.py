"""A `release()` of a class member that no code of the tree ever gives a value hands back NULL.

The C++ front end states, per file, which members are declared empty (`Ort::MemoryInfo
memory_info_{nullptr};`) and which member names its functions mention; the program merges the
facts into its constants (frontends/cpp/null_members.py). `NAME{null}` is 0 only when a file
declares the member empty and no file mentions it other than as a `release()` receiver: the
wrapper then never holds a handle, and its `release()` acquires nothing (it returns NULL).
"""
from __future__ import annotations

from ..ir import Call, Deref, Field, Var

NULL_MEMBER = "{null}"  # (the front end's suffix: frontends/cpp/null_members.py)


def releases_never_assigned_member(ev: Call, constants: dict[str, int], local: set | dict) -> bool:
    """`memory_info_.release()` (or `this->memory_info_.release()`) on a member no code gives a
    value."""
    if ev.style != "method" or ev.receiver is None or ev.callee.rpartition("::")[2] != "release" or ev.args:
        return False
    r = ev.receiver
    if type(r) is Var:
        name = r.name
        if name in local or name[:1] == "$" or name == "this":
            return False
    elif type(r) is Field and (type(r.base) is Var and r.base.name == "this"
                               or type(r.base) is Deref and type(r.base.base) is Var and r.base.base.name == "this"):
        name = r.name
    else:
        return False
    return constants.get(name + NULL_MEMBER) == 0
