"""One run of ortlint: files -> front ends -> IR -> summaries in call-graph order -> findings.

This module wires the layers together; it holds no analysis and no formatting of its own.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from . import ir
import contextlib
from collections import deque
import dataclasses
import gc
import hashlib
import os

from .paths import PACKAGE_DIR
from .cache import Cache, FileRecord, FunctionRecord, content_hash, file_stamps, summary_digest
from .discover import Discovery, SourceFile, discover
from .frontends.source import MAX_BYTES

if TYPE_CHECKING:
    from .parallel import UnitMeta, WorkerPool
from .engine.analyze import FunctionAnalyzer, FunctionResult, Options
from .engine.callbacks import callback_findings
from .engine.slots import slot_findings, unit_slot_facts
from .engine.summaries import Summary
from .findings import Notice, Report
from .parallel import LOST, Limits
from .schedule import ChainRanks, Readiness
from .policy import Policy
from .suppress import apply_suppressions

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
    suppressions: bool = False  # drop findings silenced by `ortlint: ignore[...]` comments (the CLI does)
    isolate: bool = True  # parse and analyze in worker processes, so a crash or a hang loses one file only
    limits: Limits = field(default_factory=Limits)  # per file / per function, in those workers
    include_dirs: tuple[str, ...] = ()  # where `#include "..."` headers are looked for (header_index)


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
                fallback_note = str(exc) if type(exc).__name__ == "ClangFallback" else \
                    f"libclang failed on this file ({type(exc).__name__}: {exc}); analyzed with tree-sitter instead"
            else:
                fallback_note = None
            if unit is not None:
                return unit
            result = parse_file(source, policy, data)
            if fallback_note:
                result.notes.append((ir.Loc(1, 1, 1, 1), fallback_note))
            return result
    try:
        if source.language == "c" and source.path.endswith(".h"):
            from .frontends.cpp_treesitter import is_cpp_header  # `.h` files of C++ projects
            if is_cpp_header(source.path, data):
                source = SourceFile(source.path, "cpp")
        if source.language == "c":
            from .frontends.c_treesitter import parse_c
            return parse_c(source.path, policy, data)
        if source.language == "cpp":
            from .frontends.cpp_treesitter import parse_cpp
            return parse_cpp(source.path, policy, data)
        if source.language == "java":
            from .frontends.java_treesitter import parse_java
            return parse_java(source.path, policy, data)
        if source.language == "go":
            from .frontends.go_treesitter import parse_go
            return parse_go(source.path, policy, data)
    except RecursionError:
        return ir.SourceUnit(source.path, source.language, [],
                             [(ir.Loc(1, 1, 1, 1), "file is nested too deeply to parse; skipped")], 0)
    except Exception as exc:  # a front-end bug must not lose the other files' results
        return ir.SourceUnit(source.path, source.language, [],
                             [(ir.Loc(1, 1, 1, 1), f"internal error while parsing: {type(exc).__name__}: {exc}")], 0)
    return ir.SourceUnit(source.path, source.language, [], [], 0)


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


def analyze_safely(fn: ir.Function, policy: Policy, lookup: Callable[[ir.Call], Summary | None],
                   options: Options, constants: dict[str, int], summarize: bool = True) -> FunctionResult:
    """One function's analysis; an internal error becomes a notice for that function only, so
    a bug never hides the findings of the rest of the tree."""
    started = time.perf_counter()
    try:
        result = FunctionAnalyzer(fn, policy, lookup, options, constants).run(summarize)
        result.seconds = time.perf_counter() - started
        return result
    except RecursionError:
        message = f"{fn.name}() is too deeply nested to analyze; skipped"
    except Exception as exc:  # noqa: BLE001
        message = f"internal error while analyzing {fn.name}(): {type(exc).__name__}: {exc}"
    return FunctionResult([], None, {}, [(fn.loc.line, message)], seconds=time.perf_counter() - started)


class Analysis:
    """Analyzes a `Program`: summaries bottom-up over the call graph, then findings.

    A function whose cached record was computed against the same callee summaries is not
    analyzed again; the others get their IR from `load_ir` (the file is parsed once, lazily).
    """

    MAX_SCC_ROUNDS = 3

    def __init__(self, program: Program, policy: Policy, options: Options,
                 load_ir: Callable[[str], None] | None = None, pool: "WorkerPool | None" = None,
                 remote_parse: Callable[[list[str]], None] | None = None):
        self.program = program
        self.policy = policy
        self.options = options
        self.load_ir = load_ir
        self.pool = pool
        self.remote_parse = remote_parse
        self.summaries: dict[FunctionKey, Summary | None] = {}
        self.results: dict[FunctionKey, FunctionResult] = {}
        self.constants = program.constants()
        self.constants_digest = summary_digest(tuple(sorted(self.constants.items())))
        self.deps: dict[FunctionKey, dict[str, str]] = {}
        self.track_deps = True  # only the cache needs them: a run without one turns this off
        self.component_of: dict[FunctionKey, int] = {}  # members of recursive components -> component
        self.summarize_all = True  # the cache keeps every summary; without one, only called functions need theirs
        self.called: set[FunctionKey] = set()
        self._digests: dict[int, tuple[Summary, str]] = {}  # id(summary) -> (summary, digest)
        self.reused = 0
        self.analyzed = 0
        self.graph: dict[FunctionKey, list[FunctionKey]] | None = None
        self.graph_seconds = 0.0  # call graph and its components (timing hook for --stats and bench/)

    def lookup_for(self, path: str) -> Callable[[ir.Call], Summary | None]:
        def lookup(call: ir.Call) -> Summary | None:
            if call.style != "plain":
                return None
            key = self.program.resolve(path, call.callee)
            return self.summaries.get(key) if key is not None else None
        return lookup

    def current_deps(self, info: FunctionInfo) -> dict[str, str]:
        deps = {"$constants": self.constants_digest}
        component = self.component_of.get(info.key)
        for name in info.callees:
            if self.policy.lookup("plain", name) is not None:
                continue  # the policy describes it; the callee's own code does not matter
            target = self.program.resolve(info.key[0], name)
            if component is not None and self.component_of.get(target) == component:
                # a recursive call: the component is analyzed as a whole, from scratch, so its
                # results depend on its code and on the summaries from outside it only (its own
                # summaries change from round to round and would never match a cached record)
                continue
            deps[name] = self._digest(self.summaries.get(target)) if target is not None else "-"
        return deps

    def needs_summary(self, key: FunctionKey) -> bool:
        """Summaries of functions nobody calls are only kept for the cache (a later run may add
        a caller): without a cache, building them is a tenth of the analysis for nothing."""
        return self.summarize_all or key in self.called

    def _digest(self, summary: Summary | None) -> str:
        """`summary_digest`, computed once per summary (a helper called from 100 places is
        otherwise serialized 100 times)."""
        if summary is None:
            return summary_digest(None)
        hit = self._digests.get(id(summary))
        if hit is None or hit[0] is not summary:
            hit = self._digests[id(summary)] = (summary, summary_digest(summary))
        return hit[1]

    def analyze_function(self, key: FunctionKey) -> FunctionResult:
        info = self.program.functions[key]
        if self.pool is not None and key[0] in self.pool.lost_files:  # never parsed here, in the main process
            result = self.results[key] = FunctionResult([], None, {}, [(key[2], f"{LOST}{key[1]}() was not analyzed: "
                                                                        "its file was lost")])
            return result
        if info.fn is None and self.load_ir is not None:
            self.load_ir(key[0])
        if info.fn is None:  # the file changed under us: keep what the record says
            return self._from_record(info)
        result = analyze_safely(info.fn, self.policy, self.lookup_for(key[0]), self.options, self.constants,
                                self.needs_summary(key))
        self.results[key] = result
        if self.track_deps:
            self.deps[key] = self.current_deps(info)
        self.analyzed += 1
        return result

    def _from_record(self, info: FunctionInfo) -> FunctionResult:
        rec = info.record
        assert rec is not None
        result = FunctionResult(list(rec.findings), rec.summary, dict(rec.unknown_callees), list(rec.notes))
        self.results[info.key] = result
        self.deps[info.key] = dict(rec.deps)
        return result

    def _reusable(self, info: FunctionInfo) -> bool:
        return (info.fn is None and not info.remote and info.record is not None
                and info.record.deps == self.current_deps(info))

    def _settled(self, infos: list[FunctionInfo]) -> bool:
        """Context and reusable cached functions need no analysis: take their records."""
        if all(i.context for i in infos):
            for i in infos:
                self.summaries[i.key] = i.record.summary if i.record else None
            return True
        if all(i.context or self._reusable(i) for i in infos):
            for i in infos:
                self.summaries[i.key] = self._from_record(i).summary
                self.reused += 0 if i.context else 1
            return True
        return False

    def run(self) -> None:
        started = time.perf_counter()
        graph = self.graph = self.program.call_graph()
        components = strongly_connected(graph)
        self.called = {target for targets in graph.values() for target in targets}
        for index, component in enumerate(components):
            if len(component) > 1 or component[0] in graph.get(component[0], ()):
                self.component_of.update((k, index) for k in component)
        self.graph_seconds = time.perf_counter() - started
        if self.pool is not None:
            self._run_parallel(graph, components)
            return
        for component in components:
            infos = [self.program.functions[k] for k in component]
            if self._settled(infos):
                continue
            self._analyze_component(component, graph)

    def _run_parallel(self, graph: dict[FunctionKey, list[FunctionKey]], components: list[list[FunctionKey]]) -> None:
        """Each component goes to the worker that holds its IR as soon as its callees are done
        (schedule.Readiness); the results are those of a serial run. What needs the workers
        idle (sending IR back, parsing files again) waits until nothing is running."""
        assert self.pool is not None
        pool = self.pool
        readiness = Readiness(graph, components)

        estimates = pool.estimator(components)

        index_of = {key: i for i, members in enumerate(components) for key in members}

        def priority() -> ChainRanks:
            """Costliest chain first, by the pool's estimates (which learn as results come)."""
            return ChainRanks(readiness.chain_costs(estimates()), index_of)
        expected: dict[int, int] = {}  # component -> results still to come from the workers
        local: deque[int] = deque()  # components the main process analyzes itself
        blocked: list[int] = []  # ready, but need the workers idle first
        jobs: list[tuple] = []  # ready for the workers, not yet handed to the pool

        def start(ready: list[int], streaming: bool) -> None:
            work = list(ready)
            while work:
                i = work.pop()
                infos = [self.program.functions[k] for k in components[i]]
                if self._settled(infos):
                    work.extend(readiness.done(i))
                    continue
                job = self._placement(infos, graph, streaming)
                if job is None:
                    blocked.append(i)
                elif job == "local":
                    local.append(i)
                else:
                    jobs.append(job)
                    expected[i] = len(infos)

        def take(results: dict[FunctionKey, FunctionResult | None]) -> None:
            self._take_results(results)
            for key in results:
                i = index_of[key]
                expected[i] -= 1
                if not expected[i]:
                    start(readiness.done(i), streaming=True)

        def analyze_local() -> bool:
            """One component in the main process while it waits for the workers."""
            if local:
                i = local.popleft()
                self._analyze_component(components[i], graph)
                start(readiness.done(i), streaming=True)
            return bool(local)

        def ready_jobs() -> list[tuple]:
            out = jobs[:]
            jobs.clear()
            return out

        start(readiness.initial(), streaming=False)
        while jobs or local or blocked:
            if jobs:
                pool.analyze(ready_jobs(), self.constants, on_results=take, idle=analyze_local, more=ready_jobs,
                             priority=priority)
            while local and not jobs:
                analyze_local()
            waiting, blocked[:] = blocked[:], []
            start(waiting, streaming=False)  # nothing runs now: IR can be fetched, files parsed
            if not (jobs or local or blocked):  # a result that never came must not silence its callers
                start([i for i in readiness.release_stuck() if not expected.get(i)], streaming=False)

    def _placement(self, infos: list[FunctionInfo], graph: dict[FunctionKey, list[FunctionKey]],
                   streaming: bool) -> tuple | str | None:
        """Where a ready component is analyzed: its job for a worker, "local" (the main
        process: a recursive component spread over two workers, or IR that is here), or None
        when that needs the workers idle first and some are busy (`streaming`)."""
        needs_ir = [i for i in infos if i.fn is None and not i.remote and not i.context]
        if needs_ir and self.remote_parse is not None:
            if streaming:
                return None
            self.remote_parse(sorted({i.key[0] for i in needs_ir}))
        first = infos[0].key
        recursive = len(infos) > 1 or first in graph.get(first, [])
        if recursive and self._one_worker_holds(infos):
            return self._component_job(infos)  # analyzed as a whole by that worker
        if recursive or not all(i.remote for i in infos if not i.context):
            if streaming and any(i.fn is None and i.remote for i in infos):
                return None  # its IR is in a worker that may be busy
            self._fetch_ir(infos)
            return "local"
        info = infos[0]
        return (info.key, self._callee_summaries(info), self.needs_summary(info.key))

    def _take_results(self, results: dict[FunctionKey, FunctionResult | None]) -> None:
        for key, result in sorted(results.items()):
            info = self.program.functions[key]
            if result is None:
                result = self._from_record(info) if info.record else FunctionResult([], None, {}, [])
            self.results[key] = result
            self.summaries[key] = result.summary
            if self.track_deps:
                self.deps[key] = self.current_deps(info)
            self.analyzed += 1

    def _one_worker_holds(self, infos: list[FunctionInfo]) -> bool:
        """A recursive component whose functions were all parsed by one worker: that worker
        can run the component's rounds itself (the main process would compete with the
        workers for the cores, and the level would wait for it)."""
        if self.pool is None or any(i.context or not i.remote or i.fn is not None for i in infos):
            return False
        owners = {self.pool.owner.get(i.key[0]) for i in infos}
        return len(owners) == 1 and None not in owners and not any(i.key[0] in self.pool.lost_files for i in infos)

    def _component_job(self, infos: list[FunctionInfo]) -> tuple:
        """A component's job for its worker (parallel.MEMBER marks a call to another member)."""
        from .parallel import MEMBER
        members = {i.key for i in infos}
        entries = []
        for info in infos:
            table: dict[str, object] = {}
            for name in info.callees:
                target = self.program.resolve(info.key[0], name)
                table[name] = (MEMBER, target) if target in members else \
                    (self.summaries.get(target) if target is not None else None)
            entries.append((info.key, table, self.needs_summary(info.key)))
        first = infos[0]
        return (first.key, {}, self.needs_summary(first.key), entries)

    def _callee_summaries(self, info: FunctionInfo) -> dict[str, Summary]:
        """The summaries of the callees that have one, by name: a worker looks a name up and
        takes a missing one as "no summary", so library calls (most names) are not sent."""
        out = {}
        for name in info.callees:
            target = self.program.resolve(info.key[0], name)
            summary = self.summaries.get(target) if target is not None else None
            if summary is not None:
                out[name] = summary
        return out

    def _fetch_ir(self, infos: list[FunctionInfo]) -> None:
        remote = [i for i in infos if i.fn is None and i.remote]
        if remote and self.pool is not None:
            for key, fn in self.pool.fetch_ir([i.key for i in remote]).items():
                self.program.functions[key].fn = fn

    def _analyze_component(self, component: list[FunctionKey], graph: dict[FunctionKey, list[FunctionKey]]) -> None:
        infos = [self.program.functions[k] for k in component]
        recursive = len(component) > 1 or component[0] in graph.get(component[0], [])
        for _ in range(self.MAX_SCC_ROUNDS if recursive else 1):
            changed = False
            for info in infos:
                if info.context:
                    self.summaries[info.key] = info.record.summary if info.record else None
                    continue
                result = self.analyze_function(info.key)
                if self.summaries.get(info.key) != result.summary:
                    self.summaries[info.key] = result.summary
                    changed = True
            if not changed:
                break


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_BYTES + 1)
    except OSError:
        return None


