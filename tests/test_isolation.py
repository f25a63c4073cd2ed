"""One bad input loses one file (or one function), never the run.

Each test makes one file or function of a small tree die in a way the front ends and the engine
cannot catch themselves (a real native crash through ctypes, an endless loop, a memory blow-up)
and checks that every other file's findings are still reported, with `--jobs 1` as with
`--jobs 2`, that the lost item is named in an error notice, and that the run says it failed.
"""
from __future__ import annotations

import ctypes
import json
import shutil
import time
from pathlib import Path

import pytest

from ortlint.orchestration import analysis, parsing, runner, tasks
from ortlint.api import default_policy
from ortlint.findings import Report
from ortlint.orchestration.settings import Limits, RunConfig
from ortlint.orchestration.runner import run
from tests.clihelpers import FIXTURES, LEAK_C, ortlint

BOMB = "void boom(void) { }\n"


def crash() -> None:
    """A real segmentation fault, as a native front end or a compiled module would have."""
    ctypes.string_at(0)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Eight files with a leak each, plus `boom.c`."""
    for i in range(8):
        (tmp_path / f"leak{i}.c").write_text(LEAK_C)
    shutil.copy(FIXTURES / "c" / "goto_cleanup.c", tmp_path / "goto_cleanup.c")
    (tmp_path / "boom.c").write_text(BOMB)
    return tmp_path


def leaks(report: Report) -> list[tuple[str, int, str]]:
    return sorted((Path(f.path).name, f.line, f.rule) for f in report.findings)


def errors(report: Report) -> list[tuple[str, str]]:
    return [(Path(n.path).name, n.message) for n in report.notices if n.level == "error"]


def go(tree: Path, jobs: int, limits: Limits = Limits(), monkeypatch: pytest.MonkeyPatch | None = None) -> Report:
    if jobs > 1 and monkeypatch is not None:  # a small tree would otherwise run in one worker
        monkeypatch.setattr(runner, "PARALLEL_MIN_FILES", 2)
        monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    return run(RunConfig([str(tree)], default_policy(), jobs=jobs, limits=limits))


@pytest.fixture
def expected(tree: Path) -> list[tuple[str, int, str]]:
    (tree / "boom.c").unlink()
    report = run(RunConfig([str(tree)], default_policy(), jobs=1))
    (tree / "boom.c").write_text(BOMB)
    assert len(report.findings) == 9
    return leaks(report)


def bomb_front_end(monkeypatch: pytest.MonkeyPatch, action) -> None:
    real = parsing.parse_file

    def parse_file(source, *args, **kwargs):  # noqa: ANN001, ANN202 - same signature as the real one
        if source.path.endswith("boom.c"):
            action()
        return real(source, *args, **kwargs)

    monkeypatch.setattr(parsing, "parse_file", parse_file)


def bomb_engine(monkeypatch: pytest.MonkeyPatch, action) -> None:
    real = tasks.analyze_safely

    def analyze_safely(fn, *args, **kwargs):  # noqa: ANN001, ANN202
        if fn.name == "boom":
            action()
        return real(fn, *args, **kwargs)

    monkeypatch.setattr(tasks, "analyze_safely", analyze_safely)  # the workers' (imported when called)
    monkeypatch.setattr(analysis, "analyze_safely", analyze_safely)  # the main process's


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_native_crash_in_a_front_end_loses_that_file_only(tree: Path, expected: list, jobs: int,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    bomb_front_end(monkeypatch, crash)
    report = go(tree, jobs, monkeypatch=monkeypatch)
    assert leaks(report) == expected
    assert errors(report) == [("boom.c", "internal error: ortlint stopped parsing this file because its worker was "
                                         "killed by SIGSEGV; nothing is reported for it")]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_native_crash_in_the_engine_loses_that_function_only(tree: Path, expected: list, jobs: int,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    bomb_engine(monkeypatch, crash)
    report = go(tree, jobs, monkeypatch=monkeypatch)
    assert leaks(report) == expected
    assert errors(report) == [("boom.c", "internal error: ortlint stopped analyzing boom() because its worker was "
                                         "killed by SIGSEGV; nothing is reported for it")]


def burn() -> None:
    """An endless computation: CPU time goes up, nothing ever comes back."""
    while True:
        pass


def warnings(report: Report) -> list[tuple[str, str]]:
    return [(Path(n.path).name, n.message) for n in report.notices if n.level == "warning"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_hang_is_stopped_and_is_an_error(tree: Path, expected: list, jobs: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that gets no CPU time at all for `hang_seconds` waits for something that never
    comes: a failure of the run (exit code 2), not a limit."""
    bomb_engine(monkeypatch, lambda: time.sleep(60))
    started = time.monotonic()
    report = go(tree, jobs, Limits(seconds=1.0, hang_seconds=2.0), monkeypatch)
    assert time.monotonic() - started < 20
    assert leaks(report) == expected
    assert errors(report) == [("boom.c", "internal error: ortlint stopped analyzing boom() because its worker got "
                                         "no CPU time for 2 s (it hung); nothing is reported for it")]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_function_that_computes_forever_stops_at_the_cpu_limit_with_a_warning(
        tree: Path, expected: list, jobs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb_engine(monkeypatch, burn)
    report = go(tree, jobs, Limits(seconds=1.0), monkeypatch)
    assert leaks(report) == expected
    assert errors(report) == []
    assert warnings(report) == [("boom.c", "limit reached: ortlint stopped analyzing boom() after 1 s of CPU time "
                                           "(the time limit); nothing is reported for it")]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_whose_front_end_computes_forever_stops_at_the_cpu_limit_with_a_warning(
        tree: Path, expected: list, jobs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb_front_end(monkeypatch, burn)
    report = go(tree, jobs, Limits(seconds=1.0), monkeypatch)
    assert leaks(report) == expected
    assert errors(report) == []
    assert warnings(report) == [("boom.c", "limit reached: ortlint stopped parsing this file after 1 s of CPU time "
                                           "(the time limit); nothing is reported for it")]


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("where", ["front end", "engine"])
def test_a_slow_worker_gives_the_results_of_a_fast_one(tree: Path, expected: list, jobs: int, where: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A busy machine, simulated: two files (or their functions) take 1.5 s of wall time each
    but no CPU time in the worker. The time limit, 1 s, counts CPU time: nothing is stopped and
    the results are those of an idle machine (the wall-clock limit of 07c128e dropped both)."""
    (tree / "boom.c").unlink()

    def slow(name: str) -> None:
        if name in ("leak0.c", "leak1.c"):
            time.sleep(1.5)

    real_parse, real_analyze = parsing.parse_file, tasks.analyze_safely

    def parse_file(source, *args, **kwargs):  # noqa: ANN001, ANN202
        slow(Path(source.path).name)
        return real_parse(source, *args, **kwargs)

    def analyze_safely(fn, *args, **kwargs):  # noqa: ANN001, ANN202
        slow(Path(fn.path).name)
        return real_analyze(fn, *args, **kwargs)

    if where == "front end":
        monkeypatch.setattr(parsing, "parse_file", parse_file)
    else:
        monkeypatch.setattr(tasks, "analyze_safely", analyze_safely)
        monkeypatch.setattr(analysis, "analyze_safely", analyze_safely)
    report = go(tree, jobs, Limits(seconds=1.0, hang_seconds=30.0), monkeypatch)
    assert leaks(report) == expected
    assert report.notices == []


def test_a_memory_blow_up_ends_as_an_error_for_that_file(tree: Path, expected: list,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from ortlint.frontends.cpp import frontend  # the entry point of `.c` files (frontends/registry.py)
    real = frontend.parse_c_family

    def parse_c(path, *args, **kwargs):  # noqa: ANN001, ANN202
        if path.endswith("boom.c"):
            hog = bytearray(2 << 30)  # 2 GB, over the 256 MB limit below
            del hog
        return real(path, *args, **kwargs)

    monkeypatch.setattr(frontend, "parse_c_family", parse_c)
    report = go(tree, 1, Limits(memory_mb=256))
    assert leaks(report) == expected
    assert errors(report) == [("boom.c", "internal error while parsing: MemoryError: ")]


def test_the_command_line_reports_the_other_files_and_says_the_run_failed(tree: Path, expected: list,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    bomb_front_end(monkeypatch, crash)
    out = tree / "r.sarif"
    result = ortlint("--no-cache", "--jobs", "1", "--format", "sarif", "--output", str(out), str(tree))
    assert result.code == 2
    run_ = json.loads(out.read_text())["runs"][0]
    assert len(run_["results"]) == len(expected)
    invocation = run_["invocations"][0]
    assert invocation["executionSuccessful"] is False
    lost = [n for n in invocation["toolExecutionNotifications"] if n["level"] == "error"]
    assert len(lost) == 1 and "boom.c" in json.dumps(lost[0]) and "SIGSEGV" in lost[0]["message"]["text"]


def test_the_command_line_says_a_limit_reached_is_a_warning_and_the_run_succeeded(
        tree: Path, expected: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit is a warning about that file or function: the exit code is that of the
    findings (1), SARIF says the run succeeded and lists the limit as a warning notification."""
    bomb_engine(monkeypatch, burn)
    out = tree / "r.sarif"
    result = ortlint("--no-cache", "--jobs", "1", "--time-limit", "1", "--format", "sarif", "--output", str(out),
                     str(tree))
    assert result.code == 1
    run_ = json.loads(out.read_text())["runs"][0]
    assert len(run_["results"]) == len(expected)
    invocation = run_["invocations"][0]
    assert invocation["executionSuccessful"] is True
    [limit] = [n for n in invocation["toolExecutionNotifications"] if n["level"] == "warning"]
    assert limit["message"]["text"].startswith("limit reached: ortlint stopped analyzing boom() after 1 s of CPU time")
    assert limit["descriptor"] == {"id": "limit-reached", "index": 0}
    assert run_["tool"]["driver"]["notifications"][0]["id"] == "limit-reached"
    text = ortlint("--no-cache", "--jobs", "1", "--time-limit", "1", str(tree))
    assert text.code == 1
    assert "boom.c:1: warning: limit reached: ortlint stopped analyzing boom()" in text.stdout
    assert text.stdout.rstrip().splitlines()[-1].endswith("(1 limit reached).")


@pytest.mark.parametrize("bomb", ["hang", "cpu"])
def test_a_lost_or_stopped_file_is_not_cached(tree: Path, expected: list, bomb: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A hang, or a limit counted in time, must not stick: the next run tries the file again."""
    cache = tree.parent / "cache"
    bomb_engine(monkeypatch, (lambda: time.sleep(60)) if bomb == "hang" else burn)
    first = run(RunConfig([str(tree)], default_policy(), cache_dir=str(cache),
                          limits=Limits(seconds=1.0, hang_seconds=2.0)))
    assert (errors(first) if bomb == "hang" else warnings(first))
    monkeypatch.undo()
    second = run(RunConfig([str(tree)], default_policy(), cache_dir=str(cache)))
    assert not errors(second) and not warnings(second) and leaks(second) == expected


def test_a_file_lost_when_parsed_again_is_reported_and_the_rest_goes_on(tree: Path, expected: list,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """boom() crashes its worker; the replacement parses the old worker's files again, and one
    of them, fine the first time, crashes it now: that file is lost, every other file is kept."""
    marker = tree.parent / "parsed-once"
    (tree / "flaky.c").write_text("void flaky(void) { }\n")
    real = parsing.parse_file

    def parse_file(source, *args, **kwargs):  # noqa: ANN001, ANN202
        if source.path.endswith("flaky.c"):
            if marker.exists():
                crash()
            marker.write_text("")
        return real(source, *args, **kwargs)

    monkeypatch.setattr(parsing, "parse_file", parse_file)
    bomb_engine(monkeypatch, crash)
    report = go(tree, 1)
    assert leaks(report) == expected
    lost = errors(report)
    assert ("boom.c", "internal error: ortlint stopped analyzing boom() because its worker was killed by SIGSEGV; "
                      "nothing is reported for it") in lost
    assert ("flaky.c", "internal error: ortlint stopped parsing this file again (after another file's loss) because "
                       "its worker was killed by SIGSEGV; nothing is reported for it") in lost
    assert {name for name, _ in lost} == {"boom.c", "flaky.c"}


def test_functions_moved_to_balance_the_workers_give_the_same_findings(tree: Path, expected: list,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A level's functions may be analyzed by another worker than the one that parsed their
    file (their IR is sent over, see WorkerPool._balance): the findings are the same."""
    from ortlint.orchestration.parallel import WorkerPool
    (tree / "boom.c").unlink()
    moved: list[int] = []
    real_transfer = WorkerPool._transfer

    def transfer(self, source, target, keys):  # noqa: ANN001, ANN202 - records what moved
        done = real_transfer(self, source, target, keys)
        moved.extend([len(keys)] if done else [])
        return done

    monkeypatch.setattr(WorkerPool, "_transfer", transfer)
    monkeypatch.setattr(WorkerPool, "MIN_MOVE", 0.0)
    # every function of one worker's files looks costly: the other worker takes some of them
    monkeypatch.setattr(WorkerPool, "_estimate", lambda self, key: 1.0 if self.owner[key[0]] == 0 else 0.001)
    report = go(tree, 2, monkeypatch=monkeypatch)
    assert leaks(report) == expected
    assert moved and sum(moved) > 0



def test_a_worker_with_less_work_takes_some_from_the_other(tree: Path, expected: list,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Estimates go wrong: when a worker answers with much more work queued than the other,
    the cheaper part of the difference moves (its IR goes with the other's next request,
    WorkerPool.analyze's refill): the findings are the same."""
    from ortlint.orchestration.parallel import WorkerPool
    (tree / "boom.c").unlink()
    moved: list[int] = []
    real_export = WorkerPool._export

    def export(self, source, keys):  # noqa: ANN001, ANN202 - records what moved
        items = real_export(self, source, keys)
        moved.extend([len(items)] if items else [])
        return items

    monkeypatch.setattr(WorkerPool, "_export", export)
    monkeypatch.setattr(WorkerPool, "_balance", lambda self, batches, cost: None)  # no move up front
    monkeypatch.setattr(WorkerPool, "CHUNK_SECONDS", 0.0)  # one job per request: something is left to take
    monkeypatch.setattr(WorkerPool, "MAX_CHUNK_SECONDS", 0.0)
    monkeypatch.setattr(WorkerPool, "MIN_MOVE", 0.0)
    monkeypatch.setattr(WorkerPool, "_estimate", lambda self, key: 1.0)
    report = go(tree, 2, monkeypatch=monkeypatch)
    assert leaks(report) == expected
    assert moved and sum(moved) > 0


RECURSIVE_C = """#include <stdlib.h>
/* mutually recursive helpers: the second frees what the first allocated, on every path */
void drop_b(char *p, int n);
void drop_a(char *p, int n) { if (n <= 0) { free(p); return; } drop_b(p, n - 1); }
void drop_b(char *p, int n) { if (n <= 0) { free(p); return; } drop_a(p, n - 1); }
int use_ok(int n) { char *p = malloc(8); if (!p) return -1; drop_a(p, n); return 0; }
int use_leak(int n) { char *p = malloc(8); if (!p) return -1; if (n > 3) return 1; drop_b(p, n); return 0; }
"""


def test_recursive_components_analyzed_by_a_worker_match_one_process(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A recursive component whose functions one worker parsed is analyzed there, rounds
    included (parallel._analyze_component): findings and summaries are those of one process."""
    from ortlint.orchestration import parallel
    for i in range(4):
        (tmp_path / f"rec{i}.c").write_text(RECURSIVE_C.replace("drop_", f"drop{i}_").replace("use_", f"use{i}_"))
    for i in range(4):
        (tmp_path / f"leak{i}.c").write_text(LEAK_C)
    alone = run(RunConfig([str(tmp_path)], default_policy(), jobs=1))
    components: list[int] = []
    real = parallel._analyze_component

    def spy(functions, members, *args):  # noqa: ANN001, ANN202 - runs in the worker: counts into a file
        with open(tmp_path / "components.log", "a") as fh:
            fh.write(f"{len(members)}\n")
        return real(functions, members, *args)

    monkeypatch.setattr(parallel, "_analyze_component", spy)
    together = go(tmp_path, 2, monkeypatch=monkeypatch)
    components = [int(n) for n in (tmp_path / "components.log").read_text().split()]
    assert components and all(n == 2 for n in components)
    assert leaks(together) == leaks(alone)
    assert [(Path(f.path).name, f.line) for f in together.findings if f.rule == "ORT001"].count(("rec0.c", 7)) == 1
    assert {(Path(k[0]).name, k[1]): v for k, v in together.summaries.items()} == \
        {(Path(k[0]).name, k[1]): v for k, v in alone.summaries.items()}


def test_callers_waiting_for_a_result_that_never_came_are_analyzed_all_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dataflow order must never silence a function: if the news that its callees are done
    is lost, it is analyzed once nothing else is left (Analysis._run_parallel's last resort)."""
    from ortlint.orchestration import schedule
    for i in range(2):
        (tmp_path / f"rec{i}.c").write_text(RECURSIVE_C.replace("drop_", f"drop{i}_").replace("use_", f"use{i}_"))
    alone = run(RunConfig([str(tmp_path)], default_policy(), jobs=1))
    real_done = schedule.Readiness.done

    def done(self, i):  # noqa: ANN001, ANN202 - the callers of the recursive helpers are never told
        if any("drop" in key[1] for key in self.components[i]):
            self.finished[i] = True
            return []
        return real_done(self, i)

    monkeypatch.setattr(schedule.Readiness, "done", done)
    together = go(tmp_path, 2, monkeypatch=monkeypatch)
    assert leaks(together) == leaks(alone) and any(name == "rec0.c" for name, _l, _r in leaks(alone))
    assert {(Path(k[0]).name, k[1]) for k in together.summaries} == {(Path(k[0]).name, k[1]) for k in alone.summaries}


def test_a_worker_left_over_its_memory_limit_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: the limit used to cap one request's growth only, so a worker that kept what a
    request left behind grew again with the next one (2-2.7 GB against 1 GB). Two files here
    each keep 150 MB (each under the 200 MB limit, together over it): the worker says so after
    the request and is replaced; its replacement parses its files again (keeping as much: that
    is what it holds, not a reason to replace it again), and every finding is reported."""
    from ortlint.engine.analyze import Options
    from ortlint.orchestration.parallel import WorkerPool

    hoard = []
    real = parsing.parse_file

    def parse_file(source, *args, **kwargs):  # noqa: ANN001, ANN202
        if Path(source.path).name.startswith("keeps"):
            hoard.append(bytearray(150 << 20))  # address space, never touched
        return real(source, *args, **kwargs)

    monkeypatch.setattr(parsing, "parse_file", parse_file)
    for name in ("keeps1.c", "keeps2.c", "leak1.c", "leak2.c"):
        (tmp_path / name).write_text(LEAK_C.replace("leaky", name[:-2]))
    items = [(str(p), "c", None) for p in sorted(tmp_path.glob("*.c"))]
    with WorkerPool(1, default_policy(), Options(), None, Limits(memory_mb=200)) as pool:
        metas = pool.parse(items)
        assert pool.retired == 1 and pool.replaced == 1
        jobs = [((m.path, name, line), {}) for m in metas for name, line, *_rest in m.functions]
        results = pool.analyze(jobs, {})
        assert pool.retired == 1  # analyzing keeps nothing: no second replacement
    found = sorted((Path(k[0]).name, f.line, f.rule) for k, r in results.items() for f in r.findings)
    assert found == [(name, 3, "ORT001") for name in ("keeps1.c", "keeps2.c", "leak1.c", "leak2.c")]
