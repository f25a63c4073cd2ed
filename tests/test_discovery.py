"""Discovery as users expect it (issue 30): ignore files, excludes, each file once by real path,
include resolution as a compiler does it, configuration per file, `--show-settings`, and the
same findings for a file analyzed alone as in a run over its tree."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ortlint.discover import discover, repository_root
from ortlint.frontends.common.header_index import HeaderIndex
from tests.clihelpers import CLEAN_C, FIXTURES, LEAK_C, ortlint, write

ORT_HEADER = (FIXTURES / "include" / "onnxruntime_c_api.h").read_text(encoding="utf-8")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in its own folder (no git checkout above it: the folder is the project root)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ORTLINT_NO_CACHE", "1")


def finding_paths(*args: str) -> list[tuple[str, int]]:
    r = ortlint("--format", "json", *args)
    assert r.code in (0, 1), r.stderr
    return sorted((f["path"], f["line"]) for f in json.loads(r.stdout)["findings"])


def walked(*paths: str, **options) -> list[str]:
    return [s.path for s in discover(list(paths) or ["."], **options).files]


# ----------------------------------------------------------------------------- ignore files


def test_gitignore_nested_and_negated(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "gen/\n*.gen.c\n!keep.gen.c\n/top_only.c\n")
    write(tmp_path, "src/a.c", CLEAN_C)
    write(tmp_path, "src/gen/b.c", CLEAN_C)  # a folder pattern
    write(tmp_path, "src/c.gen.c", CLEAN_C)  # a glob
    write(tmp_path, "src/keep.gen.c", CLEAN_C)  # re-included by the negation
    write(tmp_path, "top_only.c", CLEAN_C)  # anchored: only at the top
    write(tmp_path, "src/top_only.c", CLEAN_C)
    write(tmp_path, "src/.gitignore", "local.c\n!c.gen.c\n")  # deeper file: ignores more, re-includes
    write(tmp_path, "src/local.c", CLEAN_C)
    write(tmp_path, "other/local.c", CLEAN_C)  # the nested file applies below its own folder only
    assert walked() == ["other/local.c", "src/a.c", "src/c.gen.c", "src/keep.gen.c", "src/top_only.c"]


def test_ignore_file_and_git_info_exclude(tmp_path: Path) -> None:
    write(tmp_path, ".git/info/exclude", "scratch.c\nkept.c\n")
    write(tmp_path, ".gitignore", "!kept.c\nlocal_only/\n")  # .gitignore comes after info/exclude
    write(tmp_path, ".ignore", "!local_only/\n")  # .ignore wins over .gitignore (ripgrep, ruff)
    write(tmp_path, "scratch.c", CLEAN_C)
    write(tmp_path, "kept.c", CLEAN_C)
    write(tmp_path, "local_only/x.c", CLEAN_C)
    write(tmp_path, "main.c", CLEAN_C)
    assert walked() == ["kept.c", "local_only/x.c", "main.c"]


def test_ignore_files_above_the_analyzed_folder_apply(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "generated/\n")
    write(tmp_path, "src/generated/g.c", LEAK_C)
    write(tmp_path, "src/main.c", LEAK_C)
    assert finding_paths("src") == [("src/main.c", 3)]


def test_no_ignore_and_config_key_turn_it_off(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "gen/\n")
    write(tmp_path, "gen/g.c", LEAK_C)
    write(tmp_path, "main.c", LEAK_C)
    assert finding_paths(".") == [("main.c", 3)]
    assert finding_paths("--no-ignore", ".") == [("gen/g.c", 3), ("main.c", 3)]
    write(tmp_path, ".ortlint.toml", "respect-gitignore = false\n")
    assert finding_paths(".") == [("gen/g.c", 3), ("main.c", 3)]


def test_a_file_named_explicitly_is_analyzed_even_if_ignored_unless_force_exclude(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "gen/\n")
    write(tmp_path, "gen/g.c", LEAK_C)
    assert finding_paths("gen/g.c") == [("gen/g.c", 3)]
    r = ortlint("--force-exclude", "gen/g.c")
    assert r.code == 0 and r.stderr == "", r.stderr


def test_unreadable_ignore_file_is_a_warning_not_a_stall(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".gitignore")
    write(tmp_path, "main.c", LEAK_C)
    r = ortlint("--format", "json", ".")
    doc = json.loads(r.stdout)
    assert r.code == 1 and [f["path"] for f in doc["findings"]] == ["main.c"]
    assert any("ignore file not read" in n["message"] for n in doc["notices"])


# ----------------------------------------------------------------------------- excludes


@pytest.mark.parametrize("folder", ["build", "build-android", "_build", "Build", "bazel-out", "cmake-build-debug",
                                    ".cache", "out", "target", ".cxx", "CMakeFiles", "third_party", "3rdparty",
                                    "3rd_party", "thirdparty", "ThirdParty"])
def test_default_excludes_skip_build_folders(tmp_path: Path, folder: str) -> None:
    write(tmp_path, f"{folder}/x.c", CLEAN_C)
    write(tmp_path, "main.c", CLEAN_C)
    assert walked() == ["main.c"]
    assert walked(use_default_excludes=False) == sorted([f"{folder}/x.c", "main.c"])


def test_default_excludes_never_match_files(tmp_path: Path) -> None:
    """`build-*` is a folder of build output; `build-graph.c` is source."""
    for name in ("build-graph.c", "out.c", "target.c", "bazel-rules.cc"):
        write(tmp_path, name, CLEAN_C)
    assert walked() == ["bazel-rules.cc", "build-graph.c", "out.c", "target.c"]


def test_default_excludes_spare_jvm_packages(tmp_path: Path) -> None:
    """Below a JVM source root, `out`, `build` or `target` is a package (an outbound adapter
    `com/acme/adapter/out`), not build output; the module's own `target` stays excluded."""
    java = "package com.acme.adapter.out;\nclass Remover {}\n"
    write(tmp_path, "svc/src/main/java/com/acme/adapter/out/Remover.java", java)
    write(tmp_path, "app/src/test/kotlin/org/x/build/Probe.java", java)
    write(tmp_path, "svc/target/classes/Remover.java", java)
    write(tmp_path, "svc/src/main/java/com/acme/.cache/Old.java", java)
    assert walked() == ["app/src/test/kotlin/org/x/build/Probe.java",
                        "svc/src/main/java/com/acme/adapter/out/Remover.java"]


