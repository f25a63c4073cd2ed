"""The source line and caret under each text finding (issue 30): where the caret goes (tabs, wide
characters, escapes), long lines clipped around it, what is read, and how to turn it off."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ortlint.findings import Finding, Report
from ortlint.report import snippet as snippet_module
from ortlint.report.snippet import snippet, source_lines
from ortlint.report.text import format_text
from tests.clihelpers import LEAK_C, ortlint, write


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for var in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(var, raising=False)


def under(text: str, col: int, end_col: int, end_line: int = 1) -> tuple[str, str]:
    return snippet(text, 1, col, end_line, end_col)


def test_the_caret_marks_the_range_of_the_finding() -> None:
    assert under("  char *p = malloc(n);", 13, 22) == ("  char *p = malloc(n);", "            ^~~~~~~~~")
    assert under("x = f();", 5, 5) == ("x = f();", "    ^")  # an empty range: one caret
    assert under("x = f(", 5, 3, end_line=4) == ("x = f(", "    ^~")  # goes on below: to the end of the line
    assert under("x = f();   ", 20, 21) == ("x = f();", "        ^")  # past the end: after the last character


def test_tabs_are_expanded_and_the_caret_stays_under_its_character() -> None:
    shown, caret = under("\tp = malloc(4);\t// x", 6, 15)
    assert shown == "    p = malloc(4);  // x"
    assert caret == "        ^~~~~~~~~"
    assert shown[caret.index("^"):].startswith("malloc(4)")
    shown, caret = under("a\tb\tc", 5, 6)  # tab stops, not a fixed number of spaces
    assert shown == "a   b   c" and caret == "        ^"


def test_escaped_and_wide_characters_keep_the_caret_in_place() -> None:
    shown, caret = under('s = "\x1b[2J"; p = malloc(1);', 17, 26)
    assert "\x1b" not in shown and shown == 's = "\\x1b[2J"; p = malloc(1);'  # as the rest of text output
    assert shown[caret.index("^"):].startswith("malloc(1)")
    shown, caret = under('s = "漢字"; p = malloc(1);', 15, 24)  # two columns each on a terminal
    assert caret.index("^") == shown.index("malloc") + 2
    shown, caret = under("s = \u202e; p = malloc(1);", 12, 21)  # a bidi control: visible, never applied
    assert "\u202e" not in shown and shown[caret.index("^"):].startswith("malloc(1)")


def test_a_long_line_is_clipped_around_the_caret() -> None:
    width = snippet_module.WIDTH
    head = "x" * 300 + " p = malloc(n); " + "y" * 300
    shown, caret = under(head, 306, 315)
    assert shown.startswith("...") and shown.endswith("...")
    assert len(shown) <= width + 6
    assert shown[caret.index("^"):].startswith("malloc(n)") and caret.endswith("^~~~~~~~~")
    shown, caret = under("p = malloc(n); " + "y" * 300, 5, 14)  # near the start: the start is kept
    assert shown.startswith("p = malloc(n); ") and shown.endswith("...") and caret == "    ^~~~~~~~~"
    shown, caret = under("y" * 300 + " free(p);", 302, 309)  # near the end: the end is kept
    assert shown.startswith("...") and shown.endswith("free(p);") and shown[caret.index("^"):] == "free(p);"
    assert len(shown) == width + 3  # the width is used for what comes before


def test_each_file_is_read_once_for_the_lines_findings_need(tmp_path: Path) -> None:
    write(tmp_path, "a.c", "one\r\ntwo\n\xe9three\n")
    (tmp_path / "b.c").write_bytes(b"bad \xff byte\n")
    findings = [Finding("ORT001", "a.c", line, 1, line, 2, "m", "f") for line in (2, 3, 9)]
    findings += [Finding("ORT001", "b.c", 1, 5, 1, 6, "m", "f"), Finding("ORT001", "gone.c", 1, 1, 1, 2, "m", "f")]
    assert source_lines(findings) == {("a.c", 2): "two", ("a.c", 3): "\xe9three", ("b.c", 1): "bad \ufffd byte"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_under_a_finding_name_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "planted.c")
    assert source_lines([Finding("ORT001", "planted.c", 1, 1, 1, 2, "m", "f")]) == {}


def test_text_output_shows_it_unless_quiet_or_no_show_source(tmp_path: Path) -> None:
    write(tmp_path, "leak.c", LEAK_C.replace("  char", "\tchar"))
    lines = ortlint("leak.c").stdout.splitlines()
    assert lines[1:3] == ["    3 |     char *p = malloc(n);", "      |               ^~~~~~~~~"]
    assert lines[3].startswith("    leak.c:3: ")  # then the trace
    off = ortlint("--no-show-source", "leak.c").stdout.splitlines()
    assert off == lines[:1] + lines[3:]
    assert ortlint("-q", "leak.c").stdout.splitlines() == lines[:1]
    colored = ortlint("--color", "always", "leak.c").stdout.splitlines()
    assert colored[2].endswith("\033[1;31m^~~~~~~~~\033[0m")  # the caret in the level's color
    report = json.loads(ortlint("--format", "json", "leak.c").stdout)
    assert "char *p" not in json.dumps(report)  # the other formats carry locations, not text


def test_a_file_edited_since_the_analysis_shows_no_snippet(tmp_path: Path) -> None:
    write(tmp_path, "a.c", "int x;\n")
    finding = Finding("ORT001", "a.c", 3, 1, 3, 2, "gone", "f")
    text = format_text(Report(findings=[finding]), show_source=True)
    assert text.splitlines()[0].startswith("a.c:3:1: ORT001") and " | " not in text
