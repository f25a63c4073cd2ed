"""The program being analyzed: every function (parsed, or known from the cache), name resolution, the call
graph and its strongly connected components."""
from __future__ import annotations

from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any, Iterable

from .. import ir
from ..engine.null_members import NULL_MEMBER
from ..engine.slots import unit_slot_facts
from ..engine.summaries import Summary
from ..frontends.registry import linkage_of, linkages_reached
from ..policy import Policy
from .cache import FileRecord, FunctionRecord

FunctionKey = tuple[str, str, int]  # (path, name, line)


@dataclass(slots=True)
class FunctionInfo:
    """A function of the program: its IR when parsed, or its cached record when not (yet)."""

    key: FunctionKey
    name: str
    is_static: bool
    callees: tuple[str, ...]
    fn: ir.Function | None = None
    record: FunctionRecord | None = None
    context: bool = False  # known from the cache index only: used for summaries, not reported
    remote: bool = False  # its IR lives in a worker process (parallel runs)


class Program:
    """All functions of the analyzed files (plus cached context), with name resolution."""

    def __init__(self, units: Iterable[ir.SourceUnit] = ()):
        self.functions: dict[FunctionKey, FunctionInfo] = {}
        self.by_file_name: dict[tuple[str, str], FunctionKey] = {}
        self.global_by_name: dict[tuple[str, str], FunctionKey] = {}  # (linkage, full name) -> function
        self.context_by_name: dict[tuple[str, str], FunctionKey] = {}
        self.file_constants: dict[str, dict[str, int]] = {}
        self._resolved: dict[tuple[str, str, str], FunctionKey | None] = {}
        self._method_classes: dict[str, set[str]] = {}  # last name segment -> the scopes defining it
        self._definitions: dict[str, int] = {}  # full name -> how many functions define it (overloads)
        for unit in units:
            self.add_unit(unit)

    def constants(self) -> dict[str, int]:
        """Integer constants declared anywhere in the analyzed tree (a name with two different
        values is dropped: it cannot be trusted)."""
        merged: dict[str, int] = {}
        clashes: set[str] = set()
        for _path, consts in sorted(self.file_constants.items()):
            for name, value in consts.items():
                if merged.get(name, value) != value:
                    clashes.add(name)
                merged[name] = value
        for name in clashes:
            del merged[name]
        # A member mentioned somewhere (`NAME{null}` = 1) is as unknown as one nobody declared:
        # kept out, so that the digest every cached result depends on changes only when the set
        # of never-given members does, not with each edit that mentions another member.
        for name in [n for n, v in merged.items() if v and n.endswith(NULL_MEMBER)]:
            del merged[name]
        return merged

    def add_unit(self, unit: ir.SourceUnit) -> None:
        self.file_constants[unit.path] = dict(unit.constants)
        for fn in unit.functions:
            key = (fn.path, fn.name, fn.loc.line)
            info = self.functions.get(key)
            if info is not None:
                info.fn = fn
                continue
            self._add(FunctionInfo(key, fn.name, fn.is_static, tuple(sorted(fn.callees())), fn=fn))

    def add_meta(self, meta: "UnitMeta") -> None:
        """A file parsed by a worker: names and callees here, the IR stays in the worker."""
        self.file_constants[meta.path] = dict(meta.constants)
        for name, line, is_static, callees, _notes in meta.functions:
            key = (meta.path, name, line)
            info = self.functions.get(key)
            if info is not None:
                info.remote = True
                continue
            self._add(FunctionInfo(key, name, is_static, callees, remote=True))

    def add_record(self, record: FileRecord, context: bool = False) -> None:
        self.file_constants.setdefault(record.path, dict(getattr(record, "constants", {})))
        for fr in record.functions:
            key = (record.path, fr.name, fr.line)
            if key not in self.functions:
                self._add(FunctionInfo(key, fr.name, fr.is_static, fr.callees, record=fr, context=context))

    def _add(self, info: FunctionInfo) -> None:
        path, name, _line = info.key
        self.functions[info.key] = info
        self._resolved.clear()
        full = normalized_name(name)
        parts = split_qualified(full)
        if len(parts) > 1:
            self._method_classes.setdefault(parts[-1], set()).add("::".join(parts[:-1]))
        self._definitions[full] = self._definitions.get(full, 0) + 1
        self.by_file_name.setdefault((path, full), info.key)
        if not info.is_static and not info.context:
            self.global_by_name.setdefault((linkage_of(path), full), info.key)
        elif not info.is_static:
            self.context_by_name.setdefault((linkage_of(path), full), info.key)

    def resolve(self, caller: FunctionKey | str, callee: str) -> FunctionKey | None:
        """The function a call by name from `caller` (its key; a path alone: a call from the
        global scope) reaches, as C++ name lookup would: the name in the caller's own scope
        (its class, for a method), then in each enclosing scope out to the global one, a
        function of the caller's file first (a `static` one is seen there only). A qualified
        name (`detail::f`, `Cls::Method`) is looked up the same way. A call that names a class
        (`TypeInfo{out}`, `Value{p}`) constructs an object: it binds to no function (its
        constructor's summary would not say what the object's base keeps). So a call by bare
        name never binds to a method of an unrelated class, nor to a function of a namespace
        the caller is not in, however many such functions the tree has. C and Java names have
        no scopes: they are looked up as they are. A name reaches only functions of the
        caller's linkage (`linkages_reached`): C# code never calls a C++ function by name."""
        path, name = (caller, "") if isinstance(caller, str) else (caller[0], caller[1])
        memo_key = (path, name, callee)
        hit = self._resolved.get(memo_key, _UNSEEN)
        if hit is not _UNSEEN:
            return hit
        found = None
        dispatched = callee.startswith(ir.DISPATCHED)
        candidates = self.candidates(name, callee)
        for candidate in candidates:
            found = self._lookup(path, candidate)
            if found is not None:
                break
        if found is None and not dispatched:
            found = self._constructor(path, candidates)
        if found is not None and dispatched and self._overridable(found):
            found = None  # a virtual call may reach an override: no one summary stands for it
        self._resolved[memo_key] = found
        return found

    @staticmethod
    def candidates(caller_name: str, callee: str) -> list[str]:
        """The full names a call by `callee` from the function `caller_name` may reach, in
        lookup order (see `resolve`)."""
        target = normalized_name(callee.removeprefix(ir.DISPATCHED))
        scopes = enclosing_scopes(caller_name) if "::" in caller_name else ("",)
        out = [f"{scope}::{target}" if scope else target for scope in scopes]
        # `Value{out}` inside a method of Value names the class (a construction), not the
        # constructor `Value::Value` its scope would give
        return [name for name in out if not _names_constructor(name) or _names_constructor(target)]

    def _constructor(self, path: str, candidates: list[str]) -> FunctionKey | None:
        """A call that names a class (`return Holder(h);`) runs one of its constructors: the
        one the tree defines, when it defines exactly one (no overload to choose among). Its
        summary is used only where it fits the call (`construction_summary`): a constructor
        that keeps nothing may not be the one that runs (one inherited with `using Base::Base`,
        one defined outside the tree), so the call then stays what it was."""
        for candidate in candidates:
            parts = split_qualified(candidate)
            if _names_constructor(candidate) or parts[-1].startswith("operator"):
                continue
            ctor = f"{candidate}::{parts[-1]}"
            if self._definitions.get(ctor) == 1:
                found = self._lookup(path, ctor)
                if found is not None:
                    return found
        return None

    def _overridable(self, key: FunctionKey) -> bool:
        """Whether another class of the program defines a method of the same name as `key`'s
        (an override a call through a base pointer or reference may reach instead)."""
        parts = split_qualified(normalized_name(key[1]))
        return len(parts) > 1 and len(self._method_classes.get(parts[-1], ())) > 1

    def wanted_names(self) -> set[str]:
        """Full names that would resolve calls no function of the program resolves now: what
        cached context files (unchanged files outside this run) are searched for."""
        out: set[str] = set()
        for info in self.functions.values():
            for callee in info.callees:
                if self.resolve(info.key, callee) is None:
                    out.update(self.candidates(info.name, callee))
        return out

    def _lookup(self, path: str, full: str) -> FunctionKey | None:
        key = self.by_file_name.get((path, full))
        reached = linkages_reached(path)
        for table in (self.global_by_name, self.context_by_name):
            for linkage in reached:
                if key is None:
                    key = table.get((linkage, full))
        return key

    def call_graph(self) -> dict[FunctionKey, list[FunctionKey]]:
        graph: dict[FunctionKey, list[FunctionKey]] = {}
        for key, info in self.functions.items():
            targets = []
            for name in info.callees:
                target = self.resolve(key, name)
                if target is not None:
                    targets.append(target)
            graph[key] = targets
        return graph


