"""`--diff REV` in a temporary git repository: only findings on lines changed since REV are
reported, the analysis still sees whole files (summaries of unchanged callees), and the result
agrees with a full run restricted to the changed lines."""
from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ortlint.gitdiff import EVERY_LINE, parse_unified_diff
from tests.clihelpers import ortlint, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

HELPERS = """#include <stdlib.h>
char *make_buffer(int n) {
  return malloc(n);
}
"""
OLD = """#include <stdlib.h>
char *make_buffer(int n);

void old_leak(int n) {
  char *p = malloc(n);
  if (n > 3)
    return;
  free(p);
}

void tidy(int n) {
  char *q = make_buffer(n);
  if (q == NULL)
    return;
  free(q);
}
"""
# The change: a new leaking function through the unchanged helper, and a deleted release.
NEW = OLD.replace("""  if (q == NULL)
    return;
  free(q);
}
""", """  if (q == NULL)
    return;
}

void new_leak(int n) {
  char *r = make_buffer(n);
  if (n > 5)
    return;
  free(r);
}
""")


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=env, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path, "src/helpers.c", HELPERS)
    write(tmp_path, "src/code.c", OLD)
    write(tmp_path, "src/moved.c", OLD.replace("old_leak", "moved_leak").replace("tidy", "tidy2"))
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def findings(*args: str, env: dict[str, str] | None = None) -> list[tuple[str, int, str, str]]:
    r = ortlint("--isolated", "--format", "json", *args, env=env)
    assert r.code in (0, 1), r.stderr
    return [(f["path"], f["line"], f["rule"], f["function"]) for f in json.loads(r.stdout)["findings"]]


def test_new_leak_reported_old_one_not(repo: Path) -> None:
    write(repo, "src/code.c", NEW)
    full = findings("src")
    assert ("src/code.c", 5, "ORT001", "old_leak") in full
    assert findings("--diff", "HEAD", "src") == [("src/code.c", 12, "ORT001", "tidy"),
                                                 ("src/code.c", 18, "ORT001", "new_leak")]


def test_committed_change_against_an_older_revision(repo: Path) -> None:
    write(repo, "src/code.c", NEW)
    git(repo, "commit", "-q", "-am", "change")
    assert findings("--diff", "HEAD") == []
    assert [f[3] for f in findings("--diff", "HEAD~1")] == ["tidy", "new_leak"]


def test_renamed_and_untracked_files(repo: Path) -> None:
    git(repo, "mv", "src/moved.c", "src/renamed.c")
    assert findings("--diff", "HEAD", "src") == [], "a pure rename changes no line"
    text = (repo / "src/renamed.c").read_text().replace("  free(p);\n}", "  free(p);\n}\n\nvoid extra(void) {\n"
                                                      "  char *s = malloc(2);\n}\n")
    write(repo, "src/renamed.c", text)
    write(repo, "src/brand_new.c", "#include <stdlib.h>\nvoid fresh(void) {\n  char *t = malloc(1);\n}\n")
    assert findings("--diff", "HEAD", "src") == [("src/brand_new.c", 3, "ORT001", "fresh"),
                                                 ("src/renamed.c", 12, "ORT001", "extra")]


def _changed_by_difflib(old: str, new: str) -> set[int]:
    """New-side changed lines, computed without git (deletions mark both neighbours)."""
    lines: set[int] = set()
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            lines.update(range(j1 + 1, j2 + 1))
        elif tag == "delete":
            lines.update((j1, j1 + 1))
    return lines


def test_diff_agrees_with_a_full_run_on_every_changed_line(repo: Path) -> None:
    write(repo, "src/code.c", NEW)
    changed = _changed_by_difflib(OLD, NEW)
    r = ortlint("--isolated", "--format", "json", "src")
    full = json.loads(r.stdout)["findings"]
    on_changed = [f for f in full if f["path"] == "src/code.c" and any(
        line in changed for line in [f["line"], *(s["line"] for s in f["trace"] + f["related"])])]
    r = ortlint("--isolated", "--format", "json", "--diff", "HEAD", "src")
    diffed = json.loads(r.stdout)["findings"]
    assert diffed == on_changed and diffed and len(full) > len(diffed)


def test_works_with_the_cache(repo: Path) -> None:
    write(repo, "src/code.c", NEW)
    env = {"ORTLINT_NO_CACHE": "0"}
    cache = str(repo / "cache")
    first = findings("--cache-dir", cache, "--diff", "HEAD", "src", env=env)
    assert (repo / "cache").is_dir()
    assert findings("--cache-dir", cache, "--diff", "HEAD", "src", env=env) == first
    assert findings("--cache-dir", cache, "src", env=env) == findings("--no-cache", "src")


def test_bad_revision_and_not_a_repository(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    r = ortlint("--isolated", "--diff", "no-such-rev", "src")
    assert r.code == 2 and "--diff" in r.stderr and "Traceback" not in r.stderr
    r = ortlint("--isolated", "--diff", "--oops", "src")
    assert r.code == 2
    elsewhere = tmp_path_factory.mktemp("not-a-repo")
    os.chdir(elsewhere)
    write(elsewhere, "a.c", "int f(void) { return 0; }\n")
    r = ortlint("--isolated", "--diff", "HEAD", "a.c")
    assert r.code == 2 and "git" in r.stderr


def test_parse_unified_diff_hunks(tmp_path: Path) -> None:
    patch = "\n".join([
        "diff --git a/a.c b/a.c", "--- a/a.c", "+++ b/a.c",
        "@@ -3 +3 @@", "-x", "+y",
        "@@ -10,0 +11,2 @@", "+n1", "+n2",
        "@@ -20,3 +21,0 @@", "-d1", "-d2", "-d3",
        "diff --git a/old.c b/new.c", "similarity index 90%", "rename from old.c", "rename to new.c",
        "--- a/old.c", "+++ b/new.c", "@@ -1 +1 @@", "-a", "+b",
        "diff --git a/gone.c b/gone.c", "--- a/gone.c", "+++ /dev/null", "@@ -1,2 +0,0 @@", "-x", "-y",
        'diff --git "a/sp ace\\tx.c" "b/sp ace\\tx.c"', '--- "a/sp ace\\tx.c"', '+++ "b/sp ace\\tx.c"', "@@ -0,0 +1 @@", "+z",
    ])
    changed = parse_unified_diff(patch, str(tmp_path))
    real = lambda name: os.path.realpath(tmp_path / name)  # noqa: E731
    assert changed == {real("a.c"): {3, 11, 12, 21, 22}, real("new.c"): {1}, real("sp ace\tx.c"): {1}}
    assert EVERY_LINE is None
