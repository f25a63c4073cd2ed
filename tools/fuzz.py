#!/usr/bin/env python3
"""Mutation fuzzing of ortlint: no input may crash, stall or silently empty a run.

    python tools/fuzz.py --inputs 100000 --out fuzz-out              # a campaign (resumable)
    python tools/fuzz.py --inputs 100000 --out fuzz-out --resume     # go on where it stopped
    python tools/fuzz.py --inputs 2000 --corpus src/ --seed 7        # mutate your own files

Inputs are mutations of real-looking sources (ortlint's fixtures, the public conformance cases
when they are next to the checkout, and any folder given with --corpus): flipped bytes, cut and
repeated lines, deep nesting, stray macros and preprocessor lines, NUL bytes, invalid UTF-8,
very long lines, splices of two files. They are analyzed in batches by ortlint's own runner, in
this process, with the per-file time and memory limits of its workers, so one input costs what
one file of a real run costs. An input fails when the run raises (a lost run) or when it loses
the input (a native crash of a worker, the time limit, the memory limit, an internal error).
Every failing input is minimized (lines, then bytes, while it still fails the same way) and
written to OUT/failures/; copy the small ones into tests/fuzz_cases/, where a test runs them all.

Input number i is a pure function of (--seed, i): a resumed campaign makes exactly the inputs
it would have made without the interruption. Progress and totals are kept in OUT/state.json.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ortlint.api import default_policy  # noqa: E402
from ortlint.findings import STOPPED  # noqa: E402
from ortlint.frontends.registry import LANGUAGE_BY_SUFFIX  # noqa: E402
from ortlint.orchestration.settings import Limits  # noqa: E402
from ortlint.orchestration.settings import RunConfig
from ortlint.orchestration.runner import run  # noqa: E402

SUFFIXES = tuple(LANGUAGE_BY_SUFFIX)  # the languages this ortlint reads
HUGE = 0.05  # share of the size-stressing mutations that go to the largest size
SNIPPETS = [
    b"{", b"}", b"(", b")", b"[&]{", b"#if X\n", b"#else\n", b"#endif\n", b"#define M(a) a;\n", b"M(",
    b"case 1:", b"try {", b"} finally {", b"catch (Exception e) {", b"return", b"goto out;", b"out:",
    b"api->CreateSession(env, p, o, &s);", b"api->ReleaseStatus(st);", b"(*env)->NewStringUTF(env, s);",
    b"\x00", b"\xff\xfe", "é".encode(), "\u2028".encode(), b"/*", b"*/", b"//", b"\\\n", b"\"", b"'",
    b"&&", b"<<", b"x.y().z()", b"new T(", b"template <", b"defer ", b"func() {", b"ortlint: ignore[",
]


# ----------------------------------------------------------------------------- corpus and mutations


def load_corpus(folders: list[Path]) -> list[tuple[str, bytes]]:
    """(suffix, bytes) of every source file under the folders, in a stable order."""
    out = []
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and path.stat().st_size < 200_000:
                out.append((path.suffix, path.read_bytes()))
    return out


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) or [b""]


def flip_bytes(rng: random.Random, data: bytes, _other: bytes) -> bytes:
    buf = bytearray(data or b" ")
    for _ in range(rng.randint(1, 8)):
        buf[rng.randrange(len(buf))] = rng.randrange(256)
    return bytes(buf)


def cut_lines(rng: random.Random, data: bytes, _other: bytes) -> bytes:
    lines = _lines(data)
    a = rng.randrange(len(lines))
    return b"".join(lines[:a] + lines[a + rng.randint(1, 20):])


def repeat_lines(rng: random.Random, data: bytes, _other: bytes) -> bytes:
    lines = _lines(data)
    a = rng.randrange(len(lines))
    block = lines[a:a + rng.randint(1, 5)]
    times = 2000 if rng.random() < HUGE else rng.choice((2, 2, 10, 10, 50, 200))
    return b"".join(lines[:a] + block * times + lines[a:])


def nest(rng: random.Random, data: bytes, _other: bytes) -> bytes:
    lines = _lines(data)
    a = rng.randrange(len(lines))
    opener, closer = rng.choice(((b"{", b"}"), (b"(", b")"), (b"if (x) {", b"}"), (b"[&]{", b"}();"),
                                 (b"while (1) {", b"}"), (b"try {", b"} finally { x(); }")))
    depth = 3000 if rng.random() < HUGE else rng.choice((20, 50, 200, 500))
    middle = opener * depth + lines[a] + (closer * depth if rng.random() < 0.7 else b"")
    return b"".join(lines[:a]) + middle + b"".join(lines[a + 1:])


def insert_snippet(rng: random.Random, data: bytes, _other: bytes) -> bytes:
    pos = rng.randint(0, len(data))
    return data[:pos] + b" ".join(rng.choice(SNIPPETS) for _ in range(rng.randint(1, 6))) + data[pos:]


def long_line(rng: random.Random, data: bytes, _other: bytes) -> bytes:
    pos = rng.randint(0, len(data))
    token = rng.choice((b"a && ", b"x << ", b"f(", b".g()", b"/* c */ ", b"// ", b"\xc3\xa9", b"p->q"))
    times = 30000 if rng.random() < HUGE else rng.choice((100, 1000, 1000, 10000))
    return data[:pos] + token * times + data[pos:]


def truncate(rng: random.Random, data: bytes, _other: bytes) -> bytes:
    return data[:rng.randint(0, len(data))]


def splice(rng: random.Random, data: bytes, other: bytes) -> bytes:
    return data[:rng.randint(0, len(data))] + other[rng.randint(0, len(other)):]


MUTATORS: list[Callable[[random.Random, bytes, bytes], bytes]] = [
    flip_bytes, cut_lines, repeat_lines, nest, insert_snippet, long_line, truncate, splice]


def make_input(corpus: list[tuple[str, bytes]], seed: int, index: int) -> tuple[str, bytes]:
    """Input `index` of the campaign `seed`: one to three mutations of a corpus file."""
    rng = random.Random(seed * 1_000_003 + index)
    suffix, data = corpus[rng.randrange(len(corpus))]
    for _ in range(rng.randint(1, 3)):
        other = corpus[rng.randrange(len(corpus))][1]
        data = rng.choice(MUTATORS)(rng, data, other)
    return suffix, data[:4 << 20]


# ----------------------------------------------------------------------------- running


@dataclass
class Failure:
    kind: str  # "lost run" | "crash" | "hang" (the CPU time limit, or no progress) | "memory" | "internal error"
    message: str


def classify(message: str) -> str:
    if "killed by" in message or "exited with status" in message:
        return "crash"
    if "of CPU time (the time limit)" in message or "got no CPU time" in message:
        return "hang"
    if "MemoryError" in message:
        return "memory"
    return "internal error"


def analyze(files: dict[str, bytes], limits: Limits, jobs: int = 1) -> dict[str, Failure]:
    """Run ortlint on these files (name -> bytes) in a temporary folder; failures by name."""
    with tempfile.TemporaryDirectory(prefix="ortlint-fuzz-") as tmp:
        for name, data in files.items():
            Path(tmp, name).write_bytes(data)
        try:
            report = run(RunConfig([tmp], default_policy(), jobs=jobs, limits=limits, use_default_excludes=False))
        except Exception as exc:  # noqa: BLE001 - exactly what the campaign looks for
            return {name: Failure("lost run", f"{type(exc).__name__}: {exc}") for name in files}
        failures = {}
        for notice in report.notices:  # lost, or stopped at the CPU time limit (a warning, but a slow input)
            if (notice.level == "error" and notice.message.startswith("internal error")) or \
                    notice.message.startswith(STOPPED):
                name = os.path.basename(notice.path)
                failures.setdefault(name, Failure(classify(notice.message), notice.message))
        missing = set(files) - {os.path.basename(p) for p in report.files}
        for name in sorted(missing):  # a file the run did not even list is silently emptied
            failures.setdefault(name, Failure("lost run", "the file is missing from the report"))
        return failures


def minimize(suffix: str, data: bytes, fails: Callable[[bytes], bool], max_trials: int = 300,
             max_seconds: float = 120.0) -> bytes:
    """Delta debugging: drop chunks of lines, then of bytes, while `fails` still holds (within
    a trial and a time budget: a slow input must not stall the campaign)."""
    trials = 0
    stop = time.monotonic() + max_seconds
    for unit in ("lines", "bytes"):
        parts = _lines(data) if unit == "lines" else [bytes([b]) for b in data]
        chunk = max(1, len(parts) // 2)
        while chunk >= 1 and trials < max_trials and time.monotonic() < stop:
            i, changed = 0, False
            while i < len(parts) and trials < max_trials and time.monotonic() < stop:
                candidate = parts[:i] + parts[i + chunk:]
                trials += 1
                if candidate and fails(b"".join(candidate)):
                    parts, changed = candidate, True
                else:
                    i += chunk
            if not changed:
                chunk //= 2
        data = b"".join(parts)
        if unit == "lines" and len(data) > 4096:
            break  # byte-level passes on a large input would take the whole trial budget
    return data


# ----------------------------------------------------------------------------- the campaign


@dataclass
class State:
    seed: int
    done: int = 0
    seconds: float = 0.0
    failures: dict[str, int] = field(default_factory=dict)  # kind -> count
    peak_worker_mb: float = 0.0
    peak_self_mb: float = 0.0
    reproducers: list[str] = field(default_factory=list)


def load_state(out: Path, seed: int, resume: bool) -> State:
    path = out / "state.json"
    if resume and path.exists():
        data = json.loads(path.read_text())
        return State(**data)
    return State(seed)


def save_state(out: Path, state: State) -> None:
    tmp = out / "state.json.tmp"
    tmp.write_text(json.dumps(asdict(state), indent=1))
    tmp.replace(out / "state.json")


def record_failure(out: Path, state: State, suffix: str, data: bytes, failure: Failure, limits: Limits) -> str:
    """Minimize a failing input and write it; returns the reproducer's file name."""
    def fails(candidate: bytes) -> bool:
        got = analyze({"input" + suffix: candidate}, limits)
        return any(f.kind == failure.kind for f in got.values())

    small = minimize(suffix, data, fails) if failure.kind != "hang" else data
    name = f"{failure.kind.replace(' ', '-')}-{hashlib.sha1(small).hexdigest()[:12]}{suffix}"
    (out / "failures").mkdir(parents=True, exist_ok=True)
    (out / "failures" / name).write_bytes(small)
    (out / "failures" / (name + ".txt")).write_text(failure.message + "\n")
    return name