_UNSEEN = object()  # (a cache miss, where None is a cached answer)


@lru_cache(maxsize=1 << 14)
def split_qualified(name: str) -> tuple[str, ...]:
    """`ns::Box<std::string>::get` -> ("ns", "Box<std::string>", "get"): `::` inside template
    arguments or a lambda's `<lambda@12>` does not split, nor does an operator's name.

    Cached (a tuple, never changed by callers): the analysis asks it for every call a summary
    answers, with few distinct names. A name without template arguments, parentheses or an
    operator (most of them) splits at every `::` with `str.split`: `resolve` splits every
    candidate of every call, and the character loop was most of the call-graph time."""
    if "::" not in name:
        return (name,)
    if "<" not in name and "(" not in name and "operator" not in name:
        return tuple(name.split("::"))
    parts: list[str] = []
    depth = start = i = 0
    n = len(name)
    while i < n:
        if i == start and name.startswith("operator", i):
            break  # `operator<`, `operator()`: the rest is the name
        c = name[i]
        if c in "<(":
            depth += 1
        elif c in ">)" and depth:
            depth -= 1
        elif c == ":" and depth == 0 and name.startswith("::", i):
            parts.append(name[start:i])
            i += 2
            start = i
            continue
        i += 1
    parts.append(name[start:])
    return tuple(parts)


