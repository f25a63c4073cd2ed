"""Callback contracts: functions installed into ONNX Runtime's implementer structs.

Why: `alloc->Info = MyInfo;` hands `MyInfo` to ONNX Runtime, which calls it whenever it needs the
allocator's memory info and treats the result as borrowed (`[[callback]]` in
rules/onnxruntime-ep.toml). If `MyInfo` creates a new `OrtMemoryInfo` on every call, each call
leaks one — a leak no single function shows: `MyInfo` returns its object (an escape), and the
installer only stores a function pointer.

Facts are collected per file with the slot facts (engine/slots.py): every store of a function
(or a lambda) into a field with a contract, and every function that returns an object it just
acquired. `callback_findings` joins them over the whole tree.
"""
from __future__ import annotations

from .. import ir
from ..findings import Finding, Step
from ..ir import AddrOf, Call, Deref, Field, Opaque, Var
from ..policy import Policy
from .slot_facts import FreshReturn, Install, SlotFacts


def _installed_field(dest: ir.Expr) -> str | None:
    """`alloc->Info`, `a.Info`, `this->Info` or (inside a method of a derived struct) `Info`."""
    if isinstance(dest, Field):
        return dest.name
    if isinstance(dest, Var):
        return dest.name
    return None


def _installed_function(fn: ir.Function, value: ir.Expr, loc: ir.Loc) -> str | None:
    if isinstance(value, AddrOf):
        value = value.base
    if isinstance(value, Deref):
        value = value.base
    if isinstance(value, Var) and value.name not in fn.locals and value.name not in fn.params \
            and not value.name.startswith("$"):
        return value.name
    if isinstance(value, Opaque) and value.text == "lambda":
        return f"{fn.name}::<lambda@{loc.line}>"
    return None


def note_install(fn: ir.Function, ev: ir.Assign, policy: Policy, facts: SlotFacts) -> None:
    """Record `x->F = fn;` when field F has a `borrowed` result contract."""
    name = _installed_field(ev.dest)
    specs = policy.callbacks.get(name or "")
    if not specs or not any(s.result == "borrowed" for s in specs):
        return
    target = _installed_function(fn, ev.value, ev.loc)
    if target is None:
        return
    facts.installs.append(Install(name or "", target, fn.path, ev.loc, fn.name))


def note_fresh_return(fn: ir.Function, term: ir.Return, fresh: dict[str, tuple[Call, str]], facts: SlotFacts) -> None:
    """Record that `fn` returns an object it acquired (a local or temporary filled by the acquisition)."""
    value = term.value
    if not isinstance(value, Var) or value.name not in fresh or fn.name in facts.fresh_returns:
        return
    call, kind = fresh[value.name]
    facts.fresh_returns[fn.name] = FreshReturn(fn.path, call.loc, call.callee, kind)


def _short(name: str) -> str:
    return name.rsplit("::", 1)[-1] if "<lambda@" not in name else name


def callback_findings(all_facts: list[SlotFacts], policy: Policy) -> list[Finding]:
    """ORT001 at the acquisition inside a function installed where ONNX Runtime borrows the result."""
    fresh: dict[tuple[str, str], tuple[str, object]] = {}  # ("" or path, name) -> (full name, FreshReturn)
    for facts in all_facts:
        for name, ret in facts.fresh_returns.items():
            for scope in (ret.path, ""):  # a name in the installer's own file wins over the same name elsewhere
                fresh.setdefault((scope, name), (name, ret))
                fresh.setdefault((scope, _short(name)), (name, ret))
    findings: dict[tuple, Finding] = {}
    for facts in all_facts:
        for inst in facts.installs:
            found = next((fresh[k] for k in ((inst.path, inst.function), (inst.path, _short(inst.function)),
                                             ("", inst.function), ("", _short(inst.function))) if k in fresh), None)
            if found is None:
                continue
            fn_name, ret = found
            spec = next(s for s in policy.callbacks[inst.field] if s.result == "borrowed")
            kind = policy.kinds.get(ret.kind)
            label = kind.label if kind is not None else ret.kind
            shown = f"{fn_name}()" if "<lambda@" not in fn_name else "a lambda"
            message = (f"{label} acquired by {ret.callee}() is returned by {shown}, installed as "
                       f"{spec.struct}::{spec.field} at line {inst.loc.line}: ONNX Runtime treats what {spec.field} returns "
                       f"as borrowed and never releases it, so every call leaks one; create it once and keep it "
                       f"with the {spec.struct}")
            steps = (Step(ret.path, ret.loc.line, ret.loc.col, f"{label} acquired by {ret.callee}() and returned"),
                     Step(inst.path, inst.loc.line, inst.loc.col, f"{shown} installed as {spec.struct}::{spec.field}"))
            key = (ret.path, ret.loc.line, ret.loc.col)
            findings.setdefault(key, Finding("ORT001", ret.path, ret.loc.line, ret.loc.col, ret.loc.end_line,
                                             ret.loc.end_col, message, fn_name, steps,
                                             anchor=f"callback:{spec.struct}::{spec.field}:{ret.callee}",
                                             kind=ret.kind))
    return list(findings.values())
