"""Quiet writers (issue 30): `--write-baseline` and `--write-summaries` print one line, what was
written and how many entries, instead of every finding with its trace; failures still show."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clihelpers import FIXTURES, LEAK_C, ortlint, write


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


TWO_LEAKS_C = LEAK_C + LEAK_C.replace("leaky", "leaky2").replace("#include <stdlib.h>\n", "")


def test_write_baseline_prints_one_line(tmp_path: Path) -> None:
    write(tmp_path, "a.c", TWO_LEAKS_C)
    write(tmp_path, "blob.c", b"int x;\0\0binary")  # a warning about the run: counted, not listed
    r = ortlint("--write-baseline", "b.json", ".")
    assert r.code == 0 and r.stdout == ""
    assert r.stderr == "ortlint: wrote 2 findings to baseline b.json (2 files, 1 warning not shown)\n"
    assert len(json.loads((tmp_path / "b.json").read_text())["findings"]) == 2


def test_write_baseline_with_output_still_writes_the_report_there(tmp_path: Path) -> None:
    write(tmp_path, "a.c", LEAK_C)
    r = ortlint("--write-baseline", "b.json", "--format", "json", "-o", "report.json", "a.c")
    assert r.code == 0 and r.stdout == "" and r.stderr.count("\n") == 1 and "wrote 1 finding " in r.stderr
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["findings"] == 1


def test_write_summaries_prints_one_line_with_the_number_of_entries(tmp_path: Path) -> None:
    r = ortlint("--no-cache", "--write-summaries", "s.toml", str(FIXTURES / "multi" / "helpers"))
    entries = (tmp_path / "s.toml").read_text().splitlines().count("[[call]]")
    assert entries > 0
    assert r.code == 0 and r.stdout == ""
    assert r.stderr.startswith(f"ortlint: wrote {entries} inferred summaries as [[call]] entries to s.toml (")
    assert r.stderr.count("\n") == 1
    explained = ortlint("--no-cache", "--explain-summaries", "--write-summaries", "s2.toml", str(FIXTURES / "multi" / "helpers"))
    assert "releases st with ReleaseStatus()" in explained.stdout  # asked for: still shown


def test_a_failure_is_still_shown(tmp_path: Path) -> None:
    write(tmp_path, "a.c", LEAK_C)
    r = ortlint("--write-baseline", "b.json", "a.c", "missing.c")
    assert r.code == 2 and r.stdout == ""
    assert "ortlint: error: missing.c: " in r.stderr and "wrote 1 finding to baseline b.json" in r.stderr
