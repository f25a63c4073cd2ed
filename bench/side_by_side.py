#!/usr/bin/env python3
"""ortlint side by side with cppcheck and the tree-sitter floor, on whole trees (issue 31).

    .venv/bin/python bench/side_by_side.py /work/realcode/native /work/trees/k2-fsa+sherpa-onnx
    .venv/bin/python bench/side_by_side.py TREE --before /path/to/old/ortlint --repeat 3 --json out.json

For each tree, in one run and alternated (round r starts with tool r mod n, so a machine whose
speed drifts slows every tool alike), `--repeat` times each:

* ortlint as users run it (`--no-cache --format json --verbose --jobs J TREE`), this checkout's
  (`--after`, default the `ortlint` next to this interpreter) and, with `--before`, another one;
* `cppcheck --quiet -jJ --enable=warning --inline-suppr --error-exitcode=0` on the tree's C and C++
  sources (the files ortlint analyzes, headers left to the includes, like bench/run_bench.py);

then, in this process, the tree-sitter parse-and-visit floor of ortlint's files (one core,
`run_bench.floor_seconds`, its CPU time). Printed per tool: CPU time of the process tree
(user + sys, children included), median and range; wall time; lines per wall second; peak
resident memory of the process tree (sampled, `run_bench.run_process`); ortlint's CPU as a
multiple of cppcheck's and of the floor's; ortlint's findings and its notes by cause (state or
work budget, time or memory limit, parse). This prints figures; it asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from run_bench import floor_seconds, load_average, ortlint_command, run_process  # noqa: E402

from ortlint.discover import discover  # noqa: E402

CPP_SOURCES = {".c", ".cc", ".cpp", ".cxx", ".c++", ".cu"}


def tree_files(tree: str) -> list[Path]:
    return [Path(f.path) for f in discover([tree]).files]


def count_lines(paths: list[Path]) -> int:
    total = 0
    for p in paths:
        with open(p, "rb") as fh:
            total += fh.read().count(b"\n")
    return total


def note_causes(notices: list[dict]) -> dict[str, int]:
    out = {"state or work budget": 0, "time or memory limit": 0, "parse": 0, "other": 0}
    for n in notices:
        text = n.get("message", "")
        if "budget" in text or "too many" in text or "incomplete" in text:
            out["state or work budget"] += 1
        elif text.startswith("internal error") or "took more than" in text or "needed more than" in text:
            out["time or memory limit"] += 1
        elif "parse" in text or "nested too deeply" in text:
            out["parse"] += 1
        else:
            out["other"] += 1
    return out


class Tool:
    def __init__(self, name: str, cmd: list[str], report: str | None = None):
        self.name, self.cmd, self.report = name, cmd, report
        self.runs: list = []
        self.findings: int | None = None
        self.notes: dict[str, int] = {}
        self.budget_notes: list[str] = []

    def run(self, timeout: float | None) -> None:
        r = run_process(self.cmd, timeout=timeout)
        self.runs.append(r)
        if self.report and os.path.exists(self.report):
            with open(self.report, encoding="utf-8") as fh:
                doc = json.load(fh)
            self.findings = len(doc.get("findings", []))
            notices = doc.get("notices", [])
            self.notes = note_causes(notices)
            self.budget_notes = sorted({n.get("message", "") for n in notices
                                        if note_causes([n])["state or work budget"] or note_causes([n])["time or memory limit"]})

    def figures(self) -> dict:
        cpus = [r.user + r.sys for r in self.runs]
        walls = [r.wall for r in self.runs]
        return {"cpu": statistics.median(cpus), "cpu_min": min(cpus), "cpu_max": max(cpus),
                "wall": statistics.median(walls), "peak_mb": max(r.peak_rss_mb for r in self.runs),
                "peak_mb_median": statistics.median(r.peak_rss_mb for r in self.runs),
                "loads": [round(r.load, 1) for r in self.runs], "exit": [r.returncode for r in self.runs],
                "findings": self.findings, "notes": self.notes, "limit_notes": self.budget_notes}


def measure_tree(tree: str, args: argparse.Namespace, tmp: Path) -> dict:
    files = tree_files(tree)
    lines = count_lines(files)
    sources = [p for p in files if p.suffix in CPP_SOURCES]
    source_lines = count_lines(sources)
    tools: list[Tool] = []
    versions = [("ortlint", args.after)] + ([("ortlint-before", args.before)] if args.before else [])
    for name, exe in versions:
        report = str(tmp / f"{name}.json")
        cmd = exe.split() + ["--no-cache", "--format", "json", "--verbose", "--jobs", str(args.jobs),
                             "--time-limit", str(args.time_limit), "--output", report, tree]
        tools.append(Tool(name, cmd, report))
    cppcheck = shutil.which("cppcheck")
    if cppcheck and sources and not args.no_cppcheck:
        listing = tmp / "cppcheck-files.txt"
        listing.write_text("\n".join(str(p) for p in sources), encoding="utf-8")
        tools.append(Tool("cppcheck", [cppcheck, "--quiet", f"-j{args.jobs}", "--enable=warning", "--inline-suppr",
                                       f"--file-list={listing}", "--error-exitcode=0"]))
    for i in range(args.repeat):
        for k in range(len(tools)):
            tool = tools[(i + k) % len(tools)]
            tool.run(args.timeout)
            r = tool.runs[-1]
            print(f"  [{Path(tree).name}] round {i + 1}: {tool.name:15s} {r.user + r.sys:8.2f} s CPU {r.wall:8.2f} s wall "
                  f"{r.peak_rss_mb:6.0f} MB (load {r.load:.1f}, exit {r.returncode})", flush=True)
    floors = []
    for _ in range(args.repeat):
        started = time.process_time()
        floor_seconds(files)
        floors.append(time.process_time() - started)
    return {"tree": tree, "files": len(files), "lines": lines, "cpp_sources": len(sources), "cpp_source_lines": source_lines,
            "floor_cpu": statistics.median(floors), "floor_cpu_range": [min(floors), max(floors)],
            "tools": {t.name: t.figures() for t in tools}, "cppcheck_version": _version(cppcheck)}


def _version(exe: str | None) -> str:
    if not exe:
        return ""
    return subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()


def show(r: dict) -> str:
    out = [f"{r['tree']}: {r['files']} files, {r['lines']:,} lines ({r['cpp_sources']} C/C++ sources, "
           f"{r['cpp_source_lines']:,} lines, for cppcheck); floor {r['floor_cpu']:.2f} s CPU (tree-sitter "
           f"parse and visit, one core)"]
    out.append(f"  {'tool':15s} {'CPU s (median, range)':>26s} {'wall s':>8s} {'lines/s':>9s} {'peak MB':>8s} "
               f"{'x cppcheck':>10s} {'x floor':>8s}  findings, notes")
    cc = r["tools"].get("cppcheck")
    for name, f in r["tools"].items():
        lps = r["lines"] / f["wall"] if f["wall"] else 0.0
        x_cc = f"{f['cpu'] / cc['cpu']:.2f}" if cc and cc["cpu"] else "-"
        x_floor = f"{f['cpu'] / r['floor_cpu']:.1f}" if r["floor_cpu"] else "-"
        extra = ""
        if f["findings"] is not None:
            extra = f"{f['findings']} findings; notes " + ", ".join(f"{k} {v}" for k, v in f["notes"].items() if v)
        out.append(f"  {name:15s} {f['cpu']:9.2f} ({f['cpu_min']:.2f}-{f['cpu_max']:.2f}) {f['wall']:8.2f} {lps:9,.0f} "
                   f"{f['peak_mb']:8.0f} {x_cc:>10s} {x_floor:>8s}  {extra}")
        for m in f["limit_notes"]:
            out.append(f"      note: {m[:160]}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--after", default=" ".join(ortlint_command()), help="the ortlint measured (default: this checkout's)")
    ap.add_argument("--before", help="another ortlint to run alternately (e.g. /work/wt-base/.venv/bin/ortlint)")
    ap.add_argument("--time-limit", type=float, default=20, help="ortlint --time-limit (default: ortlint's, 20)")
    ap.add_argument("--timeout", type=float, help="kill a run after this many seconds")
    ap.add_argument("--no-cppcheck", action="store_true")
    ap.add_argument("--json", help="also write every figure to this file")
    ap.add_argument("--keep", help="keep ortlint's reports of the last round in this folder (TREE-NAME.json)")
    args = ap.parse_args(argv)
    print(f"load {load_average():.1f}; cppcheck: {_version(shutil.which('cppcheck')) or 'not installed'}; "
          f"ortlint: {args.after}" + (f"; before: {args.before}" if args.before else ""), flush=True)
    results = []
    for tree in args.trees:
        with tempfile.TemporaryDirectory(prefix="ortlint-side-") as tmp:
            results.append(measure_tree(tree, args, Path(tmp)))
            if args.keep:
                Path(args.keep).mkdir(parents=True, exist_ok=True)
                for report in Path(tmp).glob("ortlint*.json"):
                    shutil.copy(report, Path(args.keep) / f"{Path(tree).name}.{report.name}")
        print(show(results[-1]), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
