"""One run of ortlint: files -> front ends -> IR -> summaries in call-graph order -> findings.

This module wires the layers together; it holds no analysis and no formatting of its own.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from . import ir
from .discover import SourceFile, discover
from .engine.analyze import FunctionAnalyzer, FunctionResult, Options
from .engine.summaries import Summary
from .findings import Finding, Notice, Report
from .policy import Policy

FunctionKey = tuple[str, str, int]  # (path, name, line)


@dataclass
class RunConfig:
    paths: list[str]
    policy: Policy
    options: Options = field(default_factory=Options)
    excludes: tuple[str, ...] = ()
    use_default_excludes: bool = True
    jobs: int = 1  # worker processes (0 = all cores)
    compile_commands: str | None = None  # compile_commands.json: parse C/C++ with libclang
    cache_dir: str | None = None  # per-file cache of parsed IR and summaries (None = off)
    extensions: dict[str, str] | None = None  # extra suffix -> language mappings


def parse_file(source: SourceFile, policy: Policy, data: bytes | None = None,
               compile_commands: str | None = None) -> ir.SourceUnit:
    """Run the front end that fits the file's language; never raise.

    With a compile database, C and C++ files listed in it go through libclang; a file libclang
    cannot handle falls back to tree-sitter with a notice, so no result is silently lost.
    """
    if compile_commands and source.language in ("c", "cpp"):
        try:
            from .frontends.clang_frontend import parse_with_clang
        except ImportError:
            parse_with_clang = None
        if parse_with_clang is not None:
            try:
                unit = parse_with_clang(source.path, policy, compile_commands)
            except Exception as exc:  # noqa: BLE001 - fall back, and say so
                unit = None
                fallback_note = f"libclang failed on this file ({type(exc).__name__}: {exc}); analyzed with tree-sitter instead"
            else:
                fallback_note = None
            if unit is not None:
                return unit
            result = parse_file(source, policy, data)
            if fallback_note:
                result.notes.append((ir.Loc(1, 1, 1, 1), fallback_note))
            return result
    try:
        if source.language == "c":
            from .frontends.c_treesitter import parse_c
            return parse_c(source.path, policy, data)
        if source.language == "cpp":
            try:
                from .frontends.cpp_treesitter import parse_cpp
            except ImportError:
                from .frontends.c_treesitter import parse_c as parse_cpp
            return parse_cpp(source.path, policy, data)
        if source.language == "java":
            try:
                from .frontends.java_treesitter import parse_java
            except ImportError:
                return ir.SourceUnit(source.path, "java", [], [], 0)
            return parse_java(source.path, policy, data)
    except RecursionError:
        return ir.SourceUnit(source.path, source.language, [],
                             [(ir.Loc(1, 1, 1, 1), "file is nested too deeply to parse; skipped")], 0)
    except Exception as exc:  # a front-end bug must not lose the other files' results
        return ir.SourceUnit(source.path, source.language, [],
                             [(ir.Loc(1, 1, 1, 1), f"internal error while parsing: {type(exc).__name__}: {exc}")], 0)
    return ir.SourceUnit(source.path, source.language, [], [], 0)


class Program:
    """All functions of the analyzed files, with name resolution for plain calls."""

    def __init__(self, units: Iterable[ir.SourceUnit]):
        self.units = list(units)
        self.functions: dict[FunctionKey, ir.Function] = {}
        self.by_file_name: dict[tuple[str, str], FunctionKey] = {}
        self.global_by_name: dict[str, FunctionKey] = {}
        for unit in self.units:
            for fn in unit.functions:
                key = (fn.path, fn.name, fn.loc.line)
                self.functions[key] = fn
                self.by_file_name.setdefault((fn.path, fn.name), key)
                short = fn.name.rsplit("::", 1)[-1]
                if short != fn.name:
                    self.by_file_name.setdefault((fn.path, short), key)
                if not fn.is_static:
                    self.global_by_name.setdefault(fn.name, key)
                    if short != fn.name:
                        self.global_by_name.setdefault(short, key)

    def resolve(self, caller: ir.Function, callee: str) -> FunctionKey | None:
        key = self.by_file_name.get((caller.path, callee))
        if key is None:
            key = self.global_by_name.get(callee)
        return key

    def call_graph(self) -> dict[FunctionKey, list[FunctionKey]]:
        graph: dict[FunctionKey, list[FunctionKey]] = {}
        for key, fn in self.functions.items():
            targets = []
            for name in sorted(fn.callees()):
                target = self.resolve(fn, name)
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


class Analysis:
    """Analyzes a `Program`: summaries bottom-up over the call graph, then findings."""

    MAX_SCC_ROUNDS = 3

    def __init__(self, program: Program, policy: Policy, options: Options,
                 seed_summaries: dict[FunctionKey, Summary | None] | None = None):
        self.program = program
        self.policy = policy
        self.options = options
        self.summaries: dict[FunctionKey, Summary | None] = dict(seed_summaries or {})
        self.results: dict[FunctionKey, FunctionResult] = {}

    def lookup_for(self, fn: ir.Function) -> Callable[[ir.Call], Summary | None]:
        def lookup(call: ir.Call) -> Summary | None:
            if call.style != "plain":
                return None
            key = self.program.resolve(fn, call.callee)
            return self.summaries.get(key) if key is not None else None
        return lookup

    def analyze_function(self, key: FunctionKey) -> FunctionResult:
        fn = self.program.functions[key]
        result = FunctionAnalyzer(fn, self.policy, self.lookup_for(fn), self.options).run()
        self.results[key] = result
        return result

    def run(self) -> None:
        graph = self.program.call_graph()
        for component in strongly_connected(graph):
            recursive = len(component) > 1 or component[0] in graph.get(component[0], [])
            rounds = self.MAX_SCC_ROUNDS if recursive else 1
            for _ in range(rounds):
                changed = False
                for key in component:
                    result = self.analyze_function(key)
                    if self.summaries.get(key) != result.summary:
                        self.summaries[key] = result.summary
                        changed = True
                if not changed:
                    break


def run(config: RunConfig, progress: Callable[[str], None] | None = None) -> Report:
    """Analyze the paths of `config` and return every finding and notice, sorted."""
    started = time.perf_counter()
    report = Report()
    found = discover(config.paths, config.excludes, config.use_default_excludes, config.extensions)
    for path, message in found.problems:
        report.notices.append(Notice(path, 0, message, "error" if "no such" in message else "warning"))
    units = []
    for source in found.files:
        unit = parse_file(source, config.policy, compile_commands=config.compile_commands)
        units.append(unit)
        report.files.append(source.path)
        for loc, message in unit.notes:
            report.notices.append(Notice(source.path, loc.line, message))
    parsed = time.perf_counter()
    program = Program(units)
    analysis = Analysis(program, config.policy, config.options)
    analysis.run()
    for key, result in analysis.results.items():
        fn = program.functions[key]
        report.findings.extend(result.findings)
        for line, message in result.notes:
            report.notices.append(Notice(fn.path, line, message, "note"))
        for loc, message in fn.notes:
            report.notices.append(Notice(fn.path, loc.line, message, "note"))
        for name, count in result.unknown_callees.items():
            report.unknown_callees[name] = report.unknown_callees.get(name, 0) + count
    report.findings = list({(f.rule, f.path, f.line, f.col, f.anchor): f for f in report.findings}.values())
    report.sort()
    report.stats = {"files": len(found.files), "functions": len(program.functions),
                    "lines": sum(u.lines for u in units), "parse_seconds": parsed - started,
                    "analysis_seconds": time.perf_counter() - parsed}
    return report
