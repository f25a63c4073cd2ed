"""Runs every fixture under fixtures/ and compares findings with its `// expect:` comments.

Single files are analyzed alone; every folder under fixtures/multi/ is analyzed as one tree, so
helpers defined in one file are known in the others, with the policy files (`*.toml`) at its top
added as `--rules` would. Findings of every scope are expected (`--scope all`), except in a file
that says `// ortlint-fixture: default-scope` (the command line's default, ortlint/scope.py).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ortlint.api import lint
from tests.expectations import as_expected, expected_findings

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SUFFIXES = {".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".java", ".go", ".cs"}


def single_fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.suffix in SUFFIXES and "multi" not in p.relative_to(FIXTURES).parts)


def multi_fixtures() -> list[Path]:
    root = FIXTURES / "multi"
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def found(paths: list[Path], rule_files: list[Path] = ()) -> set[tuple[str, int, str]]:
    report = lint([str(p) for p in paths], [str(p) for p in rule_files])
    got = [(Path(f.path).name, f.line, f.rule) for f in as_expected(report.findings)]
    twice = sorted({k for k in got if got.count(k) > 1})
    assert not twice, f"reported more than once (one finding per cause): {twice}"
    return set(got)


def check(paths: list[Path], files: list[Path], rule_files: list[Path] = ()) -> None:
    expected: set = set()
    for f in files:
        expected |= expected_findings(f)
    got = found(paths, rule_files)
    missing = sorted(expected - got)
    extra = sorted(got - expected)
    assert not missing and not extra, f"missing: {missing}\nunexpected: {extra}"


@pytest.mark.parametrize("path", single_fixtures(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture(path: Path) -> None:
    check([path], [path])


@pytest.mark.parametrize("folder", multi_fixtures(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_multi_file_fixture(folder: Path) -> None:
    files = sorted(p for p in folder.rglob("*") if p.suffix in SUFFIXES)
    check([folder], files, sorted(folder.glob("*.toml")))


def test_every_rule_has_a_fixture() -> None:
    seen = set()
    for path in single_fixtures() + [p for d in multi_fixtures() for p in d.rglob("*") if p.suffix in SUFFIXES]:
        seen |= {rule for _name, _line, rule in expected_findings(path)}
    assert {"ORT001", "ORT002", "ORT003", "ORT004", "ORT005", "ORT006", "ORT007"} <= seen