def peak_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024.0


def campaign(corpus: list[tuple[str, bytes]], state: State, total: int, batch: int, limits: Limits, out: Path,
             report: Callable[[str], None] = print, jobs: int = 1) -> State:
    """Run inputs state.done .. total-1 in batches, saving state after each batch."""
    while state.done < total:
        started = time.perf_counter()
        count = min(batch, total - state.done)
        inputs = {}
        for k in range(count):
            suffix, data = make_input(corpus, state.seed, state.done + k)
            inputs[f"in{state.done + k}{suffix}"] = data
        failures = analyze(inputs, limits, jobs)
        for name, failure in sorted(failures.items()):
            state.failures[failure.kind] = state.failures.get(failure.kind, 0) + 1
            suffix = Path(name).suffix
            state.reproducers.append(record_failure(out, state, suffix, inputs[name], failure, limits))
            report(f"  {failure.kind}: input {name}: {failure.message[:200]}")
        state.done += count
        state.seconds += time.perf_counter() - started
        state.peak_worker_mb = max(state.peak_worker_mb, peak_mb(resource.RUSAGE_CHILDREN))
        state.peak_self_mb = max(state.peak_self_mb, peak_mb(resource.RUSAGE_SELF))
        save_state(out, state)
        report(summary(state))
    return state