def test_exclude_adds_to_the_defaults_and_extend_exclude_too(tmp_path: Path) -> None:
    """`exclude` keeps adding to the default excludes (documented since 0.1; ruff's `exclude`
    replaces them: `default-excludes = false` does that here); `extend-exclude` adds (ruff)."""
    write(tmp_path, "build/b.c", LEAK_C)
    write(tmp_path, "gen/g.c", LEAK_C)
    write(tmp_path, "proto/p.c", LEAK_C)
    write(tmp_path, "src/s.c", LEAK_C)
    write(tmp_path, ".ortlint.toml", 'exclude = ["gen"]\nextend-exclude = ["proto/"]\n')
    assert finding_paths() == [("src/s.c", 3)]
    write(tmp_path, ".ortlint.toml", 'exclude = ["gen"]\ndefault-excludes = false\n')
    assert finding_paths() == [("build/b.c", 3), ("proto/p.c", 3), ("src/s.c", 3)]


def test_exclude_globs_match_paths_from_the_configuration_folder(tmp_path: Path) -> None:
    write(tmp_path, "proj/.ortlint.toml", 'exclude = ["src/gen*"]\n')
    write(tmp_path, "proj/src/gen_x/a.c", LEAK_C)
    write(tmp_path, "proj/src/main.c", LEAK_C)
    assert finding_paths("proj/src") == [("proj/src/main.c", 3)]


