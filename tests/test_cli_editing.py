"""The command line for editors and fixes (issue 33): --fix / --unsafe-fixes, --stdin-filename,
--unused-suppressions (ORT100), fixes in SARIF, --list-unknown-calls --format json."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clihelpers import FIXTURES, LEAK_C, ROOT, ortlint, write

ENV = {**os.environ, "ORTLINT_NO_CACHE": "1", "NO_COLOR": "1"}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ortlint", *args], input=stdin, capture_output=True, env=ENV,
                          timeout=300)


def test_fix_applies_safe_fixes_only_and_reports_the_rest(tmp_path: Path) -> None:
    shutil.copyfile(FIXTURES / "c/fix_dropped_status.c", tmp_path / "a.c")
    r = ortlint("--isolated", "-q", "--fix", "a.c")
    text = (tmp_path / "a.c").read_text()
    assert r.code == 0, r.stdout + r.stderr
    assert "api->ReleaseStatus(api->DisableMemPattern(o));" in text
    assert "api->ReleaseStatus(api->SetIntraOpNumThreads(o, status));" in text  # the safe one, not the return
    assert "fixed 4 problems in 1 file" in r.stderr
    assert ortlint("--isolated", "-q", "a.c").code == 0


def test_unsafe_fixes_apply_the_preferred_fix(tmp_path: Path) -> None:
    shutil.copyfile(FIXTURES / "c/fix_dropped_status.c", tmp_path / "a.c")
    r = ortlint("--isolated", "-q", "--unsafe-fixes", "a.c")
    assert r.code == 0, r.stdout + r.stderr
    assert "if (status2) return status2; }" in (tmp_path / "a.c").read_text()


def test_without_fix_nothing_is_written(tmp_path: Path) -> None:
    shutil.copyfile(FIXTURES / "c/fix_missing_release.c", tmp_path / "a.c")
    before = (tmp_path / "a.c").read_bytes()
    assert ortlint("--isolated", "-q", "a.c").code == 1
    assert (tmp_path / "a.c").read_bytes() == before


def test_stdin_filename_analyzes_standard_input_as_that_path(tmp_path: Path) -> None:
    r = _cli("--isolated", "-q", "--stdin-filename", "src/never_saved.c", stdin=LEAK_C.encode())
    assert r.returncode == 1, r.stderr
    assert r.stdout.decode().startswith("src/never_saved.c:3:13: ORT001 leak:")
    write(tmp_path, "src/on_disk.c", "int f(void) { return 0; }\n")  # what is on disk does not count
    r = _cli("--isolated", "-q", "--stdin-filename", "src/on_disk.c", stdin=LEAK_C.encode())
    assert r.returncode == 1 and b"src/on_disk.c:3:13: ORT001" in r.stdout


def test_stdin_filename_with_fix_prints_the_fixed_source(tmp_path: Path) -> None:
    source = (FIXTURES / "c/fix_missing_release.c").read_bytes()
    r = _cli("--isolated", "-q", "--fix", "--stdin-filename", "a.c", stdin=source)
    assert r.returncode == 0, r.stderr
    fixed = r.stdout.decode()
    assert "goto fail_session;" in fixed and "{ api->ReleaseSession(session); return 1; }" in fixed
    assert not (tmp_path / "a.c").exists()
    assert _cli("--isolated", "-q", "--stdin-filename", "a.c", stdin=r.stdout).returncode == 0


def test_stdin_filename_refuses_other_paths() -> None:
    r = _cli("--isolated", "--stdin-filename", "a.c", "b.c", stdin=b"")
    assert r.returncode == 2 and b"--stdin-filename" in r.stderr


def test_unused_suppressions_are_reported_on_request(tmp_path: Path) -> None:
    write(tmp_path, "a.c", LEAK_C.replace("char *p = malloc(n);", "char *p = malloc(n);  // ortlint: ignore[leak]")
          + "int g(void) {\n  return 0;  // ortlint: ignore[ORT002, ORT006]\n}\n")
    assert ortlint("--isolated", "-q", "a.c").code == 0
    r = ortlint("--isolated", "-q", "--unused-suppressions", "a.c")
    assert r.code == 1
    lines = r.stdout.splitlines()
    assert [line.split(": ")[:2] for line in lines] == [["a.c:9:17", "ORT100 unused-suppression"]] * 2
    assert "ORT002" in lines[0] and "ORT006" in lines[1]
    assert ortlint("--isolated", "-q", "--unused-suppressions", "--ignore", "ORT100", "a.c").code == 0


def test_sarif_carries_fixes(tmp_path: Path) -> None:
    shutil.copyfile(FIXTURES / "c/fix_dropped_status.c", tmp_path / "a.c")
    doc = json.loads(ortlint("--isolated", "--format", "sarif", "a.c").stdout)
    results = doc["runs"][0]["results"]
    fixes = results[-1]["fixes"]
    assert [f["properties"]["safe"] for f in fixes] == [False, True]
    change = fixes[1]["artifactChanges"][0]
    assert change["artifactLocation"] == {"uri": "a.c", "uriBaseId": "%SRCROOT%"}
    assert change["replacements"] == [{"deletedRegion": {"startLine": 15, "startColumn": 3, "endLine": 15,
                                                         "endColumn": 39},
                                       "insertedContent": {"text": "api->ReleaseStatus(api->SetIntraOpNumThreads(o, status))"}}]


def test_list_unknown_calls_honours_json(tmp_path: Path) -> None:
    write(tmp_path, "a.c", "#include <stdlib.h>\nvoid f(void) {\n  char *p = malloc(4);\n  host_take(p);\n}\n"
          "void g(void) {\n  char *p = malloc(4);\n  host_take(p);\n}\n")
    r = ortlint("--isolated", "--list-unknown-calls", "--format", "json", "a.c")
    assert r.code == 0
    assert json.loads(r.stdout) == {"schema": 1, "unknown_calls": [
        {"call": "host_take", "style": "plain", "name": "host_take", "resources": 2}]}
