"""Parallel runs: worker processes that parse files, keep their IR, and analyze functions on
request, so no syntax tree or IR ever crosses a process boundary.

The main process owns the program-wide view (names, call graph, summaries). It walks the
call graph in levels (callees before callers); all functions of one level are independent and
are analyzed by the workers that parsed them, each given the summaries of the callees it
needs. The results are exactly those of a serial run, whatever the number of workers.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import traceback
import zlib
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Callable

from . import ir
from .discover import SourceFile
from .engine.analyze import FunctionResult, Options
from .engine.summaries import Summary
from .policy import Policy, load_policy

FunctionKey = tuple[str, str, int]


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


def unit_meta(unit: ir.SourceUnit) -> UnitMeta:
    functions = [(fn.name, fn.loc.line, fn.is_static, tuple(sorted(fn.callees())), [(l.line, m) for l, m in fn.notes])
                 for fn in unit.functions]
    return UnitMeta(unit.path, unit.language, functions, [(l.line, m) for l, m in unit.notes], unit.lines,
                    dict(unit.constants), list(unit.dependencies))


# ----------------------------------------------------------------------------- worker side

def _worker_main(conn: Any, policy: Policy | list[str], options: Options, compile_commands: str | None) -> None:
    from .runner import cycle_collection_paused, parse_file
    if not isinstance(policy, Policy):  # policy files: load them here
        policy = load_policy(policy, include_defaults=False)
    functions: dict[FunctionKey, ir.Function] = {}
    constants: dict[str, int] = {}
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        kind = message[0]
        try:
            if kind == "stop":
                return
            if kind == "parse":
                metas = []
                with cycle_collection_paused():
                    for path, language, data in message[1]:
                        unit = parse_file(SourceFile(path, language), policy, data, compile_commands)
                        for fn in unit.functions:
                            functions[(fn.path, fn.name, fn.loc.line)] = fn
                        metas.append(unit_meta(unit))
                conn.send(("ok", metas))
            elif kind == "analyze":
                _, jobs, new_constants = message
                if new_constants is not None:  # sent with the first chunk of a level only
                    constants = new_constants
                conn.send(("ok", _analyze_batch(functions, jobs, policy, options, constants)))
            elif kind == "ir":
                conn.send(("ok", [functions.get(k) for k in message[1]]))
        except Exception:  # noqa: BLE001 - report, never hang the main process
            conn.send(("error", traceback.format_exc()))


def _analyze_batch(functions: dict[FunctionKey, ir.Function], jobs: list, policy: Policy, options: Options,
                   constants: dict[str, int]) -> dict[FunctionKey, FunctionResult | None]:
    """Each job is (key, {callee name: Summary or None}); results are keyed like the jobs."""
    from .runner import analyze_safely
    out: dict[FunctionKey, FunctionResult | None] = {}
    for job in jobs:  # (key, {callee: summary}[, summarize])
        key, callee_summaries = job[0], job[1]
        summarize = job[2] if len(job) > 2 else True
        fn = functions.get(key)
        if fn is None:
            out[key] = None
            continue

        def lookup(call: ir.Call, table: dict[str, Summary | None] = callee_summaries) -> Summary | None:
            return table.get(call.callee) if call.style == "plain" else None

        out[key] = analyze_safely(fn, policy, lookup, options, constants, summarize)
        # A function analyzed here is a component of its own and is never asked for again
        # (recursive components are analyzed by the main process): its IR can go.
        del functions[key]
    return out


# ----------------------------------------------------------------------------- main side

def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class WorkerPool:
    """A fixed set of worker processes, each owning the files it parsed."""

    def __init__(self, workers: int, policy: Policy, options: Options, compile_commands: str | None):
        ctx = mp.get_context("spawn" if os.name == "nt" else "fork")
        self.conns = []
        self.procs = []
        for _ in range(workers):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker_main, args=(child, policy, options, compile_commands), daemon=True)
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)
        self.owner: dict[str, int] = {}  # path -> worker index
        self.load = [0] * workers

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

    def _call_all(self, messages: dict[int, tuple]) -> dict[int, Any]:
        for w, msg in messages.items():
            self.conns[w].send(msg)
        out = {}
        for w in messages:
            status, payload = self.conns[w].recv()
            if status != "ok":
                raise RuntimeError(f"ortlint worker failed:\n{payload}")
            out[w] = payload
        return out

    def _stream(self, next_chunk: Callable[[int], Any], message: Callable[[int, Any], tuple],
                on_reply: Callable[[int, Any, Any], None]) -> None:
        """Keep every worker busy: each has one request in flight; as soon as a reply comes,
        the worker gets its next chunk (`next_chunk(w)`, None when it has none left) and only
        then is the reply unpickled and handled. One request in flight per worker also means a
        large send never waits on a worker that is itself waiting to send (no deadlock)."""
        in_flight: dict[Any, tuple[int, Any]] = {}
        for w, conn in enumerate(self.conns):
            chunk = next_chunk(w)
            if chunk is not None:
                conn.send(message(w, chunk))
                in_flight[conn] = (w, chunk)
        while in_flight:
            for conn in wait(list(in_flight)):
                w, chunk = in_flight.pop(conn)
                data = conn.recv_bytes()
                following = next_chunk(w)
                if following is not None:
                    conn.send(message(w, following))
                    in_flight[conn] = (w, following)
                status, payload = pickle.loads(data)
                if status != "ok":
                    raise RuntimeError(f"ortlint worker failed:\n{payload}")
                on_reply(w, chunk, payload)

    def parse(self, items: list[tuple[str, str, bytes | None]]) -> list[UnitMeta]:
        """Parse files in chunks handed to whichever worker is free (parsing C++ costs more per
        byte than C: a static split by size left one worker idle); a file belongs to the
        worker that parsed it. Returns metadata in input order."""
        sizes = [len(data) if data is not None else _size(path) for path, _lang, data in items]
        # Many small chunks (a finished worker takes the next: balanced parsing), each a stride
        # through the files sorted by size and shuffled within a size class, so that every
        # chunk is a similar mix. The chunks a worker parses decide the functions it analyzes
        # later: copies of one heavy file (alike to parse, not to analyze) must not all land
        # in one worker, as a run of consecutive files would make them.
        order = sorted(range(len(items)), key=lambda i: (-sizes[i].bit_length(), zlib.crc32(items[i][0].encode()), i))
        target = min(256 << 10, max(16 << 10, sum(sizes) // (len(self.conns) * 48)))
        count = max(1, min(len(order), sum(sizes) // target))
        chunks: deque[list[tuple[str, str, bytes | None]]] = deque(
            [items[i] for i in order[k::count]] for k in range(count))
        by_path: dict[str, UnitMeta] = {}

        def next_chunk(w: int) -> list | None:
            if not chunks:
                return None
            chunk = chunks.popleft()
            for path, _lang, _data in chunk:
                self.owner[path] = w
            return chunk

        def on_reply(_w: int, _chunk: Any, metas: list[UnitMeta]) -> None:
            for m in metas:
                by_path[m.path] = m

        self._stream(next_chunk, lambda _w, chunk: ("parse", chunk), on_reply)
        return [by_path[path] for path, _l, _d in items]

    def analyze(self, jobs: list[tuple[FunctionKey, dict[str, Summary | None]]], constants: dict[str, int],
                on_results: Callable[[dict[FunctionKey, FunctionResult | None]], None] | None = None
                ) -> dict[FunctionKey, FunctionResult | None]:
        """Analyze functions on the workers that hold their IR, in chunks, so results stream
        back while the workers go on (and no worker holds a whole level's results at once).
        With `on_results`, each chunk's results are handed to it as they arrive."""
        batches: dict[int, deque] = {}
        for job in jobs:
            batches.setdefault(self.owner[job[0][0]], deque()).append(job)
        sent_constants: set[int] = set()
        out: dict[FunctionKey, FunctionResult | None] = {}

        def next_chunk(w: int) -> list | None:
            queue = batches.get(w)
            if not queue:
                return None
            size = max(64, min(1000, len(queue) // 4 + 1))
            return [queue.popleft() for _ in range(min(size, len(queue)))]

        def message(w: int, chunk: list) -> tuple:
            first = w not in sent_constants
            sent_constants.add(w)
            return ("analyze", chunk, constants if first else None)

        def on_reply(_w: int, _chunk: Any, payload: dict) -> None:
            if on_results is not None:
                on_results(payload)
            else:
                out.update(payload)

        self._stream(next_chunk, message, on_reply)
        return out

    def fetch_ir(self, keys: list[FunctionKey]) -> dict[FunctionKey, ir.Function | None]:
        batches: dict[int, list] = {}
        for key in keys:
            batches.setdefault(self.owner[key[0]], []).append(key)
        out: dict[FunctionKey, ir.Function | None] = {}
        for w, payload in self._call_all({w: ("ir", b) for w, b in batches.items()}).items():
            out.update(zip(batches[w], payload))
        return out
