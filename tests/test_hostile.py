"""The hostile-tree campaign of issue 35 (`tools/hostile.py`), in its fast form: each case builds a
tree in a temporary folder and runs ortlint on it as a separate process. No payload may run, no
file be written outside the report, no run stall or print a traceback, the neighbour's finding
must stay, and the exit code must be 0/1 for a hostile tree and 2 for a bad configuration.

`python tools/hostile.py` runs every case (the slow ones too) and prints a table.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import hostile  # noqa: E402

pytestmark = pytest.mark.skipif(os.name != "posix" or shutil.which("git") is None,
                                reason="the campaign uses FIFOs, symlinks and git")


@pytest.fixture(scope="module")
def shared() -> Path:
    with tempfile.TemporaryDirectory(prefix="hostile-shared-") as folder:
        yield Path(folder)


def _param(case: hostile.Case):  # noqa: ANN202
    marks = [pytest.mark.xfail(strict=True, reason=case.pending)] if case.pending else []
    return pytest.param(case, marks=marks, id=case.name)


@pytest.mark.parametrize("case", [_param(c) for c in hostile.selected(fast=True)])
def test_hostile_case(case: hostile.Case, shared: Path) -> None:
    problems = hostile.run_case(case, sys.executable, str(ROOT), shared)
    assert not problems, f"{case.name} ({case.what}): " + "; ".join(problems)


def test_the_campaign_covers_every_item_of_the_issue() -> None:
    groups = {c.group for c in hostile.CASES}
    assert groups == {"exec", "write", "output", "crash", "stall", "config", "limits"}
    names = {c.name for c in hostile.CASES}
    for name in ("combined", "pickle-in-default-cache", "clang-on-path-empty-entry", "git-fsmonitor", "db-MJ",
                 "newline-in-file-name-text", "non-utf8-file-name-sarif", "deep-toml-config", "rules-file-dev-zero",
                 "fifo-go", "symlink-to-root", "time-limit-nan", "memory-limit-huge", "jobs-64-for-21-files",
                 "extension-empty", "switch-6000-c-cases", "go-5mb-defers", "nested-iife-8000"):
        assert name in names
    assert len(names) == len(hostile.CASES)
