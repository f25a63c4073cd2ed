"""Reporters turn a `Report` into text; they never analyze anything.

    text.py              the terminal format (findings, traces, summary line)
    snippet.py           the source line and caret under each text finding
    sarif.py             SARIF 2.1.0 for code scanning
    json_report.py       JSON (+ fastjson.py, its encoder)
    github.py            GitHub workflow annotations
    sanitizer_report.py  `ortlint sanitizer`'s report
    progress.py          the progress line on stderr while a run goes on (a display of counts)
"""
from __future__ import annotations

from typing import Callable

from ..findings import Report


def get_formatter(name: str) -> Callable[..., str]:
    if name == "text":
        from .text import format_text
        return format_text
    if name == "sarif":
        from .sarif import format_sarif
        return format_sarif
    if name == "json":
        from .json_report import format_json
        return format_json
    if name == "github":
        from .github import format_github
        return format_github
    raise ValueError(f"unknown format {name!r}")


__all__ = ["get_formatter", "Report"]
