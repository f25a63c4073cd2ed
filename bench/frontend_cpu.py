#!/usr/bin/env python3
"""CPU time of ortlint's front ends on a tree, and a digest of what they produce.

    .venv/bin/python bench/frontend_cpu.py /work/realcode/native --repeat 5
    .venv/bin/python bench/frontend_cpu.py /work/realcode/java --profile    # + cProfile call count

Each repeat runs in a fresh child process, so every per-process cache (the header index, memoized
snippets) starts cold, as in a real run. The child discovers the files the way ortlint does
(`ortlint.discover.discover`), reads them, configures the header index like the runner, then
parses every file with `ortlint.runner.parse_file` and the shipped policy, with the cycle
collector paused as the parse workers do. It measures `time.process_time()` around the parses
only (not imports, not reading).

It prints the median CPU seconds and lines/s over the repeats and a sha256 of a canonical dump
of every `SourceUnit` (functions, blocks, events, locations, notes, constants, dependencies).
The digest is the proof that a faster front end produces the same IR: it must not change.
With --profile, one more child runs under cProfile and prints the total number of function
calls (deterministic, unlike time: a second figure on a noisy machine).

This prints figures; it asserts nothing.
"""
from __future__ import annotations

import argparse
import dataclasses
import gc
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def canonical(value: object, out: list[str]) -> None:
    """Append a textual dump of `value` that depends only on its content: dataclasses by field,
    sets sorted, dicts in their (meaningful) insertion order. Unlike pickle, it does not change
    when two equal objects become one shared object."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out.append(type(value).__name__ + "(")
        for f in dataclasses.fields(value):
            out.append(f.name + "=")
            canonical(getattr(value, f.name), out)
            out.append(",")
        out.append(")")
    elif isinstance(value, (list, tuple)):
        out.append(("L[" if isinstance(value, list) else "T[") if not hasattr(value, "_fields")
                   else type(value).__name__ + "[")
        for item in value:
            canonical(item, out)
            out.append(",")
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        for key, item in value.items():
            canonical(key, out)
            out.append(":")
            canonical(item, out)
            out.append(",")
        out.append("}")
    elif isinstance(value, (set, frozenset)):
        out.append("S{" + ",".join(sorted(repr(v) for v in value)) + "}")
    else:
        out.append(repr(value))


def digest(units: list) -> str:
    h = hashlib.sha256()
    for unit in units:
        parts: list[str] = []
        canonical(unit, parts)
        h.update("".join(parts).encode("utf-8", "surrogatepass"))
        h.update(b"\n")
    return h.hexdigest()


def child(tree: str, profile: bool) -> dict:
    """One cold measurement in this process."""
    from ortlint.api import default_policy
    from ortlint.discover import discover
    from ortlint.frontends.common import header_index
    from ortlint.orchestration.parsing import parse_file

    policy = default_policy()
    found = discover([tree])
    files = [(s, Path(s.path).read_bytes()) for s in found.files]
    lines = sum(data.count(b"\n") for _s, data in files)
    if any(s.language in ("c", "cpp") for s, _d in files):
        header_index.configure((), (tree,))
    calls = 0
    gc.disable()
    if profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        units = [parse_file(s, policy, data) for s, data in files]
        prof.disable()
        calls = pstats.Stats(prof).total_calls
        seconds = 0.0
    else:
        started = time.process_time()
        units = [parse_file(s, policy, data) for s, data in files]
        seconds = time.process_time() - started
    gc.enable()
    return {"files": len(files), "lines": lines, "seconds": seconds, "calls": calls, "digest": digest(units)}


def run_child(tree: str, profile: bool) -> dict:
    cmd = [sys.executable, __file__, tree, "--child"] + (["--profile"] if profile else [])
    # a fixed hash seed: the front ends fill some dicts from sets of strings (the constants), whose
    # order follows the string hashes; with a random seed the digest changed from run to run
    env = dict(os.environ, PYTHONHASHSEED=os.environ.get("PYTHONHASHSEED", "0"))
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="also count calls under cProfile")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.tree, args.profile)))
        return
    runs = [run_child(args.tree, False) for _ in range(max(1, args.repeat))]
    digests = {r["digest"] for r in runs}
    seconds = statistics.median(r["seconds"] for r in runs)
    first = runs[0]
    print(f"tree {args.tree}  files {first['files']}  lines {first['lines']}")
    print(f"parse cpu median {seconds:.3f} s over {len(runs)} runs "
          f"({', '.join('%.3f' % r['seconds'] for r in runs)})  {first['lines'] / seconds:,.0f} lines/s"
          if seconds else "parse cpu 0")
    if args.profile:
        print(f"cProfile calls {run_child(args.tree, True)['calls']:,}")
    print(f"digest {' '.join(sorted(digests))}{'  (NOT STABLE across runs!)' if len(digests) > 1 else ''}")


if __name__ == "__main__":
    main()
