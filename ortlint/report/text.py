"""Plain text for terminals and logs, in the `path:line:col: message` form that editors and CI
log viewers turn into links:

    src/a.c:13:19: ORT001 leak: OrtSessionOptions acquired by CreateSessionOptions() ...
        src/a.c:13: OrtSessionOptions acquired by CreateSessionOptions() into `opts`
        src/a.c:15: assuming `st != NULL` is true
    src/b.c: warning: binary file (contains NUL bytes); skipped
    Found 1 problem in 2 files (1 warning).

Colors are added only when the caller asks (the CLI decides from `--color` and the terminal).
Every path and message goes through `terminal_safe` first: they come from the analyzed tree (a
file name with a newline would print a forged finding line, source text with ESC bytes would
reach the terminal raw).
Notes (code the front end could not parse, analysis budgets) are listed with `verbose` only and
counted in the summary otherwise, so that they never drown the findings.
"""
from __future__ import annotations

from ..findings import LIMIT, Finding, Notice, Report
from ..textsafe import terminal_safe as safe
from .snippet import snippet_lines, source_lines

_COLORS = {"error": "\033[1;31m", "warning": "\033[1;33m", "note": "\033[1;36m", "bold": "\033[1m",
           "dim": "\033[2m", "reset": "\033[0m"}


class _Painter:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, style: str, text: str) -> str:
        return f"{_COLORS[style]}{text}{_COLORS['reset']}" if self.enabled else text


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _finding_lines(f: Finding, paint: _Painter, with_trace: bool) -> list[str]:
    tags = "".join(f" [{tag}]" for tag in f.tags)
    head = (f"{paint('bold', f'{safe(f.path)}:{f.line}:{f.col}:')} {paint(f.effective_level, f.rule)} "
            f"{paint('bold', f.rule_name)}{paint('dim', tags) if tags else ''}: {safe(f.message)}")
    lines = [head]
    if not with_trace:
        return lines
    steps = list(f.trace)
    if steps and steps[-1].message == f.message:
        steps.pop()  # the last step repeats the headline
    for step in steps:
        lines.append(paint("dim", f"    {safe(step.path)}:{step.line}: {safe(step.message)}"))
    if len(f.related) > 1:
        for step in f.related:
            text = step.message
            text = "leaks " + text[0].lower() + text[1:] if text.startswith("When ") else text
            lines.append(paint("dim", f"    {safe(step.path)}:{step.line}: {safe(text)}"))
    return lines


def _notice_line(n: Notice, paint: _Painter) -> str:
    where = f"{safe(n.path)}:{n.line}:" if n.line else f"{safe(n.path)}:"
    level = n.level if n.level in ("error", "warning", "note") else "warning"
    return f"{paint('bold', where)} {paint(level, level)}: {safe(n.message)}"


def _summary(report: Report, shown_notes: bool) -> str:
    count = len(report.findings)
    files = _plural(len(report.files), "file")
    head = f"Found {_plural(count, 'problem')} in {files}" if count else f"No problems found in {files}"
    extra = []
    stats = report.stats
    in_tests = sum(1 for f in report.findings if "test" in f.tags)
    if in_tests:
        extra.append(f"{in_tests} in test code")
    if stats.get("tests_excluded"):
        extra.append(f"{int(stats['tests_excluded'])} in test code excluded")
    if stats.get("outside_scope"):
        extra.append(f"{int(stats['outside_scope'])} outside ONNX Runtime code not shown (--scope all)")
    if stats.get("suppressed"):
        extra.append(f"{int(stats['suppressed'])} suppressed")
    if stats.get("baselined"):
        extra.append(f"{int(stats['baselined'])} in baseline")
    errors = sum(1 for n in report.notices if n.level == "error")
    limits = sum(1 for n in report.notices if n.level == "warning" and n.message.startswith(LIMIT))
    warnings = sum(1 for n in report.notices if n.level == "warning") - limits
    notes = sum(1 for n in report.notices if n.level == "note")
    if errors:
        extra.append(_plural(errors, "error"))
    if limits:  # files or functions a limit stopped (warnings of their own, listed above)
        extra.append(f"{_plural(limits, 'limit')} reached")
    if warnings:
        extra.append(_plural(warnings, "warning"))
    if notes:
        extra.append(_plural(notes, "note") + ("" if shown_notes else ", shown with --verbose"))
    return head + (f" ({', '.join(extra)})." if extra else ".")


def format_text(report: Report, color: bool = False, quiet: bool = False, verbose: bool = False,
                show_trace: bool = True, show_source: bool = False, **_: object) -> str:
    """Findings with their traces, then tool messages, then one summary line.

    `quiet` keeps only the one-line findings (for scripts and pre-commit logs); `show_source`
    puts the source line and a caret under each headline (snippet.py; not with `quiet`).
    """
    paint = _Painter(color)
    out: list[str] = []
    sources = source_lines(report.findings) if show_source and not quiet else {}
    for f in report.findings:
        lines = _finding_lines(f, paint, show_trace and not quiet)
        out.append(lines[0])
        out.extend(snippet_lines(f, sources, paint) if sources else ())
        out.extend(lines[1:])
    if not quiet:
        for n in report.notices:
            if n.level != "note" or verbose:
                out.append(_notice_line(n, paint))
        out.append(paint("bold", _summary(report, verbose)))
    return "\n".join(out) + "\n" if out else ""