def policy_namespace(policy: Policy, options: Options) -> str:
    """Cache namespace: changes whenever the policy files or the analysis options change."""
    h = hashlib.blake2b(digest_size=8)
    for path in policy.files:
        h.update(path.encode())
        h.update(_read(path) or b"")
    h.update(repr(options).encode())
    h.update(_code_digest())
    return h.hexdigest()


_CODE_DIGEST: bytes | None = None


def _code_digest() -> bytes:
    """ortlint's own source files: a changed engine or front end never reuses old results."""
    global _CODE_DIGEST
    if _CODE_DIGEST is None:
        h = hashlib.blake2b(digest_size=8)
        package = str(PACKAGE_DIR)
        for folder, dirs, names in sorted(os.walk(package)):
            dirs.sort()
            for name in sorted(n for n in names if n.endswith(".py")):
                path = os.path.join(folder, name)
                h.update(os.path.relpath(path, package).encode())
                h.update(_read(path) or b"")
        _CODE_DIGEST = h.digest()
    return _CODE_DIGEST


class _Parser:
    """Parses files on demand, each at most once, remembering the results for the cache."""

    def __init__(self, config: RunConfig, program: Program, by_path: dict[str, SourceFile]):
        self.config = config
        self.program = program
        self.by_path = by_path
        self.units: dict[str, ir.SourceUnit] = {}
        self.metas: dict[str, "UnitMeta"] = {}  # files parsed by worker processes
        self.data: dict[str, bytes] = {}

    def parse(self, path: str) -> ir.SourceUnit:
        unit = self.units.get(path)
        if unit is None:
            source = self.by_path[path]
            unit = parse_file(source, self.config.policy, self.data.pop(path, None),
                              compile_commands=self.config.compile_commands)
            self.units[path] = unit
            self.program.add_unit(unit)
        return unit


