"""What a run has done so far, for whoever shows it (the CLI's progress line, report/progress.py).

The runner, the parser and the worker pool update the counters as work is done and call
`changed()` after each update, and the pool calls it at least every quarter of a second while
its workers work, so a display can redraw when it is time (nothing here reads a clock or
writes anything). The counters never decide anything: a run with a display gives the results of
one without.
"""
from __future__ import annotations


class Progress:
    """Counters of one run. `files`: files to read (those whose results come from the cache
    count as read from the start); `functions`: functions to analyze, known once every file is
    parsed (0 until then)."""

    def __init__(self) -> None:
        self.files = 0
        self.parsed = 0
        self.functions = 0
        self.analyzed = 0

    def start_files(self, total: int, done: int = 0) -> None:
        self.files, self.parsed = total, done
        self.changed()

    def file_parsed(self, count: int = 1) -> None:
        self.parsed = min(self.files, self.parsed + count)
        self.changed()

    def start_functions(self, total: int) -> None:
        self.functions, self.analyzed = total, 0
        self.changed()

    def functions_analyzed(self, done: int) -> None:
        """`done`: how many distinct functions have their results now."""
        self.analyzed = min(self.functions, done)
        self.changed()

    def changed(self) -> None:
        """Called after each update and regularly while workers work; a display overrides it."""
