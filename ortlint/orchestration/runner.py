"""One run of ortlint: files -> front ends -> IR -> summaries in call-graph order -> findings.

This module wires the layers together; it holds no analysis and no formatting of its own.
"""
from __future__ import annotations

import dataclasses
import gc
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..discover import Discovery, SourceFile, discover, repository_root
from .cache import Cache, FileRecord, content_hash

if TYPE_CHECKING:
    from .parallel import WorkerPool
from ..engine.callbacks import callback_findings
from ..engine.macro_defects import fold_macro_defects
from ..scope import tag_general_findings
from ..testcode import tag_test_findings
from ..engine.own_representation import drop_own_representation_mismatches, representation_classes
from ..engine.slots import slot_findings
from ..findings import STOPPED, Notice, Report, note_level
from ..programs import distrust
from ..suppress import apply_suppressions
from .analysis import Analysis
from .caching import (
    _add_context,
    _compile_database_digest,
    _file_record,
    _load_records,
    _replay,
    _run_key,
    lost,
    policy_namespace,
)
from .parsing import _Parser, _read, parse_many
from .program import Program
from .progress import Progress
from .settings import RunConfig
from .tasks import GC_THRESHOLDS, cycle_collection_paused


def run(config: RunConfig, progress: Progress | None = None) -> Report:
    """Analyze the paths of `config` and return every finding and notice, sorted. `progress`
    is told what is done as it is done (a display; it changes no result)."""
    # The IR and the engine's states are millions of small objects with almost no reference
    # cycles: the collector's default thresholds make it rescan the whole heap over and over
    # (10-15% of a run). Collect rarely during the run; the caller's settings come back after.
    previous = gc.get_threshold()
    gc.set_threshold(*(max(a, b) for a, b in zip(GC_THRESHOLDS, previous)))
    try:
        return _run(config, progress if progress is not None else Progress())
    finally:
        gc.set_threshold(*previous)


def _run(config: RunConfig, progress: Progress) -> Report:
    started = time.perf_counter()
    report = Report()
    found = _discover(config, report)
    distrust(config.paths)  # no program from the analyzed tree (programs.py); workers inherit it
    config = _with_compile_database(config, found.files, report)
    if any(s.language in ("c", "cpp") for s in found.files):  # the tree's own headers (workers inherit it)
        from ..frontends.common.header_index import configure
        configure(config.include_dirs, project_roots(config), scoped_include_dirs(found))
    cache = None
    if config.cache_dir:  # the namespace hashes the policy files and ortlint's sources: not for nothing
        namespace = policy_namespace(config.policy, config.options) + _compile_database_digest(config.compile_commands) \
            + ("|I" + "|".join(config.include_dirs) if config.include_dirs else "") \
            + ("|S" + repr(scoped_include_dirs(found)) if scoped_include_dirs(found) else "")
        cache = Cache(config.cache_dir, namespace)
    program = Program()
    by_path = {s.path: s for s in found.files}
    parser = _Parser(config, program, by_path)
    parser.progress = progress
    hashes: dict[str, str] = {}
    run_key = None
    read_file = _reader(config)
    if cache is not None:
        contents = {s.path: read_file(s.path) for s in found.files}
        hashes.update((path, content_hash(data or b"")) for path, data in contents.items())
        run_key = _run_key(namespace + ("|suppressions" if config.suppressions else "")  # the report as assembled
                           + "|tests:" + ",".join(config.test_patterns) + _scoped_key(found), found, hashes, contents)
        replayed = _replay(cache, run_key, by_path, started) if run_key else None
        if replayed is not None:
            return _with_cache_notices(replayed, cache)  # suppressions included: they come from the same file contents
        records, to_parse = _load_records(cache, found, contents, hashes, program, parser)
        read = contents.get  # suppression comments: from the contents already read, not a second read
    else:  # nothing to look up: the front ends (or the workers) read the files
        records, to_parse = {}, [s.path for s in found.files]
        hashes.update((s.path, "") for s in found.files)
        parser.data.update((path, data) for path, data in config.overlays.items() if path in by_path)
        read = read_file
    discovered = time.perf_counter()
    progress.start_files(len(found.files), len(found.files) - len(to_parse))
    limits: dict[str, object] = {}
    analysis, workers, parsed = _parse_and_analyze(config, found, to_parse, program, parser, cache, limits, progress)
    analyzed = time.perf_counter()
    dependencies = _assemble(report, found, program, analysis, parser, records, hashes, cache)
    report.stats = {
        "duplicates": found.duplicates, "force_excluded": found.force_excluded, "files": len(found.files), "functions": sum(1 for i in program.functions.values() if not i.context),
        "lines": sum(r.lines for r in (_unit_lines(parser, records, p) for p in by_path) if r is not None),
        "discover_seconds": discovered - started, "parse_seconds": parsed - discovered,
        "graph_seconds": analysis.graph_seconds, "analysis_seconds": analyzed - parsed - analysis.graph_seconds,
        "summary_seconds": sum(r.summary_seconds for r in analysis.results.values()),
        "report_seconds": time.perf_counter() - analyzed, "slowest_functions": _slowest(analysis),
        "parsed_files": len(parser.units) + len(parser.metas), "workers": workers,
        "analyzed_functions": analysis.analyzed, "reused_functions": analysis.reused,
        "cache_hits": cache.hits if cache else 0, "cache_misses": cache.misses if cache else 0,
        **limits,
    }
    if config.suppressions:
        report.stats["suppressed"] = apply_suppressions(report, lambda path: read(path) or b"")
    report.findings = tag_general_findings(report.findings, config.policy,
                                           lambda path: read(path) or read_file(path) or b"")
    # a run that lost something, or had something stopped at the CPU time limit, is not stored:
    # the next run tries again (limits counted in work give the same result every time: stored)
    complete = not any(n.level == "error" or n.message.startswith(STOPPED) for n in report.notices)
    if cache is not None and run_key and complete and not config.overlays \
            and not any(i.context for i in program.functions.values()):  # an unsaved buffer's run is not kept
        wanted = program.wanted_names()
        cache.store_run(run_key, {"report": report, "wanted": wanted, "dependencies": sorted(dependencies)})
    return _with_cache_notices(report, cache)