def _plain_segment(segment: str) -> str:
    """`Box<T>` -> `Box` (a template's methods are named with or without its arguments)."""
    if segment[:1] == "<" or segment.startswith("operator"):
        return segment
    cut = segment.find("<")
    return segment[:cut] if cut > 0 else segment


def normalized_name(name: str) -> str:
    """A function's or callee's name as the program indexes it: without template arguments
    and a leading `::`."""
    if "<" not in name and not name.startswith("::"):
        return name
    return "::".join(_plain_segment(p) for p in split_qualified(name.removeprefix("::")))


def enclosing_scopes(name: str) -> list[str]:
    """The scopes a call in function `name` looks names up in, innermost first: its class (or
    namespace, or enclosing function for a lambda), each enclosing one, then the global scope
    (`""`)."""
    parts = [_plain_segment(p) for p in split_qualified(name)][:-1]
    return ["::".join(parts[:i]) for i in range(len(parts), -1, -1)]


def strongly_connected(graph: dict[FunctionKey, list[FunctionKey]]) -> list[list[FunctionKey]]:
    """Tarjan's algorithm, iterative; components come out callees first."""
    index: dict[FunctionKey, int] = {}
    low: dict[FunctionKey, int] = {}
    on_stack: set[FunctionKey] = set()
    stack: list[FunctionKey] = []
    out: list[list[FunctionKey]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            succs = graph.get(node, [])
            recurse = False
            while i < len(succs):
                nxt = succs[i]
                i += 1
                if nxt not in index:
                    work.append((node, i))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if recurse:
                continue
            if work and low[node] < low[work[-1][0]]:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))
    return out


@dataclass
class UnitMeta:
    """What the main process needs to know about a parsed file (no IR)."""

    path: str
    language: str
    functions: list[tuple[str, int, bool, tuple[str, ...], list[tuple[int, str]]]]  # name, line, static, callees, notes
    notes: list[tuple[int, str]]
    lines: int
    constants: dict[str, int]
    dependencies: list[str]
    slots: Any = None  # engine/slots.SlotFacts: members and globals this file stores into and releases
    sizes: list[int] = field(default_factory=list)  # per function (same order): blocks + events, a cost estimate


def function_size(fn: ir.Function) -> int:
    """A rough estimate of what analyzing `fn` costs (to balance the workers' shares)."""
    return sum(len(b.events) + 1 for b in fn.blocks)


def unit_meta(unit: ir.SourceUnit, policy: Policy | None = None) -> UnitMeta:
    functions = [(fn.name, fn.loc.line, fn.is_static, tuple(sorted(fn.callees())), [(l.line, m) for l, m in fn.notes])
                 for fn in unit.functions]
    slots = unit_slot_facts(unit, policy) if policy is not None else None
    return UnitMeta(unit.path, unit.language, functions, [(l.line, m) for l, m in unit.notes], unit.lines,
                    dict(unit.constants), list(unit.dependencies), slots, [function_size(fn) for fn in unit.functions])


def construction_summary(call: ir.Call, summary: Summary | None) -> Summary | None:
    """The summary `resolve` found for `call`, unless the call names a class (a
    construction bound to the class's one constructor, `Program._constructor`) and that
    constructor does not fit it: another number of arguments, or it keeps none of them (does
    not release, take or store any): then no summary, and the call is what the policy or an
    unknown callee makes it, as before the constructor was known. A constructor that stores
    its parameter in a member (its own or its base's: `Holder(T *h) { p_ = h; }`) adopts it:
    the constructed object owns the handle."""
    if summary is None or call.style != "plain" or not _names_constructor(summary.name):
        return summary
    callee = normalized_name(call.callee)
    if _names_constructor(callee) or split_qualified(callee)[-1] != split_qualified(normalized_name(summary.name))[-1]:
        return summary  # `Cls::Cls(...)` itself, or not a construction
    if len(summary.params) != len(call.args):
        return None
    kept = {e.path[0] for case in summary.cases for e in case.effects
            if len(e.path) == 1 and e.what in ("release", "escape", "consume")}
    return summary if kept else None


def _names_constructor(name: str) -> bool:
    """`Cls::Cls` (or `ns::Cls::Cls`): a constructor's full name."""
    parts = split_qualified(name)
    return len(parts) > 1 and parts[-1] == parts[-2]
