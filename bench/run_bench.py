#!/usr/bin/env python3
"""ortlint benchmark: speed and scale on a synthetic mixed tree, against the tree-sitter floor
and cppcheck, plus the pre-commit case, the warm cache and pathological functions.

    .venv/bin/python bench/run_bench.py                      # 10K, 100K and 1M lines
    .venv/bin/python bench/run_bench.py --sizes 10k,100k --repeat 5 --json bench.json
    .venv/bin/python bench/run_bench.py --sizes 10k --quick  # a smoke run (a minute)

ortlint runs as a process, the way users run it (`ortlint --no-cache --format json --jobs J
TREE`); the phase timings come from that same process (ORTLINT_STATS). Peak memory is the sum of
the resident sets of the whole process tree (the main process and its workers), sampled every
20 ms. Every timing is the median of --repeat runs; the machine load (1-minute load average)
is printed with each figure, since other work on the machine slows every number down.

This is not a test: nothing here asserts on time. `tests/test_bench.py` checks the generator
and the pathological inputs with small sizes.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import synth  # noqa: E402

TARGETS = {
    "lines_per_second": 30_000,  # end to end on 2 cores, mixed tree
    "floor_ratio": 5.0,  # ortlint time / parse-and-visit time
    "linearity": 1.2,  # time per 1K lines at the largest size / at the smallest
    "peak_memory_mb": 1024,  # at 1M lines
    "single_file_seconds": 0.3,
    "warm_speedup": 10.0,
    "function_seconds": 1.0,
}


# ----------------------------------------------------------------------------- processes


@dataclass
class ProcessRun:
    wall: float
    user: float
    sys: float
    peak_rss_mb: float  # sum over the process tree, sampled
    max_single_rss_mb: float  # the largest single process (getrusage)
    returncode: int
    load: float  # 1-minute load average when the run started
    stats: dict = field(default_factory=dict)  # ORTLINT_STATS of the run, when asked for
    stdout: str = ""


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    out.extend(int(x) for x in fh.read().split())
            except OSError:
                pass
    except OSError:
        pass
    return out


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _tree_rss_kb(root: int) -> int:
    total, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += _rss_kb(pid)
        todo.extend(_children(pid))
    return total


def kill_tree(root: int) -> None:
    """SIGKILL a process and all its descendants (a timed-out run must not leave workers behind)."""
    todo, pids = [root], []
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(_children(pid))
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def run_process(cmd: list[str], env: dict | None = None, capture: bool = False, stats: bool = False,
                timeout: float | None = None, cwd: str | None = None, stderr: str | None = None) -> ProcessRun:
    """Run `cmd`, measuring wall time, CPU time (children included) and peak memory of the tree.
    `stderr` names a file that receives the process's standard error (default: discarded); at
    `timeout` seconds the whole process tree is killed (workers too, not only the main process)."""
    env = dict(os.environ if env is None else env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure what an installed ortlint does: byte-compiled
    stats_file = None
    if stats:
        fd, stats_file = tempfile.mkstemp(prefix="ortlint-stats-", suffix=".json")
        os.close(fd)
        env["ORTLINT_STATS"] = stats_file
    load = load_average()
    peak = [0]
    done = threading.Event()
    started = time.perf_counter()
    err = open(stderr, "wb") if stderr else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                                stderr=err)
    finally:
        if stderr:
            err.close()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_kb(proc.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = ""
    timer = None
    if timeout is not None:
        timer = threading.Timer(timeout, kill_tree, (proc.pid,))
        timer.start()
    if capture:
        assert proc.stdout is not None
        out = proc.stdout.read().decode("utf-8", "replace")
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if timer is not None:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    sampler.join()
    data = {}
    if stats_file:
        try:
            data = json.loads(Path(stats_file).read_text() or "{}")
        except (OSError, ValueError):
            data = {}
        os.unlink(stats_file)
    return ProcessRun(wall, usage.ru_utime, usage.ru_stime, peak[0] / 1024, usage.ru_maxrss / 1024,
                      proc.returncode, load, data, out)


def ortlint_command() -> list[str]:
    """The installed `ortlint` entry point next to this interpreter, else `python -m ortlint`."""
    script = Path(sys.executable).with_name("ortlint")
    return [str(script)] if script.exists() else [sys.executable, "-m", "ortlint"]


def ortlint_version() -> str:
    """`ortlint 0.1.0`: which version was measured."""
    return subprocess.run(ortlint_command() + ["--version"], capture_output=True, text=True).stdout.strip()


def compile_package() -> None:
    """Byte-compile ortlint once (an installed package is; PYTHONDONTWRITEBYTECODE would otherwise
    make every measured process compile its sources again, 0.1 s of start-up)."""
    import compileall
    import ortlint
    compileall.compile_dir(os.path.dirname(ortlint.__file__), quiet=1)


def median_run(runs: list[ProcessRun]) -> ProcessRun:
    """The run with the median wall time (its other figures come with it); peak memory is the
    largest seen."""
    ordered = sorted(runs, key=lambda r: r.wall)
    mid = ordered[(len(ordered) - 1) // 2]
    return ProcessRun(mid.wall, mid.user, mid.sys, max(r.peak_rss_mb for r in runs),
                      max(r.max_single_rss_mb for r in runs), mid.returncode,
                      statistics.median(r.load for r in runs), mid.stats, "")


# ----------------------------------------------------------------------------- the floor and peers


def floor_seconds(files: list[Path]) -> tuple[float, int]:
    """Parse every file with tree-sitter and visit every node from Python (one core).
    Returns (seconds, nodes)."""
    from tree_sitter import Language, Parser
    import tree_sitter_c
    import tree_sitter_cpp
    import tree_sitter_java
    parsers = {
        "c": Parser(Language(tree_sitter_c.language())),
        "cpp": Parser(Language(tree_sitter_cpp.language())),
        "java": Parser(Language(tree_sitter_java.language())),
    }
    by_suffix = {".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".java": "java"}
    nodes = 0
    started = time.perf_counter()
    for path in files:
        parser = parsers.get(by_suffix.get(path.suffix, ""))
        if parser is None:
            continue
        with open(path, "rb") as fh:
            data = fh.read()
        cursor = parser.parse(data).walk()
        while True:
            nodes += 1
            _ = cursor.node.type
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    break
            else:
                continue
            break
    return time.perf_counter() - started, nodes


def cppcheck_run(tree: synth.Tree, jobs: int, max_lines: int) -> dict | None:
    """cppcheck on the C/C++ files of the tree (a sample of at most `max_lines` lines)."""
    exe = shutil.which("cppcheck")
    if exe is None:
        return None
    files = [p for p in tree.files if p.suffix in (".c", ".cc", ".cpp") and "include" not in p.parts]
    chosen, lines = [], 0
    for p in files:
        if lines >= max_lines:
            break
        chosen.append(p)
        lines += synth.tree_lines([p])
    headers = [p for p in tree.files if p.suffix in (".h", ".hpp")]
    header_lines = synth.tree_lines(headers) if len(chosen) == len(files) else 0
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("\n".join(str(p) for p in chosen))
        listing = fh.name
    try:
        version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
        cmd = [exe, "--quiet", f"-j{jobs}", "--enable=warning", "--inline-suppr", f"-I{tree.root / 'include'}",
               f"--file-list={listing}", "--error-exitcode=0"]
        run = run_process(cmd)
    finally:
        os.unlink(listing)
    return {"version": version, "files": len(chosen), "lines": lines + header_lines, "wall": run.wall,
            "lines_per_second": (lines + header_lines) / run.wall if run.wall else 0.0,
            "sampled": len(chosen) < len(files), "load": run.load}


# ----------------------------------------------------------------------------- one size


def parse_size(text: str) -> int:
    text = text.strip().lower().replace("_", "")
    scale = 1
    if text.endswith("k"):
        scale, text = 1000, text[:-1]
    elif text.endswith("m"):
        scale, text = 1_000_000, text[:-1]
    return int(float(text) * scale)


def label(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}K"
    return str(n)


def bench_size(size: int, args: argparse.Namespace, groups: list[synth.Group], workdir: Path) -> dict:
    root = workdir / f"tree-{label(size)}"
    if root.exists():
        shutil.rmtree(root)
    t = time.perf_counter()
    tree = synth.build_tree(root, size, groups)
    build_seconds = time.perf_counter() - t
    log(f"[{label(size)}] tree: {len(tree.files)} files, {tree.lines} lines ({build_seconds:.1f}s to build)")
    cmd = ortlint_command() + ["--no-cache", "--isolated", "--format", "json", "--jobs", str(args.jobs),
                               "-o", os.devnull, str(root)]
    runs = []
    for i in range(args.repeat):
        r = run_process(cmd, stats=True)
        if r.returncode not in (0, 1):
            raise SystemExit(f"ortlint failed on the {label(size)} tree (exit {r.returncode}): {' '.join(cmd)}")
        runs.append(r)
        log(f"[{label(size)}] ortlint run {i + 1}/{args.repeat}: {r.wall:.2f}s wall, {r.user + r.sys:.2f}s CPU, "
            f"{r.peak_rss_mb:.0f} MB, load {r.load:.2f}")
    best = median_run(runs)
    floors = []
    for _ in range(args.repeat):
        seconds, nodes = floor_seconds(tree.files)
        floors.append(seconds)
    floor = statistics.median(floors)
    log(f"[{label(size)}] parse-and-visit floor: {floor:.2f}s ({nodes} nodes)")
    result = {
        "size": size, "label": label(size), "files": len(tree.files), "lines": tree.lines,
        "by_language": tree.by_language, "jobs": args.jobs,
        "wall": best.wall, "cpu": best.user + best.sys, "wall_runs": [r.wall for r in runs],
        "load": best.load, "lines_per_second": tree.lines / best.wall, "files_per_second": len(tree.files) / best.wall,
        "ms_per_kline": 1000 * best.wall / (tree.lines / 1000),
        "peak_rss_mb": best.peak_rss_mb, "max_single_rss_mb": best.max_single_rss_mb,
        "phases": {k: best.stats.get(k) for k in ("discover_seconds", "parse_seconds", "graph_seconds",
                                                   "analysis_seconds", "summary_seconds", "report_seconds",
                                                   "output_seconds")},
        "functions": best.stats.get("functions"), "workers": best.stats.get("workers"),
        "slowest_functions": max((r.stats.get("slowest_functions") or [] for r in runs),
                                 key=lambda s: s[0][3] if s else 0),
        "floor_seconds": floor, "floor_lines_per_second": tree.lines / floor, "floor_ratio": best.wall / floor,
    }
    if args.cppcheck:
        cc = cppcheck_run(tree, args.jobs, args.cppcheck_lines)
        result["cppcheck"] = cc
        if cc:
            log(f"[{label(size)}] cppcheck: {cc['lines']} lines in {cc['wall']:.1f}s ({cc['lines_per_second']:.0f} lines/s)")
    if args.cache:
        result["cache"] = cache_runs(root, args, workdir)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return result


def cache_runs(root: Path, args: argparse.Namespace, workdir: Path) -> dict:
    """A cold run that fills the cache, then warm reruns of the unchanged tree."""
    cache = workdir / f"cache-{root.name}"
    shutil.rmtree(cache, ignore_errors=True)
    cmd = ortlint_command() + ["--isolated", "--cache-dir", str(cache), "--format", "json", "--jobs", str(args.jobs),
                               "-o", os.devnull, str(root)]
    cold = run_process(cmd, stats=True)
    warm = median_run([run_process(cmd, stats=True) for _ in range(args.repeat)])
    shutil.rmtree(cache, ignore_errors=True)
    log(f"[{root.name}] cache: cold {cold.wall:.2f}s, warm {warm.wall:.2f}s")
    return {"cold": cold.wall, "warm": warm.wall, "speedup": cold.wall / warm.wall if warm.wall else 0.0,
            "warm_hits": warm.stats.get("cache_hits"), "warm_parsed_files": warm.stats.get("parsed_files"),
            "load": warm.load}


# ----------------------------------------------------------------------------- pre-commit


def single_file(args: argparse.Namespace, workdir: Path) -> dict:
    """A whole `ortlint FILE` process, the pre-commit case: no cache, then a warm cache."""
    folder = workdir / "single"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    source = ROOT / "fixtures" / "multi" / "jni_binding" / "session.c"
    target = folder / source.name
    shutil.copy(source, target)
    for header in (ROOT / "fixtures" / "multi" / "jni_binding").glob("*.h"):
        shutil.copy(header, folder / header.name)
    base = ortlint_command() + ["--isolated", "--format", "json", "-o", os.devnull]
    python = [sys.executable, "-c", "pass"]
    out = {"file": str(source.relative_to(ROOT)), "lines": synth.tree_lines([target])}
    for name, cmd in (("python_start", python), ("version", ortlint_command() + ["--version"]),
                      ("no_cache", base + ["--no-cache", str(target)])):
        runs = [run_process(cmd) for _ in range(max(args.repeat, 5))]
        out[name] = statistics.median(r.wall for r in runs)
        out[name + "_min"] = min(r.wall for r in runs)
        out["load"] = statistics.median(r.load for r in runs)
    cache = folder / "cache"
    cmd = base + ["--cache-dir", str(cache), str(target)]
    run_process(cmd)
    runs = [run_process(cmd) for _ in range(max(args.repeat, 5))]
    out["warm_cache"] = statistics.median(r.wall for r in runs)
    out["warm_cache_min"] = min(r.wall for r in runs)
    log(f"[single file] python start {out['python_start']:.3f}s, ortlint --version {out['version']:.3f}s, "
        f"ortlint FILE {out['no_cache']:.3f}s, warm cache {out['warm_cache']:.3f}s")
    shutil.rmtree(folder, ignore_errors=True)
    return out


# ----------------------------------------------------------------------------- pathological


def pathological(args: argparse.Namespace, groups: list[synth.Group], workdir: Path) -> list[dict]:
    """Each pathological input in its own process with a timeout: it must end (no hang), with
    an "incomplete" note naming the function if the engine gave up, and no function over 1 s."""
    folder = workdir / "pathological"
    shutil.rmtree(folder, ignore_errors=True)
    paths = synth.write_pathological(folder, args.pathological_scale, groups)
    out = []
    for key, path in paths.items():
        cmd = ortlint_command() + ["--no-cache", "--isolated", "--format", "json", "--jobs", str(args.jobs), str(path)]
        run = run_process(cmd, capture=True, stats=True, timeout=args.timeout)
        try:
            doc = json.loads(run.stdout)
        except ValueError:
            doc = {}
        notices = [n["message"] for n in doc.get("notices", [])]
        names = synth.function_names(path.read_text(encoding="utf-8"))
        gave_up = [m for m in notices if "incomplete" in m or "too many" in m or "budget" in m or "too deeply" in m]
        named = all(any(f"{n}()" in m for n in names) for m in gave_up)
        slowest = run.stats.get("slowest_functions") or []
        worst = slowest[0][3] if slowest else 0.0
        ok = run.returncode in (0, 1) and run.wall < args.timeout and named and worst <= TARGETS["function_seconds"]
        out.append({"input": key, "file": path.name, "bytes": path.stat().st_size,
                    "lines": synth.tree_lines([path]), "wall": run.wall, "returncode": run.returncode,
                    "gave_up": gave_up[:3], "gave_up_count": len(gave_up), "notes_name_function": named,
                    "slowest_function": slowest[0][1] if slowest else None, "slowest_seconds": worst,
                    "findings": len(doc.get("findings", [])), "peak_rss_mb": run.peak_rss_mb, "ok": ok,
                    "load": run.load})
        log(f"[pathological] {key}: {run.wall:.2f}s, slowest function {worst:.3f}s, "
            f"{len(gave_up)} incomplete note(s), {'ok' if ok else 'FAILED'}")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return out


# ----------------------------------------------------------------------------- report


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fmt_rate(x: float) -> str:
    return f"{x / 1000:.1f}K" if x >= 1000 else f"{x:.0f}"


def table(results: dict) -> str:
    sizes = results["sizes"]
    lines = [f"ortlint benchmark: {results['machine']['cores']} cores, {results['machine']['python']}, "
             f"--jobs {results['jobs']}, median of {results['repeat']} runs; {results.get('ortlint', '?')}"]
    if sizes:
        head = (f"{'size':>5} {'files':>6} {'lines':>8} {'wall s':>7} {'CPU s':>7} {'lines/s':>8} {'files/s':>7} "
                f"{'ms/Kl':>6} {'peak MB':>8} {'floor l/s':>9} {'x floor':>7} {'cppcheck l/s':>12} {'x cppchk':>8} "
                f"{'load':>5}")
        lines += ["", head, "-" * len(head)]
        for s in sizes:
            cc = s.get("cppcheck")
            cc_rate = (fmt_rate(cc["lines_per_second"]) + ("*" if cc["sampled"] else "")) if cc else "-"
            cc_ratio = f"{s['lines_per_second'] / cc['lines_per_second']:.1f}x" if cc and cc["lines_per_second"] else "-"
            lines.append(f"{s['label']:>5} {s['files']:>6} {s['lines']:>8} {s['wall']:>7.2f} {s['cpu']:>7.2f} "
                         f"{fmt_rate(s['lines_per_second']):>8} {s['files_per_second']:>7.0f} {s['ms_per_kline']:>6.1f} "
                         f"{s['peak_rss_mb']:>8.0f} {fmt_rate(s['floor_lines_per_second']):>9} "
                         f"{s['floor_ratio']:>6.1f}x {cc_rate:>12} {cc_ratio:>8} {s['load']:>5.2f}")
        lines += ["", "phases (seconds, from the same runs; summary is part of analysis, CPU summed over workers):"]
        head = f"{'size':>5} {'discover':>8} {'parse':>7} {'graph':>6} {'analysis':>8} {'summary':>8} {'report':>7} {'output':>7}"
        lines += [head, "-" * len(head)]
        for s in sizes:
            p = s["phases"]

            def v(k: str) -> str:
                return f"{p[k]:.2f}" if p.get(k) is not None else "-"
            lines.append(f"{s['label']:>5} {v('discover_seconds'):>8} {v('parse_seconds'):>7} {v('graph_seconds'):>6} "
                         f"{v('analysis_seconds'):>8} {v('summary_seconds'):>8} {v('report_seconds'):>7} "
                         f"{v('output_seconds'):>7}")
        if any(s.get("cache") for s in sizes):
            lines += ["", "cache (same tree, --cache-dir): cold run that fills it, warm rerun of the unchanged tree"]
            for s in sizes:
                c = s.get("cache")
                if c:
                    lines.append(f"{s['label']:>5} cold {c['cold']:.2f}s  warm {c['warm']:.2f}s  "
                                 f"speedup {c['speedup']:.1f}x  load {c['load']:.2f}")
        slow = [(s["label"], f) for s in sizes for f in (s.get("slowest_functions") or [])[:3]]
        if slow:
            lines += ["", "slowest functions (seconds):"]
            lines += [f"{lab:>5} {f[3]:.3f}  {f[1]}  ({Path(f[0]).name}:{f[2]})" for lab, f in slow]
    one = results.get("single_file")
    if one:
        lines += ["", f"single file ({one['file']}, {one['lines']} lines), whole process, median (min):",
                  f"  python -c pass {one['python_start']:.3f}s ({one['python_start_min']:.3f})   "
                  f"ortlint --version {one['version']:.3f}s ({one['version_min']:.3f})   "
                  f"ortlint FILE {one['no_cache']:.3f}s ({one['no_cache_min']:.3f})   "
                  f"warm cache {one['warm_cache']:.3f}s ({one['warm_cache_min']:.3f})   load {one['load']:.2f}"]
    patho = results.get("pathological")
    if patho:
        lines += ["", "pathological inputs:"]
        for p in patho:
            note = p["gave_up"][0] if p["gave_up"] else "complete"
            lines.append(f"  {p['input']:<9} {p['lines']:>7} lines {p['bytes'] / 1e6:>5.1f} MB {p['wall']:>6.2f}s  "
                         f"slowest {p['slowest_seconds']:.3f}s ({p['slowest_function']})  "
                         f"{'ok' if p['ok'] else 'FAILED'}  {note[:90]}")
    checks = results.get("targets")
    if checks:
        lines += ["", "targets:"]
        for name, (ok, text) in checks.items():
            lines.append(f"  [{'met' if ok else 'MISSED' if ok is False else 'n/a'}] {name}: {text}")
    return "\n".join(lines) + "\n"


def check_targets(results: dict) -> dict:
    out: dict = {}
    sizes = results["sizes"]
    if sizes:
        big = max(sizes, key=lambda s: s["size"])
        small = min(sizes, key=lambda s: s["size"])
        out["throughput"] = (big["lines_per_second"] >= TARGETS["lines_per_second"],
                             f"{fmt_rate(big['lines_per_second'])} lines/s at {big['label']} "
                             f"(target >= {fmt_rate(TARGETS['lines_per_second'])}, --jobs {big['jobs']})")
        out["floor"] = (big["floor_ratio"] <= TARGETS["floor_ratio"],
                        f"{big['floor_ratio']:.1f}x the parse-and-visit floor at {big['label']} (target <= 5x)")
        if big is not small:
            ratio = big["ms_per_kline"] / small["ms_per_kline"]
            out["linearity"] = (ratio <= TARGETS["linearity"],
                                f"{big['ms_per_kline']:.1f} ms/Kline at {big['label']} vs {small['ms_per_kline']:.1f} "
                                f"at {small['label']}: {ratio:.2f}x (target <= 1.2x)")
        mem_ok = big["peak_rss_mb"] <= TARGETS["peak_memory_mb"] if big["size"] >= 1_000_000 else None
        out["memory"] = (mem_ok, f"{big['peak_rss_mb']:.0f} MB peak at {big['label']} (target <= 1024 MB at 1M)")
        caches = [s for s in sizes if s.get("cache")]
        if caches:
            c = max(caches, key=lambda s: s["size"])
            out["warm cache"] = (c["cache"]["speedup"] >= TARGETS["warm_speedup"],
                                 f"{c['cache']['speedup']:.1f}x faster at {c['label']} (target >= 10x)")
        worst = max((f[3] for s in sizes for f in (s.get("slowest_functions") or [])), default=0.0)
        out["function time"] = (worst <= TARGETS["function_seconds"], f"slowest function {worst:.3f}s (target <= 1s)")
    one = results.get("single_file")
    if one:
        out["single file"] = (one["no_cache"] <= TARGETS["single_file_seconds"],
                              f"{one['no_cache']:.3f}s wall, process start included (target <= 0.3s)")
    patho = results.get("pathological")
    if patho:
        bad = [p["input"] for p in patho if not p["ok"]]
        out["pathological"] = (not bad, "all end within the budget, notes name the function" if not bad
                               else f"failed: {', '.join(bad)}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10k,100k,1m", help="tree sizes in lines, comma separated [10k,100k,1m]")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="ortlint --jobs [cores]")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; medians are reported [3]")
    ap.add_argument("--out", help="folder for the generated trees (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the generated trees")
    ap.add_argument("--json", help="also write every figure to this JSON file")
    ap.add_argument("--no-cppcheck", dest="cppcheck", action="store_false", help="skip cppcheck")
    ap.add_argument("--cppcheck-lines", type=int, default=100_000,
                    help="cppcheck runs on at most this many lines of each tree (it is ~100x slower) [100000]")
    ap.add_argument("--no-cache-runs", dest="cache", action="store_false", help="skip the warm-cache runs")
    ap.add_argument("--no-single", dest="single", action="store_false", help="skip the single-file runs")
    ap.add_argument("--no-pathological", dest="patho", action="store_false", help="skip the pathological inputs")
    ap.add_argument("--pathological-scale", type=float, default=1.0,
                    help="size of the pathological inputs (1 = 3000 branches, 300 labels, 60 loops, 20000 declarations, 5 MB) [1]")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds before a pathological run counts as a hang")
    ap.add_argument("--quick", action="store_true", help="one run per measurement, small pathological inputs")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeat = 1
        args.pathological_scale = min(args.pathological_scale, 0.1)
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    workdir = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="ortlint-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if shutil.which("cppcheck") is None and args.cppcheck:
        log("cppcheck is not installed: the comparison with it is skipped (apt-get install cppcheck)")
    log(f"working in {workdir}; {os.cpu_count()} cores; load {load_average():.2f}; {ortlint_version()}")
    compile_package()
    groups = synth.prepare_groups()
    results: dict = {
        "machine": {"cores": os.cpu_count(), "python": f"Python {platform.python_version()}",
                    "platform": platform.platform(), "load_at_start": load_average()},
        "ortlint": ortlint_version(),
        "jobs": args.jobs, "repeat": args.repeat, "sizes": [], "targets_wanted": TARGETS,
    }
    try:
        for size in sizes:
            results["sizes"].append(bench_size(size, args, groups, workdir))
        if args.single:
            results["single_file"] = single_file(args, workdir)
        if args.patho:
            results["pathological"] = pathological(args, groups, workdir)
    finally:
        if not args.out and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    results["machine"]["load_at_end"] = load_average()
    checks = check_targets(results)
    results["targets"] = checks
    print(table(results), end="")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=lambda o: asdict(o)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
