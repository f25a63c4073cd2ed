"""The per-file cache: warm runs reuse results, edits invalidate exactly what they touch, a run
on a few files (pre-commit) still knows the helpers of the rest of the tree."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from ortlint.api import default_policy
from ortlint.orchestration.settings import RunConfig
from ortlint.orchestration.runner import run

TREE = Path(__file__).resolve().parent.parent / "fixtures" / "multi" / "jni_binding"


def go(paths, cache: Path):
    return run(RunConfig([str(p) for p in paths], default_policy(), cache_dir=str(cache)))


def findings(report):
    return [(Path(f.path).name, f.line, f.rule, f.message) for f in report.findings]


def test_warm_run_reuses_everything_and_reports_the_same(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    cold = go([tree], tmp_path / "cache")
    warm = go([tree], tmp_path / "cache")
    assert findings(cold) == findings(warm)
    assert cold.stats["parsed_files"] == 3 and warm.stats["parsed_files"] == 0
    assert warm.stats["analyzed_functions"] == 0 and warm.stats["cache_hits"] == 3


def test_editing_a_helper_reanalyzes_its_callers(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    before = go([tree], tmp_path / "cache")
    leaked = [f for f in before.findings if "createTensorFromArray" in f.message]
    assert leaked  # probe() leaks the tensor the helper returns
    util = tree / "jni_util.c"
    util.write_text(util.read_text().replace("  return tensor;\n}", "  api->ReleaseValue(tensor);\n  return NULL;\n}"))
    again = go([tree], tmp_path / "cache")
    assert again.stats["parsed_files"] == 2  # jni_util.c changed, session.c calls the helper
    assert not any("createTensorFromArray" in f.message for f in again.findings)


def test_editing_a_helper_the_policy_describes_does_not_touch_callers(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    go([tree], tmp_path / "cache")
    util = tree / "jni_util.c"
    util.write_text(util.read_text().replace("  api->ReleaseStatus(status);\n  return code;",
                                             "  /* forgot the release */\n  return code;"))
    again = go([tree], tmp_path / "cache")
    assert again.stats["parsed_files"] == 1  # checkOrtStatus() is in the policy: its callers do not depend on it


def test_pre_commit_run_on_one_file_uses_cached_helpers(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    full = go([tree], tmp_path / "cache")
    one = go([tree / "session.c"], tmp_path / "cache")
    expected = [f for f in findings(full) if f[0] == "session.c"]
    assert findings(one) == expected
    without_cache = run(RunConfig([str(tree / "session.c")], default_policy()))
    assert len(without_cache.findings) < len(expected)  # helpers unknown: calls take ownership


def test_corrupt_cache_entries_are_misses(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    cache = tmp_path / "cache"
    cold = go([tree], cache)
    for p in cache.rglob("*.pickle"):
        p.write_bytes(b"not a pickle")
    again = go([tree], cache)
    assert findings(again) == findings(cold) and again.stats["parsed_files"] == 3


def test_cache_folder_is_tagged_and_ignored_by_git(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    go([tree], tmp_path / "cache")
    assert (tmp_path / "cache" / "CACHEDIR.TAG").exists()
    assert (tmp_path / "cache" / ".gitignore").read_text() == "*\n"


def test_policy_change_starts_a_new_namespace(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    go([tree], tmp_path / "cache")
    extra = tmp_path / "extra.toml"
    extra.write_text('[[call]]\nname = "my_noop"\n', encoding="utf-8")
    from ortlint.policy import load_policy
    other = run(RunConfig([str(tree)], load_policy([extra]), cache_dir=str(tmp_path / "cache")))
    assert other.stats["parsed_files"] == 3
    assert len([d for d in os.listdir(tmp_path / "cache") if d.startswith("v")]) == 2


def test_the_same_tree_spelled_another_way_gets_the_same_findings(tmp_path: Path, monkeypatch) -> None:
    """Regression: records keyed by absolute path were loaded for a run spelling the paths
    differently (`tree` vs `/abs/tree`); their function keys did not match and the run reported
    nothing, then stored that empty report as the whole-run result."""
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    monkeypatch.chdir(tmp_path)
    plain = go(["tree"], tmp_path / "cache")
    other = go([str(tree)], tmp_path / "cache")
    again = go([str(tree)], tmp_path / "cache")
    assert plain.findings and len(other.findings) == len(plain.findings) == len(again.findings)
    assert {(Path(f.path).name, f.line, f.rule) for f in other.findings} == \
        {(Path(f.path).name, f.line, f.rule) for f in plain.findings}
