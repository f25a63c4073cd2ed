"""Checking a fix the way the issue asks: apply it, compile the result, lint it again.

Used by tests/test_fixes.py on the fixtures and by tools/fix_campaign.py on public code."""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ortlint.api import default_policy
from ortlint.findings import Finding, Fix, Report
from ortlint.fixes import attach_fixes
from ortlint.fixes.source import apply_edits
from ortlint.orchestration.runner import run
from ortlint.orchestration.settings import RunConfig

ROOT = Path(__file__).resolve().parent.parent
_LINE_IN_NAME = re.compile(r"@\d+")


def jni_includes() -> list[str]:
    """The JDK's jni.h folders, when a JDK is installed."""
    for header in sorted(glob.glob("/usr/lib/jvm/*/include/jni.h")):
        folder = os.path.dirname(header)
        return [folder, os.path.join(folder, "linux")]
    return []


def lint_with_fixes(path: Path) -> Report:
    report = run(RunConfig([str(path)], default_policy(), isolate=False, suppressions=True))
    attach_fixes(report, default_policy(), lambda p: Path(p).read_bytes())
    return report


def identity(f: Finding) -> tuple[str, str, str]:
    """What a finding is about, whatever line it moved to (a lambda's name says its line:
    `TEST::<lambda@4117>`, which an inserted line above it moves)."""
    return (f.rule, _LINE_IN_NAME.sub("@", f.function), f.anchor or f.message)


def compile_errors(path: Path, includes: list[str]) -> str | None:
    """Compiler diagnostics of `path` (gcc or g++ -fsyntax-only), '' when it compiles, None when
    no compiler is installed."""
    compiler = "gcc" if path.suffix in (".c", ".h") else "g++"
    if shutil.which(compiler) is None:
        return None
    args = [compiler, "-fsyntax-only", *(f"-I{i}" for i in includes), str(path)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    return "" if proc.returncode == 0 else proc.stdout + proc.stderr


def compare_relint(before: list[Finding], fixed: Finding, after: list[Finding]) -> tuple[bool, list[Finding]]:
    """Whether `fixed` is gone, and the findings the fix added. Counted as multisets of
    identities: a function may hold several findings alike (a macro such as gtest's `TEST`
    names every test function alike), and a fix must remove one of them, not all."""
    expected = Counter(identity(f) for f in before)
    target = identity(fixed)
    expected[target] -= 1
    seen: Counter[tuple[str, str, str]] = Counter()
    new = []
    for f in after:
        seen[identity(f)] += 1
        if seen[identity(f)] > expected[identity(f)]:
            new.append(f)
    gone = seen[target] <= expected[target]
    return gone, [f for f in new if identity(f) != target]


@dataclass
class Outcome:
    applied: bool
    compiles: bool | None  # None: not compiled (no compiler)
    gone: bool
    new: list[Finding]
    errors: str = ""

    @property
    def clean(self) -> bool:
        return self.applied and self.compiles is not False and self.gone and not self.new


def check_fix(original: Path, finding: Finding, fix: Fix, before: Report, workdir: Path,
              includes: list[str] | None) -> Outcome:
    """Apply `fix` to a copy of `original` in `workdir` (same name), compile (unless `includes`
    is None: the original does not compile either), lint again."""
    text = original.read_bytes().decode("utf-8", "surrogateescape")
    target = workdir / original.name
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        fixed = apply_edits(text, fix.edits)
    except ValueError:
        return Outcome(False, None, False, [])
    target.write_bytes(fixed.encode("utf-8", "surrogateescape"))
    errors = compile_errors(target, includes) if includes is not None else None
    after = run(RunConfig([str(target)], default_policy(), isolate=False, suppressions=True))
    gone, new = compare_relint([f for f in before.findings if f.path == finding.path], finding, after.findings)
    return Outcome(True, None if errors is None else errors == "", gone, new, errors or "")
