"""Helpers on IR expressions, locations and resource ids shared by the engine modules."""
from __future__ import annotations

import functools
import re

from .. import ir
from ..ir import AddrOf, Deref, Expr, Field, Index, Op, Opaque, Var
from ..policy import Kind
from .state import LocKey, State, Val


MAX_ACCESS_DEPTH = 6  # identities for unknown memory stop here (k-limiting: `p->next->next->...`)


def too_deep(loc: LocKey) -> bool:
    depth = len(loc) - 1
    if loc[0].startswith("@"):
        depth += loc[0].count("/")
    return depth > MAX_ACCESS_DEPTH


MAX_EXCLUDED = 32  # values an integer is remembered to differ from; later ones are not added


def narrow(fact: Val | None, eq: bool, c: int):
    """Combine a value fact with `== c` / `!= c`; False when contradictory, None when unknown.

    At most MAX_EXCLUDED values are remembered as excluded: each `case` of a switch excludes one
    more along the chain of tests, and a set per block grown by one each time made memory
    quadratic in the cases (6 000 empty C cases while a buffer was held passed 1 GB). A test
    against a 33rd constant keeps the fact as it is (still true, only less precise)."""
    if fact is None:
        return ("k", c) if eq else ("x", frozenset({c}))
    if fact[0] == "k":
        return fact if (fact[1] == c) == eq else False
    if fact[0] == "x":
        if eq:
            return False if c in fact[1] else ("k", c)
        if c in fact[1]:
            return fact
        return ("x", fact[1] | {c}) if len(fact[1]) < MAX_EXCLUDED else fact
    return fact


def strip_value(e: Expr) -> Expr:
    return e


def short_path(where: str) -> str:
    """`a/b/util.c:42` -> `util.c:42`: traces stay readable."""
    return where.replace("\\", "/").rsplit("/", 1)[-1]


def same_owner(a: str | None, b: str | None) -> bool:
    """Owner keys are `text` or `text|@rid`: the same value (an alias) or, failing that, the
    same text."""
    if a is None or b is None:
        return True
    ta, _, ra = a.partition("|@")
    tb, _, rb = b.partition("|@")
    if ra and rb:
        return ra == rb
    return ta == tb


def owner_shown(key: str | None) -> str:
    return (key or "").partition("|@")[0]


def owner_text(e: Expr) -> str:
    """The owner object as text; any index counts as the same slot (`a[i]` and `a[j]`)."""
    return re.sub(r"\[[^\[\]]*\]", "[]", ir.expr_text(e))


def conjuncts(e: Expr) -> list[Expr]:
    """The conditions a test is made of, as the engine remembers them (`remembered_as`)."""
    if isinstance(e, Op) and e.op in ("&&", "||", "!") :
        return [p for o in e.operands for p in conjuncts(o)] + [e]
    return [remembered_as(e)]


_EQUALITY_FORMS: dict[int, tuple[Expr, Expr]] = {}


def remembered_as(e: Expr) -> Expr:
    """The form in which a condition the state cannot evaluate is remembered: `a != b` as
    `a == b` (with the other answer), so that `if (r == OK) .. else free(p); .. if (r != OK)
    return r;` is one condition tested twice, not two unrelated ones. One object per
    condition (the entry keeps `e` alive, so its id is not reused)."""
    if type(e) is not Op or e.op != "!=" or len(e.operands) != 2:
        return e
    hit = _EQUALITY_FORMS.get(id(e))
    if hit is None:
        if len(_EQUALITY_FORMS) > 65536:
            _EQUALITY_FORMS.clear()
        hit = _EQUALITY_FORMS[id(e)] = (e, Op("==", e.operands))
    return hit[1]


def element_of(e: Op) -> Index | None:
    """`names + i` (pointer arithmetic on an array) denotes the element `names[i]`: `*(names + i)`
    and an out-parameter `names + i` name it as `names[i]` and `&names[i]` do. Only a sum
    whose first operand is a location (`p + 4` of a number is no element of anything)."""
    if e.op != "+" or len(e.operands) != 2 or type(e.operands[0]) not in (Var, Field, Index, Deref):
        return None
    return Index(e.operands[0], e.operands[1])


def array_name(e: Expr) -> str:
    """`outputs` for `outputs[i]`: what a loop over the elements is about."""
    return shown(e.base if isinstance(e, Index) else e)


_RENAMED = re.compile(r"@\d+\b")  # an inlined body's copy of a variable (`status@3`): the front end's name


def shown(e: Expr) -> str:
    """An expression as a message names it: as the user wrote it, without the names the front
    end gave to copies of a variable (`providers@1`, `st@20` are `providers`, `st`)."""
    text = ir.expr_text(e)
    return _RENAMED.sub("", text) if "@" in text else text


def is_drop(e: Expr) -> bool:
    return isinstance(e, Var) and e.name.startswith("$drop")


def is_temp(e: Expr) -> bool:
    """A front-end temporary (`$3`, `$drop7`): not a name to show the user."""
    return isinstance(e, Var) and e.name.startswith("$")


def in_temp(e: Expr) -> bool:
    """A front-end temporary or a part of one (`$3.buf`, a field of a compound literal): not a
    name to show the user."""
    while isinstance(e, (Field, Index, Deref)):
        e = e.base
    return is_temp(e)


def expr_vars(e: Expr) -> set[str]:
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, (Field, Deref, AddrOf)):
        return expr_vars(e.base)
    if isinstance(e, Index):
        return expr_vars(e.base) | expr_vars(e.index)
    if isinstance(e, Op):
        out: set[str] = set()
        for o in e.operands:
            out |= expr_vars(o)
        return out
    if isinstance(e, Opaque):
        out = set()
        for o in e.parts:
            out |= expr_vars(o)
        return out
    return set()


TOP_PARAM = re.compile(r"^p\d+$")


PARAM_RID = re.compile(r"^p(\d+)((?:/[^/#]+)*)")


@functools.lru_cache(maxsize=4096)
def param_path(rid: str) -> tuple | None:
    """`p1/*/.data` -> (1, "*", ".data"): the parameter and the access path a resource id names."""
    if rid[:1] != "p":
        return None
    m = PARAM_RID.match(rid)
    if not m or "#" in rid:
        return None
    ops = tuple(op for op in m.group(2).split("/") if op)
    return (int(m.group(1)),) + ops


def dedupe(states: list[State]) -> list[State]:
    """Identical states once, first occurrence first (a call's outcomes: a handful of states,
    compared directly; hashed keys only for many)."""
    if len(states) < 2:
        return states
    if len(states) <= 8:
        out: list[State] = []
        for s in states:
            for kept in out:
                if s.same(kept):
                    break
            else:
                out.append(s)
        return out
    seen: dict[tuple, State] = {}
    for s in states:
        seen.setdefault(s.key(), s)
    return list(seen.values())


NO_KIND = Kind("", "")


STATUS_KIND = "ort.Status"
