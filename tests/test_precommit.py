"""The pre-commit hook, run by the real `pre-commit try-repo` against a throw-away repository.

pre-commit installs a hook repository from git, so the test copies the files that make up the
package (as they are in the work tree, committed or not) into a temporary git repository and
points `try-repo` at it. That checks `.pre-commit-hooks.yaml` and a regular, non-editable
install (the policy and rule pages must be inside the installed package) the way users get it,
both in a developer's work tree and in CI's clean clone. It needs git and the package index
(pre-commit creates a virtual environment and pip-installs ortlint into it): about 10 s.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clihelpers import CLEAN_C, LEAK_C, ROOT, write

PACKAGE_FILES = ["pyproject.toml", "setup.py", "MANIFEST.in", ".pre-commit-hooks.yaml", "README.md", "LICENSE"]
PACKAGE_DIRS = ["ortlint", "rules", "docs"]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def make_hook_repo(dest: Path) -> Path:
    dest.mkdir()
    for name in PACKAGE_FILES:
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.so", "*.pyd")
    for name in PACKAGE_DIRS:
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "hook repository")
    return dest


def test_pre_commit_hook_fails_on_the_leak_and_points_at_its_line(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pre_commit = Path(sys.executable).with_name("pre-commit")
    if not pre_commit.exists():
        pytest.skip("pre-commit is not installed next to this Python")
    hook_repo = make_hook_repo(tmp_path / "ortlint-repo")
    project = tmp_path / "project"
    project.mkdir()
    write(project, "src/clean.c", CLEAN_C)
    write(project, "src/leak.c", LEAK_C)
    write(project, "README.txt", "not checked\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "NO_COLOR": "1"}
    env.pop("PRE_COMMIT", None)
    proc = subprocess.run([str(pre_commit), "try-repo", str(hook_repo), "ortlint", "--all-files", "--verbose"],
                          cwd=project, capture_output=True, text=True, env=env, timeout=540)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "ortlint" in out and "Failed" in out
    assert "src/leak.c:3:13: ORT001 leak:" in out
    assert not [line for line in out.splitlines() if line.startswith("src/clean.c:")]
    assert "Found 1 problem in 2 files." in out  # README.txt was not passed: types_or filters it
