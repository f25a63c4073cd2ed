"""Owning slots: class members and globals that keep a resource across calls.

Why: each function is analyzed with its own locals, and storing a handle into a member or a
global is an escape for that function (conformance README item 4): whoever owns the slot must
release it. This module checks that somebody does, over the whole analyzed tree:

* per unit (in the process that parsed it, from its IR and the policy), `unit_slot_facts`
  records every acquisition written straight into a slot through an out-parameter
  (`api->CreateSession(..., &session_)` in a method, `&g_inputs[0]` in a JNI entry point: a
  `T**` argument, so the slot is a raw pointer), and the names of slots some code may release or
  hand on (a release call, an unknown call, a copy, a return). `slot_ = Create()` is not a store
  here: the IR does not say whether the slot is a raw pointer or a smart pointer given the object.
  The facts are plain data: they travel from worker processes and live in the cache with the
  file, so the program view does not need every file's IR at once;
* `slot_findings` reports ORT001 at a store whose slot no function of the analyzed tree ever
  releases or hands on ("~Engine() does not"); a slot released anywhere (a destructor, Close(),
  a free-function cleanup taking the object) is never reported. A global stored by a free
  function is reported only when that function fills it without testing it and then uses it
  (its per-call working value, refilled by every call); a global that is only initialized
  lives for the process (LeakSanitizer calls it reachable) and is left alone.

A slot is named by its member or global name, qualified by the class of the method that stores
into it (`Engine::session_`). Releases match by name alone, of any class: a release of
`e->session_` in a cleanup function counts for every `session_` (precision over recall).

Constructors: the destructor does not run when a constructor throws, so a resource acquired
into a raw member is leaked by an exception leaving the constructor; `leaks_on_throw` tells the
engine which escapes that concerns.
"""
from __future__ import annotations

import dataclasses

from .. import ir
from ..findings import Finding, Step
from ..ir import AddrOf, Call, Const, Deref, Field, Index, Op, Opaque, Var
from ..policy import Policy
from .callbacks import note_fresh_return, note_install
from .slot_facts import SlotFacts, SlotStore

# ----------------------------------------------------------------------------- naming


def class_of(function: str) -> str:
    """`ns::Engine::Load` -> `ns::Engine`; "" for a function outside any class or namespace."""
    return function.rsplit("::", 1)[0] if "::" in function else ""


def is_constructor(function: str) -> bool:
    parts = function.split("::")
    return len(parts) >= 2 and parts[-1] == parts[-2]


def _is_local(fn: ir.Function, name: str) -> bool:
    return name in fn.locals or name in fn.params or name.startswith("$") or name == "this"


def slot_name(fn: ir.Function, e: ir.Expr) -> str | None:
    """The member or global an lvalue denotes (`session_`, `g_in[0]` -> `g_in`, `obj.f` -> `f`
    when obj is not a local), None for local memory."""
    depth = 0
    while depth < 8:
        depth += 1
        if isinstance(e, Var):
            return None if _is_local(fn, e.name) else e.name
        if isinstance(e, Index):
            e = e.base
            continue
        if isinstance(e, Field):
            root = e.base
            while isinstance(root, (Field, Index, Deref)):
                root = root.base
            if isinstance(root, Var) and _is_local(fn, root.name) and not (isinstance(e.base, Deref) and root.name == "this"):
                return None
            return e.name if isinstance(root, Var) and root.name == "this" else slot_name(fn, e.base) and e.name
        return None
    return None


def mentioned_names(e: ir.Expr | None, depth: int = 0) -> set[str]:
    """Every variable and member name an expression reads (for "handed on" slots)."""
    out: set[str] = set()
    _add_mentioned(e, depth, out)
    return out


def _add_mentioned(e: ir.Expr | None, depth: int, out: set[str]) -> None:
    """`mentioned_names` into `out` (one set for the whole expression: this runs for every
    argument and condition of every function)."""
    while e is not None and depth <= 12:
        cls = type(e)
        if cls is Var:
            out.add(e.name)
            return
        if cls is Field:
            out.add(e.name)
            e, depth = e.base, depth + 1
        elif cls is Deref or cls is AddrOf:
            e, depth = e.base, depth + 1
        elif cls is Index:
            _add_mentioned(e.index, depth + 1, out)
            e, depth = e.base, depth + 1
        elif cls is Op or cls is Opaque:
            for part in e.operands if cls is Op else e.parts:
                _add_mentioned(part, depth + 1, out)
            return
        else:
            return


