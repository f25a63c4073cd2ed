"""Fixes: a finding and its file's text -> edits that remove it (plain data on the finding).

    source.py       the file as bytes and syntax tree, offsets <-> edit positions, applying edits
    syntax.py       questions asked of a C/C++ syntax tree (the function, its labels, gotos, releases)
    status.py       ORT004: a dropped OrtStatus* released where it is dropped, or returned
    release.py      ORT001: a release missing on an early return, a goto past the cleanup, a JNI
                    Release<Type>ArrayElements missing before a return
    suppression.py  the suppression comment for a finding (an editor's code action)
    apply.py        `ortlint --fix`: the chosen fixes written to the files

The engine exposes what it knows (`Finding.facts`: the variable, the releasing call, where its
arguments go, how each exit leaves); this package reads the file's syntax to place the edits.
Reporters only format `Finding.fixes`. A fix is tested by applying it, compiling the result and
linting it again (tests/test_fixes.py).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ..findings import Finding, Fix, Report
from ..policy import Policy
from .release import leak_fixes
from .source import C_SUFFIXES, FixSource
from .status import status_fixes

C_FAMILY = C_SUFFIXES + (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx")


def fixes_for(finding: Finding, src: FixSource) -> tuple[Fix, ...]:
    """Every fix of one finding, the preferred first; () when it has none."""
    facts = finding.facts
    if facts is None or not finding.path.endswith(C_FAMILY):
        return ()
    try:
        if facts.kind == "dropped-status":
            return tuple(status_fixes(src, finding))
        if facts.kind == "leak":
            return tuple(leak_fixes(src, finding))
    except (RecursionError, ValueError, IndexError):  # a fix is a convenience: never a failed run
        return ()
    return ()


def attach_fixes(report: Report, policy: Policy, read: Callable[[str], bytes | None]) -> int:
    """Give each finding of `report` its fixes (files read once each through `read`). Returns
    how many findings have one."""
    sources: dict[str, FixSource | None] = {}
    out = []
    count = 0
    for finding in report.findings:
        if finding.facts is None:
            out.append(finding)
            continue
        if finding.path not in sources:
            data = read(finding.path)
            sources[finding.path] = FixSource(finding.path, data, policy) if data is not None else None
        src = sources[finding.path]
        fixes = fixes_for(finding, src) if src is not None else ()
        count += bool(fixes)
        out.append(replace(finding, fixes=fixes) if fixes else finding)
    report.findings = out
    return count
