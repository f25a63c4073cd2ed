"""The abstract state the engine carries along each path.

A state maps *locations* to *values* and resource ids to resource states:

* a location is a tuple: `("x",)` is variable x, `("p", ".env")` a field of a local struct,
  `("@R", "[]")` the elements of the memory that resource R points to, `("@R", "*", ".f")` a
  field reached through R;
* a value is `("r", rid)` (a pointer to resource rid), `("k", n)` (a known integer; NULL is 0)
  or `("x", frozenset)` (an integer known to differ from these; `POSITIVE_COUNT`, with a third
  element, is also known to be above 0);
* a resource (`Res`) records its kind and where it is in its life:
  HELD -> RELEASED / ESCAPED / CONSUMED, BORROWED -> DANGLING, or OPAQUE for values the
  function did not create (parameters, globals), which can still be released twice.

States are compared by content so identical states reaching a block are explored once.
"""
from __future__ import annotations

from operator import itemgetter
from typing import NamedTuple

HELD = "held"
RELEASED = "released"
ESCAPED = "escaped"
CONSUMED = "consumed"  # silently gone: a wrong release already reported, unparsed code, a maybe-release
BORROWED = "borrowed"
DANGLING = "dangling"  # borrowed from an owner that has been released
OPAQUE = "opaque"

PREV = "#prev"  # suffix of the identity of a call site's resources made by earlier runs (loops)

_tuple_new = tuple.__new__
_object_new = object.__new__

Val = tuple  # ("r", rid) | ("k", int) | ("x", frozenset[int]) | POSITIVE_COUNT
# An element count a call wrote and proved not 0 (the path where it is 0 was split off): above 0,
# so `if (n <= 0) return;` is not taken. Joined or narrowed, it becomes a plain `("x", ..)` fact.
POSITIVE_COUNT = ("x", frozenset({0}), ">0")
LocKey = tuple  # ("name", op, op, ...) or ("@rid", op, ...)


class Res(NamedTuple):
    kind: str | None
    st: str
    owner: str | None = None  # the owner object's text (JNI array / string), or a token's owner
    bound: bool = False  # stored into a named variable at some point (decides ORT001 vs ORT004)
    coll: bool = False  # lives in array elements: one abstract resource for many
    fact: Val | None = None  # value facts about an opaque pointer (NULL or not)
    parent: str | None = None  # the owner a borrowed pointer depends on
    esc: LocKey | None = None  # where it escaped to (summaries need out-parameters)
    maybe_null: bool = False  # acquired by a call that may have returned NULL; decided when tested
    swept: bool = False  # coll: a finished loop released every element (another release is ORT002)
    keeps: str | None = None  # the resource whose object this one co-owns (`Acquire.keeps`): alive while this is

    def with_st(self, st: str) -> "Res":
        """`_replace(st=...)`, the engine's most frequent update, without `_replace`'s generic
        keyword handling (a tenth of the cost)."""
        return _tuple_new(Res, (self[0], st) + self[2:])


_FIELD_INDEX = {name: i for i, name in enumerate(Res._fields)}

# Unknown memory, as one (immutable, shared) value each: made for every pointer the function did
# not create, and as the default of lookups (NamedTuple's keyword `__new__` is interpreted code)
UNKNOWN = Res(None, OPAQUE)
UNKNOWN_ELEMENTS = Res(None, OPAQUE, coll=True)


def replaced(res: Res, **changes: object) -> Res:
    """`res._replace(...)` without NamedTuple's generic machinery (which runs as interpreted
    code even when the engine is compiled)."""
    values = list(res)
    for name, value in changes.items():
        values[_FIELD_INDEX[name]] = value
    return _tuple_new(Res, values)


class TraceNode(NamedTuple):
    """One step of the path explanation; states share their common prefix."""

    line: int
    col: int
    text: str
    rid: str | None
    prev: "TraceNode | None"
    depth: int
    release: str | None = None  # the call that released `rid` here (kept out of state keys)


class State:
    __slots__ = ("b", "r", "conds", "trace")

    def __init__(self, b: dict | None = None, r: dict | None = None, conds: frozenset = frozenset(),
                 trace: TraceNode | None = None):
        self.b: dict[LocKey, Val] = b if b is not None else {}
        self.r: dict[str, Res] = r if r is not None else {}
        self.conds: frozenset = conds
        self.trace = trace

    def copy(self) -> "State":
        """A state to change: new dicts (their values are immutable), shared conditions and
        trace. Made without `__init__`'s defaults (every block run and every branch copies)."""
        out = _object_new(State)
        out.b = self.b.copy()
        out.r = self.r.copy()
        out.conds = self.conds
        out.trace = self.trace
        return out

    def key(self) -> tuple:
        return (frozenset(self.b.items()), frozenset(self.r.items()), self.conds)

    def same(self, other: "State") -> bool:
        """`self.key() == other.key()`, without building either key."""
        return self.b == other.b and self.r == other.r and self.conds == other.conds

    def core_key(self) -> tuple:
        """The part that decides findings: which locations hold which resources, and their states."""
        return (frozenset((k, v) for k, v in self.b.items() if v[0] == "r"), frozenset(self.r.items()))

    def note(self, line: int, col: int, text: str, rid: str | None = None, release: str | None = None) -> None:
        depth = self.trace.depth + 1 if self.trace is not None else 1
        if depth > 400:  # keep long paths cheap: the explanation shows the recent part
            depth = 1
            self.trace = None
        self.trace = _tuple_new(TraceNode, (line, col, text, rid, self.trace, depth, release))  # (no __new__ call)

    def refs(self, rid: str) -> int:
        target = ("r", rid)
        return sum(1 for v in self.b.values() if v == target)


_second = itemgetter(1)


def referenced_ids(b: dict) -> set:
    """The resource ids the bindings `b` point to, for membership tests with resource ids: the
    second item of every value, in one pass in C. The other values' second items (integers,
    frozensets of integers) come along but never equal an id (a string)."""
    return set(map(_second, b.values()))


def made_outside(rid: str) -> bool:
    """A value the function did not make: a parameter's, a global's or an unknown name's (a
    member reached without `this->`), or memory reached from one. Whoever owns it sees
    "released" and "known NULL" alike (explore._collapse_released_params)."""
    return rid[0] == "p" or rid[:2] == "v:"


def is_nonnull_fact(fact: Val | None) -> bool:
    return fact is not None and ((fact[0] == "k" and fact[1] != 0) or (fact[0] == "x" and 0 in fact[1]))


def is_null_fact(fact: Val | None) -> bool:
    return fact is not None and fact[0] == "k" and fact[1] == 0
