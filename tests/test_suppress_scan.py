"""Suppression comments are found in linear time (issue 18: the marker regex was quadratic per
line: a line of 20 000 `//` and `ortlint:` took 27 s). The guard below is a hang guard, far
above the milliseconds the scan takes, not a speed target."""
from __future__ import annotations

import threading

from ortlint.suppress import scan


def scan_within(data: bytes, seconds: float = 30.0):
    out: list = []
    worker = threading.Thread(target=lambda: out.append(scan("a.c", data)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"scanning {len(data)} bytes did not end within {seconds:g} s"
    return out[0]


def test_a_line_of_many_comment_openers_and_markers() -> None:
    n = 20_000
    line = b"int x; " + b"// " * n + b"ortlint: nothing " + b"ortlint:" * n + b"\n"
    assert scan_within(line).by_line == {}


def test_markers_are_still_found_in_comments_only() -> None:
    text = (b"free(p);  // ortlint: ignore[ORT003]\n"
            b" * ortlint: ignore\n"
            b'const char *s = "ortlint: ignore";\n'
            b"/* xortlint: ignore */\n"
            b"/* see below */ int y; // ortlint: ignore[leak, ORT002]\n")
    assert scan_within(text).by_line == {1: {"ORT003"}, 2: {"*"}, 5: {"ORT001", "ORT002"}}
