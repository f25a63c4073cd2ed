"""Parallel runs: worker processes that parse files, keep their IR, and analyze functions on
request, so no syntax tree crosses a process boundary (and IR only when work is moved).

The main process owns the program-wide view (names, call graph, summaries). A function is
sent for analysis, with the summaries of the callees it needs, as soon as those callees are
done (schedule.py), to the worker that parsed it; when one worker has much more queued than
the other, some of its functions' IR moves over. The results are exactly those of a serial
run, whatever the number of workers and wherever a function runs.

Workers are also what keeps one bad input from taking the run down. Each worker says in shared
memory which item (a file to parse, a function to analyze) it is working on and since when; the
main process watches them. A worker that dies (a native crash, an abort), runs one item past the
time limit, or raises outside an item is replaced; the item it was on is reported as lost (a
notice for that file or function), every other item of its request is sent again, and the files
it owned are parsed again by its replacement. Memory is bounded inside the worker: parsing one
file, or one request of analyses, may grow the worker's address space by at most the limit
(`RLIMIT_AS`), so a blow-up ends as a `MemoryError` for that item, not for the file after it;
the files of one parse request may together grow it by twice the limit at most. The limit holds
for the worker as a whole too: a worker whose address space ends a request more than the limit
above where it started (it kept what a blow-up left behind, or its IR grew that much) says so
(`RETIRE`) and is replaced, so that no worker grows request after request; a replacement starts
counting after it has parsed its files again, so a worker that legitimately holds that much IR is
replaced once, not over and over.
"""
from __future__ import annotations

import faulthandler
import multiprocessing as mp
import os
import pickle
import signal
import time
import traceback
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Callable, Mapping

from .. import ir
from ..discover import SourceFile
from ..engine.analyze import FunctionResult, Options
from ..engine.summaries import Summary
from ..findings import LIMIT, LOST, STOPPED
from ..policy import Policy, load_policy
from .analysis_round import NOT_STARTED, AnalysisRound
from .irstore import IRStore, load_blob
from .memory import release_free_memory
from .program import UnitMeta, unit_meta
from .progress import Progress
from .settings import Limits

FunctionKey = tuple[str, str, int]

RETIRE = -3  # a worker's progress slot after a request that left it over its memory limit: replace it
SLOT = 3  # doubles per worker in the shared progress array: item index, CPU and wall time when it started


@dataclass(frozen=True)
class Loss:
    """Why a worker's item was lost: `limit` when the item used up the CPU time limit (a
    warning: the run still succeeds), else a failure of the run (a crash, a hang: an error)."""

    reason: str  # "its worker was killed by SIGSEGV", "after 60 s of CPU time (the time limit)"
    limit: bool = False

    def parse_note(self, again: bool = False) -> str:
        what = "parsing this file" + (" again (after another file's loss)" if again else "")
        if self.limit:
            return f"{STOPPED}{what} {self.reason}; nothing is reported for it"
        return f"{LOST}ortlint stopped {what} because {self.reason}; nothing is reported for it"

    def analysis_note(self, name: str) -> str:
        if self.limit:
            return f"{STOPPED}analyzing {name}() {self.reason}; nothing is reported for it"
        return f"{LOST}ortlint stopped analyzing {name}() because {self.reason}; nothing is reported for it"


class WorkerLost(Exception):
    """A worker died or was stopped; `index` is the item of its request it was on (-1: none)."""

    def __init__(self, index: int, loss: Loss):
        super().__init__(loss.reason)
        self.index = index
        self.loss = loss


# ----------------------------------------------------------------------------- worker side

