"""The edit that silences a finding with a suppression comment (an editor's code action), in any
language ortlint reads: each has `//` line comments."""
from __future__ import annotations

import re

from ..findings import Edit, Finding

_EXISTING = re.compile(r"ortlint:\s*ignore\[(?P<ids>[^\]\n]*)\]")


def suppression_edit(finding: Finding, text: str) -> Edit | None:
    """Add `// ortlint: ignore[RULE]` at the end of the finding's line, or RULE to a suppression
    comment already there. A line that ends in a macro continuation (`\\`) or inside a block
    comment gets the comment on a line of its own above it. None when the line does not exist."""
    lines = text.splitlines(keepends=True)
    if not 1 <= finding.line <= len(lines):
        return None
    line = lines[finding.line - 1]
    body = line.rstrip("\r\n")
    existing = _EXISTING.search(body)
    if existing:
        ids = [t.strip() for t in existing.group("ids").split(",") if t.strip()]
        if finding.rule in ids:
            return None
        new = ", ".join(ids + [finding.rule])
        return Edit(finding.line, existing.start("ids") + 1, finding.line, existing.end("ids") + 1, new)
    comment = f"// ortlint: ignore[{finding.rule}]"
    if body.rstrip().endswith("\\") or _in_block_comment(body):
        indent = body[:len(body) - len(body.lstrip())]
        newline = line[len(body):] or "\n"
        return Edit(finding.line, 1, finding.line, 1, f"{indent}{comment}{newline}")
    end = len(body.rstrip())
    return Edit(finding.line, end + 1, finding.line, len(body) + 1, f"  {comment}")


def _in_block_comment(line: str) -> bool:
    return line.rfind("/*") > line.rfind("*/")


def removal_edit(finding: Finding, text: str) -> Edit | None:
    """For an ORT100 finding (suppress.py): take its rule out of the comment, or the whole
    comment when it names nothing else."""
    lines = text.splitlines(keepends=True)
    if not 1 <= finding.line <= len(lines):
        return None
    body = lines[finding.line - 1].rstrip("\r\n")
    rule = finding.anchor.rpartition(":")[2]
    existing = _EXISTING.search(body)
    if existing and rule != "*":
        ids = [t.strip() for t in existing.group("ids").split(",") if t.strip()]
        kept = [t for t in ids if t.upper() != rule and _canonical(t) != rule]
        if kept and len(kept) < len(ids):
            return Edit(finding.line, existing.start("ids") + 1, finding.line, existing.end("ids") + 1, ", ".join(kept))
    start = body.rfind("//", 0, finding.col)
    if start < 0:
        return None
    before = body[:start].rstrip()
    if not before:  # a comment line of its own: the line goes
        return Edit(finding.line, 1, finding.line + 1, 1, "")
    return Edit(finding.line, len(before) + 1, finding.line, len(body) + 1, "")


def _canonical(token: str) -> str:
    from ..findings import resolve_rule
    found = resolve_rule(token)
    return found.id if found is not None else token