def _discover(config: RunConfig, report: Report) -> Discovery:
    """The files of the run (each once), with discovery's problems and notes in the report."""
    found = discover(config.paths, config.excludes, config.use_default_excludes, config.extensions,
                     config.follow_symlinks, config.respect_ignore, config.walk_rules,
                     lambda path: repository_root(path, config.project_root), config.force_exclude)
    _add_overlays(found, config)  # before the problems are reported: an unsaved file is no missing file
    for path, message in found.problems:
        report.notices.append(Notice(path, 0, message, "error" if "no such" in message else "warning"))
    report.notices.extend(Notice(path, 0, message, "error") for path, message in dict.fromkeys(found.errors))
    report.notices.extend(Notice(path, 0, message, "note") for path, message in found.notes)
    report.stats["duplicates"] = found.duplicates
    report.stats["force_excluded"] = found.force_excluded
    return found


def project_roots(config: RunConfig) -> tuple[str, ...]:
    """The repository roots of the analyzed paths: the header index reads the tree's headers
    from there, so a file named alone sees the headers a run over its whole tree sees."""
    return tuple(sorted({repository_root(path, config.project_root) for path in config.paths}))


def _scoped_key(found: Discovery) -> str:
    """What configuration files below the run's change in the assembled report (test code)."""
    scoped = sorted({(r.source, r.test_patterns) for r in found.rules.values() if r.source and r.test_patterns is not None})
    return "|scoped:" + repr(scoped) if scoped else ""


def scoped_include_dirs(found: Discovery) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(folder, include folders) of each configuration file below the run's that sets them."""
    return tuple(sorted({(rules.anchor, rules.include_dirs) for rules in found.rules.values()
                         if rules.source and rules.include_dirs}))


def _add_overlays(found: "Discovery", config: RunConfig) -> None:
    """Paths with text in `config.overlays` are analyzed even when discovery did not list them
    (an editor's new file, not saved yet): by their suffix's language, without the "no such
    file" problem."""
    if not config.overlays:
        return
    from ..discover import language_of
    listed = {s.path for s in found.files}
    added = False
    for path in config.overlays:
        language = language_of(path, config.extensions)
        if path in listed or language is None:
            continue
        found.files.append(SourceFile(path, language))
        found.problems = [(p, m) for p, m in found.problems if os.path.normpath(p) != path]
        added = True
    if added:
        found.files.sort(key=lambda f: f.path)


def _reader(config: RunConfig) -> Callable[[str], bytes | None]:
    """How the run reads a file: its overlay when it has one, else the file on disk."""
    overlays = config.overlays
    if not overlays:
        return _read
    return lambda path: overlays[path] if path in overlays else _read(path)


def _with_cache_notices(report: Report, cache: Cache | None) -> Report:
    """The cache's warning about entries that did not validate (after the run is stored: a
    replayed report must not repeat it)."""
    if cache is not None and cache.rejected:
        report.notices = report.notices + cache.notices()
        report.sort()
    return report