def summary(state: State) -> str:
    rate = state.done / state.seconds if state.seconds else 0.0
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(state.failures.items())) or "none"
    return (f"{state.done} inputs in {state.seconds:.0f} s ({rate:.0f} inputs/s); failures: {kinds}; "
            f"peak memory: worker {state.peak_worker_mb:.0f} MB, campaign {state.peak_self_mb:.0f} MB")


def default_corpus() -> list[Path]:
    folders = [ROOT / "fixtures"]
    shared = ROOT.parent / "shared" / "conformance" / "cases"
    if shared.is_dir():
        folders.append(shared)
    return folders


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=10_000, help="inputs in the whole campaign [10000]")
    ap.add_argument("--seed", type=int, default=1, help="campaign seed [1]")
    ap.add_argument("--batch", type=int, default=100, help="inputs per ortlint run [100]")
    ap.add_argument("--corpus", type=Path, action="append", help="folders of seed files (default: fixtures and "
                                                                 "the conformance cases)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-out"), help="state and reproducers [fuzz-out]")
    ap.add_argument("--resume", action="store_true", help="go on from OUT/state.json")
    ap.add_argument("--time-limit", type=float, default=5.0, help="seconds per input (file or function) [5]")
    ap.add_argument("--memory-limit", type=int, default=1024, help="MB per worker request [1024]")
    ap.add_argument("--jobs", type=int, default=1, help="ortlint workers per batch [1]")
    args = ap.parse_args(argv)
    corpus = load_corpus(args.corpus or default_corpus())
    if not corpus:
        ap.error("the corpus has no source files")
    args.out.mkdir(parents=True, exist_ok=True)
    state = load_state(args.out, args.seed, args.resume)
    print(f"corpus: {len(corpus)} files; seed {state.seed}; starting at input {state.done}", flush=True)
    campaign(corpus, state, args.inputs, args.batch, Limits(args.time_limit, args.memory_limit), args.out,
             lambda line: print(line, flush=True), args.jobs)
    print("done: " + summary(state))
    return 1 if state.failures else 0


if __name__ == "__main__":
    sys.exit(main())