class _Progress:
    """The worker's side of the shared progress slots: (item index, the worker's CPU time and
    the wall clock when the item started) per worker. The index is written last: the main
    process never sees a new index with an old start."""

    def __init__(self, slots: Any, slot: int):
        self.slots = slots
        self.base = SLOT * slot

    def item(self, index: int) -> None:
        self.slots[self.base + 1] = time.process_time()
        self.slots[self.base + 2] = time.monotonic()
        self.slots[self.base] = index


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system) process `pid` has used, from /proc (Linux); None when it
    cannot be read (no /proc, or the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()  # (the command name may hold spaces and parentheses)
        return (int(fields[11]) + int(fields[12])) / _TICKS  # utime and stime, fields 14 and 15
    except (OSError, ValueError, IndexError):
        return None


def _address_space() -> int:
    """This process's address space in bytes (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _limit_memory(megabytes: int, ceiling: int = 0) -> int:
    """Let the coming request (or item) grow this process's address space by at most
    `megabytes`, and never past `ceiling` bytes when one is given. Returns the size now."""
    size = _address_space()
    try:
        import resource
        if not size:
            return 0
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        soft = size + (megabytes << 20)
        if ceiling:
            soft = max(size, min(soft, ceiling))
        resource.setrlimit(resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
    except (ImportError, OSError, ValueError, OverflowError):  # not Linux: no limit (the time limit still holds)
        pass
    return size


def _worker_main(conn: Any, policy: Policy | list[str], options: Options, compile_commands: str | None,
                 slots: Any = None, slot: int = 0, limits: Limits = Limits()) -> None:
    from .parsing import parse_file
    from .tasks import cycle_collection_paused
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    faulthandler.disable()  # a crash is reported by the main process, as a notice for the item
    from ..frontends.common import source  # tree-sitter gives up first: "could not parse" beats a lost file
    source.PARSE_MEMORY_MB = limits.memory_mb // 3  # the front end needs as much again after the parse (11 lines of 30 000 unclosed Go calls: 500 MB parsing, 860 MB in all)
    if not isinstance(policy, Policy):  # policy files: load them here
        policy = load_policy(policy, include_defaults=False)
    progress = _Progress(slots, slot) if slots is not None else None
    mark = progress.item if progress is not None else (lambda _i: None)
    functions = IRStore()  # the IR of the functions this worker holds, pickled until analyzed (irstore.py)
    constants: dict[str, int] = {}
    limit = limits.memory_mb << 20
    floor = _address_space()  # where the worker started: it may hold up to `limit` more
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        kind = message[0]
        if kind == "stop":
            return
        started = _limit_memory(limits.memory_mb)
        try:
            if kind == "parse":
                metas = []
                cpu: list[float] = []  # per file: what the front end cost (the run's stats)
                with cycle_collection_paused():
                    for index, (path, language, data) in enumerate(message[1]):
                        mark(index)
                        if index:  # each file may grow the worker by the limit; the chunk by twice that
                            _limit_memory(limits.memory_mb, started + 2 * limit if started else 0)
                        began = time.process_time()
                        unit = parse_file(SourceFile(path, language), policy, data, compile_commands)
                        metas.append(unit_meta(unit, policy))
                        for fn in unit.functions:
                            functions.put(fn)
                        del unit
                        cpu.append(time.process_time() - began)
                release_free_memory()  # the syntax trees' memory, freed file by file, back to the system
                reply: tuple = ("ok", (metas, cpu, functions.nbytes))
            elif kind == "analyze":
                _, jobs, new_constants, adopted = message
                if new_constants is not None:  # sent with a worker's first request of a run only
                    constants = new_constants
                if adopted:  # functions another worker parsed, moved here to balance the work
                    functions.add_blobs(adopted)
                costs: dict[FunctionKey, float] = {}
                with cycle_collection_paused(keep=False):  # the engine makes no reference cycles (see runner)
                    results = _analyze_batch(functions, jobs, policy, options, constants, mark, costs)
                reply = ("ok", (results, costs, functions.nbytes))
            elif kind == "ir":  # pickled, as held: loaded where they are used, and no longer held here
                blobs = [functions.blob(k) for k in message[1]]
                if all(blob is not None for blob in blobs):  # (else nothing moves: the worker keeps all)
                    for k in message[1]:
                        functions.discard(k)
                reply = ("ok", (blobs, functions.nbytes))
            elif kind == "take":  # functions another worker parsed, to analyze here (balancing)
                functions.add_blobs(message[1])
                reply = ("ok", None)
            else:
                reply = ("error", f"unknown request {kind!r}")
            if kind == "parse" and len(message) > 2 and message[2] == "again":
                floor = _address_space()  # a replacement: its files' IR is what it holds legitimately
            mark(RETIRE if floor and _address_space() > floor + limit else -1)
            conn.send(reply)
        except Exception:  # noqa: BLE001 - report, never hang the main process
            mark(-1)
            conn.send(("error", traceback.format_exc(limit=8)))


MEMBER = "@member"  # in a component job's callee table: the callee is a member (its summary of this round)


def _analyze_batch(functions: IRStore, jobs: list, policy: Policy, options: Options,
                   constants: dict[str, int], mark: Callable[[int], None] = lambda _i: None,
                   costs: dict[FunctionKey, float] | None = None) -> dict[FunctionKey, FunctionResult | None]:
    """Each job is (key, {callee name: Summary or None}[, summarize[, members]]); results are
    keyed like the jobs. A job with `members` is a recursive component whose functions this
    worker holds (see `_analyze_component`). `costs` receives the CPU time of each analysis
    (the main process balances by it)."""
    out: dict[FunctionKey, FunctionResult | None] = {}
    for index, job in enumerate(jobs):
        mark(index)
        started = time.process_time()
        if len(job) > 3 and job[3]:
            out.update(_analyze_component(functions, job[3], policy, options, constants))
        else:
            key, callee_summaries = job[0], job[1]
            summarize = job[2] if len(job) > 2 else True
            out[key] = _analyze_one(functions, key, callee_summaries, policy, options, constants, summarize)
        if costs is not None:
            costs[job[0]] = time.process_time() - started
    return out


def _analyze_one(functions: IRStore, key: FunctionKey, table: dict[str, Summary | None],
                 policy: Policy, options: Options, constants: dict[str, int], summarize: bool) -> FunctionResult | None:
    from .tasks import analyze_safely
    # A function analyzed here is never asked for again (a component is analyzed as a whole,
    # in one job): its IR goes as it is loaded.
    fn = functions.take(key)
    if fn is None:
        return None

    def lookup(call: ir.Call) -> Summary | None:
        name = ir.program_name(call)
        return table.get(name) if name is not None else None

    return analyze_safely(fn, policy, lookup, options, constants, summarize)


def _analyze_component(functions: IRStore, members: list, policy: Policy, options: Options,
                       constants: dict[str, int]) -> dict[FunctionKey, FunctionResult | None]:
    """A recursive component, as the main process would analyze it (`Analysis._analyze_component`):
    rounds over its members until their summaries stop changing, each member's calls to the
    others seeing the summaries of the round before. `members` is [(key, {callee: Summary,
    None or MEMBER key}, summarize)]."""
    from .tasks import MAX_SCC_ROUNDS, analyze_safely
    summaries: dict[FunctionKey, Summary | None] = {}
    results: dict[FunctionKey, FunctionResult | None] = {}
    loaded = {key: functions.take(key) for key, _table, _summarize in members}  # for every round; then gone
    for _ in range(MAX_SCC_ROUNDS):
        changed = False
        for key, table, summarize in members:
            fn = loaded[key]
            if fn is None:
                results[key] = None
                continue

            def lookup(call: ir.Call, table: dict = table) -> Summary | None:
                if call.style != "plain":
                    return None
                found = table.get(call.callee)
                if isinstance(found, tuple) and found[:1] == (MEMBER,):
                    return summaries.get(found[1])
                return found

            result = results[key] = analyze_safely(fn, policy, lookup, options, constants, summarize)
            if summaries.get(key) != result.summary:
                summaries[key] = result.summary
                changed = True
        if not changed:
            break
    return results


# ----------------------------------------------------------------------------- main side

def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


BIG_CHUNKS = 4  # a file larger than this many chunks is parsed first, on its own (see _Chunks)


class _Chunks:
    """Files to parse, in chunks in path order (neighbours share headers and macros: the files
    of one directory include the same ones). Each worker goes on with the chunk after its last
    one, so it parses each header once and finds its macro expansions cached; a worker whose
    next chunk is taken starts in the middle of the longest run of chunks nobody took yet.
    Before this, every chunk was a stride through the whole tree and each worker parsed most
    headers: the native corpus's front-end CPU, 1.9 s in one process, was 2.1-2.2 s split in two
    that way, 2.0-2.1 s split in path order.

    `big` files (each a chunk of its own, largest first) go before the rest, whoever asks: one
    that came last would keep its worker busy while the others wait (a 1 MB generated Java file
    in the Java corpus)."""

    def __init__(self, chunks: list[list], workers: int, big: list[list] | None = None):
        self.chunks: list[list | None] = list(chunks)
        self.next: dict[int, int] = {w: (len(self.chunks) * w) // max(1, workers) for w in range(workers)}
        self.again: deque[list] = deque()  # chunks of a lost request, parsed first
        self.big: deque[list] = deque(big or [])
        self.left = len(self.chunks)

    def take(self, w: int) -> list | None:
        if self.again:
            return self.again.popleft()
        if self.big:
            return self.big.popleft()
        if not self.left:
            return None
        i = self.next.get(w, 0)
        if i >= len(self.chunks) or self.chunks[i] is None:
            i = self._middle_of_longest_free_run()
        chunk, self.chunks[i] = self.chunks[i], None
        self.left -= 1
        self.next[w] = i + 1
        return chunk

    def put_back(self, chunks: list[list]) -> None:
        self.again.extend(chunks)

    def _middle_of_longest_free_run(self) -> int:
        best, best_len, start = 0, 0, None
        for i, chunk in enumerate(self.chunks + [None]):
            if chunk is not None and start is None:
                start = i
            elif chunk is None and start is not None:
                if i - start > best_len:
                    best, best_len = start, i - start
                start = None
        return best + best_len // 2


def _path_order_chunks(items: list, sizes: list[int], workers: int) -> tuple[list[list], list[list]]:
    """The files in path order, cut into chunks of about a 48th of each worker's share; and,
    apart, the files larger than BIG_CHUNKS such chunks, one chunk each, largest first."""
    order = sorted(range(len(items)), key=lambda i: items[i][0])
    target = min(256 << 10, max(16 << 10, sum(sizes) // (max(1, workers) * 48)))
    big = sorted((i for i in order if sizes[i] > BIG_CHUNKS * target), key=lambda i: (-sizes[i], items[i][0]))
    chunks, current, size = [], [], 0
    for i in order:
        if sizes[i] > BIG_CHUNKS * target:
            continue
        current.append(items[i])
        size += sizes[i]
        if size >= target:
            chunks.append(current)
            current, size = [], 0
    if current:
        chunks.append(current)
    return chunks, [[items[i]] for i in big]


class WorkerPool:
    """A fixed set of worker processes, each owning the files it parsed, watched for crashes,
    time and memory (see the module docstring)."""

    POLL_SECONDS = 0.25  # how often a busy worker's clock is looked at

    def __init__(self, workers: int, policy: Policy, options: Options, compile_commands: str | None,
                 limits: Limits = Limits()):
        self.ctx = mp.get_context("spawn" if os.name == "nt" else "fork")
        self.policy, self.options, self.compile_commands, self.limits = policy, options, compile_commands, limits
        self.slots = self.ctx.RawArray("d", SLOT * workers)
        for i in range(workers):
            self.slots[SLOT * i] = -1
        self.cpu_readable = _cpu_seconds(os.getpid()) is not None  # else the time limit is counted in wall time
        self.seen: list[tuple[float, float]] = [(0.0, 0.0)] * workers  # per worker: CPU time last read, when it last grew
        self.checked = 0.0  # when the workers' clocks were last read
        self.max_stall = 0.0  # the longest a busy worker went without CPU time (stats: how far from a hang)
        self.max_cpu = {"parse": (0.0, ""), "analysis": (0.0, "")}  # the costliest item of each kind (stats)
        self.progress = Progress()  # told of each file parsed, and regularly while the workers work (a display)
        self.conns: list[Any] = [None] * workers
        self.procs: list[Any] = [None] * workers
        for w in range(workers):
            self._start(w)
        self.owner: dict[str, int] = {}  # path -> worker index
        self.languages: dict[str, str] = {}  # path -> language, to parse a dead worker's files again
        self.lost_files: dict[str, str] = {}  # path -> why nothing is reported for it
        self.relost: dict[str, str] = {}  # the files of these lost when parsed again for a replacement
        self.replaced = 0  # workers that died or were stopped and were replaced
        self.retired = 0  # of which: over their memory limit after a request
        self.load = [0] * workers
        self.sizes: dict[FunctionKey, int] = {}  # cost estimates (function_size), to balance the workers
        self.adopted: dict[int, list[tuple[FunctionKey, bytes]]] = {}  # IR (pickled) moved in this `analyze`, by new holder
        self.spent: dict[str, list] = {}  # path -> [analysis CPU seconds, size units] observed so far
        self.spent_total = [0.0, 0]
        self.ir_bytes = [0] * workers  # pickled IR each worker holds, as of its last reply (irstore.py)
        self.max_ir_bytes = 0  # the most all workers held together

    def _start(self, w: int) -> None:
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker_main, daemon=True, args=(
            child, self.policy, self.options, self.compile_commands, self.slots, w, self.limits))
        proc.start()
        child.close()
        self.slots[SLOT * w] = -1
        self.seen[w] = (0.0, 0.0)
        self.conns[w], self.procs[w] = parent, proc

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("stop",))
            except (OSError, BrokenPipeError):
                pass
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()

    # -- supervision ------------------------------------------------------------------

    def _busy_index(self, w: int) -> int:
        return int(self.slots[SLOT * w])

    def _overdue(self, w: int, now: float) -> Loss | None:
        """Why worker `w` must be stopped now, if it must: its item used more than the time
        limit in CPU time (not in wall time: on a busy machine a worker gets a fraction of a
        core, and an item that fits on an idle one must fit there too), or it has had no CPU
        time at all for `Limits.hang_seconds` (it waits for something that never comes). Where
        no process's CPU time can be read (no /proc), the limit is counted in wall time."""
        base = SLOT * w
        if self._busy_index(w) < 0:
            return None
        started_cpu, started_wall = self.slots[base + 1], self.slots[base + 2]
        limit = self.limits.seconds
        cpu = _cpu_seconds(self.procs[w].pid) if self.cpu_readable else None
        if cpu is None:
            if not self.cpu_readable and now - started_wall > limit:
                return Loss(f"after {limit:g} s (the time limit)", limit=True)
            return None
        if cpu - started_cpu > limit:
            return Loss(f"after {limit:g} s of CPU time (the time limit)", limit=True)
        last, since = self.seen[w]
        if cpu != last:
            self.seen[w] = (cpu, now)
            return None
        stalled = now - max(since, started_wall)
        self.max_stall = max(self.max_stall, stalled)
        if stalled > self.limits.hang():
            return Loss(f"its worker got no CPU time for {self.limits.hang():g} s (it hung)")
        return None

    def limit_stats(self) -> dict[str, object]:
        """How close this run's items came to the limits: the costliest parse and analysis in
        CPU seconds (and what it was), the longest a busy worker went without CPU time."""
        return {"max_parse_cpu_seconds": round(self.max_cpu["parse"][0], 3), "max_parse_cpu_item": self.max_cpu["parse"][1],
                "max_analysis_cpu_seconds": round(self.max_cpu["analysis"][0], 3),
                "max_analysis_cpu_item": self.max_cpu["analysis"][1], "max_stall_seconds": round(self.max_stall, 3),
                "cpu_time_limit": self.cpu_readable, "max_ir_bytes": self.max_ir_bytes, "ir_bytes_left": sum(self.ir_bytes)}

    def _held(self, w: int, nbytes: int) -> None:
        """Worker `w` said how much IR it holds now (stats: the IR a run waits with, and that
        none is left once every function is analyzed)."""
        self.ir_bytes[w] = nbytes
        self.max_ir_bytes = max(self.max_ir_bytes, sum(self.ir_bytes))

    def _record_cpu(self, kind: str, seconds: float, what: str) -> None:
        if seconds > self.max_cpu[kind][0]:
            self.max_cpu[kind] = (seconds, what)

    def _death(self, w: int) -> str:
        """Why worker `w` is gone, in words (its exit status once it has ended)."""
        proc = self.procs[w]
        proc.join(timeout=2)
        code = proc.exitcode
        if code is None:
            return "its worker stopped answering"
        if code < 0:
            try:
                return f"its worker was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"its worker was killed by signal {-code}"
        return f"its worker exited with status {code}"

    def _stop(self, w: int) -> None:
        proc = self.procs[w]
        if proc.is_alive():
            proc.kill()
        proc.join(timeout=5)
        try:
            self.conns[w].close()
        except OSError:
            pass

    def _replace(self, w: int) -> None:
        """A new worker in slot `w`, holding again the IR of every file the old one owned. A
        file that loses the new worker too (it parsed in time once, not twice) is lost; the
        others are parsed again by the next replacement."""
        self._stop(w)
        self.replaced += 1
        while True:
            self._start(w)
            owned = sorted(p for p, o in self.owner.items() if o == w and p not in self.lost_files)
            if not owned:
                self._held(w, 0)
                self._readopt(w)
                return
            self.conns[w].send(("parse", [(p, self.languages.get(p, "c"), None) for p in owned], "again"))
            try:
                status, payload = self._receive(w)
            except WorkerLost as lost:
                status, payload = "lost", lost
            if status == "ok":
                self._held(w, payload[2])
                self._readopt(w)
                return
            self._stop(w)
            index = payload.index if isinstance(payload, WorkerLost) else -1
            loss = payload.loss if isinstance(payload, WorkerLost) else Loss("of an internal error")
            for path in [owned[index]] if 0 <= index < len(owned) else owned:
                self.lost_files[path] = self.relost[path] = loss.parse_note(again=True)

    def _readopt(self, w: int) -> None:
        """A replacement worker gets again the functions moved to its slot in this `analyze`
        call (the main process keeps them until it returns); if that fails, they are analyzed by
        nobody and come back as None, like a function whose IR is gone."""
        items = self.adopted.get(w)
        if not items:
            return
        self.conns[w].send(("take", items))
        try:
            self._receive(w)
        except WorkerLost:
            self._stop(w)
            self._start(w)

    def _balance(self, batches: dict[int, list], cost: dict[FunctionKey, float]) -> None:
        """Before any job is sent: move some jobs from the worker with the most estimated work
        to the one with the least (their IR is sent over), until the estimates are within a
        tenth: a file's functions all belong to the worker that parsed it, and one heavy file
        (or two copies of one landing in the same worker) would leave the other worker idle.
        Where a function is analyzed does not change its result."""
        workers = range(len(self.conns))
        load = {w: sum(cost[job[0]] for job in batches.get(w, ())) for w in workers}
        total = sum(load.values())
        if total < 2 * self.MIN_MOVE or len(self.conns) < 2:
            return
        moves: dict[tuple[int, int], list] = {}
        for _ in range(4 * len(self.conns)):
            heavy = max(workers, key=lambda w: (load[w], -w))
            light = min(workers, key=lambda w: (load[w], w))
            gap = load[heavy] - load[light]
            if gap < max(self.MIN_MOVE, total / (10 * len(self.conns))):
                break
            queue = batches.get(heavy, [])
            # the largest jobs that fit in half the gap, from the end of the queue (the queue is
            # in priority order; which jobs move only decides where they run)
            picked, want = [], gap / 2
            for job in sorted(queue, key=lambda j: (-cost[j[0]], j[0])):
                if len(job) > 3 and job[3]:
                    continue  # a component: its members' IR stays together
                size = cost[job[0]]
                if size <= want:
                    picked.append(job)
                    want -= size
                    if want < self.MIN_MOVE // 4:
                        break
            if not picked:
                break
            moved = {id(job) for job in picked}
            batches[heavy] = [job for job in queue if id(job) not in moved]
            batches.setdefault(light, []).extend(picked)
            moves.setdefault((heavy, light), []).extend(picked)
            amount = sum(cost[job[0]] for job in picked)
            load[heavy] -= amount
            load[light] += amount
        for (heavy, light), picked in sorted(moves.items()):
            keys = [job[0] for job in picked]
            if not self._transfer(heavy, light, keys):  # not moved after all: back to the owner
                gone = set(keys)
                batches[light] = [job for job in batches[light] if job[0] not in gone]
                batches.setdefault(heavy, []).extend(picked)

    MIN_MOVE = 0.005  # estimated seconds of analysis below which nothing is moved (a move costs ~2 ms)
    DEFAULT_RATE = 20e-6  # seconds per size unit before any function was analyzed (a median on real code)
    CHUNK_SECONDS = 0.02  # estimated analysis per request at least (a round trip costs ~0.2 ms)
    REPRIORITIZE_SECONDS = 0.25  # how often the order of the queued jobs is revised (a few ms)
    REPRIORITIZE_SHARE = 0.05  # at most this share of the main process's time goes to revising it
    MAX_CHUNK_SECONDS = 0.1  # and at most: a move to a worker that runs out waits for the request in flight
    MAX_CHUNK = 1000  # jobs per request at most (the results of one request are held at once)

    def _steal(self, queue: list, cost: dict[FunctionKey, float], gap: float, moved: set) -> list:
        """The jobs to move from a queue (costliest first) to a less loaded worker: the
        cheapest, up to half of the gap, when that is worth a move; never a component (its
        members' IR stays together), never a job moved before."""
        if len(queue) < 2:
            return []
        picked, want = [], gap / 2
        for job in reversed(queue):
            if (len(job) > 3 and job[3]) or job[0] in moved:
                continue
            if cost[job[0]] <= want:
                picked.append(job)
                want -= cost[job[0]]
        return picked if sum(cost[job[0]] for job in picked) >= self.MIN_MOVE else []

    def _export(self, source: int, keys: list[FunctionKey]) -> list[tuple[FunctionKey, bytes]] | None:
        """The IR of `keys` from an idle worker, which no longer holds it (to move them), pickled
        as the worker held it (irstore.py); None when it is lost on the way (it is replaced) or no
        longer has one of them (then it keeps the others)."""
        status, payload = self._ask(source, ("ir", keys))
        if status != "ok":
            return None
        fns, held = payload
        self._held(source, held)
        if any(fn is None for fn in fns):
            return None
        return list(zip(keys, fns))

    def _ask(self, w: int, message: tuple) -> tuple[str, Any]:
        """One request to an idle worker and its reply; ("lost", None) when the worker is lost
        on the way (it is replaced)."""
        self.conns[w].send(message)
        try:
            return self._receive(w)
        except WorkerLost:
            self._replace(w)
            return "lost", None

    def _observe(self, costs: dict[FunctionKey, float]) -> None:
        """Learn what a size unit costs, per file: the cost of a function depends much more on
        its file's code (how many resources it juggles, the summaries it applies) than on its
        size alone, and a file's functions are analyzed all along the run."""
        for key, seconds in costs.items():
            size = self.sizes.get(key, 1)
            spent = self.spent.setdefault(key[0], [0.0, 0])
            spent[0] += seconds
            spent[1] += size
            self.spent_total[0] += seconds
            self.spent_total[1] += size

    def _estimate(self, key: FunctionKey) -> float:
        return self.sizes.get(key, 1) * self.rate(key[0])

    def rate(self, path: str) -> float:
        """Estimated analysis seconds per size unit of the functions of `path`: what its
        functions cost so far, once enough of them ran; else what all functions cost."""
        spent = self.spent.get(path)
        if spent is not None and spent[1] >= 50:
            return spent[0] / spent[1]
        total = self.spent_total
        return total[0] / total[1] if total[1] >= 500 else self.DEFAULT_RATE

    def estimator(self, items: list) -> Callable[[], list[float]]:
        """A function giving `_estimate` summed over each item's keys, with the rates of the
        moment, for many items at once (the schedule revises the priorities of thousands of
        functions several times a second): the sizes per file are added up once here."""
        sizes = self.sizes
        per_item = []
        for keys in items:
            by_path: dict[str, int] = {}
            for key in keys:
                by_path[key[0]] = by_path.get(key[0], 0) + sizes.get(key, 1)
            per_item.append(next(iter(by_path.items())) if len(by_path) == 1 else tuple(by_path.items()))

        def estimates() -> list[float]:
            rate = {path: self.rate(path) for path in self.spent}
            default = self.rate("")
            out = []
            for item in per_item:
                if type(item[0]) is str:
                    out.append(item[1] * rate.get(item[0], default))
                else:
                    out.append(sum(size * rate.get(path, default) for path, size in item))
            return out

        return estimates

    def _transfer(self, source: int, target: int, keys: list[FunctionKey]) -> bool:
        """Copy the IR of `keys` from worker `source` to worker `target`; False when either is
        lost on the way (a lost worker is replaced; nothing is moved)."""
        items = self._export(source, keys)
        if not items:
            return False
        if self._ask(target, ("take", items))[0] != "ok":
            self._ask(source, ("take", items))  # back where they were (a source lost meanwhile parses them again)
            return False
        self.adopted.setdefault(target, []).extend(items)
        return True

    def _receive(self, w: int) -> tuple[str, Any]:
        """The reply of worker `w`, or WorkerLost when it dies or overruns its time first."""
        conn = self.conns[w]
        while True:
            self.progress.changed()
            if wait([conn], timeout=self.POLL_SECONDS):
                try:
                    status, payload = pickle.loads(conn.recv_bytes())
                except (EOFError, OSError):
                    raise WorkerLost(self._busy_index(w), Loss(self._death(w))) from None
                return status, payload
            loss = self._overdue(w, time.monotonic())
            if loss is not None:
                index = self._busy_index(w)
                self._stop(w)
                raise WorkerLost(index, loss)

    def _stream(self, next_chunk: Callable[[int], Any], message: Callable[[int, Any], tuple],
                on_reply: Callable[[int, Any, Any], None],
                on_lost: Callable[[int, Any, int, Loss], None], idle: Callable[[], bool] | None = None,
                refill: Callable[[int, list[int]], list[int]] | None = None) -> None:
        """Keep every worker busy: each has one request in flight; as soon as a reply comes,
        the worker gets its next chunk (`next_chunk(w)`, None when it has none left) and only
        then is the reply unpickled and handled. One request in flight per worker also means a
        large send never waits on a worker that is itself waiting to send (no deadlock).

        `refill(w, starving)` runs when worker `w` has answered, before it is fed: the workers
        in `starving` have nothing in flight, and it may move work of `w` to them (both ends
        are then idle, so the move needs no other request to finish first); it returns the
        workers to feed.

        A request whose worker is lost goes to `on_lost(w, chunk, index, loss)` (the item at
        `index` is the culprit; -1 when the worker was between items), which puts back what
        must be done again; the worker is replaced before it gets its next chunk."""
        in_flight: dict[Any, tuple[int, Any]] = {}

        def feed(w: int) -> None:
            chunk = next_chunk(w)
            if chunk is not None:
                self.conns[w].send(message(w, chunk))
                in_flight[self.conns[w]] = (w, chunk)

        def lose(w: int, chunk: Any, index: int, loss: Loss) -> None:
            on_lost(w, chunk, index, loss)
            self._replace(w)
            feed(w)

        def feed_idle() -> None:
            """Handling a reply or the main process's own work may have made work for a
            worker that had none."""
            busy = {v for v, _c in in_flight.values()}
            for v in range(len(self.conns)):
                if v not in busy:
                    feed(v)

        for w in range(len(self.conns)):
            feed(w)
        idle_more = idle is not None  # the main process has work of its own now
        while in_flight:
            self.progress.changed()  # (a display redraws when it is time: the elapsed time goes on)
            ready = wait(list(in_flight), timeout=0 if idle_more else self.POLL_SECONDS)
            if not ready and idle_more:
                idle_more = idle()
                feed_idle()
            replies = []  # every worker that answered gets its next request before any answer is handled
            for conn in ready:
                w, chunk = in_flight.pop(conn)
                try:
                    data = conn.recv_bytes()
                except (EOFError, OSError):
                    lose(w, chunk, self._busy_index(w), Loss(self._death(w)))
                    continue
                if self._busy_index(w) == RETIRE:  # over its memory limit: a fresh worker takes its files
                    self.retired += 1
                    self._replace(w)
                if refill is not None:
                    busy = {v for v, _c in in_flight.values()}
                    for v in refill(w, [v for v in range(len(self.conns)) if v != w and v not in busy]):
                        feed(v)
                feed(w)
                replies.append((w, chunk, data))
            for w, chunk, data in replies:
                status, payload = pickle.loads(data)
                if status != "ok":  # raised outside any item: the worker is replaced all the same
                    following = in_flight.pop(self.conns[w], None)
                    if following is not None:  # sent before the reply was read: not started yet
                        on_lost(w, following[1], NOT_STARTED, Loss(""))
                    lose(w, chunk, -1, Loss("of an internal error: " + payload.strip().splitlines()[-1]))
                    continue
                on_reply(w, chunk, payload)
                feed_idle()
                idle_more = idle is not None
            now = time.monotonic()
            if now - self.checked < self.POLL_SECONDS:
                continue
            self.checked = now
            for conn, (w, chunk) in list(in_flight.items()):
                loss = self._overdue(w, now)
                if loss is not None:
                    index = self._busy_index(w)
                    del in_flight[conn]
                    self._stop(w)
                    lose(w, chunk, index, loss)

    @staticmethod
    def _split(chunk: list, index: int) -> tuple[Any, list]:
        """The culprit of a lost request and the items to send again. A worker lost between
        items (index -1) names no culprit: a chunk of one item is its own culprit, a larger one
        is sent again one item at a time, so that the next loss names it."""
        if 0 <= index < len(chunk):
            return chunk[index], chunk[:index] + chunk[index + 1:]
        if index == NOT_STARTED:
            return None, chunk
        if len(chunk) == 1:
            return chunk[0], []
        return None, chunk

    # -- requests ---------------------------------------------------------------------

    def parse(self, items: list[tuple[str, str, bytes | None]]) -> list[UnitMeta]:
        """Parse files in chunks handed to whichever worker is free (parsing C++ costs more per
        byte than C: a static split by size left one worker idle); a file belongs to the
        worker that parsed it. Returns metadata in input order."""
        sizes = [len(data) if data is not None else _size(path) for path, _lang, data in items]
        for path, language, _data in items:
            self.languages[path] = language
        # Chunks of neighbouring files (a finished worker takes more: balanced parsing); each
        # worker goes on where it left off, so it meets the headers and macros of the files
        # it parsed again, and parses each header once (see `_Chunks`).
        in_order, big = _path_order_chunks(items, sizes, len(self.conns))
        chunks = _Chunks(in_order, len(self.conns), big)
        by_path: dict[str, UnitMeta] = {}

        def next_chunk(w: int) -> list | None:
            chunk = chunks.take(w)
            if chunk is None:
                return None
            for path, _lang, _data in chunk:
                self.owner[path] = w
            return chunk

        def on_reply(w: int, _chunk: Any, payload: tuple[list[UnitMeta], list[float], int]) -> None:
            metas, cpu, held = payload
            self._held(w, held)
            for m, seconds in zip(metas, cpu):
                self._record_cpu("parse", seconds, m.path)
            self.progress.file_parsed(len(metas))
            for m in metas:
                by_path[m.path] = m
                for (name, line, *_rest), size in zip(m.functions, m.sizes):
                    self.sizes[(m.path, name, line)] = size

        def on_lost(_w: int, chunk: list, index: int, loss: Loss) -> None:
            culprit, again = self._split(chunk, index)
            if culprit is not None:
                path, language = culprit[0], culprit[1]
                note = loss.parse_note()
                self.lost_files[path] = note
                self.progress.file_parsed()
                by_path[path] = UnitMeta(path, language, [], [(1, note)], 0, {}, [])
            for item in again:  # parsed again by whichever worker takes them, not by the replacement
                self.owner.pop(item[0], None)
            if again:
                one_by_one = culprit is None and index != NOT_STARTED
                chunks.put_back([[item] for item in again] if one_by_one else [again])

        self._stream(next_chunk, lambda _w, chunk: ("parse", chunk), on_reply, on_lost)
        return [by_path[path] for path, _l, _d in items]

    def analyze(self, jobs: list[tuple[FunctionKey, dict[str, Summary | None]]], constants: dict[str, int],
                on_results: Callable[[dict[FunctionKey, FunctionResult | None]], None] | None = None,
                idle: Callable[[], bool] | None = None, more: Callable[[], list] | None = None,
                priority: Callable[[], Mapping[FunctionKey, float]] | None = None) -> dict[FunctionKey, FunctionResult | None]:
        """Analyze functions on the workers that hold their IR, in chunks, so results stream
        back while the workers go on (and no worker holds all its results at once).
        With `on_results`, each chunk's results are handed to it as they arrive. `idle` is the
        main process's own work, done a piece at a time while no reply is waiting (it returns
        False when nothing is left for now). `more()` gives the jobs that became ready since
        (after each reply and each piece of `idle`): the call returns once no job is left
        and none is running. Each worker takes its jobs highest `priority()` first (default:
        the estimated cost), asked again every REPRIORITIZE_SECONDS: the estimates behind it
        learn what each file's code costs as results come."""
        return AnalysisRound(self, constants, on_results, idle, more, priority).run(jobs)

    def orphan_note(self, key: FunctionKey) -> str:
        """The note of a function whose file was lost or stopped at the time limit: nothing
        holds its IR, so it is not analyzed (a limit stays a warning, a loss an error)."""
        if self.lost_files.get(key[0], "").startswith(LIMIT):
            return f"{LIMIT}{key[1]}() was not analyzed: its file was stopped at the time limit"
        return f"{LOST}{key[1]}() was not analyzed: its file was lost"

    def fetch_ir(self, keys: list[FunctionKey]) -> dict[FunctionKey, ir.Function | None]:
        """The IR of functions the main process analyzes itself (recursive components). A
        worker lost on the way gives nothing for its functions (None: they are parsed again
        in the main process)."""
        batches: dict[int, list] = {}
        out: dict[FunctionKey, ir.Function | None] = {}
        for key in keys:
            if key[0] in self.lost_files:
                out[key] = None
                continue
            batches.setdefault(self.owner[key[0]], []).append(key)
        for w, batch in batches.items():
            self.conns[w].send(("ir", batch))
            try:
                status, payload = self._receive(w)
            except WorkerLost:
                status, payload = "lost", None
            if status != "ok":
                self._replace(w)
                payload = ([None] * len(batch), self.ir_bytes[w])
            blobs, held = payload
            self._held(w, held)
            out.update(zip(batch, [load_blob(blob) for blob in blobs]))
        return out