def _parse_and_analyze(config: RunConfig, found: "Discovery", to_parse: list[str], program: Program,
                       parser: _Parser, cache: Cache | None,
                       limits: dict[str, object] | None = None,
                       progress: Progress | None = None) -> tuple["Analysis", int, float]:
    """Parse what must be parsed (in worker processes when it pays) and analyze the program.
    Returns the analysis, the number of processes used and when parsing ended; `limits`
    receives how close the workers came to their limits (for --stats and bench/)."""
    cores = os.cpu_count() or 1  # more workers than cores or files only cost (a committed `jobs = 64`)
    workers = min(config.jobs if config.jobs > 0 else cores, cores, max(1, len(found.files)))
    total_bytes = _total_bytes(to_parse, parser.data, PARALLEL_MIN_BYTES)
    pool = None
    big = len(found.files) >= PARALLEL_MIN_FILES and total_bytes >= PARALLEL_MIN_BYTES
    if workers > 1 and big:
        pool = _start_pool(workers, config)
    elif config.isolate and found.files:
        pool = _start_pool(1, config)
    by_path = parser.by_path
    if pool is not None and progress is not None:
        pool.progress = progress
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
        if progress is not None:
            analysis.progress = progress
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
            if limits is not None:
                limits.update(pool.limit_stats())
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
        if cache is not None and not lost(record) and source.path not in parser.config.overlays \
                and (source.path in parser.units or source.path in parser.metas
                                                       or record is not records.get(source.path)):
            cache.store(record)
    if cache is not None:
        cache.flush()
    if slot_facts:  # members and globals over the whole tree (engine/slots.py); only with every file's facts
        report.findings.extend(slot_findings(slot_facts, parser.config.policy))
        report.findings.extend(callback_findings(slot_facts, parser.config.policy))
    classes = representation_classes(((key[1], s) for key, s in analysis.summaries.items()), parser.config.policy)
    report.findings = drop_own_representation_mismatches(report.findings, classes)
    report.keep_one_per_cause()
    report.findings = _tag_tests(fold_macro_defects(report.findings), found, parser.config)
    called = analysis.called if analysis.graph is not None else \
        {target for targets in program.call_graph().values() for target in targets}
    report.summaries = {k: v for k, v in analysis.summaries.items()
                        if v is not None and k in called and not program.functions[k].context}
    report.sort()
    return dependencies


def _tag_tests(findings: list, found: "Discovery", config: RunConfig) -> list:
    """Findings in test code tagged, by the test patterns of each file's configuration file."""
    groups: dict[tuple[str, ...], list] = {}
    for f in findings:
        rules = found.rules.get(f.path)
        patterns = rules.test_patterns if rules is not None and rules.test_patterns is not None else None
        groups.setdefault(tuple(patterns) if patterns is not None else tuple(config.test_patterns), []).append(f)
    out = []
    for patterns, group in groups.items():
        out.extend(tag_test_findings(group, config.paths, patterns))
    return out


def _slowest(analysis: Analysis, count: int = 5) -> list[tuple[str, str, int, float]]:
    """The functions whose analysis took longest: (path, name, line, CPU seconds)."""
    top = sorted(analysis.results.items(), key=lambda kv: -kv[1].seconds)[:count]
    return [(key[0], key[1], key[2], round(result.seconds, 4)) for key, result in top if result.seconds > 0]


def _with_compile_database(config: RunConfig, files: list[SourceFile], report: Report) -> RunConfig:
    """Precise mode: the compile database given (a file or its folder), or one discovered in
    the analyzed tree or its build/ folder when C/C++ files are analyzed (an empty string turns it off)."""
    if not any(f.language in ("c", "cpp") for f in files) and config.compile_commands is None:
        return config
    from ..frontends.clang.compile_db import resolve_compile_commands  # cheap: no libclang, no C++ model
    resolved = resolve_compile_commands(config.compile_commands, config.paths)
    if resolved and resolved != config.compile_commands:
        report.notices.append(Notice(resolved, 0, "using this compile database: C/C++ files listed in it are "
                                     "parsed with libclang (precise mode)", "note"))
    return dataclasses.replace(config, compile_commands=resolved)


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


def _collect(report: Report, record: FileRecord) -> None:
    for line, message, level in record.notes:
        report.notices.append(Notice(record.path, line, message, level))
    for fr in record.functions:
        report.findings.extend(fr.findings)
        for line, message in fr.notes:
            report.notices.append(Notice(record.path, line, message, note_level(message, "note")))
        for name, count in fr.unknown_callees.items():
            report.unknown_callees[name] = report.unknown_callees.get(name, 0) + count
