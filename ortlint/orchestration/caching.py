"""What the run keeps in and takes from the cache: namespaces, whole-run replay, per-file records."""
from __future__ import annotations

import hashlib
import os
import time

from ..discover import Discovery, SourceFile
from ..engine.analyze import Options
from ..engine.slots import unit_slot_facts
from ..findings import STOPPED, Report, note_level
from ..policy import Policy
from .analysis import Analysis
from .cache import Cache, FileRecord, FunctionRecord, code_digest, file_stamps
from .parsing import _Parser, _read
from .program import Program


def policy_namespace(policy: Policy, options: Options) -> str:
    """Cache namespace: changes whenever the policy files or the analysis options change."""
    h = hashlib.blake2b(digest_size=8)
    for path in policy.files:
        h.update(path.encode("utf-8", "surrogateescape"))
        h.update(_read(path) or b"")
    h.update(repr(options).encode())
    h.update(code_digest().encode())  # ortlint's own sources: a changed engine or front end never reuses old results
    return h.hexdigest()


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


def _run_key(namespace: str, found: "Discovery", hashes: dict[str, str], contents: dict[str, bytes | None]) -> str | None:
    """What a whole run's result depends on besides the namespace: every file's path, language
    and content, and what discovery reported. None when a file cannot be read (its hash says
    nothing about what the front end will see)."""
    if any(data is None for data in contents.values()):
        return None
    h = hashlib.blake2b(namespace.encode(), digest_size=16)
    for source in sorted(found.files, key=lambda f: f.path):
        h.update(f"\0{source.path}\0{source.language}\0{hashes[source.path]}".encode("utf-8", "surrogateescape"))
    h.update(repr((sorted(found.problems), sorted(found.notes))).encode("utf-8", "surrogateescape"))
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


def _compile_database_digest(path: str | None) -> str:
    """Results in precise mode depend on the compile flags too."""
    if not path:
        return ""
    return "-" + hashlib.blake2b(os.fsencode(path) + (_read(path) or b""), digest_size=4).hexdigest()


def _add_context(cache: Cache, program: Program, by_path: dict[str, SourceFile]) -> None:
    """Summaries of unchanged files outside this run (pre-commit on a few files) that define
    functions the analyzed files call."""
    wanted = program.wanted_names()
    if not wanted:
        return
    exclude = {os.path.abspath(p) for p in by_path}
    for path, digest in cache.unchanged_context(exclude, wanted):
        record = cache.load(path, digest)
        if record is not None:
            program.add_record(record, context=True)


def _file_record(path: str, digest: str, program: Program, analysis: Analysis, parser: _Parser,
                 previous: FileRecord | None) -> FileRecord:
    """What this run knows about one file, in the cache's terms."""
    unit = parser.units.get(path)
    meta = parser.metas.get(path)
    notes: list[tuple[int, str, str]]
    if unit is not None:
        notes = [(loc.line, msg, _level(msg)) for loc, msg in unit.notes]
        for fn in unit.functions:
            notes.extend((loc.line, msg, note_level(msg, "note")) for loc, msg in fn.notes)
        keys = [(fn.path, fn.name, fn.loc.line) for fn in unit.functions]
        lines = unit.lines
    elif meta is not None:
        notes = [(line, msg, _level(msg)) for line, msg in meta.notes]
        for _name, _line, _static, _callees, fn_notes in meta.functions:
            notes.extend((line, msg, note_level(msg, "note")) for line, msg in fn_notes)
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
    """A file the run lost (a crash, a hang) is an error of the run; other file notes warn."""
    return note_level(message, "warning")


def lost(record: FileRecord) -> bool:
    """Whether part of this file's results was lost, or stopped at the CPU time limit: such
    records are never cached (a hang, or a limit counted in time, must not stick; a limit
    counted in work gives the same result every time and is cached)."""
    return any(_uncacheable(m) for _l, m, _v in record.notes) or \
        any(_uncacheable(m) for fr in record.functions for _l, m in fr.notes)


def _uncacheable(message: str) -> bool:
    return message.startswith("internal error") or message.startswith(STOPPED)


def _same_results(a: FileRecord, b: FileRecord) -> bool:
    return [(f.name, f.line, f.deps) for f in a.functions] == [(f.name, f.line, f.deps) for f in b.functions]
