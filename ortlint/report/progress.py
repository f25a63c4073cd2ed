"""The progress line on stderr: files parsed, functions analyzed, time elapsed.

    ortlint: 1234/4949 files parsed, 20345/41645 functions analyzed, 1:42

Shown after DELAY seconds only (a run that ends sooner prints nothing), redrawn in place at most
every INTERVAL on a terminal and erased before the report is written; where stderr is not a
terminal (`--progress` in a CI log) a new line every LOG_INTERVAL instead, and a last line with
the final counts at the end (once a line was shown: the log then ends with what was done, not
with counts up to LOG_INTERVAL old). The CLI decides
whether to show it (a terminal and not CI, unless `--progress` / `--no-progress`).

Written here rather than taken from a progress-bar library: the line is one `write` per redraw,
and the libraries that fit (tqdm, rich) would be a new dependency for it (`rich.progress` adds
34 ms of import to ortlint.cli's 128 ms, this module 1 ms: `python -X importtime`, rich 15.0.0).
Nothing in it can come from the analyzed tree (counts and time only), so it needs no escaping.
"""
from __future__ import annotations

import shutil
import time
from typing import Callable, TextIO

from ..orchestration.progress import Progress


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class ProgressLine(Progress):
    """A `Progress` that draws itself on `stream` (see the module docstring)."""

    DELAY = 1.0  # seconds before the first line: quick runs (a pre-commit hook on one file) show none
    INTERVAL = 0.1  # seconds between redraws on a terminal
    LOG_INTERVAL = 10.0  # seconds between lines in a log

    def __init__(self, stream: TextIO, terminal: bool, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.stream = stream
        self.terminal = terminal
        self.clock = clock
        self.started = clock()
        self.drawn = 0.0  # when the line was last drawn (0: never)
        self.last = ""  # the text last drawn (a log does not repeat a line)
        self.width = shutil.get_terminal_size((100, 24)).columns if terminal else 0

    def text(self) -> str:
        parts = [f"{self.parsed}/{self.files} files parsed"]
        if self.functions:
            parts.append(f"{self.analyzed}/{self.functions} functions analyzed")
        parts.append(_elapsed(self.clock() - self.started))
        return "ortlint: " + ", ".join(parts)

    def changed(self) -> None:
        now = self.clock()
        if now - self.started < self.DELAY:
            return
        if self.drawn and now - self.drawn < (self.INTERVAL if self.terminal else self.LOG_INTERVAL):
            return
        self._draw(now, self.text())

    def _draw(self, now: float, line: str) -> None:
        if not self.terminal and line == self.last:
            return
        self.drawn, self.last = now, line
        if self.terminal:  # in place; never wider than the terminal (a wrapped line cannot be redrawn)
            self._write("\r\033[K" + line[:max(self.width - 1, 10)])
        else:
            self._write(line + "\n")

    def finish(self) -> None:
        """On a terminal, erase the line (the report comes next, maybe on the same terminal); in
        a log that shows the progress, write the final counts. A run that showed nothing (it
        ended within DELAY) still writes nothing."""
        if not self.drawn:
            return
        if self.terminal:
            self._write("\r\033[K")
        else:
            self._draw(self.clock(), self.text())
        self.drawn = 0.0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed stderr: the run goes on without a display
            self.terminal = False
            self.changed = lambda: None  # type: ignore[method-assign]
