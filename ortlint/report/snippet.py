"""The source line and a caret under each text finding, as ruff and clang-tidy show them:

    src/a.c:3:13: ORT001 leak: memory acquired by malloc() into `p` is not released ...
        3 |   char *p = malloc(n);
          |             ^~~~~~~~~

The line is read from the file when the report is written (the analysis keeps no source text),
each file once and only the lines findings need, through fileio (a regular file only, at most
the front ends' MAX_BYTES: a FIFO planted under a finding's name cannot block the report). A file
that changed since, or cannot be read, gets no snippet; the finding itself is unchanged.

Columns are characters, as the front ends count them (bytes that are not UTF-8 decode to one
U+FFFD each way). What is shown is made safe as the rest of the text output (`terminal_safe`: an
ESC byte in a string literal is shown as `\\x1b`, never sent to the terminal), tabs are expanded
to TAB_STOP columns, wide characters count two columns and combining marks none, so the caret
stays under its character. A line wider than WIDTH columns is clipped to a window that holds the
start of the finding, with `...` where text was cut. WIDTH is fixed, not the terminal's width:
the same tree gives the same text in a terminal, a pipe and a CI log.
"""
from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable

from ..fileio import read_prefix
from ..findings import Finding
from ..textsafe import terminal_safe

TAB_STOP = 4
WIDTH = 100  # source columns shown at most
BEFORE = 30  # columns kept before the caret when a long line is clipped
ELLIPSIS = "..."


def source_lines(findings: Iterable[Finding]) -> dict[tuple[str, int], str]:
    """The text of each finding's line, keyed by (path, line); absent when it cannot be read."""
    wanted: dict[str, set[int]] = defaultdict(set)
    for f in findings:
        if f.line > 0:
            wanted[f.path].add(f.line)
    found: dict[tuple[str, int], str] = {}
    for path, lines in wanted.items():
        data = _read(path)
        if data is None:
            continue
        last = max(lines)
        for number, raw in enumerate(data.split(b"\n", last)[:last], start=1):
            if number in lines:
                found[(path, number)] = raw.rstrip(b"\r").decode("utf-8", "replace")
    return found


def _read(path: str) -> bytes | None:
    from ..frontends.common.source import MAX_BYTES
    try:
        data = read_prefix(path, MAX_BYTES + 1)
    except OSError:  # gone, not a regular file (RefusedFile), unreadable
        return None
    return None if len(data) > MAX_BYTES else data


def _cells(text: str) -> list[tuple[str, int]]:
    """What each character of `text` shows as, and how many columns that takes."""
    cells: list[tuple[str, int]] = []
    column = 0
    for ch in text:
        if ch == "\t":
            shown = " " * (TAB_STOP - column % TAB_STOP)
            width = len(shown)
        else:
            shown = terminal_safe(ch)
            width = len(shown) if shown != ch else _width(ch)
        cells.append((shown, width))
        column += width
    return cells


def _width(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def snippet(text: str, line: int, col: int, end_line: int, end_col: int) -> tuple[str, str]:
    """The source line and the caret line under it (without gutter): `^` at column `col`,
    `~` to `end_col` on the same line, or to the end of the line when the finding goes on."""
    text = text.rstrip()
    cells = _cells(text)
    start = min(max(col - 1, 0), len(cells))
    end = len(cells) if end_line > line else min(max(end_col - 1, start + 1), len(cells))
    offsets = [0]
    for _shown, width in cells:
        offsets.append(offsets[-1] + width)
    first, last = _window(offsets, start)
    shown = "".join(s for s, _w in cells[first:last])
    prefix = ELLIPSIS if first > 0 else ""
    suffix = ELLIPSIS if last < len(cells) else ""
    caret_at = len(prefix) + offsets[start] - offsets[first]
    span = max(offsets[min(end, last)] - offsets[start], 1)
    return prefix + shown + suffix, " " * caret_at + "^" + "~" * (span - 1)


def _window(offsets: list[int], start: int) -> tuple[int, int]:
    """The characters [first, last) shown of a line whose character i starts at column
    offsets[i]: all of it when it fits in WIDTH, else WIDTH columns that hold `start`."""
    total = offsets[-1]
    if total <= WIDTH:
        return 0, len(offsets) - 1
    first = 0
    if offsets[start] > WIDTH - BEFORE:  # the caret would be far right: keep BEFORE columns before it
        while offsets[first] < offsets[start] - BEFORE:
            first += 1
    last = first
    while last < len(offsets) - 1 and offsets[last + 1] - offsets[first] <= WIDTH:
        last += 1
    while first > 0 and last == len(offsets) - 1 and offsets[last] - offsets[first - 1] <= WIDTH:
        first -= 1  # the end of the line is in view: use the width for what comes before
    return first, max(last, min(start + 1, len(offsets) - 1))


def snippet_lines(f: Finding, sources: dict[tuple[str, int], str], paint: Callable[[str, str], str]) -> list[str]:
    """The two lines under finding `f` (none when its line could not be read), gutter dimmed
    and caret in the finding's level color, indented as the trace is."""
    text = sources.get((f.path, f.line))
    if text is None:
        return []
    shown, caret = snippet(text, f.line, f.col, f.end_line, f.end_col)
    number = str(f.line)
    marks = caret.lstrip(" ")
    return [f"    {paint('dim', number + ' |')} {shown}".rstrip(),
            f"    {paint('dim', ' ' * len(number) + ' |')} {caret[:len(caret) - len(marks)]}{paint(f.effective_level, marks)}"]
