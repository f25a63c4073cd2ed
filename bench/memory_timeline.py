#!/usr/bin/env python3
"""Where ortlint's memory goes over a run: resident size of the main process and of each worker,
sampled, with the run's phases (issue 31: peak memory of the process tree).

    .venv/bin/python bench/memory_timeline.py TREE [--ortlint PATH] [--jobs 2] [--every 0.2]

Runs `ortlint --format json --verbose --no-cache --jobs J .` inside TREE (as bench/whole_repos.py
does), samples /proc every `--every` seconds and prints: CPU (user+sys of the process tree), wall
time, the peak resident size of the process tree and when it happened (seconds and phase), each
process's peak and when, and a timeline of the tree's resident size per process at every tenth of
the run. Phases come from the run's `ORTLINT_STATS` (discover, parse, analysis, report). Shared
pages count once per process (an upper bound, like bench/run_bench.py). It prints figures; it
asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_bench import _children, _rss_kb  # noqa: E402

DEFAULT_ORTLINT = HERE.parent / ".venv" / "bin" / "ortlint"


def _tree(root: int) -> dict[int, int]:
    """RSS in KB of `root` and each of its descendants."""
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out[pid] = _rss_kb(pid)
        todo.extend(_children(pid))
    return out


def sample_run(cmd: list[str], cwd: str, every: float) -> tuple[list[tuple[float, dict[int, int]]], dict, float, float, int]:
    """Run `cmd`; returns the samples (seconds since start, {pid: KB}), the stats, wall, CPU, exit code."""
    fd, stats_file = tempfile.mkstemp(prefix="ortlint-stats-", suffix=".json")
    os.close(fd)
    env = dict(os.environ, ORTLINT_STATS=stats_file)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    samples: list[tuple[float, dict[int, int]]] = []
    done = threading.Event()
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def sample() -> None:
        while not done.is_set():
            samples.append((time.perf_counter() - started, _tree(proc.pid)))
            done.wait(every)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    thread.join()
    try:
        stats = json.loads(Path(stats_file).read_text() or "{}")
    except (OSError, ValueError):
        stats = {}
    os.unlink(stats_file)
    return samples, stats, wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def phase_of(t: float, stats: dict) -> str:
    """The phase the run was in `t` seconds after start (the stats' durations, in order)."""
    edge = 0.3  # interpreter start-up, roughly: before discovery
    for name in ("discover", "parse", "graph", "analysis", "report"):
        edge += stats.get(f"{name}_seconds", 0.0)
        if t < edge:
            return name
    return "output"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tree")
    ap.add_argument("--ortlint", default=str(DEFAULT_ORTLINT))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--every", type=float, default=0.2)
    args = ap.parse_args(argv)
    out = tempfile.mktemp(prefix="ortlint-timeline-", suffix=".json")
    cmd = [args.ortlint, "--format", "json", "--verbose", "--no-cache", "--jobs", str(args.jobs), "--output", out, "."]
    samples, stats, wall, cpu, code = sample_run(cmd, args.tree, args.every)
    if os.path.exists(out):
        os.unlink(out)
    if not samples:
        print("no sample")
        return 1
    root = min(samples[0][1]) if samples[0][1] else 0
    total = [(t, sum(d.values())) for t, d in samples]
    t_peak, kb_peak = max(total, key=lambda x: x[1])
    print(f"exit {code}  wall {wall:.1f} s  CPU {cpu:.1f} s  peak tree {kb_peak / 1024:.0f} MB at {t_peak:.1f} s "
          f"({phase_of(t_peak, stats)})")
    print("phases (s): " + "  ".join(f"{k} {stats.get(k + '_seconds', 0.0):.1f}" for k in ("discover", "parse", "graph", "analysis", "report")))
    at_peak = next(d for t, d in samples if t == t_peak)
    print("at the peak: " + "  ".join(f"{'main' if pid == root else pid} {kb / 1024:.0f} MB" for pid, kb in sorted(at_peak.items())))
    peaks: dict[int, tuple[int, float]] = {}
    for t, d in samples:
        for pid, kb in d.items():
            if kb > peaks.get(pid, (0, 0.0))[0]:
                peaks[pid] = (kb, t)
    for pid, (kb, t) in sorted(peaks.items(), key=lambda x: x[1][1]):
        print(f"  {'main' if pid == root else 'worker ' + str(pid)}: peak {kb / 1024:.0f} MB at {t:.1f} s ({phase_of(t, stats)})")
    print("timeline (s: MB per process, main first):")
    step = max(1, len(samples) // 20)
    for t, d in samples[::step]:
        parts = [f"{d.get(root, 0) / 1024:.0f}"] + [f"{kb / 1024:.0f}" for pid, kb in sorted(d.items()) if pid != root]
        print(f"  {t:7.1f} {phase_of(t, stats):9s} total {sum(d.values()) / 1024:6.0f}  " + " ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
