#!/usr/bin/env python3
"""Two versions of ortlint on one tree, run alternately, compared pair by pair.

    .venv/bin/python bench/ab_compare.py --a /path/to/other/checkout TREE [--pairs 10] [--jobs 2]
    .venv/bin/python bench/ab_compare.py --a 'old=/usr/bin/ortlint-old' --b 'new=.venv/bin/ortlint' TREE

A version is a checkout (a directory holding `ortlint/`: run as `python -m ortlint` with that
directory first on PYTHONPATH, by this interpreter) or an executable. `--b` defaults to this
checkout. Each pair runs A then B, or B then A (alternating), so a machine whose speed drifts
(this project's 2-core machine: ±20 % within minutes, 2x between hours) slows both sides of a
pair alike. Printed: every pair (wall and CPU time, process start included), the medians and
minima of each side, the median of the paired differences and how many pairs B won; and whether
the two versions reported the same (the JSON reports compared; a change meant only to be faster
must not change them).

This prints figures; it asserts nothing. Why it exists: a 5 % change is invisible in a handful of
unpaired runs here (one series of four rounds showed nothing, ten pairs showed 6 wins and a
paired median of -0.42 s).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run_bench import compile_package, run_process  # noqa: E402


def version_command(spec: str) -> tuple[str, list[str], dict[str, str]]:
    """`[name=]path` -> (name, command, extra environment)."""
    name, _, path = spec.rpartition("=")
    target = Path(path).resolve()
    if (target / "ortlint" / "__init__.py").exists():
        env = {"PYTHONPATH": str(target) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        return name or target.name, [sys.executable, "-m", "ortlint"], env
    if target.is_file() and os.access(target, os.X_OK):
        return name or target.name, [str(target)], {}
    raise SystemExit(f"ab_compare.py: {path}: neither a checkout (a directory with ortlint/) nor an executable")


def run_once(command: list[str], extra_env: dict[str, str], tree: str, jobs: int, out: str):
    """One run, from the folder of `out`: `python -m` puts the working directory first on the
    path, and a checkout there would win over the one PYTHONPATH names."""
    env = dict(os.environ)
    env.update(extra_env)
    return run_process(command + ["--no-cache", "--format", "json", "--verbose", "--jobs", str(jobs),
                                  "--output", out, tree], env=env, cwd=os.path.dirname(out))


def _report(path: str) -> dict:
    """The JSON report without what names the version (the tool's own description)."""
    doc = json.loads(Path(path).read_text())
    doc.pop("tool", None)
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("--a", required=True, help="the version to compare against: [name=]checkout-or-executable")
    ap.add_argument("--b", default=str(HERE.parent), help="the version measured (default: this checkout)")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    versions = [version_command(args.a), version_command(args.b)]
    tree = os.path.abspath(args.tree)
    compile_package()
    walls: dict[int, list[float]] = {0: [], 1: []}
    cpus: dict[int, list[float]] = {0: [], 1: []}
    same = True
    with tempfile.TemporaryDirectory(prefix="ortlint-ab-") as tmp:
        outs = [os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")]
        print(f"tree {args.tree}, --jobs {args.jobs}, {args.pairs} pairs; A = {versions[0][0]}, B = {versions[1][0]}")
        for side in (0, 1):  # not counted: writes each version's byte code, warms the file cache
            run_once(versions[side][1], versions[side][2], tree, args.jobs, outs[side])
        for pair in range(args.pairs):
            order = (0, 1) if pair % 2 == 0 else (1, 0)
            for side in order:
                _name, command, env = versions[side]
                run = run_once(command, env, tree, args.jobs, outs[side])
                walls[side].append(run.wall)
                cpus[side].append(run.user + run.sys)
            same = same and _report(outs[0]) == _report(outs[1])
            print(f"pair {pair + 1:2d}: A {walls[0][-1]:.3f} s ({cpus[0][-1]:.2f} s CPU)   "
                  f"B {walls[1][-1]:.3f} s ({cpus[1][-1]:.2f} s CPU)   B-A {walls[1][-1] - walls[0][-1]:+.3f} s")
    for side, label in ((0, "A"), (1, "B")):
        print(f"{label}: wall median {statistics.median(walls[side]):.3f} s, min {min(walls[side]):.3f} s; "
              f"CPU median {statistics.median(cpus[side]):.2f} s")
    diffs = [b - a for a, b in zip(walls[0], walls[1])]
    cpu_diffs = [b - a for a, b in zip(cpus[0], cpus[1])]
    print(f"B-A: wall paired median {statistics.median(diffs):+.3f} s "
          f"({statistics.median(diffs) / statistics.median(walls[0]):+.1%}), B faster in "
          f"{sum(d < 0 for d in diffs)} of {len(diffs)} pairs; CPU paired median {statistics.median(cpu_diffs):+.2f} s")
    print("reports: " + ("identical" if same else "DIFFERENT (the versions do not report the same)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