# ----------------------------------------------------------------------------- each file once


@pytest.fixture
def linked_tree(tmp_path: Path) -> Path:
    write(tmp_path, "src/core/alsa.c", LEAK_C)
    write(tmp_path, "src/core/main.c", CLEAN_C)
    write(tmp_path, "examples/mic/.keep", "")
    os.symlink("../../src/core/alsa.c", tmp_path / "examples" / "mic" / "alsa.c")  # a linked file
    os.symlink("src/core", tmp_path / "alias")  # a linked folder
    return tmp_path


def test_each_file_once_under_its_real_path(linked_tree: Path) -> None:
    found = discover(["."])
    assert [s.path for s in found.files] == ["src/core/alsa.c", "src/core/main.c"]
    assert found.duplicates == 1  # examples/mic/alsa.c; alias/ is src/core, walked once (by its own path)
    assert finding_paths(".") == [("src/core/alsa.c", 3)]


def test_a_folder_named_twice_or_through_a_link_is_walked_once(linked_tree: Path) -> None:
    assert walked("src", "alias", "src/core") == ["src/core/alsa.c", "src/core/main.c"]


def test_a_file_named_through_a_link_is_reported_as_the_whole_run_reports_it(linked_tree: Path) -> None:
    """What a hook (or an editor) names gives the findings of the full run, path included."""
    whole = finding_paths(".")
    assert finding_paths("examples/mic/alsa.c") == whole
    assert finding_paths("alias/alsa.c", "src/core/alsa.c") == whole
    assert finding_paths(str(linked_tree / "examples" / "mic" / "alsa.c")) == [(str(linked_tree / "src/core/alsa.c"), 3)]


def test_a_link_into_an_excluded_folder_keeps_its_own_path(tmp_path: Path) -> None:
    """The real path is not analyzed by a walk (third_party/ is excluded): the link's path is
    the one a whole run reports, named or walked."""
    write(tmp_path, "third_party/lib/x.c", LEAK_C)
    write(tmp_path, "src/.keep", "")
    os.symlink("../third_party/lib/x.c", tmp_path / "src" / "x.c")
    assert finding_paths(".") == [("src/x.c", 3)]
    assert finding_paths("src/x.c") == [("src/x.c", 3)]


def test_links_leaving_the_tree_are_still_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "o.c", LEAK_C)
    write(tmp_path, "tree/main.c", CLEAN_C)
    os.symlink(outside, tmp_path / "tree" / "out_link")
    os.symlink(outside / "o.c", tmp_path / "tree" / "o_link.c")
    assert walked("tree") == ["tree/main.c"]
    assert walked("tree", follow_symlinks=True) == ["tree/main.c", "tree/o_link.c"]  # one path for o.c


# ----------------------------------------------------------------------------- include resolution


def test_include_resolution_order(tmp_path: Path) -> None:
    """As a compiler: the including file's folder, the include folders, then by name in the
    repository, nearest first."""
    for name in ("src/a/check.h", "vendor/copy/check.h", "sdk/include/util.h", "src/b/sub/util.h",
                 "src/c/inner/near.h", "zzz/far/near.h", "src/c/other/deep/near.h"):
        write(tmp_path, name, "#define X 1\n")
    index = HeaderIndex(include_dirs=(str(tmp_path / "vendor" / "copy"), str(tmp_path / "sdk" / "include")),
                        roots=(str(tmp_path),))
    assert index.resolve("check.h", str(tmp_path / "src" / "a")) == str(tmp_path / "src/a/check.h")  # beside
    assert index.resolve("util.h", str(tmp_path / "src" / "b")) == str(tmp_path / "sdk/include/util.h")  # -I
    assert index.resolve("near.h", str(tmp_path / "src" / "c")) == str(tmp_path / "src/c/inner/near.h")  # nearest
    assert index.resolve("missing.h", str(tmp_path / "src")) is None


