"""A callee's test of a parameter's value against a global's, as a summary precondition.

`void opts_clear(opts_t *o) { if (o->lang != OPTS_DEFAULT.lang) free(o->lang); *o = OPTS_DEFAULT; }`
frees the language unless it is the default's own string. Without the condition its summary has
a case that frees nothing and overwrites `*o`, and a caller whose `o.lang` holds a fresh copy
(`o.lang = strdup(..)`) took it and reported the copy lost. The test compares a parameter's
entry value with a global's value as first read (never written on the path before the test):
kept as a relation (engine/relations.py) whose second path names the global (`("g:OPTS_DEFAULT",
".lang")`), the caller decides it only where it can: a block the caller acquired and holds alone
is no global's value (engine/fresh_blocks.py), so the `==` case is dropped there; everywhere else
both cases stay, as before.
"""
from __future__ import annotations

from ..ir import Deref, Expr, Field, Var

GLOBAL = "g:"


def global_identity(rid: str) -> str | None:
    """`v:OPTS_DEFAULT/.lang` (a global's value as first read on this path) -> the relation
    identity `g:OPTS_DEFAULT/.lang`; None for anything else (a renamed read `#2`, an element)."""
    if rid[:2] != "v:" or "#" in rid or "[]" in rid:
        return None
    return GLOBAL + rid[2:]


def global_path(rid: str) -> tuple | None:
    """`g:OPTS_DEFAULT/.lang` -> ("g:OPTS_DEFAULT", ".lang"), the form a summary keeps."""
    if rid[:2] != GLOBAL:
        return None
    parts = rid.split("/")
    return (parts[0],) + tuple(op for op in parts[1:] if op)


def global_expr(path: tuple) -> Expr | None:
    """The expression a caller reads for a global path: `OPTS_DEFAULT.lang`."""
    e: Expr = Var(path[0][len(GLOBAL):])
    for op in path[1:]:
        if op == "*":
            e = Deref(e)
        elif op[:1] == ".":
            e = Field(e, op[1:])
        else:
            return None
    return e
