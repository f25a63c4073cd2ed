"""The benchmark's inputs (bench/synth.py) and a smoke run of bench/run_bench.py.

No timing is asserted anywhere: these check that the synthetic tree is a faithful, renamed copy
of the fixtures and that pathological functions end with a note instead of hanging.
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from ortlint.api import default_policy, lint
from ortlint.engine.analyze import Budget, Options
from ortlint.orchestration.settings import RunConfig
from ortlint.orchestration.runner import run
from tests.expectations import as_expected, expected_findings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import synth  # noqa: E402


@pytest.fixture(scope="module")
def groups() -> list[synth.Group]:
    return synth.prepare_groups()


@pytest.fixture(scope="module")
def tree(groups: list[synth.Group], tmp_path_factory: pytest.TempPathFactory) -> synth.Tree:
    """Two whole copies of every fixture, and a part of a third."""
    one_copy = sum(g.lines for g in groups)
    return synth.build_tree(tmp_path_factory.mktemp("tree"), 2 * one_copy + 600, groups)


def test_tree_has_the_size_asked_for_and_every_language(tree: synth.Tree) -> None:
    assert tree.copies == 3
    assert tree.lines == synth.tree_lines(tree.files)
    assert set(tree.by_language) == {"c", "cpp", "jni", "java"}
    by_copy: dict[str, set[str]] = {}
    for p in tree.files:
        by_copy.setdefault(p.relative_to(tree.root).parts[0], set()).add(p.name)
    names = [n for copy in by_copy.values() for n in copy]
    assert len(names) == len(set(names)), "no file name of one copy is that of a file of another"


def test_only_functions_defined_in_the_fixtures_are_renamed(tree: synth.Tree, groups: list[synth.Group]) -> None:
    reserved = synth.reserved_names()
    renamed = {n for g in groups for n in g.names}
    assert renamed and not renamed & reserved
    assert {"free", "malloc", "ReleaseSession", "CreateSession", "GetLongArrayElements", "close", "main"} <= reserved
    text = "\n".join(p.read_text(encoding="utf-8") for p in tree.files if p.suffix == ".c")
    assert re.search(r"\bfree\(", text) and re.search(r"->ReleaseSession\(", text)
    assert re.search(r"\bJava_demo_Native_sum_c\d+g\d+\(", text)  # defined in a fixture: renamed
    # a member access never changes, even where a fixture defines a function of that name
    java = "\n".join(p.read_text(encoding="utf-8") for p in tree.files if p.suffix == ".java")
    assert ".close()" in java and not re.search(r"\.close_c\d+g\d+\(", java)


def test_every_function_of_the_tree_is_distinct(tree: synth.Tree) -> None:
    """No two copies define the same function: every name carries its copy's tag, except names
    that are never renamed (the policy's, the ORT/JNI headers', main), so copies never resolve
    calls into each other."""
    policy = default_policy()
    reserved = synth.reserved_names(policy=policy)
    from ortlint.discover import discover
    from ortlint.orchestration.parsing import parse_file
    tagged: Counter[str] = Counter()
    untagged: set[str] = set()
    for source in discover([str(tree.root)]).files:
        for fn in parse_file(source, policy).functions:
            if re.search(r"_c\d+g\d+", fn.name):
                tagged[fn.name] += 1
            else:
                untagged.add(fn.name)
    assert tagged and not {n: c for n, c in tagged.items() if c > 1}
    for name in untagged:  # e.g. `release`, `fail`, `main`: the whole name is a reserved word
        parts = [p for p in re.split(r"::|\.|\$", name) if re.fullmatch(r"[A-Za-z_]\w*", p)]
        assert parts and all(p in reserved for p in parts[:1]), name


def test_each_copy_has_the_findings_its_fixture_expects(tree: synth.Tree) -> None:
    """The whole tree analyzed at once gives every copy exactly the findings written in its
    `// expect:` comments (line structure is kept by the renaming)."""
    expected: set = set()
    for path in tree.files:
        expected |= expected_findings(path)
    got = {(Path(f.path).name, f.line, f.rule) for f in as_expected(lint([str(tree.root)]).findings)}
    assert not (expected - got), sorted(expected - got)[:10]
    assert not (got - expected), sorted(got - expected)[:10]


def test_renaming_keeps_lines_and_includes() -> None:
    text = '#include "status.h"\nint check(int x) { return x; }\nint use(S *s) { return check(s->check) + s.check; }\n'
    out = synth.rename_text(text, {"check"}, "c1g2", {"status.h": "status_c1g2.h"})
    assert out.count("\n") == text.count("\n")
    assert '#include "status_c1g2.h"' in out
    assert "int check_c1g2(int x)" in out and "return check_c1g2(s->check) + s.check;" in out


# ----------------------------------------------------------------------------- pathological inputs


@pytest.fixture(scope="module")
def pathological(groups: list[synth.Group], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return synth.write_pathological(tmp_path_factory.mktemp("patho"), scale=0.03, groups=groups)


def notes_of(report) -> list[str]:
    return [n.message for n in report.notices]


def test_pathological_inputs_end_with_a_note_naming_the_function(pathological: dict[str, Path]) -> None:
    for key, path in pathological.items():
        report = lint([str(path)])
        names = synth.function_names(path.read_text(encoding="utf-8"))
        gave_up = [m for m in notes_of(report) if "incomplete" in m]
        for message in gave_up:
            assert any(f"{n}()" in message for n in names), (key, message)
        if key == "branches":  # 90 independent branches: 2^90 paths, but few resource configurations
            assert not any("many_branches()" in m for m in gave_up), notes_of(report)


@pytest.mark.parametrize("key,function", [("loops", "deep_loops"), ("gotos", "many_labels"), ("long", "long_body")])
def test_a_small_budget_gives_up_with_a_note(pathological: dict[str, Path], key: str, function: str) -> None:
    options = Options(budget=Budget(max_block_visits=40, max_work=400, max_event_work=20_000))
    report = run(RunConfig([str(pathological[key])], default_policy(), options=options, jobs=1))
    assert any(f"{function}()" in m and "incomplete" in m for m in notes_of(report)), notes_of(report)
    assert report.stats["slowest_functions"]  # the per-function timing hook is filled in


def test_generated_function_names_are_found() -> None:
    assert synth.function_names(synth.sequential_branches(3)) == {"many_branches"}
    assert synth.function_names(synth.goto_ladder(3)) == {"many_labels"}
    assert synth.function_names(synth.deep_loops(3)) == {"deep_loops"}
    assert synth.function_names(synth.long_function(3)) == {"long_body"}
    assert synth.function_names(synth.straight_line(3)) == {"straight_line"}


def test_a_long_straight_line_function_is_analyzed_completely(tmp_path: Path) -> None:
    """3000 remembered declarations in one block: an assignment that cannot lose a reference
    (`char *pN = NULL;`) no longer scans the state, so the block takes linear time and no
    budget is reached (before, 4.5 million bindings were looked at and the analysis stopped)."""
    path = tmp_path / "s.c"
    path.write_text(synth.straight_line(3000))
    report = lint([str(path)])
    assert not any("incomplete" in m for m in notes_of(report)), notes_of(report)


# ----------------------------------------------------------------------------- the script


def test_bench_script_smoke_run(tmp_path: Path) -> None:
    import run_bench
    out = tmp_path / "bench.json"
    assert run_bench.main(["--sizes", "3k", "--repeat", "1", "--jobs", "1", "--no-cppcheck", "--no-cache-runs",
                           "--no-single", "--no-pathological", "--out", str(tmp_path / "work"),
                           "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    size = doc["sizes"][0]
    assert size["lines"] >= 3000 and size["files"] > 10
    assert size["lines_per_second"] > 0 and size["floor_seconds"] > 0 and size["peak_rss_mb"] > 0
    assert set(size["phases"]) >= {"parse_seconds", "analysis_seconds", "output_seconds"}
    assert "throughput" in doc["targets"]


def test_bench_sizes_parse() -> None:
    import run_bench
    assert [run_bench.parse_size(s) for s in ("10k", "100K", "1m", "2500", "1.5k")] == [10_000, 100_000, 1_000_000,
                                                                                         2500, 1500]
    assert run_bench.label(1_000_000) == "1M" and run_bench.label(10_000) == "10K"


def test_ab_compare_runs_two_versions_in_pairs_and_compares_their_reports(capsys: pytest.CaptureFixture[str]) -> None:
    import ab_compare
    tree = str(ROOT / "fixtures" / "c")
    assert ab_compare.main([tree, "--a", f"same={ROOT}", "--pairs", "2", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("pair ") == 2 and "B faster in" in out
    assert "reports: identical" in out  # one checkout against itself


def test_ab_compare_refuses_what_is_no_version(tmp_path: Path) -> None:
    import ab_compare
    with pytest.raises(SystemExit, match="neither a checkout"):
        ab_compare.version_command(str(tmp_path))


@pytest.mark.parametrize("n", [8, 16, 32])
def test_the_blowup_reproducer_is_analyzed_whole_without_a_note(tmp_path: Path, n: int) -> None:
    """bench/blowup.py's source (the 2^N shape of issue 31) at the N of the issue's acceptance
    (8, 16, 32; before the liveness trimming N = 10 already stopped at the state bound): it
    parses, the entry function inlines the reader into the loop, and the analysis ends without a
    note, a merged state or a finding (its statuses are all released). Untimed: the benchmark
    prints the times."""
    import blowup
    path = tmp_path / f"blowup_{n}.cpp"
    path.write_text(blowup.source(n), encoding="utf-8")
    figures = blowup.measure(path, repeat=1)
    assert figures["blocks"] > n * 4 and figures["notes"] == [] and figures["widened"] == 0
    report = lint([str(path)])
    assert report.findings == [] and report.notices == []
