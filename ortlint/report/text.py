"""Plain text: `path:line:col: ORT001 leak: message`, the trace indented below, one summary line."""
from __future__ import annotations

from ..findings import Report

_COLORS = {"error": "\033[31m", "warning": "\033[33m", "note": "\033[36m", "bold": "\033[1m", "dim": "\033[2m",
           "reset": "\033[0m"}


def format_text(report: Report, color: bool = False, show_trace: bool = True, quiet: bool = False, **_: object) -> str:
    def c(name: str, text: str) -> str:
        return f"{_COLORS[name]}{text}{_COLORS['reset']}" if color else text

    out: list[str] = []
    for f in report.findings:
        head = f"{f.path}:{f.line}:{f.col}: {c(f.effective_level, f.rule)} {c('bold', f.rule_name)}: {f.message}"
        out.append(head)
        if show_trace and not quiet:
            for step in f.trace[:-1] if len(f.trace) > 1 else ():
                out.append(c("dim", f"    {step.path}:{step.line}: {step.message}"))
            if len(f.related) > 1:
                for step in f.related:
                    out.append(c("dim", f"    {step.path}:{step.line}: leaks here: {step.message}"))
    if not quiet:
        for n in report.notices:
            where = f"{n.path}:{n.line}" if n.line else n.path
            out.append(f"{where}: {c('note', 'note')}: {n.message}")
    count = len(report.findings)
    files = len(report.files)
    summary = f"Found {count} problem{'s' if count != 1 else ''} in {files} file{'s' if files != 1 else ''}."
    if count == 0:
        summary = f"No problems found in {files} file{'s' if files != 1 else ''}."
    out.append(c("bold", summary))
    return "\n".join(out) + "\n"