def test_a_header_beside_the_file_wins_over_a_vendored_copy_end_to_end(tmp_path: Path) -> None:
    """`#include "check.h"` means the header beside the file, whatever else the run names."""
    releasing = ("#include \"onnxruntime_c_api.h\"\nextern const OrtApi *g_ort;\n"
                 "#define CHECK(expr) do { OrtStatus *s_ = (expr); if (s_) { g_ort->ReleaseStatus(s_); return; } } while (0)\n")
    dropping = "#define CHECK(expr) (void)(expr)\n"
    write(tmp_path, "include/onnxruntime_c_api.h", ORT_HEADER)
    write(tmp_path, "app/check.h", releasing)
    write(tmp_path, "vendor_copy/app/check.h", dropping)
    write(tmp_path, "app/run.c", '#include "check.h"\nvoid run(OrtSessionOptions *o) {\n'
                                 '  CHECK(g_ort->SetIntraOpNumThreads(o, 1));\n}\n')
    assert finding_paths("app/run.c") == []
    assert finding_paths(".") == []
    write(tmp_path, ".ortlint.toml", 'include-dirs = ["vendor_copy/app"]\n')  # an include folder comes after
    assert finding_paths("app/run.c") == []


# ----------------------------------------------------------------------------- alone == in the tree

EP_BASE_H = """#pragma once
#include "onnxruntime_c_api.h"
struct EpBase {
  explicit EpBase(const OrtApi& api) : ort_api(api) {}
  const OrtApi& ort_api;
};
#define RETURN_IF_STATUS(expr) do { OrtStatus* s_ = (expr); if (s_ != nullptr) return s_; } while (0)
"""
MY_EP_CC = """#include "ep/ep_base.h"
#include "helpers.h"

struct MyEp : EpBase {
  explicit MyEp(const OrtApi& api) : EpBase(api) {}
  OrtStatus* Describe(int verbose) {
    OrtMemoryInfo* info = nullptr;
    RETURN_IF_STATUS(ort_api.CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &info));
    if (verbose) {
      return nullptr;
    }
    ort_api.ReleaseMemoryInfo(info);
    return nullptr;
  }
  void Drop(OrtMemoryInfo* info) { ForgetInfo(ort_api, info); }
};
"""
HELPERS_H = "#pragma once\n#include \"ep/ep_base.h\"\nvoid ForgetInfo(const OrtApi& api, OrtMemoryInfo* info);\n"
HELPERS_CC = """#include "helpers.h"
void ForgetInfo(const OrtApi& api, OrtMemoryInfo* info) {
  OrtStatus* st = api.CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &info);
  if (st != nullptr) {
    return;
  }
  api.ReleaseMemoryInfo(info);
}
"""


@pytest.fixture
def plugin_tree(tmp_path: Path) -> Path:
    """A plugin EP: its base class (the `OrtApi&` member, the macro) in an include folder that
    only the build adds (`sdk/include`, not beside the sources nor an ancestor's `include/`)."""
    write(tmp_path, "sdk/include/onnxruntime_c_api.h", ORT_HEADER)
    write(tmp_path, "sdk/include/ep/ep_base.h", EP_BASE_H)
    write(tmp_path, "plugins/my_ep/src/my_ep.cc", MY_EP_CC)
    write(tmp_path, "plugins/my_ep/src/helpers.h", HELPERS_H)
    write(tmp_path, "plugins/my_ep/src/helpers.cc", HELPERS_CC)
    return tmp_path


def test_a_file_alone_has_the_findings_it_has_in_its_tree(plugin_tree: Path) -> None:
    whole = finding_paths(".")
    assert ("plugins/my_ep/src/my_ep.cc", 8) in whole  # found through the header's OrtApi member
    for source in ("plugins/my_ep/src/my_ep.cc", "plugins/my_ep/src/helpers.cc", "plugins/my_ep/src/helpers.h"):
        assert finding_paths(source) == [f for f in whole if f[0] == source], source
    assert finding_paths("plugins/my_ep") == whole  # and in a run over its folder


