"""Formats for `ortlint sanitizer`: runtime reports next to the findings that explain them.

Reporters only format a finished `SanitizerResult`; the relating is done in ortlint/sanitizer/.
The JSON shape is stable and documented in docs/cli.md:

    {"reports": [{"kind": "leak" | "double-free" | "use-after-free", "bytes": N, "objects": M,
                  "site": {"path", "line", "function"} | null,
                  "finding": {"rule", "path", "line", "message"} | null, "explanation": "..."}]}
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .. import __version__
from ..findings import RULES
from ..sanitizer.matcher import Explained, SanitizerResult, display_path
from ..textsafe import terminal_safe as safe
from . import fastjson
from .sarif import INFO_URI, SCHEMA, _location, _rule_descriptor
from .text import _finding_lines, _Painter

UNEXPLAINED = "ORTSAN"  # the SARIF rule of runtime reports no static finding explains


def _headline(e: Explained) -> str:
    where = f" in {e.site.function}()" if e.site and e.site.function else ""
    verb = "allocated" if e.kind == "leak" else "released" if e.kind == "double-free" else "used"
    return f"{e.report.headline()}{f', {verb}{where}' if where else ''}"


def format_sanitizer_text(result: SanitizerResult, color: bool = False, quiet: bool = False, **_: object) -> str:
    """Each report, the finding that explains it (with its trace) or why none does, then a summary."""
    paint = _Painter(color)
    out: list[str] = []
    for e in result.explained:
        where = f"{safe(display_path(e.site.path))}:{e.site.line}:" if e.site else "(outside the tree):"
        out.append(f"{paint('bold', where)} {paint('error', e.kind)}: {safe(_headline(e))}"
                   + (f" (reported {e.count} times)" if e.count > 1 else ""))
        if e.finding is not None:
            f = e.finding
            lines = _finding_lines(f.__class__(**{**_fields(f), "path": display_path(f.path)}), paint, not quiet)
            out.append("    explained by " + lines[0])
            out.extend("    " + line for line in lines[1:])
            how = e.explanation.split(f"{f.rule} reports", 1)[0].rstrip("; ")
            if how:  # how the value got from the allocation site to the finding (returned by a helper)
                out.append(paint("dim", f"    {safe(how)}"))
        else:
            out.append(f"    not explained by a finding: {safe(e.explanation)}")
        for r, count in e.indirect:
            out.append(paint("dim", f"    + {safe(r.headline())} hanging off it" + (f" (reported {count} times)" if count > 1 else "")))
    if not quiet:
        for line, problem in result.log.problems:
            out.append(f"{paint('bold', f'log line {line}:')} {paint('warning', 'warning')}: {safe(problem)}")
        for line, kind in result.log.ignored:
            out.append(f"{paint('bold', f'log line {line}:')} {paint('note', 'note')}: {safe(kind)} report ignored "
                       f"(not a release error ortlint checks)")
        out.append(paint("bold", _summary(result)))
    return "\n".join(out) + "\n"


def _fields(f: object) -> dict:
    return {name: getattr(f, name) for name in f.__dataclass_fields__}  # type: ignore[attr-defined]


def _summary(result: SanitizerResult) -> str:
    total = len(result.explained)
    if not total:
        return "No sanitizer report in the log."
    matched = sum(1 for e in result.explained if e.finding is not None)
    return (f"{total} sanitizer report{'s' if total != 1 else ''}: {matched} explained by a finding, "
            f"{total - matched} not.")


def as_json_data(result: SanitizerResult) -> dict:
    reports = []
    for e in result.explained:
        site = {"path": display_path(e.site.path), "line": e.site.line, "function": e.site.function} if e.site else None
        finding = ({"rule": e.finding.rule, "path": display_path(e.finding.path), "line": e.finding.line,
                    "message": e.finding.message} if e.finding else None)
        reports.append({"kind": e.kind, "bytes": e.report.bytes, "objects": e.report.objects, "site": site,
                        "finding": finding, "explanation": e.full_explanation()})
    return {"reports": reports}


def format_sanitizer_json(result: SanitizerResult, **_: object) -> str:
    return json.dumps(as_json_data(result), indent=2, ensure_ascii=False) + "\n"


def _unexplained_descriptor() -> dict:
    text = ("A runtime sanitizer report (leak, double free, use after free) that no ortlint finding explains; "
            "the message says why (escape, slot no code releases, infeasible path, incomplete analysis, "
            "code outside the tree).")
    return {"id": UNEXPLAINED, "name": "unexplained-sanitizer-report", "shortDescription": {"text": text},
            "fullDescription": {"text": text}, "defaultConfiguration": {"level": "warning"},
            "helpUri": f"{INFO_URI}/blob/main/docs/cli.md#ortlint-sanitizer"}


def _sarif_result(e: Explained, rule_index: dict[str, int], root: str) -> dict:
    figures = f"{e.report.headline()}" + (f", reported {e.count} times" if e.count > 1 else "")
    rule = e.finding.rule if e.finding else UNEXPLAINED
    result: dict = {
        "ruleId": rule,
        "ruleIndex": rule_index[rule],
        "level": e.finding.effective_level if e.finding else "warning",
        "message": {"text": f"Sanitizer: {figures}. "
                            f"{'Explained by ' + e.finding.rule if e.finding else 'Not explained by a finding'}: "
                            f"{e.full_explanation()}"},
        "properties": {"kind": e.kind, "bytes": e.report.bytes, "objects": e.report.objects, "count": e.count},
    }
    if e.finding is not None:
        f = e.finding
        result["locations"] = [_location(f.path, f.line, f.col, root, f.end_line, f.end_col)]
        if f.trace:
            result["codeFlows"] = [{"threadFlows": [{"locations": [
                {"location": _location(s.path, s.line, s.col, root, message=s.message), "nestingLevel": 0,
                 "executionOrder": i} for i, s in enumerate(f.trace)]}]}]
    elif e.site is not None:
        result["locations"] = [_location(e.site.path, e.site.line, 1, root)]
    if e.allocation:
        result["relatedLocations"] = [
            dict(_location(s.path, s.line, 1, root, message=f"allocation stack: {s.function or '??'}()"), id=i)
            for i, s in enumerate(e.allocation)]
    return result


def format_sanitizer_sarif(result: SanitizerResult, root: str | None = None, **_: object) -> str:
    """One SARIF result per runtime report, with the rule of the finding that explains it."""
    root = os.path.abspath(root or os.getcwd())
    rule_ids = sorted(RULES)
    rule_index = {rid: i for i, rid in enumerate(rule_ids + [UNEXPLAINED])}
    notifications = [{"level": "warning", "message": {"text": f"log line {line}: {problem}"}}
                     for line, problem in result.log.problems]
    run = {
        "tool": {"driver": {"name": "ortlint", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFO_URI,
                            "rules": [_rule_descriptor(rid) for rid in rule_ids] + [_unexplained_descriptor()]}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(root).as_uri() + "/"}},
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "results": [_sarif_result(e, rule_index, root) for e in result.explained],
        "columnKind": "unicodeCodePoints",
    }
    return fastjson.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2, ensure_ascii=False) + "\n"


FORMATTERS = {"text": format_sanitizer_text, "json": format_sanitizer_json, "sarif": format_sanitizer_sarif}
