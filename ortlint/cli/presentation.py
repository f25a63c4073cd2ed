"""How a run's outcome is shown: exit codes, one-line errors, the progress line, the report in its
format (to stdout or --output, in color or not), the table of unknown calls. None of this changes
what is found."""
from __future__ import annotations

import json
import os
import sys
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from ..findings import Notice, Report
from ..report import get_formatter
from ..textsafe import terminal_safe

if TYPE_CHECKING:
    from ..report.progress import ProgressLine

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageFailure(Exception):
    """Bad options, configuration, policy or baseline: reported in one line, exit code 2."""


@dataclass
class Presentation:
    """How to show the results; none of this changes what is found."""

    output: str | None = None
    color: str = "auto"
    quiet: bool = False
    verbose: bool = False
    exit_zero: bool = False
    write_baseline: str | None = None
    list_unknown_calls: bool = False
    explain_summaries: bool = False
    write_summaries: str | None = None
    progress: bool | None = None  # the progress line on stderr; None: on a terminal, not in CI (`shows_progress`)
    show_source: bool = True  # text: the source line and a caret under each finding


def shows_progress(view: Presentation) -> bool:
    """The progress line: as asked (`--progress` / `--no-progress`); else only where someone
    watches: stderr is a terminal, not a CI job (CI=true: some CI runners give jobs a
    terminal), not a dumb terminal, and not `--quiet`."""
    if view.progress is not None:
        return view.progress
    if view.quiet or os.environ.get("CI", "").lower() not in ("", "0", "false") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress_line(view: Presentation) -> "ProgressLine | None":
    if not shows_progress(view):
        return None
    from ..report.progress import ProgressLine
    try:
        terminal = sys.stderr.isatty()
    except (AttributeError, ValueError):
        terminal = False
    return ProgressLine(sys.stderr, terminal)


def unshown(report: Report) -> str:
    """What a writer's one line says about the run (the report is not shown)."""
    files = len(report.files)
    warnings = sum(1 for n in report.notices if n.level == "warning")
    return f" ({files} file{'' if files == 1 else 's'}" + (f", {warnings} warning{'' if warnings == 1 else 's'} not shown)"
                                                          if warnings else ")")


def internal_error(exc: BaseException) -> None:
    click.echo(f"ortlint: internal error: {type(exc).__name__}: {terminal_safe(str(exc))}", err=True)
    if os.environ.get("ORTLINT_DEBUG"):
        click.echo("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)), err=True)
    else:
        click.echo("ortlint: this is a bug in ortlint; rerun with ORTLINT_DEBUG=1 for the traceback and please report it",
                   err=True)


def format_report(report: Report, fmt: str, view: Presentation) -> str:
    formatter = get_formatter(fmt)
    return formatter(report, color=use_color(view), quiet=view.quiet, verbose=view.verbose,
                     show_source=view.show_source)


def use_color(view: Presentation) -> bool:
    """`auto` means: writing to a terminal, and the user did not ask for no color (NO_COLOR)."""
    if view.color != "auto":
        return view.color == "always"
    if view.output or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def emit(text: str, output: str | None, color: bool) -> None:
    if not output:
        click.echo(text, nl=False, color=color)
        return
    try:
        with open(output, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        raise UsageFailure(f"--output: {output}: cannot write: {exc.strerror or exc}") from None


def echo_errors(report: Report, fmt: str, view: Presentation) -> None:
    """Errors about the run (a missing path) also go to stderr when stdout is not the text report."""
    if fmt == "text" and not view.output:
        return
    for n in report.notices:
        if n.level == "error":
            click.echo(f"ortlint: error: {terminal_safe(n.path)}: {terminal_safe(n.message)}", err=True)


def unknown_calls_table(report: Report) -> str:
    rows = sorted(((terminal_safe(name), count) for name, count in report.unknown_callees.items()),
                  key=lambda kv: (-kv[1], kv[0]))
    if not rows:
        return "No unknown call received a tracked resource.\n"
    width = max(len(name) for name, _ in rows)
    lines = [f"{'CALL':<{width}}  RESOURCES PASSED"] + [f"{name:<{width}}  {count}" for name, count in rows]
    lines.append("")
    lines.append("Describe these in a policy file (--rules FILE): [[call]] entries for functions that release or")
    lines.append("take ownership, [[neutral]] names for functions that only look at what they are given.")
    return "\n".join(lines) + "\n"


def unknown_calls_json(report: Report) -> str:
    """--list-unknown-calls --format json: `{"schema": 1, "unknown_calls": [{"call", "style", "name",
    "resources"}]}`, most resources first. `style` and `name` are how a policy file spells the call:
    `method:OrtSession.run` is `name = "OrtSession.run"` with `style = "method"`."""
    rows = sorted(report.unknown_callees.items(), key=lambda kv: (-kv[1], kv[0]))
    calls = []
    for callee, count in rows:
        style, sep, name = callee.partition(":")
        if not sep or not style.isalpha():
            style, name = "plain", callee
        calls.append({"call": callee, "style": style, "name": name, "resources": count})
    return json.dumps({"schema": 1, "unknown_calls": calls}, indent=2, ensure_ascii=True) + "\n"


def is_failure(n: Notice) -> bool:
    return n.level == "error" or n.message.startswith("internal error")


def exit_code(report: Report, view: Presentation) -> int:
    if any(is_failure(n) for n in report.notices):
        return EXIT_ERROR
    if view.write_baseline or view.write_summaries or view.list_unknown_calls or view.explain_summaries \
            or view.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if report.findings else EXIT_CLEAN