def test_header_index_roots_are_the_repository_whatever_is_named(plugin_tree: Path) -> None:
    assert repository_root("plugins/my_ep/src/my_ep.cc", str(plugin_tree)) == str(plugin_tree)
    write(plugin_tree, ".git/HEAD", "ref: refs/heads/main\n")  # a checkout: its top, wherever the fallback is
    assert repository_root(str(plugin_tree / "plugins" / "my_ep"), "/") == str(plugin_tree)


# ----------------------------------------------------------------------------- configuration per file


def test_nearest_configuration_applies_to_each_file(tmp_path: Path) -> None:
    write(tmp_path, ".ortlint.toml", 'ignore = ["ORT004"]\n')
    write(tmp_path, "a/leak.c", LEAK_C)
    write(tmp_path, "sub/.ortlint.toml", 'ignore = ["ORT001"]\nexclude = ["gen"]\n')
    write(tmp_path, "sub/leak.c", LEAK_C)
    write(tmp_path, "sub/gen/g.c", LEAK_C)
    assert finding_paths() == [("a/leak.c", 3)]
    assert finding_paths("sub/leak.c") == []  # named alone: the same configuration
    assert finding_paths("--ignore", "ORT001", ".") == []  # the command line applies over every file
    assert finding_paths("--config", ".ortlint.toml", ".") == [("a/leak.c", 3), ("sub/gen/g.c", 3), ("sub/leak.c", 3)]
    assert finding_paths("--isolated", ".") == [("a/leak.c", 3), ("sub/gen/g.c", 3), ("sub/leak.c", 3)]


def test_nested_configuration_does_not_inherit_and_run_wide_keys_warn(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.ortlint]\nignore = ["ORT001"]\n')
    write(tmp_path, "sub/pyproject.toml", '[tool.ortlint]\nexclude-tests = true\njobs = 1\n')
    write(tmp_path, "sub/leak.c", LEAK_C)
    write(tmp_path, "top.c", LEAK_C)
    r = ortlint("--format", "json", ".")
    assert sorted(f["path"] for f in json.loads(r.stdout)["findings"]) == ["sub/leak.c"]  # ruff: no inheritance
    assert "sub/pyproject.toml: jobs: applies to the whole run only" in r.stderr


def test_per_file_extensions_and_test_patterns(tmp_path: Path) -> None:
    write(tmp_path, "cuda/.ortlint.toml", 'extensions = { ".cu" = "c" }\ntest-patterns = ["*_check.*"]\n')
    write(tmp_path, "cuda/k_check.cu", LEAK_C)
    write(tmp_path, "other/k.cu", LEAK_C)
    write(tmp_path, "other/k_check.c", LEAK_C)
    r = ortlint("--format", "json", ".")
    found = {f["path"]: f.get("tags", []) for f in json.loads(r.stdout)["findings"]}
    assert found == {"cuda/k_check.cu": ["test"], "other/k_check.c": []}


def test_configuration_is_found_from_the_analyzed_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "proj/.ortlint.toml", 'ignore = ["ORT001"]\n')
    write(tmp_path, "proj/leak.c", LEAK_C)
    write(tmp_path, "elsewhere/.keep", "")
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert finding_paths("../proj") == []


def test_invalid_nested_configuration_is_an_error_naming_it(tmp_path: Path) -> None:
    write(tmp_path, "sub/.ortlint.toml", 'selct = ["ORT001"]\n')
    write(tmp_path, "sub/leak.c", LEAK_C)
    write(tmp_path, "ok.c", CLEAN_C)
    r = ortlint(".")
    assert r.code == 2
    assert "sub/.ortlint.toml:1: selct: unknown key" in r.stdout + r.stderr


