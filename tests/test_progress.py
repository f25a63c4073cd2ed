"""The progress line (issue 30): on a terminal after a second, nothing in pipes or CI unless
asked, erased before the report, and never a change to the results."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ortlint.cli import presentation
from ortlint.api import default_policy
from ortlint.orchestration import runner
from ortlint.orchestration.progress import Progress
from ortlint.orchestration.runner import run
from ortlint.orchestration.settings import RunConfig
from ortlint.report.progress import ProgressLine
from tests.clihelpers import LEAK_C, ortlint


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_nothing_is_drawn_in_the_first_second_then_the_line_is_redrawn_in_place() -> None:
    clock, out = Clock(), io.StringIO()
    line = ProgressLine(out, terminal=True, clock=clock)
    line.start_files(40)
    line.file_parsed(3)
    clock.now += 0.9
    line.file_parsed(3)
    assert out.getvalue() == ""  # a quick run (a pre-commit hook on one file) shows nothing
    clock.now += 0.2
    line.file_parsed(4)
    assert out.getvalue() == "\r\033[Kortlint: 10/40 files parsed, 0:01"
    clock.now += 0.05
    line.file_parsed(1)  # too soon after the last redraw
    assert out.getvalue().count("\r") == 1
    clock.now += 61
    line.file_parsed(29)
    line.start_functions(500)
    clock.now += 0.2
    line.functions_analyzed(120)
    assert out.getvalue().endswith("\r\033[Kortlint: 40/40 files parsed, 120/500 functions analyzed, 1:02")
    line.finish()
    assert out.getvalue().endswith("\r\033[K")  # erased: the report comes next on the same terminal


def test_in_a_log_it_writes_whole_lines_now_and_then() -> None:
    clock, out = Clock(), io.StringIO()
    line = ProgressLine(out, terminal=False, clock=clock)
    line.start_files(10)
    for _ in range(10):
        clock.now += 1.5
        line.file_parsed()
    assert out.getvalue().splitlines() == ["ortlint: 1/10 files parsed, 0:01", "ortlint: 8/10 files parsed, 0:12"]
    line.finish()  # the log ends with the final counts, not with counts up to LOG_INTERVAL old
    line.finish()
    assert out.getvalue().splitlines()[2:] == ["ortlint: 10/10 files parsed, 0:15"]
    assert "\r" not in out.getvalue() and "\033" not in out.getvalue()


def test_a_quick_run_writes_nothing_even_at_the_end() -> None:
    for terminal in (True, False):
        clock, out = Clock(), io.StringIO()
        line = ProgressLine(out, terminal=terminal, clock=clock)
        line.start_files(3)
        clock.now += 0.5
        line.file_parsed(3)
        line.finish()
        assert out.getvalue() == ""


def test_a_run_tells_its_progress_and_finds_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(20):
        (tmp_path / f"leak{i}.c").write_text(LEAK_C.replace("leaky", f"leaky{i}"))
    monkeypatch.setattr(runner, "PARALLEL_MIN_FILES", 2)  # the worker pool's path, as on a large tree
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    seen: list[tuple[int, int, int, int]] = []

    class Spy(Progress):
        def changed(self) -> None:
            seen.append((self.files, self.parsed, self.functions, self.analyzed))

    plain = run(RunConfig([str(tmp_path)], default_policy(), jobs=2))
    told = run(RunConfig([str(tmp_path)], default_policy(), jobs=2), progress=Spy())
    assert told.findings == plain.findings and len(plain.findings) == 20
    assert seen[0] == (20, 0, 0, 0)
    assert seen[-1] == (20, 20, 20, 20)
    assert [s[1] for s in seen] == sorted(s[1] for s in seen)  # counts only go up


def _progress_on(monkeypatch: pytest.MonkeyPatch, terminal: bool, env: dict[str, str]) -> bool:
    monkeypatch.setattr(presentation.sys.stderr, "isatty", lambda: terminal, raising=False)
    for key in ("CI", "TERM"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return presentation.shows_progress(presentation.Presentation())


def test_shown_on_a_terminal_only_and_never_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _progress_on(monkeypatch, True, {}) is True
    assert _progress_on(monkeypatch, False, {}) is False  # a pipe, a file, pre-commit's captured output
    assert _progress_on(monkeypatch, True, {"CI": "true"}) is False  # some CI runners give jobs a terminal
    assert _progress_on(monkeypatch, True, {"TERM": "dumb"}) is False
    assert _progress_on(monkeypatch, True, {"CI": "false"}) is True
    assert presentation.shows_progress(presentation.Presentation(quiet=True)) is False
    assert presentation.shows_progress(presentation.Presentation(progress=True, quiet=True)) is True
    assert presentation.shows_progress(presentation.Presentation(progress=False)) is False


def test_the_command_line_shows_it_on_stderr_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "leak.c").write_text(LEAK_C)
    monkeypatch.setattr(ProgressLine, "DELAY", 0.0)
    asked = ortlint("--no-cache", "--format", "json", "--progress", str(tmp_path))
    assert asked.stderr.splitlines()[0].startswith("ortlint: 0/1 files parsed, ")  # not a terminal: whole lines
    assert asked.stderr.splitlines()[-1].startswith("ortlint: 1/1 files parsed, 1/1 functions analyzed, ")
    assert json.loads(asked.stdout)["summary"]["findings"] == 1  # stdout holds the report only
    piped = ortlint("--no-cache", "--format", "json", str(tmp_path))  # not a terminal (CliRunner's streams)
    assert "files parsed" not in piped.stderr
    assert piped.stdout == asked.stdout
    off = ortlint("--no-cache", "--no-progress", str(tmp_path))
    assert "files parsed" not in off.stderr
