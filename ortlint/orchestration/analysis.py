"""Analysis of a `Program`: summaries bottom-up over the call graph (callees first, recursive components to a
fixed point), here or in the worker processes, and the findings."""
from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Callable

from .. import ir
from .cache import summary_digest

if TYPE_CHECKING:
    from .parallel import WorkerPool
from ..engine.analyze import FunctionResult, Options
from ..engine.own_representation import is_entry_candidate
from ..engine.summaries import Summary
from ..policy import Policy
from .program import FunctionInfo, FunctionKey, Program, strongly_connected
from .progress import Progress
from .schedule import ChainRanks, Readiness
from .tasks import MAX_SCC_ROUNDS, analyze_safely


class Analysis:
    """Analyzes a `Program`: summaries bottom-up over the call graph, then findings.

    A function whose cached record was computed against the same callee summaries is not
    analyzed again; the others get their IR from `load_ir` (the file is parsed once, lazily).
    """

    MAX_SCC_ROUNDS = MAX_SCC_ROUNDS

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
        self.progress = Progress()  # told how many functions have results (the runner's display)

    def lookup_for(self, caller: FunctionKey) -> Callable[[ir.Call], Summary | None]:
        def lookup(call: ir.Call) -> Summary | None:
            name = ir.program_name(call)
            if name is None:
                return None
            key = self.program.resolve(caller, name)
            return self.summaries.get(key) if key is not None else None
        return lookup

    def current_deps(self, info: FunctionInfo) -> dict[str, str]:
        deps = {"$constants": self.constants_digest}
        component = self.component_of.get(info.key)
        for name in info.callees:
            if self.policy.lookup("plain", name) is not None:
                continue  # the policy describes it; the callee's own code does not matter
            target = self.program.resolve(info.key, name)
            if component is not None and self.component_of.get(target) == component:
                # a recursive call: the component is analyzed as a whole, from scratch, so its
                # results depend on its code and on the summaries from outside it only (its own
                # summaries change from round to round and would never match a cached record)
                continue
            deps[name] = self._digest(self.summaries.get(target)) if target is not None else "-"
        return deps

    def needs_summary(self, key: FunctionKey) -> bool:
        """Summaries of functions nobody calls are only kept for the cache (a later run may add
        a caller): without a cache, building them is a tenth of the analysis for nothing. A
        function that may implement a policy release entry keeps its summary: it tells how the
        program releases that entry's kind (engine/own_representation.py)."""
        return self.summarize_all or key in self.called or is_entry_candidate(self.policy, key[1])

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
            result = self.results[key] = FunctionResult([], None, {}, [(key[2], self.pool.orphan_note(key))])
            return result
        if info.fn is None and self.load_ir is not None:
            self.load_ir(key[0])
        if info.fn is None:  # the file changed under us: keep what the record says
            return self._from_record(info)
        result = analyze_safely(info.fn, self.policy, self.lookup_for(key), self.options, self.constants,
                                self.needs_summary(key))
        self.results[key] = result
        if self.track_deps:
            self.deps[key] = self.current_deps(info)
        self.analyzed += 1
        self.progress.functions_analyzed(len(self.results))
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
        self.progress.start_functions(sum(1 for info in self.program.functions.values() if not info.context))
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
        self.progress.functions_analyzed(len(self.results))

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
                target = self.program.resolve(info.key, name)
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
            target = self.program.resolve(info.key, name)
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
        for info in infos:  # IR fetched from a worker is needed no more (never fetched twice)
            if info.remote:
                info.fn = None
