#!/usr/bin/env python3
"""The engine's CPU time alone, and a digest of everything it decides.

    .venv/bin/python bench/engine_cpu.py [TREE] [--repeat 5] [--no-profile]

The tree is parsed once, in this process (its IR is kept in a pickle under the temporary folder,
keyed by the front ends' sources, so a second run skips parsing); then the analysis phase runs
alone, the way a run without a cache drives it (`runner.Analysis`: callees first, recursive
components in rounds, summaries only for called functions). Printed:

* the analysis CPU time (`time.process_time`), median of --repeat runs: the figure a busy
  machine distorts least;
* the number of Python calls of one analysis run (cProfile): noise-free, for small changes;
* a sha256 digest of every function's findings (with traces and exits), notes, unknown callees
  and summary, in a canonical form (sets sorted), so an engine change that must not change
  results can be checked: the digest before and after must be equal.

This prints figures; it asserts nothing.
"""
from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gc
import hashlib
import os
import pickle
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ortlint.api import default_policy  # noqa: E402
from ortlint.discover import discover  # noqa: E402
from ortlint.engine.analyze import Options  # noqa: E402
from ortlint.orchestration.analysis import Analysis
from ortlint.orchestration.program import Program
from ortlint.orchestration.settings import RunConfig
from ortlint.orchestration.parsing import _Parser
from ortlint.orchestration.tasks import cycle_collection_paused  # noqa: E402

DEFAULT_TREE = "/work/realcode/native"


def _frontend_digest() -> str:
    """What the parsed IR depends on: the front ends, the IR and the policy (not the engine)."""
    root = HERE.parent / "ortlint"
    h = hashlib.sha256()
    paths = sorted(root.glob("frontends/**/*.py")) + [root / "ir.py", root / "policy.py", root / "discover.py"]
    paths += sorted((HERE.parent / "rules").glob("*.toml")) if (HERE.parent / "rules").is_dir() else []
    for p in paths:
        h.update(str(p.relative_to(HERE.parent)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def load_program(tree: str, policy) -> Program:
    """The tree's IR: parsed here (without worker processes), or reloaded from the pickle."""
    tag = hashlib.sha256(os.path.abspath(tree).encode()).hexdigest()[:8]
    cache = Path(tempfile.gettempdir()) / f"ortlint-engine-cpu-{tag}-{_frontend_digest()}.pickle"
    if cache.exists():
        with open(cache, "rb") as fh:
            units = pickle.load(fh)
    else:
        found = discover([tree])
        config = RunConfig([tree], policy, isolate=False, jobs=1)
        if any(s.language in ("c", "cpp") for s in found.files):
            from ortlint.frontends.common.header_index import configure
            configure(config.include_dirs, tuple(config.paths))
        program = Program()
        parser = _Parser(config, program, {s.path: s for s in found.files})
        with cycle_collection_paused():
            units = [parser.parse(s.path) for s in found.files]
        with open(cache, "wb") as fh:
            pickle.dump(units, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return Program(units)


def analyze(program: Program, policy, all_summaries: bool = False) -> Analysis:
    """The analysis phase of a run without a cache, in this process (`all_summaries`: every
    function's summary, as a run with a cache builds them)."""
    analysis = Analysis(program, policy, Options())
    analysis.track_deps = False
    analysis.summarize_all = all_summaries
    with cycle_collection_paused(keep=False):
        analysis.run()
    return analysis


def canonical(obj: object) -> object:
    """A hash-order-free form of results: sets sorted, dataclasses and tuples as lists."""
    if isinstance(obj, (set, frozenset)):
        return ["set"] + sorted((canonical(x) for x in obj), key=repr)
    if isinstance(obj, dict):
        return ["dict"] + sorted(([canonical(k), canonical(v)] for k, v in obj.items()), key=repr)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [type(obj).__name__] + [canonical(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                                       if f.compare]
    if isinstance(obj, (tuple, list)):
        return [canonical(x) for x in obj]
    return obj


def digest(analysis: Analysis) -> tuple[str, dict[str, int]]:
    h = hashlib.sha256()
    counts = {"functions": 0, "findings": 0, "notes": 0, "summaries": 0}
    for key in sorted(analysis.results):
        r = analysis.results[key]
        counts["functions"] += 1
        counts["findings"] += len(r.findings)
        counts["notes"] += len(r.notes)
        counts["summaries"] += r.summary is not None
        h.update(repr((key, canonical(r.findings), canonical(r.notes), canonical(r.unknown_callees),
                       canonical(r.summary))).encode())
    return h.hexdigest(), counts


def call_count(program: Program, policy, all_summaries: bool) -> int:
    profiler = cProfile.Profile()
    profiler.enable()
    analyze(program, policy, all_summaries)
    profiler.disable()
    return sum(v[1] for v in pstats.Stats(profiler).stats.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", nargs="?", default=DEFAULT_TREE)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-profile", action="store_true", help="skip the call count (cProfile)")
    ap.add_argument("--all-summaries", action="store_true",
                    help="build every function's summary (as a run with a cache does), not only called ones'")
    args = ap.parse_args(argv)
    policy = default_policy()
    program = load_program(args.tree, policy)
    times = []
    analysis = None
    for _ in range(args.repeat):
        gc.collect()
        started = time.process_time()
        analysis = analyze(program, policy, args.all_summaries)
        times.append(time.process_time() - started)
    assert analysis is not None
    sha, counts = digest(analysis)
    print(f"tree      {args.tree}: {counts['functions']} functions analyzed, {counts['findings']} findings, "
          f"{counts['notes']} notes, {counts['summaries']} summaries")
    print(f"cpu       {statistics.median(times):.3f} s median of {args.repeat} "
          f"(min {min(times):.3f}, max {max(times):.3f})")
    if not args.no_profile:
        print(f"calls     {call_count(program, policy, args.all_summaries):,} (cProfile, one analysis run)")
    print(f"digest    {sha}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
