"""The program being analyzed: every function (parsed, or known from the cache), name resolution, the call
graph and its strongly connected components."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from .. import ir
from ..engine.slots import unit_slot_facts
from ..policy import Policy
from .cache import FileRecord, FunctionRecord

FunctionKey = tuple[str, str, int]  # (path, name, line)


@dataclass
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
        self.global_by_name: dict[str, FunctionKey] = {}
        self.context_by_name: dict[str, FunctionKey] = {}
        self.file_constants: dict[str, dict[str, int]] = {}
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
        self.by_file_name.setdefault((path, name), info.key)
        short = name.rsplit("::", 1)[-1]
        if short != name:
            self.by_file_name.setdefault((path, short), info.key)
        if not info.is_static and not info.context:
            self.global_by_name.setdefault(name, info.key)
            if short != name:
                self.global_by_name.setdefault(short, info.key)
        elif not info.is_static:
            self.context_by_name.setdefault(name, info.key)

    def resolve(self, caller_path: str, callee: str) -> FunctionKey | None:
        key = self.by_file_name.get((caller_path, callee))
        if key is None:
            key = self.global_by_name.get(callee)
        if key is None:
            key = self.context_by_name.get(callee)
        return key

    def call_graph(self) -> dict[FunctionKey, list[FunctionKey]]:
        graph: dict[FunctionKey, list[FunctionKey]] = {}
        for key, info in self.functions.items():
            targets = []
            for name in info.callees:
                target = self.resolve(key[0], name)
                if target is not None:
                    targets.append(target)
            graph[key] = targets
        return graph


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