# ----------------------------------------------------------------------------- per unit


def unit_slot_facts(unit: ir.SourceUnit, policy: Policy) -> SlotFacts:
    """Stores into slots and the slot names released or handed on, for one C/C++ file."""
    facts = SlotFacts()
    if unit.language not in ("c", "cpp"):
        return facts
    for fn in unit.functions:
        _function_facts(fn, policy, facts)
    return facts


def _function_facts(fn: ir.Function, policy: Policy, facts: SlotFacts) -> None:
    owner = class_of(fn.name)
    if fn.name.rsplit("::", 1)[-1].startswith("~"):
        facts.destructors.add(owner)
    if is_constructor(fn.name) or fn.name.rsplit("::", 1)[-1].startswith("~"):
        facts.classes.add(owner)
    first = len(facts.stores)
    tested: set[str] = set()  # names a condition of this function reads
    used: set[str] = set()  # names this function passes to calls (besides the stores themselves)
    fresh: dict[str, tuple[Call, str]] = {}  # locals (and temporaries) holding a fresh acquisition
    for block in fn.blocks:
        acquired: dict[str, tuple[Call, str]] = {}  # temporaries holding a fresh acquisition (call, kind)
        for ev in block.events:
            if isinstance(ev, Call):
                used |= _call_facts(fn, policy, ev, owner, acquired, facts, fresh)
            elif isinstance(ev, ir.Assign):
                _assign_facts(fn, ev, owner, acquired, facts)
                note_install(fn, ev, policy, facts)
                if isinstance(ev.dest, Var) and isinstance(ev.value, Var) and ev.value.name in acquired:
                    fresh[ev.dest.name] = acquired[ev.value.name]
        term = block.term
        if isinstance(term, ir.Return) and term.value is not None:
            facts.handled |= mentioned_names(term.value)
            note_fresh_return(fn, term, fresh, facts)
        elif isinstance(term, ir.Branch):
            tested |= mentioned_names(term.cond)
    for i in range(first, len(facts.stores)):
        store = facts.stores[i]
        if not store.owner:
            facts.stores[i] = dataclasses.replace(store, per_call=store.name not in tested and store.name in used)


def _call_facts(fn: ir.Function, policy: Policy, ev: Call, owner: str, acquired: dict[str, tuple[Call, str]],
                facts: SlotFacts, fresh: dict[str, tuple[Call, str]]) -> set[str]:
    """Record the call's stores and releases; return the names it reads."""
    spec = policy.lookup(ev.style, ev.callee)
    written: set[int] = set()
    if spec is not None:
        for acq in spec.acquires:
            kind = policy.kinds.get(acq.kind)
            if kind is None or not kind.owned or not kind.must_release or acq.kind in policy.status_kinds:
                continue
            target = _target(ev, acq.into)
            if target is None:
                continue
            if acq.arg is not None:
                written.add(acq.arg)
            if isinstance(target, Var) and target.name.startswith("$"):
                acquired[target.name] = fresh[target.name] = (ev, acq.kind)
                continue
            if isinstance(target, Var) and target.name in fn.locals:
                fresh[target.name] = (ev, acq.kind)
            if acq.arg is not None:  # `&slot` given as a T** out-parameter: a raw pointer slot
                _store(fn, target, ev, acq.kind, owner, facts)
    neutral = spec is None and policy.is_neutral(ev.style, ev.callee)
    released = set() if neutral else _released_args(spec, ev)
    read: set[str] = set()
    for i, arg in enumerate(ev.args):
        if i in written:
            continue
        names = mentioned_names(arg)
        read |= names
        if released is None or i in released:
            facts.handled |= names
    if ev.receiver is not None and ev.style == "method":
        names = mentioned_names(ev.receiver)
        read |= names
        if spec is None and not neutral or spec is not None and spec.release is not None and spec.release.receiver:
            facts.handled |= names
    return read


def _released_args(spec, ev: Call) -> set[int] | None:
    """Arguments a call may release or keep; None: any of them (an unknown callee)."""
    if spec is None:
        return None
    if spec.escapes_all:
        return set(range(len(ev.args)))
    out = set(spec.escapes)
    if spec.release is not None and spec.release.arg is not None:
        out.add(spec.release.arg)
    if spec.status_check is not None:
        out.add(spec.status_check.arg)
    if spec.moves is not None:
        out.add(spec.moves)
    return out


