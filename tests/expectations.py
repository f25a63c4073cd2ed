"""Inline expectations in fixture sources: `// expect: ORT001` or `// expect: ORT001, ORT006` on the
line where the finding must be reported. Everything not expected is a failure, and so is
everything expected but not found (the semgrep / clang -verify convention)."""
from __future__ import annotations

import re
from pathlib import Path

SCOPE_DIRECTIVE = "ortlint-fixture: default-scope"


def as_expected(findings: list) -> list:
    """The findings a fixture's expectations are about: every scope (`--scope all`), except in a
    file that says `// ortlint-fixture: default-scope`, which expects the command line's default
    (ortlint/scope.py)."""
    from ortlint.scope import in_scope
    scoped = {f.path for f in findings if SCOPE_DIRECTIVE in Path(f.path).read_text(encoding="utf-8", errors="replace")}
    return [f for f in findings if f.path not in scoped] + in_scope([f for f in findings if f.path in scoped], "onnxruntime")


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
