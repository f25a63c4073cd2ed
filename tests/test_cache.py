"""The per-file cache: warm runs reuse results, edits invalidate exactly what they touch, a run
on a few files (pre-commit) still knows the helpers of the rest of the tree."""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
from pathlib import Path

from ortlint.api import default_policy
from ortlint.orchestration.cache import FORMAT, decode_entry, default_cache_dir, encode_entry
from ortlint.orchestration.runner import run
from ortlint.orchestration.settings import RunConfig

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


def rejected(report) -> list[str]:
    return [n.message for n in report.notices if n.message.startswith("cache entry rejected")]


def test_corrupt_cache_entries_are_misses_with_a_warning(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    cache = tmp_path / "cache"
    cold = go([tree], cache)
    entries = [p for p in cache.rglob("*.json") if p.parent.parent.name.startswith("v")]
    assert len(entries) == 3
    for p in entries:
        p.write_bytes(b"not a cache entry")
    (cache / next(d for d in os.listdir(cache) if d.startswith("v")) / "last-run.json").unlink()
    again = go([tree], cache)
    assert findings(again) == findings(cold) and again.stats["parsed_files"] == 3
    assert rejected(again) == ["cache entry rejected: not an ortlint cache file of format 1 (and 2 more); not used, "
                               "the files were analyzed again"]
    assert [n.level for n in again.notices if n.message.startswith("cache entry")] == ["warning"]
    third = go([tree], cache)  # rewritten: valid again
    assert third.stats["parsed_files"] == 0 and not rejected(third)


class _Payload:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):  # noqa: ANN204
        return (os.system, (f"touch '{self.marker}'",))


def test_a_planted_pickle_is_never_loaded(tmp_path: Path) -> None:
    """Every cache file replaced by a pickle that would run a command: nothing runs, every
    entry is rejected, the results are those of a run without a cache."""
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    cache = tmp_path / "cache"
    cold = go([tree], cache)
    marker = tmp_path / "ran"
    for p in cache.rglob("*.json"):
        p.write_bytes(pickle.dumps(_Payload(marker)))
    again = go([tree], cache)
    assert not marker.exists()
    assert findings(again) == findings(cold) and again.stats["parsed_files"] == 3
    assert rejected(again)


def test_an_entry_whose_content_does_not_match_its_hash_is_rejected(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    cache = tmp_path / "cache"
    cold = go([tree], cache)
    forged = 0
    for p in cache.rglob("*.json"):
        if p.name not in ("index.json", "last-run.json") and b"ORT001" in p.read_bytes():
            p.write_bytes(p.read_bytes().replace(b"ORT001", b"ORT002"))  # a forged result
            forged += 1
    for p in cache.rglob("last-run.json"):
        p.write_bytes(p.read_bytes().replace(b"ORT001", b"ORT002"))
    again = go([tree], cache)
    assert forged and findings(again) == findings(cold) and again.stats["parsed_files"] == forged
    assert rejected(again) and "does not match its hash" in rejected(again)[0]


def test_valid_json_of_an_unknown_shape_is_rejected(tmp_path: Path) -> None:
    """A correct header and hash over data the codec does not know (a class it was not given,
    a field of the wrong type): rejected, never constructed."""
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    cache = tmp_path / "cache"
    cold = go([tree], cache)
    bodies = [b'{"Popen":[["sh","-c","touch x"]]}', b'{"FileRecord":[1,2,3,4]}',
              b'{"FileRecord":[1,"h",3,[],[],{"d":[]},[],null]}', b'[' * 100000 + b']' * 100000]
    entries = sorted(p for p in cache.rglob("*.json") if p.name not in ("index.json", "last-run.json"))
    for p, body in zip(entries, bodies):
        p.write_bytes(json.dumps({"ortlint-cache": FORMAT, "blake2b": hashlib.blake2b(body, digest_size=16)
                                  .hexdigest()}).encode() + b"\n" + body)
    for p in cache.rglob("last-run.json"):
        p.unlink()
    again = go([tree], cache)
    assert findings(again) == findings(cold) and again.stats["parsed_files"] == 3
    assert rejected(again)


def test_a_fifo_in_the_cache_is_refused_not_waited_on(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    cache = tmp_path / "cache"
    cold = go([tree], cache)
    for p in list(cache.rglob("*.json")):
        p.unlink()
        os.mkfifo(p)
    again = go([tree], cache)
    assert findings(again) == findings(cold)
    assert "not a regular file (a FIFO)" in rejected(again)[0]


def test_the_default_cache_is_outside_the_tree_one_folder_per_project(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    one, two = default_cache_dir(tmp_path / "a" / "proj"), default_cache_dir(tmp_path / "b" / "proj")
    assert one != two and one.startswith(str(tmp_path / "user-cache" / "ortlint" / "proj-"))
    assert default_cache_dir(tmp_path / "a" / "proj") == one


def test_the_codec_round_trips_what_the_cache_holds(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(TREE, tree)
    go([tree], tmp_path / "cache")
    for p in (tmp_path / "cache").rglob("*.json"):
        value = decode_entry(p.read_bytes())
        assert decode_entry(encode_entry(value)) == value


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


def test_cache_folder_names_the_code_that_wrote_it(tmp_path: Path, monkeypatch) -> None:
    """An editable install keeps its version across commits: entries written by other code of
    the same version live in another folder and are never replayed."""
    from ortlint.orchestration import cache as cache_module
    first = cache_module.Cache(tmp_path, "ns").dir
    assert cache_module.code_digest() in first.name
    monkeypatch.setattr(cache_module, "code_digest", lambda: "othercode000")
    assert cache_module.Cache(tmp_path, "ns").dir != first


def test_editing_a_file_to_mention_another_member_keeps_the_cached_results(tmp_path: Path) -> None:
    """Each C++ file states the member names it mentions (frontends/cpp/null_members.py) so that
    a member declared empty elsewhere is known to stay empty; a mention only makes a member
    unknown, so it is not part of the constants every cached result depends on: an edit that
    mentions one more member re-analyzes the edited file's functions, not the whole tree."""
    (tmp_path / "a.cpp").write_text("struct A { int n_; void f(); };\nvoid A::f() { n_ = 1; }\n")
    (tmp_path / "b.cpp").write_text("struct B { int m_; int k_; int g(); };\nint B::g() { return m_; }\n")
    cache = tmp_path / "cache"
    first = run(RunConfig([str(tmp_path / "a.cpp"), str(tmp_path / "b.cpp")], default_policy(), cache_dir=str(cache)))
    assert first.stats["cache_misses"] > 0
    (tmp_path / "b.cpp").write_text("struct B { int m_; int k_; int g(); };\nint B::g() { return m_ + k_; }\n")
    second = run(RunConfig([str(tmp_path / "a.cpp"), str(tmp_path / "b.cpp")], default_policy(), cache_dir=str(cache)))
    assert second.stats["reused_functions"] >= 1  # A::f, whose file did not change