GC_THRESHOLDS = (100_000, 50, 1000)


@contextlib.contextmanager
def cycle_collection_paused(keep: bool = True) -> Iterator[None]:
    """Parsing builds syntax trees and IR without reference cycles (a few hundred cyclic
    objects per 100 K lines), and the engine's states, traces and analyzers have none either
    (`tests/test_engine_v2.py` checks): collecting while parsing or analyzing only walks the
    same objects again and again (a tenth of the analysis time).

    `keep`: what was made stays (the IR): it is set aside (`gc.freeze`), never scanned again;
    reference counting still frees it when it is dropped. Otherwise (an analysis request,
    whose objects die with it) the young generation is collected once at the end, so a cycle
    made on an unusual path (an exception's traceback) is not kept for the worker's life."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if keep:
            gc.freeze()
        else:
            gc.collect(0)
        if was_enabled:
            gc.enable()


def run(config: RunConfig, progress: Callable[[str], None] | None = None) -> Report:
    """Analyze the paths of `config` and return every finding and notice, sorted."""
    # The IR and the engine's states are millions of small objects with almost no reference
    # cycles: the collector's default thresholds make it rescan the whole heap over and over
    # (10-15% of a run). Collect rarely during the run; the caller's settings come back after.
    previous = gc.get_threshold()
    gc.set_threshold(*(max(a, b) for a, b in zip(GC_THRESHOLDS, previous)))
    try:
        return _run(config, progress)
    finally:
        gc.set_threshold(*previous)


def _run(config: RunConfig, progress: Callable[[str], None] | None = None) -> Report:
    started = time.perf_counter()
    report = Report()
    found = discover(config.paths, config.excludes, config.use_default_excludes, config.extensions)
    for path, message in found.problems:
        report.notices.append(Notice(path, 0, message, "error" if "no such" in message else "warning"))
    config = _with_compile_database(config, found.files, report)
    if any(s.language in ("c", "cpp") for s in found.files):  # the tree's own headers (workers inherit it)
        from .frontends.header_index import configure
        configure(config.include_dirs, tuple(config.paths))
    cache = None
    if config.cache_dir:  # the namespace hashes the policy files and ortlint's sources: not for nothing
        namespace = policy_namespace(config.policy, config.options) + _compile_database_digest(config.compile_commands) \
            + ("|I" + "|".join(config.include_dirs) if config.include_dirs else "")
        cache = Cache(config.cache_dir, namespace)
    program = Program()
    by_path = {s.path: s for s in found.files}
    parser = _Parser(config, program, by_path)
    hashes: dict[str, str] = {}
    run_key = None
    if cache is not None:
        contents = {s.path: _read(s.path) for s in found.files}
        hashes.update((path, content_hash(data or b"")) for path, data in contents.items())
        run_key = _run_key(namespace + ("|suppressions" if config.suppressions else ""), found, hashes, contents)
        replayed = _replay(cache, run_key, by_path, started) if run_key else None
        if replayed is not None:
            return replayed  # suppressions included: they come from the same file contents
        records, to_parse = _load_records(cache, found, contents, hashes, program, parser)
        read = contents.get  # suppression comments: from the contents already read, not a second read
    else:  # nothing to look up: the front ends (or the workers) read the files
        records, to_parse = {}, [s.path for s in found.files]
        hashes.update((s.path, "") for s in found.files)
        read = _read
    discovered = time.perf_counter()
    analysis, workers, parsed = _parse_and_analyze(config, found, to_parse, program, parser, cache)
    analyzed = time.perf_counter()
    dependencies = _assemble(report, found, program, analysis, parser, records, hashes, cache)
    report.stats = {
        "files": len(found.files), "functions": sum(1 for i in program.functions.values() if not i.context),
        "lines": sum(r.lines for r in (_unit_lines(parser, records, p) for p in by_path) if r is not None),
        "discover_seconds": discovered - started, "parse_seconds": parsed - discovered,
        "graph_seconds": analysis.graph_seconds, "analysis_seconds": analyzed - parsed - analysis.graph_seconds,
        "summary_seconds": sum(r.summary_seconds for r in analysis.results.values()),
        "report_seconds": time.perf_counter() - analyzed, "slowest_functions": _slowest(analysis),
        "parsed_files": len(parser.units) + len(parser.metas), "workers": workers,
        "analyzed_functions": analysis.analyzed, "reused_functions": analysis.reused,
        "cache_hits": cache.hits if cache else 0, "cache_misses": cache.misses if cache else 0,
    }
    if config.suppressions:
        report.stats["suppressed"] = apply_suppressions(report, lambda path: read(path) or b"")
    complete = not any(n.level == "error" for n in report.notices)
    if cache is not None and run_key and complete and not any(i.context for i in program.functions.values()):
        wanted = {name for info in program.functions.values() for name in info.callees
                  if program.resolve(info.key[0], name) is None}
        cache.store_run(run_key, {"report": report, "wanted": wanted, "dependencies": sorted(dependencies)})
    return report


def _load_records(cache: Cache, found: "Discovery", contents: dict[str, bytes | None], hashes: dict[str, str],
                  program: Program, parser: _Parser) -> tuple[dict[str, FileRecord], list[str]]:
    """Cached records of unchanged files go into the program; the rest must be parsed."""
    records: dict[str, FileRecord] = {}
    to_parse: list[str] = []
    for source in found.files:
        data = contents[source.path]
        record = cache.load(source.path, hashes[source.path]) if data is not None else None
        if record is not None:
            records[source.path] = record
            program.add_record(record)
            continue
        if data is not None:
            parser.data[source.path] = data
        to_parse.append(source.path)
    return records, to_parse


def _parse_and_analyze(config: RunConfig, found: "Discovery", to_parse: list[str], program: Program,
                       parser: _Parser, cache: Cache | None) -> tuple["Analysis", int, float]:
    """Parse what must be parsed (in worker processes when it pays) and analyze the program.
    Returns the analysis, the number of processes used and when parsing ended."""
    workers = config.jobs if config.jobs > 0 else (os.cpu_count() or 1)
    total_bytes = _total_bytes(to_parse, parser.data, PARALLEL_MIN_BYTES)
    pool = None
    big = len(found.files) >= PARALLEL_MIN_FILES and total_bytes >= PARALLEL_MIN_BYTES
    if workers > 1 and big:
        pool = _start_pool(workers, config)
    elif config.isolate and found.files:
        pool = _start_pool(1, config)
    by_path = parser.by_path
    try:
        if pool is not None:
            for meta in pool.parse([(p, by_path[p].language, parser.data.pop(p, None)) for p in to_parse]):
                parser.metas[meta.path] = meta
                program.add_meta(meta)
        else:
            with cycle_collection_paused():
                parse_many(to_parse, parser, 1)
        if cache is not None:
            _add_context(cache, program, by_path)
        parsed = time.perf_counter()
        analysis = Analysis(program, config.policy, config.options, load_ir=parser.parse, pool=pool,
                            remote_parse=(lambda paths: _remote_parse(pool, parser, program, by_path, paths)) if pool else None)
        analysis.track_deps = cache is not None
        analysis.summarize_all = cache is not None
        with cycle_collection_paused(keep=False):
            analysis.run()
        if pool is not None:
            for path, note in pool.relost.items():  # parsed once, lost when parsed again
                parser.metas[path].notes.append((1, note))
    finally:
        if pool is not None:
            pool.close()
    return analysis, len(pool.conns) if pool else 1, parsed


def _assemble(report: Report, found: "Discovery", program: Program, analysis: "Analysis", parser: _Parser,
              records: dict[str, FileRecord], hashes: dict[str, str], cache: Cache | None) -> set[tuple[str, int, int]]:
    """Findings, notices and summaries into the report, in a stable order; new records into the
    cache. Returns the headers the results depend on (precise mode)."""
    dependencies: set[tuple[str, int, int]] = set()
    slot_facts: list | None = []
    for source in found.files:
        record = _file_record(source.path, hashes[source.path], program, analysis, parser, records.get(source.path))
        dependencies.update(getattr(record, "dependencies", None) or ())
        _collect(report, record)
        facts = getattr(record, "slots", None)
        slot_facts = slot_facts + [facts] if slot_facts is not None and facts is not None else None
        report.files.append(source.path)
        if cache is not None and not lost(record) and (source.path in parser.units or source.path in parser.metas
                                                       or record is not records.get(source.path)):
            cache.store(record)
    if cache is not None:
        cache.flush()
    if slot_facts:  # members and globals over the whole tree (engine/slots.py); only with every file's facts
        report.findings.extend(slot_findings(slot_facts, parser.config.policy))
        report.findings.extend(callback_findings(slot_facts, parser.config.policy))
    report.keep_one_per_cause()
    called = analysis.called if analysis.graph is not None else \
        {target for targets in program.call_graph().values() for target in targets}
    report.summaries = {k: v for k, v in analysis.summaries.items()
                        if v is not None and k in called and not program.functions[k].context}
    report.sort()
    return dependencies


def _run_key(namespace: str, found: "Discovery", hashes: dict[str, str], contents: dict[str, bytes | None]) -> str | None:
    """What a whole run's result depends on besides the namespace: every file's path, language
    and content, and what discovery reported. None when a file cannot be read (its hash says
    nothing about what the front end will see)."""
    if any(data is None for data in contents.values()):
        return None
    h = hashlib.blake2b(namespace.encode(), digest_size=16)
    for source in sorted(found.files, key=lambda f: f.path):
        h.update(f"\0{source.path}\0{source.language}\0{hashes[source.path]}".encode())
    h.update(repr(sorted(found.problems)).encode())
    return h.hexdigest()


def _replay(cache: Cache, key: str, by_path: dict[str, SourceFile], started: float) -> Report | None:
    """The last run's report when nothing it depended on changed: the same files (the key),
    the same headers (precise mode), and still no cached summary from outside the run for the
    functions it could not resolve (a later run may have cached a file defining one)."""
    payload = cache.load_run(key)
    if not isinstance(payload, dict) or not isinstance(payload.get("report"), Report):
        return None
    deps = [tuple(d) for d in payload.get("dependencies", [])]
    if deps and file_stamps([p for p, _s, _m in deps]) != deps:
        return None
    wanted = set(payload.get("wanted", ()))
    if wanted:
        exclude = {os.path.abspath(p) for p in by_path}
        if any(cache.load(path, digest) is not None for path, digest in cache.unchanged_context(exclude, wanted)):
            return None
    report: Report = payload["report"]
    stats = dict(report.stats)
    stats.update({"discover_seconds": time.perf_counter() - started, "parse_seconds": 0.0, "graph_seconds": 0.0,
                  "analysis_seconds": 0.0, "summary_seconds": 0.0, "report_seconds": 0.0, "slowest_functions": [],
                  "parsed_files": 0, "workers": 1, "analyzed_functions": 0,
                  "reused_functions": stats.get("functions", 0), "cache_hits": stats.get("files", 0),
                  "cache_misses": 0, "run_cache": 1})
    report.stats = stats
    return report


def _slowest(analysis: Analysis, count: int = 5) -> list[tuple[str, str, int, float]]:
    """The functions whose analysis took longest: (path, name, line, seconds)."""
    top = sorted(analysis.results.items(), key=lambda kv: -kv[1].seconds)[:count]
    return [(key[0], key[1], key[2], round(result.seconds, 4)) for key, result in top if result.seconds > 0]


def _with_compile_database(config: RunConfig, files: list[SourceFile], report: Report) -> RunConfig:
    """Precise mode: the compile database given (a file or its folder), or one discovered in
    the analyzed tree or its build/ folder when C/C++ files are analyzed (an empty string turns it off)."""
    if not any(f.language in ("c", "cpp") for f in files) and config.compile_commands is None:
        return config
    from .frontends.compile_db import resolve_compile_commands  # cheap: no libclang, no C++ model
    resolved = resolve_compile_commands(config.compile_commands, config.paths)
    if resolved and resolved != config.compile_commands:
        report.notices.append(Notice(resolved, 0, "using this compile database: C/C++ files listed in it are "
                                     "parsed with libclang (precise mode)", "note"))
    return dataclasses.replace(config, compile_commands=resolved)


def _compile_database_digest(path: str | None) -> str:
    """Results in precise mode depend on the compile flags too."""
    if not path:
        return ""
    return "-" + hashlib.blake2b(path.encode() + (_read(path) or b""), digest_size=4).hexdigest()


def _add_context(cache: Cache, program: Program, by_path: dict[str, SourceFile]) -> None:
    """Summaries of unchanged files outside this run (pre-commit on a few files) that define
    functions the analyzed files call."""
    wanted = {name for info in program.functions.values() for name in info.callees
              if program.resolve(info.key[0], name) is None}
    if not wanted:
        return
    exclude = {os.path.abspath(p) for p in by_path}
    for path, digest in cache.unchanged_context(exclude, wanted):
        record = cache.load(path, digest)
        if record is not None:
            program.add_record(record, context=True)


@dataclass
class _Lines:
    lines: int


def _unit_lines(parser: _Parser, records: dict[str, FileRecord], path: str) -> _Lines | None:
    if path in parser.units:
        return _Lines(parser.units[path].lines)
    if path in parser.metas:
        return _Lines(parser.metas[path].lines)
    if path in records:
        return _Lines(records[path].lines)
    return None


def _total_bytes(paths: list[str], data: dict[str, bytes], enough: int) -> int:
    """Bytes to parse (stopping once past `enough`): read data where the cache step read it."""
    total = 0
    for path in paths:
        if path in data:
            total += len(data[path])
        else:
            try:
                total += os.path.getsize(path)
            except OSError:
                pass
        if total >= enough:
            break
    return total


PARALLEL_MIN_FILES = 16  # below this, starting workers costs more than it saves
PARALLEL_MIN_BYTES = 256 * 1024


def _start_pool(workers: int, config: RunConfig) -> "WorkerPool | None":
    from .parallel import WorkerPool
    try:
        return WorkerPool(workers, config.policy, config.options, config.compile_commands, config.limits)
    except (OSError, ValueError):  # no process support here: stay serial
        return None


def _remote_parse(pool: "WorkerPool", parser: _Parser, program: Program, by_path: dict[str, SourceFile],
                  paths: list[str]) -> None:
    """A cached file must be analyzed again after all: a worker parses it."""
    for meta in pool.parse([(p, by_path[p].language, _read(p)) for p in paths]):
        parser.metas[meta.path] = meta
        program.add_meta(meta)


def parse_many(paths: list[str], parser: _Parser, jobs: int) -> list[ir.SourceUnit]:
    """Parse files (in worker processes when jobs > 1); results come back in input order."""
    workers = jobs if jobs > 0 else (os.cpu_count() or 1)
    if workers <= 1 or len(paths) < 8:
        return [parser.parse(p) for p in paths]
    from concurrent.futures import ProcessPoolExecutor
    items = [(p, parser.by_path[p].language, parser.data.get(p), parser.config.compile_commands) for p in paths]
    try:
        with ProcessPoolExecutor(max_workers=workers, initializer=_worker_init,
                                 initargs=(parser.config.policy.files,)) as pool:
            units = list(pool.map(_worker_parse, items, chunksize=max(1, len(items) // (workers * 8))))
    except (OSError, RuntimeError):  # no process support here: do it serially
        return [parser.parse(p) for p in paths]
    for path, unit in zip(paths, units):
        parser.data.pop(path, None)
        parser.units[path] = unit
        parser.program.add_unit(unit)
    return units


_worker_policy: Policy | None = None


def _worker_init(policy_files: list[str]) -> None:
    global _worker_policy
    from .policy import load_policy
    _worker_policy = load_policy(policy_files, include_defaults=False)


def _worker_parse(item: tuple) -> ir.SourceUnit:
    path, language, data, compile_commands = item
    assert _worker_policy is not None
    return parse_file(SourceFile(path, language), _worker_policy, data, compile_commands)


def _file_record(path: str, digest: str, program: Program, analysis: Analysis, parser: _Parser,
                 previous: FileRecord | None) -> FileRecord:
    """What this run knows about one file, in the cache's terms."""
    unit = parser.units.get(path)
    meta = parser.metas.get(path)
    notes: list[tuple[int, str, str]]
    if unit is not None:
        notes = [(loc.line, msg, _level(msg)) for loc, msg in unit.notes]
        for fn in unit.functions:
            notes.extend((loc.line, msg, "note") for loc, msg in fn.notes)
        keys = [(fn.path, fn.name, fn.loc.line) for fn in unit.functions]
        lines = unit.lines
    elif meta is not None:
        notes = [(line, msg, _level(msg)) for line, msg in meta.notes]
        for _name, _line, _static, _callees, fn_notes in meta.functions:
            notes.extend((line, msg, "note") for line, msg in fn_notes)
        keys = [(path, name, line) for name, line, _s, _c, _n in meta.functions]
        lines = meta.lines
    else:
        assert previous is not None
        notes = list(previous.notes)
        keys = [(path, fr.name, fr.line) for fr in previous.functions]
        lines = previous.lines
    deps = unit.dependencies if unit is not None else meta.dependencies if meta is not None else None
    record = FileRecord(path, digest, lines, notes, constants=dict(program.file_constants.get(path, {})),
                        dependencies=file_stamps(deps) if deps is not None else list(previous.dependencies)
                        if previous is not None else [],
                        slots=unit_slot_facts(unit, parser.config.policy) if unit is not None
                        else meta.slots if meta is not None else previous.slots if previous is not None else None)
    for key in keys:
        info = program.functions.get(key)
        result = analysis.results.get(key)
        if info is None or result is None:
            continue
        record.functions.append(FunctionRecord(
            key[1], key[2], info.is_static, info.callees, result.summary, list(result.findings),
            list(result.notes), dict(result.unknown_callees), analysis.deps.get(key, {})))
    if previous is not None and unit is None and meta is None and _same_results(previous, record):
        return previous
    return record


def _level(message: str) -> str:
    """A file the run lost (a crash, a limit) is an error of the run; other file notes warn."""
    return "error" if message.startswith("internal error") else "warning"


def lost(record: FileRecord) -> bool:
    """Whether part of this file's results was lost: such records are never cached (a time
    limit met on a busy machine must not stick)."""
    return any(m.startswith("internal error") for _l, m, _v in record.notes) or \
        any(m.startswith("internal error") for fr in record.functions for _l, m in fr.notes)


def _same_results(a: FileRecord, b: FileRecord) -> bool:
    return [(f.name, f.line, f.deps) for f in a.functions] == [(f.name, f.line, f.deps) for f in b.functions]


def _collect(report: Report, record: FileRecord) -> None:
    for line, message, level in record.notes:
        report.notices.append(Notice(record.path, line, message, level))
    for fr in record.functions:
        report.findings.extend(fr.findings)
        for line, message in fr.notes:
            level = "error" if message.startswith("internal error") else "note"
            report.notices.append(Notice(record.path, line, message, level))
        for name, count in fr.unknown_callees.items():
            report.unknown_callees[name] = report.unknown_callees.get(name, 0) + count