def test_show_settings_says_what_applies_and_where_it_comes_from(tmp_path: Path) -> None:
    write(tmp_path, ".ortlint.toml", 'ignore = ["ORT004"]\njobs = 2\n')
    write(tmp_path, "sub/.ortlint.toml", '\nselect = ["ORT001"]\n')
    write(tmp_path, "sub/a.c", LEAK_C)
    write(tmp_path, ".gitignore", "gen/\n")
    write(tmp_path, "gen/g.c", LEAK_C)
    r = ortlint("--show-settings", "sub/a.c", "--unknown-calls", "keep")
    assert r.code == 0, r.stderr
    out = r.stdout
    assert "analyzed: as c" in out
    assert f"configuration file for this path: {tmp_path / 'sub' / '.ortlint.toml'}" in out
    assert f"configuration file of the run (run-wide settings): {tmp_path / '.ortlint.toml'}" in out
    assert f'select = ["ORT001"]  # {tmp_path / "sub" / ".ortlint.toml"}:2' in out
    assert 'ignore = []  # default' in out  # not inherited
    assert f'jobs = 2  # {tmp_path / ".ortlint.toml"}:2' in out
    assert 'unknown-calls = "keep"  # command line' in out
    r = ortlint("--show-settings", "gen/g.c")
    assert f"a walk skips it: {tmp_path / 'gen'}: ignored by {tmp_path / '.gitignore'}" in r.stdout


FACTORY_CC = """#include "ep/ep_base.h"
OrtMemoryInfo* MakeInfo(const OrtApi& api) {
  OrtMemoryInfo* info = nullptr;
  OrtStatus* st = api.CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &info);
  if (st != nullptr) {
    api.ReleaseStatus(st);
    return nullptr;
  }
  return info;
}
"""
USER_CC = """#include "ep/ep_base.h"
OrtMemoryInfo* MakeInfo(const OrtApi& api);
int UseInfo(const OrtApi& api, int n) {
  OrtMemoryInfo* info = MakeInfo(api);
  if (n > 3) {
    return -1;
  }
  api.ReleaseMemoryInfo(info);
  return 0;
}
"""


def test_a_file_alone_gets_its_callees_summaries_from_a_warm_cache(plugin_tree: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Cold, a callee defined in another file is unknown to a file analyzed alone (a legitimate
    difference); after a run over the tree, the shared cache (keyed by the project root) has
    its summary, and the file alone has the findings of the whole run."""
    write(plugin_tree, "plugins/my_ep/src/factory.cc", FACTORY_CC)
    write(plugin_tree, "plugins/my_ep/src/user.cc", USER_CC)
    user = "plugins/my_ep/src/user.cc"
    whole = [f for f in finding_paths(".") if f[0] == user]
    assert whole == [(user, 4)]  # MakeInfo() hands a new OrtMemoryInfo to its caller
    assert finding_paths(user) == []  # cold and alone: MakeInfo() is an unknown call
    monkeypatch.delenv("ORTLINT_NO_CACHE")
    cache = str(plugin_tree.parent / (plugin_tree.name + "-cache"))
    finding_paths("--cache-dir", cache, ".")  # a full run fills the cache
    assert finding_paths("--cache-dir", cache, user) == whole


def test_a_pattern_that_would_backtrack_for_ever_is_dropped_with_a_warning(tmp_path: Path) -> None:
    """A hostile tree: `**/a/**/a/...` (12 `**`) against a deep path never ended in pathspec."""
    write(tmp_path, ".gitignore", "/".join(["**", "a"] * 12) + "/b\nignored.c\n")
    deep = "/".join(["a"] * 40)
    write(tmp_path, f"{deep}/x.c", CLEAN_C)
    write(tmp_path, "ignored.c", CLEAN_C)
    found = discover(["."])
    assert [s.path for s in found.files] == [f"{deep}/x.c"]
    assert any("more than 3 wildcards" in message for _path, message in found.problems)