def _target(ev: Call, into: str) -> ir.Expr | None:
    if into == "return":
        return ev.dest
    if into.endswith("[]") or into in ("receiver", "token"):
        return None
    arg_index = into[1:] if into.startswith("*") else None
    if arg_index is None or not arg_index.isdigit() or int(arg_index) >= len(ev.args):
        return None
    arg = ev.args[int(arg_index)]
    return arg.base if isinstance(arg, AddrOf) else None


def _assign_facts(fn: ir.Function, ev: ir.Assign, owner: str, acquired: dict[str, tuple[Call, str]],
                  facts: SlotFacts) -> None:
    value = ev.value
    if isinstance(value, Var) and value.name in acquired and slot_name(fn, ev.dest) is not None:
        # `slot_ = Create()`: the IR does not say whether the slot is a raw pointer or a smart
        # pointer / RAII member given the object, so this is not a store the slot must release
        return
    if isinstance(value, Const):
        return
    if slot_name(fn, ev.dest) is None or not isinstance(value, (Var, Field, Index)):
        facts.handled |= mentioned_names(value)  # a slot copied anywhere: handed on


def _store(fn: ir.Function, target: ir.Expr, ev: Call, kind: str, owner: str, facts: SlotFacts) -> None:
    name = slot_name(fn, target)
    if name is None:
        return
    facts.stores.append(SlotStore(owner, name, ir.expr_text(target), fn.path, ev.loc, fn.name, ev.callee, kind))


# ----------------------------------------------------------------------------- the program


def slot_findings(all_facts: list[SlotFacts], policy: Policy) -> list[Finding]:
    """ORT001 at each store into a slot that no function of the analyzed tree releases."""
    handled: set[str] = set()
    destructors: set[str] = set()
    classes: set[str] = set()
    for facts in all_facts:
        handled |= facts.handled
        destructors |= facts.destructors
        classes |= facts.classes
    findings = []
    for facts in all_facts:
        for store in facts.stores:
            if store.name in handled or not store.per_call:
                continue
            findings.append(_finding(store, destructors, classes, policy))
    return findings


def _finding(store: SlotStore, destructors: set[str], classes: set[str], policy: Policy) -> Finding:
    kind = policy.kinds.get(store.kind)
    label = kind.label if kind is not None else store.kind
    right = policy.releasers_of(store.kind)
    if store.owner and store.owner in destructors:
        short = store.owner.rsplit("::", 1)[-1]
        who = f"member `{store.text}` of {short}, and no function releases it (~{short}() does not)"
    elif store.owner and store.owner in classes:
        short = store.owner.rsplit("::", 1)[-1]
        who = f"member `{store.text}` of {short}, and no function releases it ({short} has no destructor)"
    else:
        who = (f"`{store.text}`, which outlives the call, and no function of the analyzed code releases it "
               f"(each new store leaks the previous one)")
    hint = f"; release it with {right[0]}()" if right else ""
    message = f"{label} acquired by {store.callee}() is stored into {who}{hint}"
    loc = store.loc
    step = Step(store.path, loc.line, loc.col, f"{label} stored into `{store.text}`, never released by any function")
    return Finding("ORT001", store.path, loc.line, loc.col, loc.end_line, loc.end_col, message, store.function,
                   (step,), anchor=f"slot:{store.owner}:{store.name}:{store.callee}", kind=store.kind)


# ----------------------------------------------------------------------------- constructors


CONSTRUCTOR_THROW_NOTE = " (the destructor does not run when a constructor throws)"


def leaks_on_throw(fn: ir.Function, esc: tuple | None, site: object | None) -> bool:
    """A resource acquired straight into a member (`api->CreateX(..., &member_)`) of the object a
    constructor is building is leaked when an exception leaves the constructor: the destructor
    never runs for that object. Only an out-parameter says the member is a raw pointer: a
    `std::unique_ptr` member assigned `X::Create()` is a built member, destroyed on the throw."""
    if esc is None or site is None or not is_constructor(fn.name) or len(esc) != 1:
        return False
    name = esc[0]
    if not isinstance(name, str) or name.startswith(("@", "<", "$")) or _is_local(fn, name) \
            or getattr(site, "target", None) != name or getattr(site, "via_helper", False):
        return False  # a helper's out-parameter may be a `std::shared_ptr<T>*`, not a `T**`
    out = AddrOf(Var(name))
    line, col = getattr(site, "line", None), getattr(site, "col", None)
    return any(isinstance(ev, Call) and ev.loc.line == line and ev.loc.col == col and out in ev.args
               for block in fn.blocks for ev in block.events)
