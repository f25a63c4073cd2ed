"""Why the engine reported nothing for a runtime error: facts read off the IR the front ends built.

The engine decides findings; it does not record *where* a resource stopped being its business.
When a runtime leak has no ORT001 behind it, the reason is almost always one of the engine's
documented rules (architecture.md, "The engine"): storing a resource anywhere but a local, returning it,
or handing it to a call that takes ownership is an escape. This module finds the statement that
triggered such a rule for one acquiring call, by following the variable that received the resource
through the function's events, so the explanation can name the line. It decides nothing about
findings; it only answers "what happens to the value this call produced".
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .. import ir
from ..discover import SourceFile, language_of
from ..fileio import read_prefix
from ..frontends.common.source import MAX_BYTES
from ..orchestration.parsing import parse_file
from ..policy import Policy

RETURNED = "returned"  # handed back to the caller: the caller's frame is the next place to look
CALLER_MEMORY = "caller-memory"  # written through a parameter (`*out = x`, `p->f = x`): the caller owns it now
GLOBAL = "global"  # stored into a global or static variable
MEMORY = "memory"  # stored into memory the function does not own (a pointer from elsewhere)
HANDED = "handed"  # passed to a call that takes ownership (policy `escapes` or an unknown function)


@dataclass(frozen=True)
class Fate:
    """What happens to an acquired value after the acquiring call (the first escape found)."""

    how: str
    line: int
    slot: str = ""  # the expression stored into, or the callee it was handed to
    root: str = ""  # the variable at the root of `slot` (a global's name)


class TreeCode:
    """The IR of the analyzed files, parsed on demand (only files named by a runtime stack)."""

    def __init__(self, files: list[str], policy: Policy, extensions: dict[str, str] | None = None):
        self.files = files
        self.policy = policy
        self.extensions = extensions
        self._units: dict[str, list[ir.Function]] = {}

    def functions(self, path: str) -> list[ir.Function]:
        if path not in self._units:
            language = language_of(path, self.extensions) or "c"
            try:
                unit = parse_file(SourceFile(path, language), self.policy)
                self._units[path] = list(unit.functions)
            except Exception:  # noqa: BLE001 - an explanation must never crash the command
                self._units[path] = []
        return self._units[path]

    def functions_mentioning(self, word: str) -> list[ir.Function]:
        """Functions of the files whose text contains `word` (parsing only those: a tree can be big)."""
        needle = word.encode("utf-8")
        found = []
        for path in self.files:
            if path not in self._units:
                try:
                    if needle not in read_prefix(path, MAX_BYTES + 1):
                        continue
                except OSError:
                    continue
            found.extend(self.functions(path))
        return found

    def function_at(self, path: str, line: int) -> ir.Function | None:
        """The innermost function whose body spans `line`."""
        best = None
        for fn in self.functions(path):
            if fn.loc.line <= line <= fn.loc.end_line and (best is None or fn.loc.line >= best.loc.line):
                best = fn
        return best


def calls_at(fn: ir.Function, line: int) -> list[ir.Call]:
    """The calls whose source range covers `line`, innermost (shortest) first."""
    found = [ev for b in fn.blocks for ev in b.events
             if isinstance(ev, ir.Call) and ev.loc.line <= line <= ev.loc.end_line]
    return sorted(found, key=lambda c: (c.loc.end_line - c.loc.line, -c.loc.col))


def root_var(e: ir.Expr | None) -> str | None:
    while isinstance(e, (ir.Field, ir.Deref, ir.Index, ir.AddrOf)):
        e = e.base
    return e.name if isinstance(e, ir.Var) else None


def holders(call: ir.Call, policy: Policy) -> list[ir.Expr]:
    """Where the call puts what it acquires: its result, or the target of an out-argument."""
    spec = policy.lookup(call.style, call.callee)
    out: list[ir.Expr] = []
    if spec is not None and spec.acquires:
        for acquire in spec.acquires:
            index = acquire.arg
            if acquire.into == "return" and call.dest is not None:
                out.append(call.dest)
            elif index is not None and index < len(call.args):
                arg = call.args[index]
                out.append(ir.strip_addr(arg) or ir.Deref(arg))
        return out
    if call.dest is not None:  # a helper of the tree: its result or its out-arguments
        out.append(call.dest)
    out.extend(ir.strip_addr(a) for a in call.args if isinstance(a, ir.AddrOf))
    return out


def _storage(e: ir.Expr, fn: ir.Function) -> str:
    """'local', 'param' (the parameter variable itself), or where a store into `e` goes."""
    name = root_var(e)
    direct = isinstance(e, ir.Var)
    if name is None:
        return MEMORY
    if name.startswith("$") or name in fn.locals:
        return "local" if direct or fn.locals.get(name) else MEMORY
    if name in fn.params:
        return "local" if direct else CALLER_MEMORY
    return GLOBAL


def _mentions(e: ir.Expr | None, names: set[str]) -> bool:
    if isinstance(e, ir.Var):
        return e.name in names
    if isinstance(e, ir.Opaque):
        return any(_mentions(p, names) for p in e.parts)
    if isinstance(e, ir.Op):
        return any(_mentions(p, names) for p in e.operands)
    return False


def _events_after(fn: ir.Function, call: ir.Call) -> list[tuple[ir.Loc, object]]:
    """Events and terminators from the call on, in source order (flow-insensitive on purpose:
    the question is which statement the engine's escape rule fired on, not whether it ran)."""
    items: list[tuple[ir.Loc, object]] = []
    for b in fn.blocks:
        for ev in b.events:
            loc = getattr(ev, "loc", None)
            if loc is not None and ev is not call and (loc.line, loc.col) >= (call.loc.line, call.loc.col):
                items.append((loc, ev))
        if isinstance(b.term, ir.Return) and b.term.loc.line >= call.loc.line:
            items.append((b.term.loc, b.term))
    return sorted(items, key=lambda item: (item[0].line, item[0].col))


def fate(fn: ir.Function, call: ir.Call, policy: Policy, tree_names: set[str]) -> Fate | None:
    """The first escape of what `call` acquired, or None when it stays in local variables."""
    names: set[str] = set()
    for h in holders(call, policy):
        where = _storage(h, fn)
        if where == "local":
            names.add(root_var(h) or "")
        else:
            return Fate(where, call.loc.line, ir.expr_text(h), root_var(h) or "")
    names.discard("")
    for loc, ev in _events_after(fn, call):
        if isinstance(ev, ir.Assign) and _mentions(ev.value, names):
            where = _storage(ev.dest, fn)
            if where == "local":
                names.add(root_var(ev.dest) or "")
            else:
                return Fate(where, loc.line, ir.expr_text(ev.dest), root_var(ev.dest) or "")
        elif isinstance(ev, ir.Return) and _mentions(ev.value, names):
            return Fate(RETURNED, loc.line)
        elif isinstance(ev, ir.Call) and ev.style != "indirect":
            handed = _handed_to(ev, names, policy, tree_names)
            if handed:
                return Fate(HANDED, loc.line, handed)
    return None


def _handed_to(call: ir.Call, names: set[str], policy: Policy, tree_names: set[str]) -> str:
    """The callee's name when `call` takes ownership of a tracked value (policy or unknown)."""
    passed = [i for i, a in enumerate(call.args) if _mentions(a, names)]
    if not passed:
        return ""
    spec = policy.lookup(call.style, call.callee)
    if spec is not None:
        escapes = set(range(len(call.args))) if spec.escapes_all else set(spec.escapes)
        return call.callee if escapes & set(passed) else ""
    if call.style == "plain" and call.callee in tree_names or policy.is_neutral(call.style, call.callee):
        return ""
    return call.callee


@dataclass(frozen=True)
class Release:
    path: str
    line: int
    function: str


def releases_of_slot(code: TreeCode, slot: str, root: str) -> list[Release]:
    """Release calls anywhere in the tree whose argument is the same variable (`g_cached`) or a
    field of the same name (`h->session`, `table[i].session`): who could release what was stored."""
    field = slot.rsplit("->", 1)[-1].rsplit(".", 1)[-1] if ("->" in slot or "." in slot) else ""
    found: list[Release] = []
    for fn in code.functions_mentioning(field or root):
        for b in fn.blocks:
            for ev in b.events:
                if not isinstance(ev, ir.Call):
                    continue
                spec = code.policy.lookup(ev.style, ev.callee)
                if spec is None or spec.release is None or spec.release.arg is None \
                        or spec.release.arg >= len(ev.args):
                    continue
                arg = ev.args[spec.release.arg]
                if (isinstance(arg, ir.Field) and arg.name == field) if field else \
                        (isinstance(arg, ir.Var) and arg.name == root):
                    found.append(Release(fn.path, ev.loc.line, fn.name))
    return found


def same_file(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))
