"""SARIF 2.1.0 for GitHub code scanning and other viewers.

Paths inside the working directory are written relative to `%SRCROOT%` (declared in
`originalUriBaseIds`), which is what code scanning expects; paths outside it become file:// URIs.
URIs are percent-encoded from the bytes of the file name; message text is JSON with escapes
(fastjson), so no file name or source text can make the log invalid.

`partialFingerprints` carry no line numbers (see `Finding.fingerprint`), so code scanning keeps
an alert's identity when lines are inserted above it; findings that share a fingerprint get an
occurrence number in file order. The output holds no timestamps or timings, so the same tree
gives byte-identical SARIF on every run. A finding with fixes (ortlint.fixes) carries them as
`fixes`, the preferred first, each with `properties.safe` (what `ortlint --fix` applies).
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from ..docs import rule_description, rule_help
from ..findings import LIMIT, RULES, Finding, Fix, Notice, Report
from . import fastjson

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/ortlint/ortlint"


def _artifact(path: str, root: str) -> dict:
    """A URI for `path`, percent-encoded from the file name's bytes (RFC 3986): every reserved
    character, and every byte of a name that is not UTF-8, comes back as it was."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, root)
    if not rel.startswith(".."):
        return {"uri": quote(os.fsencode(rel.replace(os.sep, "/"))), "uriBaseId": "%SRCROOT%"}
    return {"uri": Path(absolute).as_uri()}


def _location(path: str, line: int, col: int, root: str, end_line: int | None = None, end_col: int | None = None,
              message: str | None = None) -> dict:
    region = {"startLine": max(line, 1), "startColumn": max(col, 1)}
    if end_line:
        region["endLine"] = max(end_line, region["startLine"])
        if end_col and (end_line > line or end_col > col):
            region["endColumn"] = end_col
    loc: dict = {"physicalLocation": {"artifactLocation": _artifact(path, root), "region": region}}
    if message:
        loc["message"] = {"text": message}
    return loc


def _rule_descriptor(rule_id: str) -> dict:
    rule = RULES[rule_id]
    text, markdown = rule_help(rule_id)
    severity = {"error": "error", "warning": "warning", "note": "recommendation"}[rule.level]
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule_description(rule_id) or rule.summary},
        "help": {"text": text or rule.summary, "markdown": markdown or rule.summary},
        "helpUri": f"{INFO_URI}/blob/main/docs/rules/{rule.id}.md",
        "defaultConfiguration": {"level": rule.level},
        "properties": {"tags": list(rule.tags), "precision": rule.precision, "problem.severity": severity},
    }


def _fingerprints(findings: list[Finding], root: str) -> list[str]:
    """One line-number-free fingerprint per finding; repeats are numbered in order (`hash:2`)."""
    seen: dict[str, int] = {}
    out = []
    for f in findings:
        rel = _artifact(f.path, root)["uri"]
        base = replace(f, path=rel).fingerprint()
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}:{seen[base]}")
    return out


def _result(f: Finding, rule_index: dict[str, int], root: str, fingerprint: str) -> dict:
    result: dict = {
        "ruleId": f.rule,
        "ruleIndex": rule_index[f.rule],
        "level": f.effective_level,
        "message": {"text": f.message},
        "locations": [_location(f.path, f.line, f.col, root, f.end_line, f.end_col)],
        "partialFingerprints": {"ortlintFingerprint/v1": fingerprint},
        "properties": {"function": f.function},
    }
    if f.expansions:  # a macro's own defect, reported once at its definition (engine/macro_defects.py)
        result["properties"]["macroExpansions"] = f.expansions
    if f.tags:  # "test": in test code (code scanning shows and filters result tags)
        result["properties"]["tags"] = list(f.tags)
    if f.trace:
        result["codeFlows"] = [{"threadFlows": [{"locations": [
            {"location": _location(s.path, s.line, s.col, root, message=s.message), "nestingLevel": 0,
             "executionOrder": i} for i, s in enumerate(f.trace)]}]}]
    if f.fixes:  # ortlint.fixes: the preferred first; `safe` ones are what `ortlint --fix` applies
        result["fixes"] = [_fix(fix, f.path, root) for fix in f.fixes]
    if f.related:
        result["relatedLocations"] = [
            dict(_location(s.path, s.line, s.col, root, message=s.message), id=i) for i, s in enumerate(f.related)]
    return result


def _fix(fix: Fix, path: str, root: str) -> dict:
    """A SARIF fix: its edits as replacements in the finding's file (columns in code points, as
    `columnKind` says; an insertion deletes an empty region)."""
    replacements = [{"deletedRegion": {"startLine": e.line, "startColumn": e.col, "endLine": e.end_line,
                                       "endColumn": e.end_col},
                     "insertedContent": {"text": e.text}} for e in fix.edits]
    return {"description": {"text": fix.title},
            "artifactChanges": [{"artifactLocation": _artifact(path, root), "replacements": replacements}],
            "properties": {"safe": fix.safe}}


LIMIT_REACHED = "limit-reached"  # the descriptor of notifications about a limit reached (findings.LIMIT)
NOTIFICATIONS = [{
    "id": LIMIT_REACHED,
    "name": "LimitReached",
    "shortDescription": {"text": "A limit stopped the parse of a file or the analysis of a function."},
    "fullDescription": {"text": "The parse of this file or the analysis of this function was stopped at one of "
                                "ortlint's limits (parse steps, the engine's work budget, the CPU time limit); "
                                "findings for it may be incomplete. The limits other than the CPU time limit "
                                "count work, so the same code stops at the same point on every run."},
    "defaultConfiguration": {"level": "warning"},
}]


def _notification(n: Notice, root: str) -> dict:
    level = n.level if n.level in ("error", "warning", "note") else "warning"
    out: dict = {"level": level, "message": {"text": n.message}}
    if n.path:
        out["locations"] = [_location(n.path, max(n.line, 1), 1, root)]
    if n.message.startswith(LIMIT):
        out["descriptor"] = {"id": LIMIT_REACHED, "index": 0}
    return out


def format_sarif(report: Report, root: str | None = None, **_: object) -> str:
    """The whole report as one SARIF log; `root` (default: the current directory) is %SRCROOT%."""
    root = os.path.abspath(root or os.getcwd())
    rule_ids = sorted(RULES)
    rule_index = {rid: i for i, rid in enumerate(rule_ids)}
    failed = any(n.message.startswith("internal error") for n in report.notices)
    fingerprints = _fingerprints(report.findings, root)
    run = {
        "tool": {"driver": {
            "name": "ortlint",
            "version": __version__,
            "semanticVersion": __version__,
            "informationUri": INFO_URI,
            "rules": [_rule_descriptor(rid) for rid in rule_ids],
            "notifications": NOTIFICATIONS,
        }},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(root).as_uri() + "/"}},
        "invocations": [{
            "executionSuccessful": not failed,
            "toolExecutionNotifications": [_notification(n, root) for n in report.notices],
        }],
        "results": [_result(f, rule_index, root, fp) for f, fp in zip(report.findings, fingerprints)],
        "columnKind": "unicodeCodePoints",
    }
    doc = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return fastjson.dumps(doc, indent=2, ensure_ascii=False) + "\n"  # = json.dumps(...), 2x faster
