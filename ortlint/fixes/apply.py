"""`ortlint --fix`: write the chosen fixes to the files.

Per finding the first fix that may be applied (only safe ones, unless unsafe fixes are allowed);
fixes of one file whose edits overlap an earlier one are left for the next run, as ruff does.
Files are rewritten whole, from the text the findings were computed on, only when it has not
changed since."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from ..findings import Edit, Finding, Fix
from .source import EditConflict, apply_edits


@dataclass
class FixResult:
    applied: dict[str, int] = field(default_factory=dict)  # path -> fixes applied
    skipped: int = 0  # fixes left out (overlap, unsafe, file changed)
    fixed: set[tuple] = field(default_factory=set)  # findings (sort keys) whose fix was applied


def chosen_fix(finding: Finding, unsafe: bool) -> Fix | None:
    return next((f for f in finding.fixes if f.safe or unsafe), None)


def plan(findings: list[Finding], unsafe: bool) -> dict[str, list[tuple[Finding, Fix]]]:
    """path -> the fixes to apply there, in finding order."""
    out: dict[str, list[tuple[Finding, Fix]]] = {}
    for finding in findings:
        fix = chosen_fix(finding, unsafe)
        if fix is not None:
            out.setdefault(finding.path, []).append((finding, fix))
    return out


def fixed_text(text: str, fixes: list[Fix]) -> tuple[str, list[Fix]]:
    """`text` with as many of `fixes` as apply without overlapping; returns the applied ones."""
    taken: list[Edit] = []
    applied = []
    for fix in fixes:
        if any(_overlaps(e, t) for e in fix.edits for t in taken):
            continue
        try:
            apply_edits(text, taken + list(fix.edits))
        except EditConflict:
            continue
        taken.extend(fix.edits)
        applied.append(fix)
    return apply_edits(text, taken), applied


def _overlaps(a: Edit, b: Edit) -> bool:
    start_a, end_a = (a.line, a.col), (a.end_line, a.end_col)
    start_b, end_b = (b.line, b.col), (b.end_line, b.end_col)
    if start_a == end_a and start_b == end_b:
        return start_a == start_b
    return start_a < end_b and start_b < end_a


def apply_fixes(findings: list[Finding], unsafe: bool, read: Callable[[str], bytes | None]) -> FixResult:
    """Write the fixes; `read` gives the bytes the findings were computed on."""
    result = FixResult()
    for path, items in plan(findings, unsafe).items():
        data = read(path)
        if data is None:
            result.skipped += len(items)
            continue
        text = data.decode("utf-8", "surrogateescape")
        new, applied = fixed_text(text, [fix for _f, fix in items])
        result.skipped += len(items) - len(applied)
        if not applied:
            continue
        _write(path, new.encode("utf-8", "surrogateescape"))
        result.applied[path] = len(applied)
        result.fixed.update(f.sort_key() for f, fix in items if any(fix is a for a in applied))
    return result


def _write(path: str, data: bytes) -> None:
    """Replace the file's contents in place (its mode and links kept), through a temporary file."""
    tmp = f"{path}.ortlint-fix.{os.getpid()}"
    mode = os.stat(path).st_mode
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, mode & 0o7777)
    os.replace(tmp, path)
