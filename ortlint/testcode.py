"""Which files are test code: findings there are tagged `test` (and dropped with `--exclude-tests`).

Test code is analyzed like any code: a leak in a test is a real leak, and test helpers still give
summaries to the code that calls them. But a first report on a whole repository mixes a few
hundred findings in tests with the ones in the product; the tag lets a user see, count and filter
them. A path is test code when one of its folders or its file name matches a pattern: a pattern
ending in `/` matches a folder name, any other pattern the file name (shell globs, case-sensitive,
`*` within one name).
"""
from __future__ import annotations

import fnmatch
import functools
import os
import re
from dataclasses import replace

from .findings import Finding

DEFAULT_TEST_PATTERNS = (
    # folders
    "test/", "tests/", "testing/", "unittest/", "unittests/", "__tests__/", "androidTest/", "testFixtures/",
    "Test/", "Tests/", "*_test/", "*_tests/", "*.Tests/", "*.Test/",
    # files: C, C++, Go, Java, C# conventions
    "*_test.*", "*_tests.*", "*_unittest.*", "*-test.*", "test_*.*", "*Test.java", "*Tests.java", "*TestCase.java",
    "*Test.cs", "*Tests.cs",
)

TEST_TAG = "test"


def tag_test_findings(findings: list[Finding], roots: list[str], patterns: tuple[str, ...]) -> list[Finding]:
    """`findings` with those in test code tagged. A path is judged below the current folder when it
    is there (users run from their checkout's top), else below the analyzed path that holds it: a
    `tests/` folder above the checkout says nothing about the code."""
    cwd = os.getcwd()
    tops = sorted({os.path.abspath(r) for r in roots} | {cwd}, key=len, reverse=True)
    out = []
    for f in findings:
        full = os.path.abspath(f.path)
        top = next((t for t in ([cwd] if _under(full, cwd) else tops) if _under(full, t)), None)
        rel = os.path.relpath(full, top) if top is not None and full != top else os.path.basename(full)
        out.append(replace(f, tags=f.tags + (TEST_TAG,)) if TEST_TAG not in f.tags and is_test_path(rel, patterns) else f)
    return out


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


@functools.lru_cache(maxsize=16)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    folders = [fnmatch.translate(p[:-1]) for p in patterns if p.endswith("/")]
    files = [fnmatch.translate(p) for p in patterns if not p.endswith("/")]
    return (re.compile("|".join(folders)) if folders else None, re.compile("|".join(files)) if files else None)


def is_test_path(path: str, patterns: tuple[str, ...] = DEFAULT_TEST_PATTERNS) -> bool:
    """Is `path` (as reported) test code by `patterns`?"""
    folders, files = _compiled(patterns)
    *dirs, name = path.replace("\\", "/").split("/")
    if files is not None and files.match(name):
        return True
    return folders is not None and any(folders.match(d) for d in dirs if d not in ("", ".", ".."))
