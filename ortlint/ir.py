"""The language-neutral intermediate representation every front end produces.

A source file becomes a list of `Function`s; each function is a control-flow graph of
`Block`s holding simple `Event`s and ending in one terminator. Expressions inside events are
pure: front ends lower every call and assignment nested in an expression to its own event
(three-address style, with `$N` temporaries), so the engine never has to care about
evaluation order or which language it is looking at.
"""
from __future__ import annotations

import re

import operator
from dataclasses import dataclass, field
from typing import NamedTuple, Union

from .pickling import pickle_by_fields

# Locations and expressions are values: compared and hashed by content, never changed after they
# are made (nothing assigns to their fields). They are not `frozen=True` because the front ends
# create half a million of them per 100 K lines, and a frozen dataclass's __init__ (one
# object.__setattr__ per field) costs four times a plain one.
_value_dataclass = dataclass(slots=True, unsafe_hash=True)


def value_class(cls: type) -> type:
    """A value dataclass (see above) whose hash is computed once and kept in a `_hash` slot:
    the engine hashes the same expressions over and over (memo keys, sets of locations), and
    the generated `__hash__` rebuilds a tuple of the fields, recursively, every time. Equality
    and the hash value are the generated ones; `_hash` takes no part in equality, repr or
    construction, and is never pickled (`pickle_by_fields` pickles the constructor's arguments:
    a string's hash differs between processes)."""
    cls.__annotations__["_hash"] = int
    cls._hash = field(default=0, init=False, repr=False, compare=False, hash=False, metadata={"cache": True})
    cls = _value_dataclass(cls)
    names = cls.__match_args__
    get = operator.attrgetter(*names)
    if len(names) == 1:
        def fields_of(self):  # noqa: ANN001, ANN202
            return (get(self),)
    else:
        fields_of = get

    def __hash__(self) -> int:  # noqa: N807
        h = self._hash
        if not h:  # (a hash of 0 is recomputed each time: harmless)
            h = self._hash = hash(fields_of(self))
        return h

    cls.__hash__ = __hash__
    return cls


class Loc(NamedTuple):
    """A source range; lines and columns are 1-based, the end is inclusive of its line.

    A tuple: the most numerous IR object, and a tuple of integers is left alone by the cycle
    collector (a third less collector work on large trees) and pickles compactly."""

    line: int
    col: int
    end_line: int
    end_col: int


# ----------------------------------------------------------------------------- expressions


@pickle_by_fields
@value_class
class Var:
    """A named variable: local, parameter, global, or a front-end temporary (`$3`)."""

    name: str


@pickle_by_fields
@value_class
class Field:
    """`base.name`; `p->name` is written `Field(Deref(p), name)`."""

    base: "Expr"
    name: str


@pickle_by_fields
@value_class
class Index:
    """`base[index]`: one element of an array, analyzed as a collection."""

    base: "Expr"
    index: "Expr"


@pickle_by_fields
@value_class
class Deref:
    """`*base`."""

    base: "Expr"


@pickle_by_fields
@value_class
class AddrOf:
    """`&base`."""

    base: "Expr"


@pickle_by_fields
@value_class
class Const:
    """A literal. `value` is None for literals without an integer value (strings, floats)."""

    value: int | None
    text: str


@pickle_by_fields
@value_class
class Op:
    """An operator applied to operands: `==`, `!=`, `<`, `!`, `+`, `?:`, ...; `Op(NONZERO, ())`
    is some integer other than 0 (a failure status built with a code: `return Status(cat, code,
    msg);`)."""

    op: str
    operands: tuple["Expr", ...]


NONZERO = "nonzero"  # `Op(NONZERO, ())`: an integer known only to differ from 0


@pickle_by_fields
@value_class
class Opaque:
    """Anything the engine need not understand; `parts` are the sub-expressions it reads."""

    text: str
    parts: tuple["Expr", ...] = ()


Expr = Union[Var, Field, Index, Deref, AddrOf, Const, Op, Opaque]


