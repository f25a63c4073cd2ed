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
        assert set(r.languages) <= {"c", "cpp", "jni", "java", "go"}


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
