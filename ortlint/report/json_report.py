"""JSON for scripts and dashboards: a documented schema that only grows.

Schema version 1 (`"schema": 1`); new keys may be added, existing keys keep their meaning, and a
change that breaks readers bumps `schema`. Paths are as reported (relative to the current
directory when given that way); lines and columns are 1-based.

    {
      "schema": 1,
      "tool": {"name": "ortlint", "version": "0.2.0"},
      "summary": {"files": 12, "findings": 2, "suppressed": 0, "baselined": 0, "outside_scope": 0,
                  "by_rule": {"ORT001": 1, "ORT004": 1}},
      "findings": [{
        "rule": "ORT001", "name": "leak", "level": "error",
        "path": "src/a.c", "line": 13, "column": 19, "end_line": 13, "end_column": 51,
        "function": "open_session", "message": "...", "fingerprint": "9f0c...",
        "trace":   [{"path": "src/a.c", "line": 13, "column": 19, "message": "..."}],
        "related": [{"path": "src/a.c", "line": 20, "column": 5, "message": "When returning at line 20"}]
      }],
      "notices": [{"path": "src/b.c", "line": 0, "level": "warning", "message": "binary file ..."}],
      "unknown_callees": {"my_queue_push": 3}
    }

A macro's own defect, reported once at its `#define` (engine/macro_defects.py), has
`"macro_expansions": N` and its expansions as `related`.

`outside_scope` counts the findings `--scope` left out (ortlint/scope.py); with `--scope all`
they are listed with `"tags": ["general"]`.

`fingerprint` has no line numbers: it identifies a finding across edits (baselines use it).
`notices` are messages about the run (unreadable files, code that could not be parsed); `line`
is 0 when a notice is about a whole file. Timings are left out so output is reproducible.
"""
from __future__ import annotations

from collections import Counter

from .. import __version__
from ..findings import Finding, Report, Step
from . import fastjson

SCHEMA_VERSION = 1


def _step(s: Step) -> dict:
    return {"path": s.path, "line": s.line, "column": s.col, "message": s.message}


def _finding(f: Finding) -> dict:
    out = {
        "rule": f.rule, "name": f.rule_name, "level": f.effective_level,
        "path": f.path, "line": f.line, "column": f.col, "end_line": f.end_line, "end_column": f.end_col,
        "function": f.function, "message": f.message, "fingerprint": f.fingerprint(),
        "trace": [_step(s) for s in f.trace], "related": [_step(s) for s in f.related],
    }
    if f.expansions:  # a macro's own defect, once at its definition; `related` lists the expansions
        out["macro_expansions"] = f.expansions
    if f.tags:
        out["tags"] = list(f.tags)
    return out


def format_json(report: Report, **_: object) -> str:
    """The report as one JSON document (schema above), keys in a fixed order."""
    by_rule = Counter(f.rule for f in report.findings)
    doc = {
        "schema": SCHEMA_VERSION,
        "tool": {"name": "ortlint", "version": __version__},
        "summary": {
            "files": len(report.files),
            "findings": len(report.findings),
            "suppressed": int(report.stats.get("suppressed", 0)),
            "baselined": int(report.stats.get("baselined", 0)),
            "outside_scope": int(report.stats.get("outside_scope", 0)),
            "by_rule": dict(sorted(by_rule.items())),
        },
        "findings": [_finding(f) for f in report.findings],
        "notices": [{"path": n.path, "line": n.line, "level": n.level, "message": n.message} for n in report.notices],
        "unknown_callees": dict(sorted(report.unknown_callees.items())),
    }
    return fastjson.dumps(doc, indent=2, ensure_ascii=False) + "\n"  # = json.dumps(...), 2x faster