def expr_text(e: Expr) -> str:
    """Render an expression the way a user would write it (casts are already gone; a local the
    C++ front end renamed, `p@3` for a `p` that hides another or comes from a body lowered in
    place, is shown as `p`)."""
    if isinstance(e, Var):
        name = e.name
        return name.partition("@")[0] if "@" in name and _RENAMED.match(name) else name
    if isinstance(e, Field):
        if isinstance(e.base, Deref):
            return f"{expr_text(e.base.base)}->{e.name}"
        return f"{expr_text(e.base)}.{e.name}"
    if isinstance(e, Index):
        return f"{expr_text(e.base)}[{expr_text(e.index)}]"
    if isinstance(e, Deref):
        return f"*{expr_text(e.base)}"
    if isinstance(e, AddrOf):
        return f"&{expr_text(e.base)}"
    if isinstance(e, Const):
        return e.text
    if isinstance(e, Op):
        if len(e.operands) == 2:
            return f"{expr_text(e.operands[0])} {e.op} {expr_text(e.operands[1])}"
        if len(e.operands) == 1:
            return f"{e.op}{expr_text(e.operands[0])}"
        return e.op
    return e.text


_RENAMED = re.compile(r"^[A-Za-z_]\w*@\d+$")


def strip_addr(e: Expr) -> Expr | None:
    """`&x` -> `x`; None when `e` is not an address-of."""
    return e.base if isinstance(e, AddrOf) else None


# ----------------------------------------------------------------------------- events


@pickle_by_fields
@dataclass(slots=True)
class Call:
    """A call. `callee` is normalized: `api->CreateSession(...)` and `(*env)->F(env, ...)` both
    become a `table` call of the bare name with only the logical arguments."""

    id: int
    loc: Loc
    callee: str
    style: str  # "plain" | "table" | "method" | "new" | "indirect"
    receiver: Expr | None
    args: tuple[Expr, ...]
    dest: Expr | None  # where the result goes; None when the value is dropped
    text: str  # the call as written (shortened), for messages
    may_throw: bool = False
    # Arguments a visible prototype declares `const T *` / `const T &` (indexes): an unknown
    # callee only reads them, so they do not escape into it (front ends: header_index).
    borrows: tuple[int, ...] = ()
    # The macro whose expansion holds this call, as its invocation's trace step names it:
    # "CHECK_ORT (utils.h:12)" (front ends: the outermost expansion; "" outside macros).
    macro: str = ""
    # Where that macro is defined ("path:line"), when the analyzed tree defines it ("" for a policy
    # shape or libclang): a defect wholly inside its expansions is the macro's (engine/macro_defects.py).
    macro_at: str = ""
    # The program's own OrtAllocator passed to this call frees its blocks with this release call
    # (`delete`, `delete[]`, `free`): what the call allocates from it is that family's memory
    # (front ends: cpp/own_allocators; "" when no such allocator is passed).
    own_free: str = ""


@pickle_by_fields
@dataclass(slots=True)
class Assign:
    loc: Loc
    dest: Expr
    value: Expr


@pickle_by_fields
@dataclass(slots=True)
class Use:
    """A read or write through a pointer (`*p`, `p[i]`, `p->f`): a use for ORT006."""

    loc: Loc
    pointer: Expr


@pickle_by_fields
@dataclass(slots=True)
class Kill:
    """Temporaries whose statement is over; a resource held only by them is lost here."""

    loc: Loc
    names: tuple[str, ...]


@pickle_by_fields
@dataclass(slots=True)
class Havoc:
    """Code the front end could not understand: resources reachable from these names are no
    longer checked (neither leaks nor double releases can be claimed for them)."""

    loc: Loc
    names: tuple[str, ...]
    reason: str


@pickle_by_fields
@dataclass(slots=True)
class ScopeExit:
    """The end of a loop: elements of arrays released inside the loop body count as released
    (a release loop is assumed to cover every element an acquisition loop filled)."""

    loc: Loc
    loop_blocks: frozenset[int]


