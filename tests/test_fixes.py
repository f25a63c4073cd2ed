"""Fixes (issue 33): every fix of the fix fixtures is applied, compiled and linted again.

A fix must remove its finding, add none, and leave a file that compiles (`gcc`/`g++
-fsyntax-only` with fixtures/include and the JDK's jni.h). Each kind the issue names is covered:
a dropped status released or returned, a release inserted before an early return, a goto
pointed at the rung that releases, a JNI Release<Type>ArrayElements before a return (C and C++;
elements stored through a cast are released cast back, as onnxruntime-genai's Tensor.cpp needs)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ortlint.findings import Edit, Finding
from ortlint.fixes.apply import fixed_text
from ortlint.fixes.source import EditConflict, apply_edits
from ortlint.fixes.suppression import suppression_edit
from tests.fixcheck import ROOT, compare_relint, check_fix, compile_errors, identity, jni_includes, lint_with_fixes

FIXTURES = ["fixtures/c/fix_dropped_status.c", "fixtures/c/fix_missing_release.c",
            "fixtures/jni/fix_array_elements.c", "fixtures/cpp/fix_jni_cxx_and_status.cpp"]
CLEAN = ["fixtures/c/fix_dropped_status_clean.c", "fixtures/jni/fix_array_elements_clean.c",
         "fixtures/c/fix_not_offered_clean.c"]
NOT_OFFERED = "fixtures/c/fix_not_offered.c"
INCLUDES = [str(ROOT / "fixtures/include"), *jni_includes()]


def _copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / "orig" / Path(name).name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / name, target)
    return target


@pytest.mark.parametrize("name", FIXTURES + CLEAN + [NOT_OFFERED])
def test_fixture_compiles_as_written(name: str) -> None:
    errors = compile_errors(ROOT / name, INCLUDES)
    if errors is None:
        pytest.skip("no C compiler")
    assert errors == "", errors


@pytest.mark.parametrize("name", FIXTURES)
def test_every_fix_applies_compiles_and_removes_its_finding(name: str, tmp_path: Path) -> None:
    original = _copy(tmp_path, name)
    before = lint_with_fixes(original)
    assert before.findings
    for i, finding in enumerate(before.findings):
        assert finding.fixes, f"no fix for {finding.rule} at line {finding.line}"
        for j, fix in enumerate(finding.fixes):
            outcome = check_fix(original, finding, fix, before, tmp_path / f"fix{i}_{j}", INCLUDES)
            where = f"{fix.title} (line {finding.line})"
            assert outcome.applied, where
            assert outcome.compiles is not False, f"{where}: {outcome.errors}"
            assert outcome.gone, where
            assert not outcome.new, f"{where}: {[(f.rule, f.line, f.message) for f in outcome.new]}"


def test_every_fix_kind_is_offered() -> None:
    titles = []
    for name in FIXTURES:
        for finding in lint_with_fixes(ROOT / name).findings:
            titles.extend((finding.path.rsplit("/", 1)[-1], fix.title, fix.safe) for fix in finding.fixes)
    text = "\n".join(f"{n}: {t} {s}" for n, t, s in titles)
    assert "Release the status of DisableMemPattern() with ReleaseStatus() True" in text
    assert "Return the status of SetIntraOpNumThreads() to the caller False" in text
    assert "Jump to `fail_session`, which releases `session` True" in text
    assert "Release `session` with ReleaseSession() before each of 2 returns True" in text
    assert "fix_array_elements.c: Release `p` with ReleaseLongArrayElements() before returning True" in text
    assert "fix_array_elements.c: Release `f` with ReleaseFloatArrayElements() before returning True" in text
    assert "fix_jni_cxx_and_status.cpp: Release `values` with ReleaseIntArrayElements() before returning True" in text
    assert "fix_jni_cxx_and_status.cpp: Release `dims` with ReleaseLongArrayElements() before returning True" in text
    assert "fix_jni_cxx_and_status.cpp: Release `buf` with free() before returning True" in text


def test_no_fix_that_trades_one_finding_for_another(tmp_path: Path) -> None:
    """Found by tools/fix_campaign.py on public code: a NULL-guarded release after an if/else
    whose other branch stores a borrowed allocator in the same variable (the fix was marked
    safe and made ORT005), and a status returned early past the release of what the function
    holds (a new ORT001). Neither is offered; the release of the status still is, and holds."""
    original = _copy(tmp_path, NOT_OFFERED)
    before = lint_with_fixes(original)
    offered = {(f.rule, f.line): [fix.title for fix in f.fixes] for f in before.findings}
    assert offered == {("ORT001", 14): [],
                       ("ORT004", 31): ["Release the status of GetDimensionsCount() with ReleaseStatus()"]}
    finding = next(f for f in before.findings if f.fixes)
    outcome = check_fix(original, finding, finding.fixes[0], before, tmp_path / "fix", INCLUDES)
    assert outcome.clean, outcome


def test_fixes_of_one_file_apply_together(tmp_path: Path) -> None:
    """`--fix` applies every safe fix of a file at once: the result compiles and lints clean."""
    for name in FIXTURES:
        original = _copy(tmp_path, name)
        report = lint_with_fixes(original)
        text = original.read_text()
        new, applied = fixed_text(text, [next(f for f in finding.fixes if f.safe) for finding in report.findings])
        assert len(applied) == len(report.findings), name
        original.write_text(new)
        assert compile_errors(original, INCLUDES) in ("", None), name
        assert lint_with_fixes(original).findings == [], name


def test_apply_edits_refuses_overlaps() -> None:
    text = "abc\ndef\n"
    assert apply_edits(text, [Edit(1, 2, 1, 3, "X"), Edit(2, 1, 2, 1, "Y")]) == "aXc\nYdef\n"
    with pytest.raises(EditConflict):
        apply_edits(text, [Edit(1, 1, 1, 3, "X"), Edit(1, 2, 1, 4, "Y")])


def _finding(line: int, rule: str = "ORT001") -> Finding:
    return Finding(rule, "a.c", line, 1, line, 2, "m", "f")


def test_suppression_edit_adds_a_comment_or_a_rule() -> None:
    text = "int x;\n  p = make();\n  q = make(); // ortlint: ignore[ORT004]\n#define M(x) \\\n"
    assert apply_edits(text, [suppression_edit(_finding(2), text)]).splitlines()[1] == \
        "  p = make();  // ortlint: ignore[ORT001]"
    assert apply_edits(text, [suppression_edit(_finding(3), text)]).splitlines()[2] == \
        "  q = make(); // ortlint: ignore[ORT004, ORT001]"
    assert suppression_edit(_finding(3, "ORT004"), text) is None
    lines = apply_edits(text, [suppression_edit(_finding(4), text)]).splitlines()
    assert lines[3] == "// ortlint: ignore[ORT001]" and lines[4] == "#define M(x) \\"


def test_relint_counts_alike_findings_one_by_one() -> None:
    """gtest's `TEST` names every test function alike, and a lambda's name carries its line:
    fixing one of several alike leaks removes one finding, and the others are neither new nor
    a sign that the fix failed."""
    def leak(line: int, function: str = "TEST") -> Finding:
        return Finding("ORT001", "a.cc", line, 1, line, 2, "m", function, anchor="leak:Create:options:*0")
    before = [leak(10), leak(20), leak(30, "TEST::<lambda@30>")]
    moved = [leak(21), leak(31, "TEST::<lambda@31>")]  # the fix inserted a line above them
    assert compare_relint(before, before[0], moved) == (True, [])
    assert compare_relint(before, before[0], before) == (False, [])  # nothing removed
    added = moved + [leak(40, "other")]
    assert compare_relint(before, before[0], added) == (True, [added[-1]])
    assert identity(leak(30, "f::<lambda@30>")) == identity(leak(31, "f::<lambda@31>"))
