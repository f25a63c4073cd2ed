"""bench/whole_repos.py: the manifest, stable finding keys, verdict files and their matching.

Nothing here needs the public repositories: the trees are written from scratch in tmp_path.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import whole_repos as wr  # noqa: E402


def finding(path: str, line: int, col: int, end_col: int, rule: str = "ORT001", function: str = "f",
            message: str = "m", end_line: int | None = None) -> dict:
    return {"rule": rule, "path": path, "line": line, "column": col, "end_line": end_line or line,
            "end_column": end_col, "function": function, "message": message}


def test_manifest_pins_every_repository_and_has_the_mandatory_ones() -> None:
    repos = wr.load_manifest()
    assert len(repos) >= 15
    assert "Craigacp/onnxruntime" in {r.repo for r in repos}
    for r in repos:
        assert len(r.commit) == 40 and r.category and r.why and r.languages
        assert set(r.languages) <= {"c", "cpp", "jni", "java", "go", "csharp"}


def test_only_selects_by_name_slug_or_unique_part() -> None:
    repos = wr.load_manifest()
    assert [r.repo for r in wr.select(repos, "k2-fsa/sherpa-onnx")] == ["k2-fsa/sherpa-onnx"]
    assert [r.repo for r in wr.select(repos, "k2-fsa+sherpa-onnx,telum")] == ["k2-fsa/sherpa-onnx", "IBM/onnxruntime-ep-telum"]
    with pytest.raises(SystemExit):
        wr.select(repos, "onnxruntime")  # many


def test_key_is_the_source_text_at_the_finding_not_its_line(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("void f() {\n  s = api->CreateSession(env,\n      path, o, &s);\n}\n")
    keys = wr.compute_keys(tmp_path, [finding("a.c", 2, 7, 18, end_line=3)])
    assert keys[0]["key"] == "ORT001 | a.c | f | 1 | api->CreateSession(env, path, o, &s"
    (tmp_path / "a.c").write_text("// moved down\n\nvoid f() {\n  s = api->CreateSession(env,\n      path, o, &s);\n}\n")
    assert wr.compute_keys(tmp_path, [finding("a.c", 4, 7, 18, end_line=5)])[0]["key"] == keys[0]["key"]


def test_same_anchor_twice_gets_ordinals_by_position(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("CHECK(x);\nCHECK(x);\n")
    keys = wr.compute_keys(tmp_path, [finding("a.c", 2, 1, 9), finding("a.c", 1, 1, 9)])
    assert [k["key"].split(" | ")[3] for k in keys] == ["2", "1"]


def test_empty_span_gives_the_line_and_long_anchors_are_cut(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("  free(p);\n" + "x" * 300 + "\n")
    keys = wr.compute_keys(tmp_path, [finding("a.c", 1, 3, 3), finding("a.c", 2, 1, 301)])
    assert keys[0]["anchor"] == "free(p);"
    assert len(keys[1]["anchor"]) == wr.ANCHOR_MAX and keys[1]["anchor"].endswith("…")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symlinks")
def test_a_file_reached_through_a_symlink_is_a_duplicate_with_the_same_key(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.c").write_text("p = malloc(1);\n")
    os.symlink("src", tmp_path / "link")
    keys = wr.compute_keys(tmp_path, [finding("link/a.c", 1, 5, 14), finding("src/a.c", 1, 5, 14)])
    assert [k["dup"] for k in keys] == [False, True]
    assert keys[0]["key"] == keys[1]["key"] == "ORT001 | src/a.c | f | 1 | malloc(1)"


def write_verdicts(path: Path, entries: list[dict]) -> None:
    path.write_text("".join("[[finding]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in e.items()) + "\n"
                            for e in entries), encoding="utf-8")


def test_verdict_files_are_checked(tmp_path: Path) -> None:
    good = {"key": "ORT001 | a.c | f | 1 | malloc(1)", "verdict": "false", "class": "c", "why": "w"}
    path = tmp_path / "v.toml"
    write_verdicts(path, [good])
    assert wr.load_verdicts(path)[good["key"]].cls == "c"
    for bad in ({**good, "verdict": "maybe"}, {**good, "class": ""}, {**good, "why": ""}, {**good, "key": "ORT001 a.c"}):
        write_verdicts(path, [bad])
        with pytest.raises(SystemExit):
            wr.load_verdicts(path)
    write_verdicts(path, [good, good])
    with pytest.raises(SystemExit):
        wr.load_verdicts(path)


def test_verdicts_match_exactly_then_loosely_when_the_function_was_renamed(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("p = malloc(1);\nq = malloc(2);\n")
    keys = wr.compute_keys(tmp_path, [finding("a.c", 1, 5, 14, function="g"), finding("a.c", 2, 5, 14, function="h")])
    verdicts = {
        "ORT001 | a.c | g | 1 | malloc(1)": wr.Verdict("ORT001 | a.c | g | 1 | malloc(1)", "real", "", "w"),
        "ORT001 | a.c | OLD h | 1 | malloc(2)": wr.Verdict("ORT001 | a.c | OLD h | 1 | malloc(2)", "false", "x", "w"),
        "ORT001 | a.c | z | 1 | malloc(3)": wr.Verdict("ORT001 | a.c | z | 1 | malloc(3)", "false", "x", "w"),
    }
    matched = wr.match_verdicts(keys, verdicts)
    assert matched[0].verdict == "real" and matched[1].verdict == "false"


def test_sample_order_is_stable_whatever_else_is_found(tmp_path: Path) -> None:
    def results(n: int) -> wr.RepoResults:
        fs = [finding("a.c", i, 1, 2, message=str(i)) for i in range(1, n + 1)]
        (tmp_path / "a.c").write_text("".join(f"x{i}\n" for i in range(1, n + 1)))
        return wr.RepoResults("r", fs, wr.compute_keys(tmp_path, fs))
    small, big = results(50), results(80)
    first = [k["key"] for k in wr.sample(small, 10, "s")]
    again = [k["key"] for k in wr.sample(big, 80, "s") if k["key"] in {x["key"] for x in small.keys}][:10]
    assert first == again
    assert len(wr.sample(small, 100, "s")) == 50
    assert first != [k["key"] for k in wr.sample(small, 10, "other seed")]


def test_tally_counts_unique_findings_and_classes(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text("a;\nb;\nc;\n")
    fs = [finding("a.c", i, 1, 2) for i in (1, 2, 3)]
    res = wr.RepoResults("r", fs, wr.compute_keys(tmp_path, fs))
    verdicts = {res.keys[0]["key"]: wr.Verdict(res.keys[0]["key"], "real", "", "w"),
                res.keys[1]["key"]: wr.Verdict(res.keys[1]["key"], "false", "k", "w")}
    t, false_classes, _ = wr.tally(res, verdicts, 40, "s")
    assert (t.findings, t.triaged, t.real, t.false, t.precision) == (3, 2, 1, 1, 0.5)
    assert false_classes == {"k": 1}


@pytest.mark.parametrize("message,cause", [
    ("f() has too many distinct resource states to keep; findings for it may be incomplete", "state bound"),
    ("could not parse lines 3-9; code there is not analyzed", "could not parse"),
    ("internal error: ortlint stopped parsing this file because it took more than 20 s", "lost: time"),
    ("something new", "other"),
])
def test_notes_are_grouped_by_cause(message: str, cause: str) -> None:
    assert wr.note_cause(message) == cause


def test_missing_blobs_are_left_out_by_pattern() -> None:
    assert wr._attribute_pattern("a/b[1]*.h") == "/a/b\\[1]\\*.h"
    assert wr._attribute_pattern("a b/c.h") == '"/a b/c.h"'


def fake_results(folder: Path, tree: Path, findings: list[dict]) -> None:
    """A results folder as `run` writes it, for one manifest repository."""
    folder.mkdir(parents=True)
    name = "IBM/onnxruntime-ep-telum"
    slug = name.replace("/", "+")
    (folder / f"{slug}.json").write_text(json.dumps({"findings": findings, "notices": []}))
    (folder / f"{slug}.keys.json").write_text(json.dumps(wr.compute_keys(tree, findings)))
    row = {"findings": len(findings), "by_rule": {"ORT001": len(findings)}, "notes": {}, "user": 1.0, "sys": 0.5,
           "wall": 2.0, "peak_rss_mb": 10.0, "exit": 1, "files": 1, "lines": 3, "symlink_duplicates": 0}
    (folder / "summary.json").write_text(json.dumps({"label": folder.name, "tool": {}, "tree": str(tree.parent),
                                                     "repos": {name: row}}))


def test_triage_table_and_diff_use_the_verdict_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    tree = tmp_path / "trees" / "IBM+onnxruntime-ep-telum"
    tree.mkdir(parents=True)
    (tree / "a.c").write_text("p = malloc(1);\nq = malloc(2);\nr = malloc(3);\n")
    a = [finding("a.c", 1, 5, 14), finding("a.c", 2, 5, 14)]
    b = [finding("a.c", 2, 5, 14), finding("a.c", 3, 5, 14)]
    fake_results(tmp_path / "A", tree, a)
    fake_results(tmp_path / "B", tree, b)
    verdicts = tmp_path / "triage"
    verdicts.mkdir()
    write_verdicts(verdicts / "IBM+onnxruntime-ep-telum.toml", [
        {"key": "ORT001 | a.c | f | 1 | malloc(1)", "verdict": "false", "class": "k", "why": "w"},
        {"key": "ORT001 | a.c | f | 1 | malloc(2)", "verdict": "real", "why": "w"}])
    monkeypatch.setattr(wr, "VERDICTS", verdicts)
    assert wr.main(["triage", str(tmp_path / "A")]) == 0
    out = capsys.readouterr().out
    assert "2 triaged: 1 real, 1 false, 0 debatable; precision 0.50" in out
    assert "(est.      1)  k" in out
    assert wr.main(["table", str(tmp_path / "B")]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("IBM/"))
    assert row.split()[-3:] == ["1/2", "1/0/0", "1.00"]
    assert wr.main(["diff", str(tmp_path / "A"), str(tmp_path / "B"), "--list"]) == 0
    out = capsys.readouterr().out
    assert "vanished 1 (false:1), appeared 1 (untriaged:1)" in out
    assert "- ORT001 | a.c | f | 1 | malloc(1)   [false k]" in out


def test_extract_writes_the_whole_tree_with_symlinks_and_is_idempotent(tmp_path: Path) -> None:
    import subprocess
    work = tmp_path / "src"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "a.c").write_text("int x;\n")
    (work / ".gitignore").write_text("build/\n")
    os.symlink("sub", work / "link")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "x"], check=True)
    commit = subprocess.run(git[:3] + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    mirrors = tmp_path / "mirrors"
    (mirrors / "o+n").mkdir(parents=True)
    os.symlink(work / ".git", mirrors / "o+n" / "repo")
    repo = wr.Repo("o/n", commit, "c", "w", ("c",))
    out = tmp_path / "out"
    assert wr.extract_one(repo, mirrors, out) == "extracted"
    assert (out / "o+n" / "link").is_symlink() and (out / "o+n" / "link" / "a.c").read_text() == "int x;\n"
    assert (out / "o+n" / ".gitignore").exists()
    assert (out / "o+n.missing").read_text() == ""
    assert wr.extract_one(repo, mirrors, out) == "present"


def test_slowest_prints_each_repositorys_slowest_functions_beside_another_run(tmp_path: Path, capsys) -> None:
    """`slowest`: per repository, the run's CPU, its costliest request and its slowest functions,
    with what each took in the other run (or that it is no longer among the slowest)."""
    def results(folder: Path, slowest: list, user: float, item: str) -> Path:
        folder.mkdir()
        row = {"user": user, "sys": 1.0, "slowest_functions": slowest}
        (folder / "summary.json").write_text(json.dumps({"repos": {"k2-fsa/sherpa-onnx": row}}))
        (folder / "k2-fsa+sherpa-onnx.stats.json").write_text(json.dumps(
            {"max_analysis_cpu_seconds": slowest[0][3], "max_analysis_cpu_item": item}))
        return folder
    old = results(tmp_path / "old", [["a.cc", "slow", 3, 2.5], ["b.cc", "gone", 9, 1.25]], 40.0, "a.cc:3: slow()")
    new = results(tmp_path / "new", [["a.cc", "slow", 3, 0.125], ["c.cc", "fresh", 1, 0.1]], 20.0, "a.cc:3: slow()")
    assert wr.main(["slowest", str(new), "--against", str(old)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("k2-fsa/sherpa-onnx: CPU 21.0 s (against 41.0 s); costliest request 0.125 s CPU: a.cc:3: slow()")
    assert out[1].split() == ["0.125", "s", "slow", "a.cc:3", "(was", "2.500", "s)"]
    assert out[2].split() == ["0.100", "s", "fresh", "c.cc:1"]
    assert "gone  b.cc:9   (was 1.250 s; not among the slowest now)" in out[3]
