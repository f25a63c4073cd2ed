"""Test code (testcode.py): analyzed like any code, its findings tagged `test` in every format and
dropped with `--exclude-tests` / `exclude-tests = true`; the patterns are configurable."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ortlint.testcode import DEFAULT_TEST_PATTERNS, is_test_path
from tests.clihelpers import LEAK_C, ortlint


@pytest.mark.parametrize("path", [
    "test/a.c", "onnxruntime/test/providers/cpu/x.cc", "src/tests/x.c", "x_test.cc", "src/session_test.go",
    "java/src/test/java/ai/onnxruntime/OrtSessionTest.java", "csharp/test/InferenceTest.cs", "foo_unittest.cc",
    "test_io.c", "app/src/androidTest/java/X.java", "Tests/Leaks.cs", "core_tests/a.cpp", "My.Lib.Tests/a.cs",
])
def test_test_code_by_default(path: str) -> None:
    assert is_test_path(path)


@pytest.mark.parametrize("path", [
    "src/a.c", "attest/a.c", "contest.c", "src/testing_utils_impl/latest.cc", "src/Testament.java", "protest/x.go",
    "test.c", "src/testdata_reader.cc",
])
def test_product_code_by_default(path: str) -> None:
    assert not is_test_path(path)


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir(parents=True)
    (tmp_path / "tests").mkdir()
    (tmp_path / "src" / "leak.c").write_text(LEAK_C)
    (tmp_path / "tests" / "leak_check.c").write_text(LEAK_C)
    return tmp_path


def test_findings_in_test_code_are_tagged_in_every_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_tree(tmp_path))
    doc = json.loads(ortlint("--no-cache", "--format", "json", ".").stdout)
    assert sorted((f["path"], f.get("tags", [])) for f in doc["findings"]) == [
        ("src/leak.c", []), ("tests/leak_check.c", ["test"])]
    sarif = json.loads(ortlint("--no-cache", "--format", "sarif", ".").stdout)
    tags = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["properties"].get("tags")
            for r in sarif["runs"][0]["results"]}
    assert tags == {"src/leak.c": None, "tests/leak_check.c": ["test"]}
    text = ortlint("--no-cache", ".").stdout
    assert "tests/leak_check.c:3:13: ORT001 leak [test]:" in text and "src/leak.c:3:13: ORT001 leak:" in text
    assert "Found 2 problems in 2 files (1 in test code)." in text
    assert "title=ORT001 leak [test]" in ortlint("--no-cache", "--format", "github", ".").stdout


def test_exclude_tests_drops_them_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_tree(tmp_path))
    out = ortlint("--no-cache", "--exclude-tests", ".")
    assert out.code == 1 and "tests/leak_check.c" not in out.stdout
    assert "Found 1 problem in 2 files (1 in test code excluded)." in out.stdout
    Path("pyproject.toml").write_text("[tool.ortlint]\nexclude-tests = true\n")
    assert "tests/leak_check.c" not in ortlint("--no-cache", ".").stdout


def test_patterns_are_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_tree(tmp_path))
    Path("pyproject.toml").write_text('[tool.ortlint]\ntest-patterns = ["src/"]\n')
    doc = json.loads(ortlint("--no-cache", "--format", "json", ".").stdout)
    assert sorted((f["path"], f.get("tags", [])) for f in doc["findings"]) == [
        ("src/leak.c", ["test"]), ("tests/leak_check.c", [])]
    Path("pyproject.toml").write_text('[tool.ortlint]\nextend-test-patterns = ["src/"]\n')
    doc = json.loads(ortlint("--no-cache", "--format", "json", ".").stdout)
    assert all(f.get("tags") == ["test"] for f in doc["findings"])
    Path("pyproject.toml").write_text('[tool.ortlint]\ntest-patterns = [""]\n')
    out = ortlint("--no-cache", ".")
    assert out.code == 2 and "test-patterns" in out.stderr


def test_a_tests_folder_above_the_checkout_does_not_make_it_test_code(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _tree(tmp_path / "tests" / "checkout")
    monkeypatch.chdir(repo)
    doc = json.loads(ortlint("--no-cache", "--format", "json", str(repo)).stdout)
    assert sorted((Path(f["path"]).name, f.get("tags", [])) for f in doc["findings"]) == [
        ("leak.c", []), ("leak_check.c", ["test"])]


def test_defaults_are_documented() -> None:
    docs = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    assert all(f"`{p}`" in docs for p in DEFAULT_TEST_PATTERNS)
