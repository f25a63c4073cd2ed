"""Parsing files: the front end that fits each file's language (`parse_file`, through the front-end registry),
and the parser that keeps each file's IR for the run."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .. import ir
from ..discover import SourceFile
from ..fileio import read_prefix
from ..frontends.common.source import MAX_BYTES
from ..frontends.registry import parser_for, precise_parser_for

if TYPE_CHECKING:
    from .program import UnitMeta
from ..policy import Policy
from .program import Program
from .progress import Progress
from .settings import RunConfig


def parse_file(source: SourceFile, policy: Policy, data: bytes | None = None,
               compile_commands: str | None = None) -> ir.SourceUnit:
    """Run the front end that fits the file's language; never raise.

    With a compile database, C and C++ files listed in it go through libclang; a file libclang
    cannot handle falls back to tree-sitter with a notice, so no result is silently lost.
    """
    if compile_commands:
        precise = precise_parser_for(source.language)
        if precise is not None:
            try:
                unit = precise(source.path, policy, compile_commands)
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
        parse = parser_for(source.language)
        if parse is not None:
            return parse(source.path, policy, data)
    except RecursionError:
        return ir.SourceUnit(source.path, source.language, [],
                             [(ir.Loc(1, 1, 1, 1), "file is nested too deeply to parse; skipped")], 0)
    except Exception as exc:  # a front-end bug must not lose the other files' results
        return ir.SourceUnit(source.path, source.language, [],
                             [(ir.Loc(1, 1, 1, 1), f"internal error while parsing: {type(exc).__name__}: {exc}")], 0)
    return ir.SourceUnit(source.path, source.language, [], [], 0)


def _read(path: str) -> bytes | None:
    """At most MAX_BYTES + 1 bytes of a regular file (the front end says "too large"); None for
    anything else (a FIFO must not block the run)."""
    try:
        return read_prefix(path, MAX_BYTES + 1)
    except OSError:
        return None


class _Parser:
    """Parses files on demand, each at most once, remembering the results for the cache."""

    def __init__(self, config: RunConfig, program: Program, by_path: dict[str, SourceFile]):
        self.config = config
        self.program = program
        self.by_path = by_path
        self.units: dict[str, ir.SourceUnit] = {}
        self.metas: dict[str, "UnitMeta"] = {}  # files parsed by worker processes
        self.data: dict[str, bytes] = {}
        self.progress = Progress()  # told of each file parsed here (the runner's display)

    def parse(self, path: str) -> ir.SourceUnit:
        unit = self.units.get(path)
        if unit is None:
            source = self.by_path[path]
            unit = parse_file(source, self.config.policy, self.data.pop(path, None),
                              compile_commands=self.config.compile_commands)
            self.units[path] = unit
            self.program.add_unit(unit)
            self.progress.file_parsed()
        return unit


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
    from ..policy import load_policy
    _worker_policy = load_policy(policy_files, include_defaults=False)


def _worker_parse(item: tuple) -> ir.SourceUnit:
    path, language, data, compile_commands = item
    assert _worker_policy is not None
    return parse_file(SourceFile(path, language), _worker_policy, data, compile_commands)
