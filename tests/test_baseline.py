"""Baseline entries with their leaking exits (issue 30): a baselined handle that leaks on a new
exit is reported again; edits that only move lines, or exits fixed, are not new; baselines
written before exits were recorded still load and match per acquisition."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ortlint.baseline import BaselineError, exits, read_baseline, split_new, write_baseline
from ortlint.findings import Finding, Step
from tests.clihelpers import CLEAN_C, ortlint, write


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


ONE_EXIT_C = """#include <stdlib.h>
int g(int);
int load(int n) {
  char *p = malloc(n);
  if (n > 3)
    return 1;
  free(p);
  return 0;
}
"""
# the same handle, now also leaking on a second early return
NEW_EXIT_C = ONE_EXIT_C.replace("  free(p);\n", "  if (g(n))\n    return 2;\n  free(p);\n")


def findings_of(result_stdout: str) -> list[dict]:
    return json.loads(result_stdout)["findings"]


def test_a_new_leaking_exit_of_a_baselined_handle_is_reported(tmp_path: Path) -> None:
    src = write(tmp_path, "a.c", ONE_EXIT_C)
    assert ortlint("--write-baseline", "b.json", "a.c").code == 0
    entry = json.loads((tmp_path / "b.json").read_text())["findings"][0]
    assert entry["exits"] == ["When returning"]  # no line number: edits above do not change it
    src.write_text(NEW_EXIT_C)
    r = ortlint("--format", "json", "--baseline", "b.json", "a.c")
    assert r.code == 1
    (finding,) = findings_of(r.stdout)
    assert [s["line"] for s in finding["related"]] == [6, 8] and "into `p`" in finding["message"]


def test_moved_lines_and_fixed_exits_stay_baselined(tmp_path: Path) -> None:
    src = write(tmp_path, "a.c", NEW_EXIT_C)
    assert ortlint("--write-baseline", "b.json", "a.c").code == 0
    src.write_text("/* a header\n   comment */\n" + NEW_EXIT_C.replace("int load", "\n\nint load"))
    r = ortlint("--format", "json", "--baseline", "b.json", "a.c")
    assert r.code == 0 and json.loads(r.stdout)["summary"]["baselined"] == 1
    src.write_text(NEW_EXIT_C.replace("    return 1;\n", "    { free(p); return 1; }\n"))  # one exit fixed
    r = ortlint("--format", "json", "--baseline", "b.json", "a.c")
    assert r.code == 0 and json.loads(r.stdout)["summary"]["baselined"] == 1


def test_an_old_baseline_without_exits_loads_and_matches_per_acquisition(tmp_path: Path) -> None:
    src = write(tmp_path, "a.c", ONE_EXIT_C)
    assert ortlint("--write-baseline", "b.json", "a.c").code == 0
    doc = json.loads((tmp_path / "b.json").read_text())
    for entry in doc["findings"]:
        del entry["exits"]  # as ortlint wrote baselines before exits were recorded
    write(tmp_path, "old.json", json.dumps(doc))
    src.write_text(NEW_EXIT_C)
    r = ortlint("--baseline", "old.json", "a.c")
    assert r.code == 0 and "(1 in baseline)" in r.stdout  # as before: rewrite it to record the exits
    assert ortlint("--baseline", "b.json", "a.c").code == 1


def test_exits_are_counted_per_kind() -> None:
    def leak(*lines_and_kinds: tuple[int, str]) -> Finding:
        related = tuple(Step("a.c", line, 5, f"When {kind} at line {line}") for line, kind in lines_and_kinds)
        return Finding("ORT001", "a.c", 3, 1, 3, 2, "m", "f", related=related)
    assert exits(leak((9, "returning"), (7, "returning"))) == ["When returning", "When returning"]
    assert exits(leak((9, "an exception leaves the function"))) == ["When an exception leaves the function"]
    assert exits(Finding("ORT002", "a.c", 3, 1, 3, 2, "m", "f")) == []


def leak(*returns: int) -> Finding:
    """One handle (one fingerprint) leaking on early returns at these lines."""
    related = tuple(Step("a.c", line, 5, f"When returning at line {line}") for line in returns)
    return Finding("ORT001", "a.c", 3, 1, 3, 2, "m", "f", related=related, anchor="leak:malloc:p:1")


def test_each_entry_matches_once_the_one_with_the_fewest_exits_that_covers_first(tmp_path: Path) -> None:
    """Two findings with one fingerprint: the entry with two exits is kept for the finding with
    two, whatever their order."""
    write_baseline("b.json", [leak(7, 9), leak(7)])
    assert [sorted(c.elements()) for _key, c in read_baseline("b.json")] == [["When returning"] * 2, ["When returning"]]
    for findings in ([leak(7), leak(7, 9)], [leak(8, 9), leak(7)]):
        new, known = split_new("b.json", findings)
        assert new == [] and known == findings
    new, known = split_new("b.json", [leak(7, 9), leak(7, 9)])  # the second has one exit too many
    assert len(new) == 1 and len(known) == 1
    new, _known = split_new("b.json", [leak(7, 8, 9)])
    assert len(new) == 1


@pytest.mark.parametrize("exits_value", ['"When returning"', '[1]', '{"x": 1}'])
def test_bad_exits_are_an_error(tmp_path: Path, exits_value: str) -> None:
    write(tmp_path, "b.json", '{"ortlint-baseline": 1, "findings": [{"fingerprint": "ab", "exits": %s}]}' % exits_value)
    with pytest.raises(BaselineError, match=r'findings\[0\]: "exits" must be a list of strings'):
        read_baseline("b.json")
    write(tmp_path, "ok.c", CLEAN_C)
    r = ortlint("--baseline", "b.json", "ok.c")
    assert r.code == 2 and '"exits" must be a list of strings' in r.stderr
