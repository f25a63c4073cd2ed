"""Inline suppressions: `// ortlint: ignore[ORT001]` or `// ortlint: ignore` (every rule).

A suppression comment applies to findings reported on its own line or on the line below it, so
both styles work:

    free(p);  // ortlint: ignore[ORT003]

    // ortlint: ignore[leak] -- handed to the event loop, which frees it
    char *buf = malloc(n);

Rule ids and names are accepted, several separated by commas. A selector that names no rule
is reported as a warning: a typo would otherwise silently suppress nothing (or everything).
Suppression is a post-processing step over a finished `Report`; it never changes the analysis.

A suppression that silences nothing (the bug was fixed, the rule id is wrong for that line) is
recorded as an ORT100 `unused-suppression` finding in `Report.unused_suppressions`; the CLI
reports them with `--unused-suppressions` (opt-in, like ruff's RUF100), so that stale comments do
not hide the next real defect on that line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .fileio import read_prefix
from .findings import RULES, Finding, Notice, Report
from .frontends.common.source import MAX_BYTES

# The marker must sit in a comment (`//`, `/*` or a `*` continuation line), not in a string.
# It is matched where `ortlint:` occurs, anchored, so that a long line costs linear time.
_MARKER = re.compile(rb"ortlint:\s*ignore(?![\w-])\s*(?P<bracket>\[(?P<ids>[^\]\n]*)\]?)?")
_CONTINUATION = re.compile(rb"\s*\*")


def _find_marker(line: bytes) -> "re.Match[bytes] | None":
    """The first `ortlint: ignore` that follows a comment opener on this line."""
    opener = min((i for i in (line.find(b"//"), line.find(b"/*")) if i >= 0), default=-1)
    if opener < 0 and _CONTINUATION.match(line):
        opener = 0
    if opener < 0:
        return None
    start = line.find(b"ortlint:", opener)
    while start >= 0:
        word_start = start == 0 or not (line[start - 1:start].isalnum() or line[start - 1:start] == b"_")
        match = _MARKER.match(line, start) if word_start else None
        if match is not None:
            return match
        start = line.find(b"ortlint:", start + 1)
    return None
ALL = "*"
UNUSED_RULE = "ORT100"


@dataclass
class FileSuppressions:
    """Suppressions of one file: line -> rule ids (or ALL), and problems found while reading."""

    by_line: dict[int, set[str]] = field(default_factory=dict)
    problems: list[Notice] = field(default_factory=list)
    columns: dict[int, int] = field(default_factory=dict)  # line -> column of its `ortlint:` marker (from 1)
    used: set[tuple[int, str]] = field(default_factory=set)  # (line, rule or ALL) that silenced a finding

    def covers(self, finding: Finding) -> bool:
        for line in (finding.line, finding.line - 1):
            rules = self.by_line.get(line)
            if rules and (ALL in rules or finding.rule in rules):
                self.used.add((line, finding.rule if finding.rule in rules else ALL))
                return True
        return False

    def unused(self, path: str) -> list[Finding]:
        """ORT100 findings: each rule of a suppression comment that silenced nothing."""
        out = []
        for line, rules in sorted(self.by_line.items()):
            col = self.columns.get(line, 1)
            for rule in sorted(rules):
                if (line, rule) in self.used:
                    continue
                what = "every rule" if rule == ALL else rule
                message = (f"this suppression comment silences no finding of {what} on its line or the next; "
                           f"remove {'the comment' if rule == ALL or len(rules) == 1 else rule + ' from it'}")
                out.append(Finding(UNUSED_RULE, path, line, col, line, col, message, "",
                                   anchor=f"unused-suppression:{rule}"))
        return out


def _rule_id(token: str) -> str | None:
    upper = token.upper()
    if upper in RULES:
        return upper
    for rule in RULES.values():
        if rule.name == token.lower():
            return rule.id
    return None


def scan(path: str, data: bytes) -> FileSuppressions:
    """Find every suppression comment in a file's bytes."""
    out = FileSuppressions()
    if b"ortlint:" not in data:
        return out
    for number, line in enumerate(data.splitlines(), 1):
        if b"ortlint:" not in line:
            continue
        match = _find_marker(line)
        if match is None:
            continue
        out.columns[number] = len(line[:match.start()].decode("utf-8", "replace")) + 1
        if match.group("bracket") is None:
            out.by_line.setdefault(number, set()).add(ALL)
            continue
        ids = match.group("ids").decode("utf-8", "replace")
        if not match.group("bracket").endswith(b"]"):
            out.problems.append(Notice(path, number, "suppression comment has no closing `]`; it suppresses nothing"))
            continue
        tokens = [t.strip() for t in ids.split(",") if t.strip()]
        if not tokens:
            out.problems.append(Notice(path, number, "suppression comment `ortlint: ignore[]` names no rule; it suppresses nothing"))
        for token in tokens:
            rule = _rule_id(token)
            if rule is None:
                known = ", ".join(sorted(RULES))
                out.problems.append(Notice(path, number, f"unknown rule {token!r} in suppression comment (known: {known})"))
            else:
                out.by_line.setdefault(number, set()).add(rule)
    return out


def _read(path: str) -> bytes:
    try:
        return read_prefix(path, MAX_BYTES + 1)  # a regular file, bounded: as the front ends read it
    except OSError:
        return b""  # the runner already reported the file as unreadable


def apply_suppressions(report: Report, reader=_read) -> int:
    """Drop suppressed findings from `report`, add notices for bad suppression comments.

    Returns how many findings were suppressed, for the summary line. Every analyzed file is
    scanned (not only files with findings) so that a mistyped rule id is always reported.
    """
    per_file: dict[str, FileSuppressions] = {}
    for path in report.files:
        per_file[path] = scan(path, reader(path))
        report.notices.extend(per_file[path].problems)
    kept: list[Finding] = []
    suppressed = 0
    for finding in report.findings:
        sup = per_file.get(finding.path)
        if sup is None:
            sup = per_file[finding.path] = scan(finding.path, reader(finding.path))
        if sup.covers(finding):
            suppressed += 1
        else:
            kept.append(finding)
    report.findings = kept
    report.unused_suppressions = [u for path in sorted(per_file) for u in per_file[path].unused(path)]
    report.sort()
    return suppressed
