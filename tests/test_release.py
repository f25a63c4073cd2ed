"""The release (issue 33, docs/release.md): one version, and every place that names the tag
agrees with it; the README's pre-commit snippet works as written against a repository holding
the tag the procedure creates; action.yml runs ortlint and writes SARIF."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ortlint import __version__
from tests.clihelpers import CLEAN_C, LEAK_C, ROOT, write
from tests.test_precommit import GIT_ENV, git, make_hook_repo

TAG = f"v{__version__}"


def test_version_is_written_in_one_place() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'attr = "ortlint.__version__"' in pyproject
    assert not re.search(r'^version\s*=\s*"', pyproject, re.M)  # no literal version
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


@pytest.mark.parametrize("name", ["README.md", "docs/cli.md", ".pre-commit-hooks.yaml", "docs/release.md"])
def test_every_pinned_tag_is_the_release_tag(name: str) -> None:
    text = (ROOT / name).read_text()
    revs = re.findall(r"rev: (v[\w.]+)", text)
    assert revs and set(revs) == {TAG}, (name, revs)


def test_readme_action_and_changelog_name_this_version() -> None:
    readme = (ROOT / "README.md").read_text()
    assert set(re.findall(r"uses: ortlint/ortlint@(\S+)", readme)) == {TAG}
    assert f"ortlint/ortlint@{TAG}" in (ROOT / "action.yml").read_text()
    assert f"\n## {__version__}\n" in (ROOT / "CHANGELOG.md").read_text()


def _readme_snippet() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## pre-commit", 1)[1]
    return re.search(r"```yaml\n(.*?)```", section, re.S).group(1)


def test_readme_pre_commit_snippet_as_written(tmp_path: Path) -> None:
    """The snippet, only `repo:` pointed at a local repository that holds the tag the release
    procedure creates: pre-commit installs that tag and the hook finds the leak."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pre_commit = Path(sys.executable).with_name("pre-commit")
    if not pre_commit.exists():
        pytest.skip("pre-commit is not installed next to this Python")
    hook_repo = make_hook_repo(tmp_path / "ortlint-repo")
    git(hook_repo, "tag", "-a", TAG, "-m", f"ortlint {__version__}")
    snippet = _readme_snippet()
    assert f"rev: {TAG}" in snippet
    config = snippet.replace("https://github.com/ortlint/ortlint", hook_repo.as_uri())
    project = tmp_path / "project"
    write(project, ".pre-commit-config.yaml", config)
    write(project, "src/clean.c", CLEAN_C)
    write(project, "src/leak.c", LEAK_C)
    git(project, "init", "-q")
    git(project, "add", "-A")
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    env.pop("PRE_COMMIT", None)
    proc = subprocess.run([str(pre_commit), "run", "--all-files"], cwd=project, capture_output=True, text=True,
                          env=env, timeout=540)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "src/leak.c:3:13: ORT001 leak:" in out
    # without the tag, the snippet cannot be installed: the test is about the tag
    git(hook_repo, "tag", "-d", TAG)
    proc = subprocess.run([str(pre_commit), "run", "--all-files"], cwd=project, capture_output=True, text=True,
                          env={**env, "PRE_COMMIT_HOME": str(tmp_path / "home2")}, timeout=540)
    assert proc.returncode not in (0, 1) or "ORT001" not in proc.stdout + proc.stderr


def test_action_runs_ortlint_and_writes_sarif(tmp_path: Path) -> None:
    """The action's run step, as the runner executes it (inputs as environment variables)."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = {s.get("name", s.get("uses")): s for s in action["runs"]["steps"]}
    assert steps["Install ortlint"]["run"].strip() == 'python -m pip install --quiet "$GITHUB_ACTION_PATH"'
    assert steps["Upload SARIF"]["uses"].startswith("github/codeql-action/upload-sarif@")
    script = steps["Run ortlint"]["run"]
    write(tmp_path, "src/leak.c", LEAK_C)
    output = tmp_path / "github_output"
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(output),
           "ORTLINT_PATHS": "src", "ORTLINT_ARGS": "--select ORT001 --no-cache", "ORTLINT_SARIF": "out.sarif"}
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert output.read_text() == "exit-code=1\n"
    assert '"ruleId": "ORT001"' in (tmp_path / "out.sarif").read_text()
    env["ORTLINT_PATHS"] = "missing.c"
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2 and "::error title=ortlint::" in proc.stdout
