"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request.

    ::error file=src/a.c,line=13,col=19,endLine=13,endColumn=51,title=ORT001 leak::OrtSession ...

Use it in a workflow step (`ortlint --format github src`) when code scanning is not available;
SARIF upload gives richer results (traces, alert tracking) where it is. The trace goes into the
message body, one step per line. Notices (files that could not be analyzed) become warnings.

Escaping is GitHub's own (`@actions/core`'s `escapeData` and `escapeProperty`: `%`, CR and LF in
data, also `:` and `,` in properties), so a file name with a newline cannot start a command of
its own; what GitHub leaves alone but a log viewer would act on (ESC and other control
characters, bidirectional controls, bytes that are not UTF-8) is then shown as a visible escape.
"""
from __future__ import annotations

from ..findings import Finding, Notice, Report
from ..textsafe import terminal_safe

_COMMAND = {"error": "error", "warning": "warning", "note": "notice"}


def _escape_data(text: str) -> str:
    return terminal_safe(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")  # (terminal_safe adds neither)


def _command(level: str, properties: dict[str, object], message: str) -> str:
    props = ",".join(f"{k}={_escape_property(str(v))}" for k, v in properties.items())
    return f"::{_COMMAND.get(level, 'warning')} {props}::{_escape_data(message)}"


def _finding(f: Finding) -> str:
    props: dict[str, object] = {"file": f.path.replace("\\", "/"), "line": f.line, "col": f.col}
    if f.end_line and f.end_line >= f.line:
        props["endLine"] = f.end_line
        if f.end_line == f.line and f.end_col > f.col:
            props["endColumn"] = f.end_col
    props["title"] = f"{f.rule} {f.rule_name}" + "".join(f" [{tag}]" for tag in f.tags)
    steps = [s for s in f.trace if s.message != f.message]  # the last step usually repeats the headline
    body = [f.message] + [f"{s.path}:{s.line}: {s.message}" for s in steps]
    return _command(f.effective_level, props, "\n".join(body))


def _notice(n: Notice) -> str:
    props: dict[str, object] = {"file": n.path.replace("\\", "/")}
    if n.line:
        props["line"] = n.line
    props["title"] = "ortlint"
    return _command(n.level, props, n.message)


def format_github(report: Report, **_: object) -> str:
    """One workflow command per finding and per warning or error notice."""
    lines = [_finding(f) for f in report.findings]
    lines += [_notice(n) for n in report.notices if n.level != "note"]
    return "".join(line + "\n" for line in lines)
