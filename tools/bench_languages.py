#!/usr/bin/env python3
"""Lines per second of ortlint per language, on the same machine and in one process: parsing,
lowering and the analysis of every function, the way `ortlint --no-cache --jobs 1` does it.

    .venv/bin/python tools/bench_languages.py [--repeat 5] DIR [DIR...]

CPU time of this one process is printed besides wall time: on a shared machine it is the steadier
figure. Every file under the folders is grouped by the language ortlint gives its suffix (C, C++,
Java, Go); each group is analyzed on its own, `--repeat` times, and the median is printed.
Use it to compare the Go front end with the C one on real code, e.g. the real-code corpus:
`tools/bench_languages.py /work/realcode/native /work/realcode/go`.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ortlint.api import default_policy  # noqa: E402
from ortlint.discover import discover  # noqa: E402
from ortlint.engine.analyze import Options  # noqa: E402
from ortlint.orchestration.settings import RunConfig
from ortlint.orchestration.runner import run  # noqa: E402


def lines_of(paths: list[str]) -> int:
    total = 0
    for p in paths:
        data = Path(p).read_bytes()
        total += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    by_language: dict[str, list[str]] = {}
    for f in discover(args.dirs).files:
        by_language.setdefault(f.language, []).append(f.path)
    policy = default_policy()
    print(f"{'language':<8} {'files':>6} {'lines':>8} {'CPU s':>7} {'lines/CPU s':>11} {'wall s':>7} {'lines/s':>8} "
          f"{'findings':>8}")
    for language, paths in sorted(by_language.items()):
        lines = lines_of(paths)
        walls, cpus = [], []
        findings = 0
        for _ in range(args.repeat):
            started, cpu = time.perf_counter(), time.process_time()
            report = run(RunConfig(list(paths), policy, Options(), jobs=1))
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
            findings = len(report.findings)
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        print(f"{language:<8} {len(paths):>6} {lines:>8} {cpu:>7.3f} {lines / cpu:>11.0f} {wall:>7.3f} "
              f"{lines / wall:>8.0f} {findings:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
