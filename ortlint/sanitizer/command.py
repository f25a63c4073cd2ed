"""`ortlint sanitizer LOG [PATH]...`: the steps between the command line and the formatters.

Reading the log, deciding whether a static run is needed, and relating the two; the CLI only
parses options and prints. Kept apart from the parser and the matcher so both stay testable on
plain data.
"""
from __future__ import annotations

import sys
from typing import Callable

from ..findings import Report
from ..policy import Policy
from .facts import TreeCode
from .log import SanitizerLog, parse_log
from .matcher import SanitizerResult, relate


class LogUnreadable(Exception):
    """The log file is missing, a folder, or not readable: exit code 2."""


def read_log(source: str) -> SanitizerLog:
    """Parse the log at `source` (`-` is standard input); never raises on content, only on access."""
    try:
        if source == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as fh:
                data = fh.read()
    except OSError as exc:
        raise LogUnreadable(f"{source}: cannot read the log: {exc.strerror or exc}") from None
    return parse_log(data.decode("utf-8", errors="replace").replace("\r\n", "\n"))


def explain_log(log: SanitizerLog, analyze: Callable[[], Report], policy: Policy,
                extensions: dict[str, str] | None = None) -> SanitizerResult:
    """Run the static analysis (only when there is something to explain) and relate."""
    report = analyze() if log.reports else Report()
    return relate(log, report, TreeCode(report.files, policy, extensions))


def log_warning(log: SanitizerLog, source: str) -> str | None:
    """A one-line warning for a log that holds no sanitizer output at all."""
    if log.reports or log.saw_sanitizer:
        return None
    return f"{source}: no AddressSanitizer or LeakSanitizer report found (not a sanitizer log, or a clean run)"
