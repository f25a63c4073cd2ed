#!/usr/bin/env python3
"""ortlint on real code: the public C, C++ and JNI sources of bench/real_corpus.toml.

    .venv/bin/python bench/real_corpus.py ...              # extract the corpus once (see bench/README.md)
    .venv/bin/python bench/run_real.py                     # /work/realcode/native, 2 workers
    .venv/bin/python bench/run_real.py TREE --jobs 2 --repeat 3 --json real.json

ortlint runs as a process, the way users run it (`ortlint --no-cache --format json --jobs J
--verbose TREE`; --verbose only adds the notes to the JSON). It prints lines/s end to end
(process start included), the tree-sitter parse-and-visit floor of the same files measured in
the same run and the ratio, the phases of the ortlint process (ORTLINT_STATS), the peak
resident memory of the whole process tree, the slowest functions, and every note by cause
(analysis budgets, code that could not be parsed, others).

This prints figures; it asserts nothing (the targets of issue 11 are printed beside them).
The helpers (process measurement, the floor) are those of bench/run_bench.py.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import run_bench  # noqa: E402
from run_bench import compile_package, floor_seconds, load_average, median_run, ortlint_command, run_process  # noqa: E402

from ortlint.discover import discover  # noqa: E402

DEFAULT_TREE = "/work/realcode/native"
TARGETS = {"lines_per_second": 30_000, "floor_ratio": 5.0, "slowest_function_seconds": 0.25, "peak_memory_mb": 500,
           "budget_notes": 0}
PHASES = ("discover_seconds", "parse_seconds", "graph_seconds", "analysis_seconds", "summary_seconds",
          "report_seconds", "output_seconds")


def source_files(tree: str) -> list[Path]:
    """The files ortlint analyzes in `tree` (its own discovery, default excludes)."""
    return [Path(f.path) for f in discover([tree]).files]


def count_lines(paths: list[Path]) -> int:
    total = 0
    for p in paths:
        with open(p, "rb") as fh:
            total += fh.read().count(b"\n")
    return total


def note_causes(notices: list[dict]) -> dict[str, int]:
    out = {"budget": 0, "parse": 0, "other": 0}
    for n in notices:
        text = n.get("message", "")
        if "budget" in text or "too many" in text or "incomplete" in text:
            out["budget"] += 1
        elif "parse" in text or "nested too deeply" in text:
            out["parse"] += 1
        else:
            out["other"] += 1
    return out


def measure(tree: str, jobs: int, repeat: int) -> dict:
    files = source_files(tree)
    lines = count_lines(files)
    runs = []
    report: dict = {}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="ortlint-real-") as tmp:
            out = os.path.join(tmp, "out.json")
            cmd = ortlint_command() + ["--no-cache", "--format", "json", "--jobs", str(jobs), "--verbose",
                                       "--output", out, tree]
            runs.append(run_process(cmd, stats=True))
            if os.path.exists(out):
                with open(out, encoding="utf-8") as fh:
                    report = json.load(fh)
    best = median_run(runs)
    floors, floor_cpus = [], []
    for _ in range(repeat):
        cpu_started = time.process_time()
        floors.append(floor_seconds(files)[0])
        floor_cpus.append(time.process_time() - cpu_started)
    floor = statistics.median(floors)
    floor_cpu = statistics.median(floor_cpus)
    notices = report.get("notices", [])
    stats = best.stats or {}
    return {
        "tree": tree, "files": len(files), "lines": lines, "jobs": jobs, "repeat": repeat,
        "wall": best.wall, "user": best.user, "sys": best.sys, "lines_per_second": lines / best.wall if best.wall else 0.0,
        "floor_seconds": floor, "floor_ratio": best.wall / floor if floor else 0.0,
        "floor_cpu_seconds": floor_cpu, "cpu_ratio": (best.user + best.sys) / floor_cpu if floor_cpu else 0.0,
        "peak_rss_mb": best.peak_rss_mb, "load": best.load, "returncode": best.returncode,
        "phases": {p: stats.get(p, 0.0) for p in PHASES},
        "slowest_functions": stats.get("slowest_functions", []),
        "findings": len(report.get("findings", [])), "notes": note_causes(notices),
        "note_messages": sorted(n.get("message", "") for n in notices),
    }


def function_cpu_times(tree: str, top: int) -> tuple[float, list[tuple[float, str, str, int]]]:
    """The analysis CPU time of every function (one process, in this interpreter): the figure
    that a busy machine does not distort, unlike the wall times of ORTLINT_STATS."""
    from ortlint.engine.analyze import FunctionAnalyzer
    from ortlint.api import default_policy
    from ortlint.orchestration.settings import RunConfig
    from ortlint.orchestration.runner import run
    times: list[tuple[float, str, str, int]] = []
    original = FunctionAnalyzer.run

    def timed(self, summarize: bool = True):
        started = time.process_time()
        result = original(self, summarize)
        times.append((time.process_time() - started, self.fn.name, self.fn.path, self.fn.loc.line))
        return result

    FunctionAnalyzer.run = timed
    try:
        run(RunConfig([tree], default_policy(), isolate=False, jobs=1))  # in this process: workers are not timed here
    finally:
        FunctionAnalyzer.run = original
    times.sort(reverse=True)
    return sum(t[0] for t in times), times[:top]


def show(r: dict) -> str:
    t = TARGETS
    lines = [
        f"tree            {r['tree']}: {r['files']} files, {r['lines']} lines, --jobs {r['jobs']}, "
        f"median of {r['repeat']} (load {r['load']:.2f})",
        f"end to end      {r['wall']:.2f} s wall, {r['user']:.2f} s user: {r['lines_per_second']:,.0f} lines/s "
        f"(target >= {t['lines_per_second']:,})",
        f"floor           {r['floor_seconds']:.2f} s tree-sitter parse-and-visit (one core): ortlint takes "
        f"{r['floor_ratio']:.1f}x (target <= {t['floor_ratio']:.0f}x); in CPU time {r['cpu_ratio']:.1f}x "
        f"({r['user'] + r['sys']:.2f} s against {r['floor_cpu_seconds']:.2f} s: the ratio a busy machine does not distort)",
        f"peak memory     {r['peak_rss_mb']:.0f} MB, process tree (target <= {t['peak_memory_mb']})",
        "phases          " + ", ".join(f"{k.replace('_seconds', '')} {v:.2f}s" for k, v in r["phases"].items())
        + "  (wall time of each phase; summary: CPU time the workers spent building summaries, part of analysis)",
        f"findings        {r['findings']}",
        f"notes           budget {r['notes']['budget']} (target {t['budget_notes']}), could not parse "
        f"{r['notes']['parse']}, other {r['notes']['other']}",
        f"slowest         by wall time in the run above (inflated by machine load; target <= "
        f"{t['slowest_function_seconds']} s each)",
    ]
    for path, name, line, seconds in r["slowest_functions"]:
        lines.append(f"  {seconds:7.3f} s  {name}  {os.path.relpath(path, r['tree'])}:{line}")
    if "cpu_functions" in r:
        lines.append(f"analysis CPU    {r['cpu_analysis']:.2f} s in one process; slowest functions by CPU time "
                     f"(target <= {t['slowest_function_seconds']} s each):")
        for seconds, name, path, line in r["cpu_functions"]:
            lines.append(f"  {seconds:7.3f} s  {name}  {os.path.relpath(path, r['tree'])}:{line}")
    budget = [m for m in r["note_messages"] if "budget" in m or "too many" in m or "incomplete" in m]
    for m in budget:
        lines.append(f"  budget note: {m}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree", nargs="?", default=DEFAULT_TREE, help=f"folder to analyze (default {DEFAULT_TREE})")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="runs per figure; the median is shown")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--no-cpu", action="store_true", help="skip the in-process CPU time of every function")
    ap.add_argument("--top", type=int, default=5, help="slowest functions to list by CPU time")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.tree):
        print(f"run_real.py: {args.tree}: no such folder (extract the corpus with bench/real_corpus.py)", file=sys.stderr)
        return 2
    compile_package()
    result = measure(args.tree, args.jobs, args.repeat)
    if not args.no_cpu:
        result["cpu_analysis"], result["cpu_functions"] = function_cpu_times(args.tree, args.top)
    print(show(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