Event = Union[Call, Assign, Use, Kill, Havoc, ScopeExit]


# ----------------------------------------------------------------------------- terminators


@pickle_by_fields
@dataclass(slots=True)
class Jump:
    target: int


@pickle_by_fields
@dataclass(slots=True)
class Branch:
    """Two-way branch; `kind` is "if", "loop", "case" or "pp" (a preprocessor alternative)."""

    cond: Expr
    then: int
    orelse: int
    loc: Loc
    text: str
    kind: str = "if"


@pickle_by_fields
@dataclass(slots=True)
class Return:
    value: Expr | None
    loc: Loc


@pickle_by_fields
@dataclass(slots=True)
class Halt:
    """The path ends without returning: `abort`-like calls ("abort") or an uncaught throw ("throw")."""

    loc: Loc
    how: str


Terminator = Union[Jump, Branch, Return, Halt]


@pickle_by_fields
@dataclass(slots=True)
class Block:
    id: int
    events: list[Event] = field(default_factory=list)
    term: Terminator | None = None
    handler: int | None = None  # where exceptions raised by calls in this block go


@pickle_by_fields
@dataclass(slots=True)
class Function:
    """One analyzable unit: a C function, a C++ method or lambda, a Java method."""

    name: str
    path: str
    loc: Loc
    language: str
    params: list[str]
    locals: dict[str, bool]  # name -> True when the local is an aggregate (array / struct value)
    blocks: list[Block]
    entry: int = 0
    is_static: bool = False
    notes: list[tuple[Loc, str]] = field(default_factory=list)
    # locals declared with an unsigned integer type (`size_t n`, `unsigned count`): never below
    # 0, so a failed `n > 0` says `n == 0` (engine/conditions.py)
    unsigned: frozenset[str] = frozenset()

    def callees(self) -> set[str]:
        """The program-level names (`program_name`) of the calls made by this function that
        may reach a function of the program, for the call graph."""
        out = set()
        for b in self.blocks:
            for ev in b.events:
                if isinstance(ev, Call):
                    name = program_name(ev)
                    if name is not None:
                        out.add(name)
        return out


DISPATCHED = "."  # prefix of the program-level name of a call through an object (virtual dispatch)


def unread_destructor(callee: str, class_name: str) -> str:
    """The callee of the call a C++ front end emits when an object of a header class whose
    destructor it cannot read goes out of scope (`Guard g(p, n, ReleaseX);`): the destructor as
    an unknown call given the constructor's arguments, which it may release."""
    return f"{callee}::~{class_name}"


def is_unread_destructor(call: Call) -> bool:
    """A call made by `unread_destructor` (style "indirect": never bound to a definition). What
    it does with those arguments is unknown: it may take them over (no leak), but passing one
    already released is no use of it: a class that keeps a pointer it does not own
    (`Compiler c(opts, symbols); ...; delete symbols; }`) is the common case."""
    return call.style == "indirect" and "::~" in call.callee


def program_name(call: Call) -> str | None:
    """How a call names a function of the analyzed program, or None when it cannot reach one:
    a plain call by its callee; a C++ method call the front end qualified with the receiver's
    class (`Engine::Load` on an `Engine&`: the class may be declared in a header the tree does
    not have, its methods defined in the tree) as `.Engine::Load`, since it may be dispatched
    to an override (the program binds it only to a method no other class defines)."""
    if call.style == "plain":
        return call.callee
    if call.style == "method" and "::" in call.callee:
        return DISPATCHED + call.callee
    return None


@pickle_by_fields
@dataclass(slots=True)
class SourceUnit:
    """The result of running a front end on one file."""

    path: str
    language: str
    functions: list[Function]
    notes: list[tuple[Loc, str]] = field(default_factory=list)
    lines: int = 0
    constants: dict[str, int] = field(default_factory=dict)  # enumerators, `#define NAME 42`
    dependencies: list[str] = field(default_factory=list)  # headers the result depends on (precise mode)
