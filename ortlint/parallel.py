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
import traceback
from dataclasses import dataclass
from typing import Any

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

def _worker_main(conn: Any, policy_files: list[str], options: Options, compile_commands: str | None) -> None:
    from .runner import parse_file
    policy = load_policy(policy_files, include_defaults=False)
    functions: dict[FunctionKey, ir.Function] = {}
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
                for path, language, data in message[1]:
                    unit = parse_file(SourceFile(path, language), policy, data, compile_commands)
                    for fn in unit.functions:
                        functions[(fn.path, fn.name, fn.loc.line)] = fn
                    metas.append(unit_meta(unit))
                conn.send(("ok", metas))
            elif kind == "analyze":
                _, jobs, constants = message
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
    for key, callee_summaries in jobs:
        fn = functions.get(key)
        if fn is None:
            out[key] = None
            continue

        def lookup(call: ir.Call, table: dict[str, Summary | None] = callee_summaries) -> Summary | None:
            return table.get(call.callee) if call.style == "plain" else None

        out[key] = analyze_safely(fn, policy, lookup, options, constants)
    return out


# ----------------------------------------------------------------------------- main side

class WorkerPool:
    """A fixed set of worker processes, each owning the files it parsed."""

    def __init__(self, workers: int, policy: Policy, options: Options, compile_commands: str | None):
        ctx = mp.get_context("spawn" if os.name == "nt" else "fork")
        self.conns = []
        self.procs = []
        for _ in range(workers):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker_main, args=(child, policy.files, options, compile_commands), daemon=True)
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

    def parse(self, items: list[tuple[str, str, bytes | None]]) -> list[UnitMeta]:
        """Parse files, balancing by size; returns metadata in input order."""
        batches: dict[int, list] = {}
        order = sorted(range(len(items)), key=lambda i: -len(items[i][2] or b""))
        for i in order:
            w = min(range(len(self.load)), key=lambda k: self.load[k])
            self.load[w] += len(items[i][2] or b"") + 1
            self.owner[items[i][0]] = w
            batches.setdefault(w, []).append(items[i])
        results = self._call_all({w: ("parse", b) for w, b in batches.items()})
        by_path = {m.path: m for metas in results.values() for m in metas}
        return [by_path[path] for path, _l, _d in items]

    def analyze(self, jobs: list[tuple[FunctionKey, dict[str, Summary | None]]], constants: dict[str, int]
                ) -> dict[FunctionKey, FunctionResult | None]:
        batches: dict[int, list] = {}
        for job in jobs:
            batches.setdefault(self.owner[job[0][0]], []).append(job)
        out: dict[FunctionKey, FunctionResult | None] = {}
        for payload in self._call_all({w: ("analyze", b, constants) for w, b in batches.items()}).values():
            out.update(payload)
        return out

    def fetch_ir(self, keys: list[FunctionKey]) -> dict[FunctionKey, ir.Function | None]:
        batches: dict[int, list] = {}
        for key in keys:
            batches.setdefault(self.owner[key[0]], []).append(key)
        out: dict[FunctionKey, ir.Function | None] = {}
        for w, payload in self._call_all({w: ("ir", b) for w, b in batches.items()}).items():
            out.update(zip(batches[w], payload))
        return out
