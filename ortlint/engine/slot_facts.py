"""What one file does with long-lived slots (members, globals) and callbacks: plain data, shared by the slot
checks (`slots.py`) and the callback checks (`callbacks.py`), kept with the file's record in the cache."""
from __future__ import annotations

from dataclasses import dataclass, field

from .. import ir
from ..pickling import pickle_by_fields


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class SlotStore:
    """One acquisition stored straight into a member or a global."""

    owner: str  # the class of the storing method ("" for a free function: a global)
    name: str  # the member or global
    text: str  # the slot as written (`input_tensors[0]`)
    path: str
    loc: ir.Loc
    function: str
    callee: str
    kind: str
    # A global filled without a test and then used by the same function: its working value,
    # refilled on every call (a global that is only initialized is left to live for the process)
    per_call: bool = True


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class Install:
    """`alloc->Info = MyInfo;`: a function stored into a field that has a `[[callback]]` contract."""

    field: str
    function: str  # the installed function's name as written, or `outer::<lambda@LINE>`
    path: str
    loc: ir.Loc
    installer: str


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class FreshReturn:
    """A function that returns an object it acquired itself (the caller receives a new one)."""

    path: str
    loc: ir.Loc  # the acquiring call
    callee: str
    kind: str


@pickle_by_fields
@dataclass(slots=True)
class SlotFacts:
    """What one file does with long-lived slots."""

    stores: list[SlotStore] = field(default_factory=list)
    handled: set[str] = field(default_factory=set)  # slot names released or handed on somewhere here
    destructors: set[str] = field(default_factory=set)  # classes (qualified) with a destructor defined here
    classes: set[str] = field(default_factory=set)  # classes (qualified) with a constructor or destructor here
    # callbacks.py: functions installed into fields with a policy contract, and functions that
    # return an object they just acquired
    installs: list[Install] = field(default_factory=list)
    fresh_returns: dict[str, FreshReturn] = field(default_factory=dict)
