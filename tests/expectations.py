"""Inline expectations in fixture sources: `// expect: ORT001` or `// expect: ORT001, ORT006` on the
line where the finding must be reported. Everything not expected is a failure, and so is
everything expected but not found (the semgrep / clang -verify convention)."""
from __future__ import annotations

import re
from pathlib import Path

EXPECT = re.compile(r"(?://|/\*)\s*expect(?:\[(?P<frontend>[a-z-]+)\])?:\s*(?P<rules>ORT\d{3}(?:\s*,\s*ORT\d{3})*)")


def expected_findings(path: Path, frontend: str = "tree-sitter") -> set[tuple[str, int, str]]:
    out = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        for m in EXPECT.finditer(line):
            fe = m.group("frontend")
            if fe is not None and fe != frontend:
                continue
            for rule in re.split(r"\s*,\s*", m.group("rules")):
                out.add((path.name, lineno, rule))
    return out
