"""The speed-ups keep behaviour identical: the fast JSON writer, pickling by constructor, the
whole-run cache, parallel runs (streamed and balanced) and the policy's precomputed tables."""
from __future__ import annotations

import json
import math
import pickle
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ortlint import ir
from ortlint.orchestration import runner
from ortlint.api import default_policy, lint
from ortlint.discover import discover
from ortlint.engine.summaries import Case, Effect, Summary
from ortlint.findings import Finding, Notice, Step
from ortlint.pickling import pickle_by_fields
from ortlint.report import fastjson
from ortlint.report.json_report import format_json
from ortlint.orchestration.settings import RunConfig
from ortlint.orchestration.parsing import parse_file
from ortlint.orchestration.runner import run

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


# ----------------------------------------------------------------------------- JSON


def _random_doc(rnd: random.Random, depth: int = 0) -> object:
    r = rnd.random()
    if depth > 4 or r < 0.3:
        return rnd.choice([None, True, False, 0, -7, 2 ** 70, 1.5, -0.0, 1e300, math.inf, -math.inf, math.nan,
                           "", "plain", 'q"b\\s\n\t\u2028é😀\x00'])
    if r < 0.6:
        return [_random_doc(rnd, depth + 1) for _ in range(rnd.randint(0, 4))]
    if r < 0.7:
        return tuple(_random_doc(rnd, depth + 1) for _ in range(rnd.randint(0, 3)))
    keys = ["k", "é", 1, 2.5, True, None, "x y"]
    return {(rnd.choice(keys) if rnd.random() < 0.3 else f"k{i}"): _random_doc(rnd, depth + 1)
            for i in range(rnd.randint(0, 4))}


def test_fast_json_is_byte_identical_to_json_dumps() -> None:
    rnd = random.Random(7)
    for _ in range(3000):
        doc = _random_doc(rnd)
        for ensure_ascii in (True, False):
            for indent in (1, 2, 4):
                assert fastjson.dumps(doc, indent, ensure_ascii) == json.dumps(doc, indent=indent, ensure_ascii=ensure_ascii)


def test_fast_json_falls_back_for_other_types() -> None:
    class Other:
        pass
    with pytest.raises(TypeError):
        fastjson.dumps({"a": Other()})
    assert fastjson.dumps({"a": [1, {"b": None}]}) == json.dumps({"a": [1, {"b": None}]}, indent=2)


def test_json_report_of_a_real_run_matches_json_dumps() -> None:
    text = format_json(lint([str(FIXTURES / "c"), str(FIXTURES / "java")]))
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------------------- pickling


def test_pickling_by_constructor_round_trips() -> None:
    step = Step("a.c", 3, 4, "x")
    finding = Finding("ORT001", "a.c", 1, 2, 3, 4, "leak", "f", (step,), (step,), "warning", "anchor")
    summary = Summary("f", (Case((((0,), "null"),), (Effect((0,), "release", "free", "a.c:3"),), (), ("k", 0)),),
                      "a.c:1", ("p",))
    objects = [step, finding, summary, Notice("a.c", 0, "m", "note")]
    units = [parse_file(s, default_policy()) for s in discover([str(FIXTURES / "c")]).files]
    objects += [fn for u in units for fn in u.functions]
    for obj in objects:
        for protocol in (2, pickle.HIGHEST_PROTOCOL):
            assert pickle.loads(pickle.dumps(obj, protocol)) == obj


def test_pickle_by_fields_refuses_fields_its_constructor_does_not_take() -> None:
    @dataclass(slots=True)
    class Hidden:
        a: int
        b: list = field(default_factory=list, init=False)
    with pytest.raises(TypeError):
        pickle_by_fields(Hidden)


def test_ir_pickles_by_constructor() -> None:
    assert ir.Var.__reduce__ is not object.__reduce__ and ir.Function.__reduce__ is not object.__reduce__
    assert isinstance(ir.Loc(1, 2, 3, 4), tuple)  # pickled (and skipped by the cycle collector) as a tuple
    assert pickle.loads(pickle.dumps(ir.Loc(1, 2, 3, 4))) == ir.Loc(1, 2, 3, 4)


def _nested() -> ir.Expr:
    return ir.Op("==", (ir.Field(ir.Deref(ir.Var("p")), "data"), ir.Index(ir.Var("a"), ir.Const(0, "0")),
                        ir.Opaque("f(x)", (ir.AddrOf(ir.Var("x")),))))


def test_ir_expressions_keep_their_hash_but_never_pickle_it() -> None:
    e = _nested()
    first = hash(e)
    assert e._hash == first  # kept once computed
    assert first == hash((e.op, e.operands))  # the value the generated __hash__ gave
    assert hash(ir.Var("p")) == hash(("p",))
    other = _nested()
    assert other._hash == 0 and other == e and hash(other) == first  # the cache takes no part in equality
    assert ir.Var("p") != ir.Var("q") and "_hash" not in repr(e)
    blob = pickle.dumps(e, pickle.HIGHEST_PROTOCOL)
    assert blob == pickle.dumps(_nested(), pickle.HIGHEST_PROTOCOL)  # no hash in the bytes
    back = pickle.loads(blob)
    assert back._hash == 0 and back == e and hash(back) == first


# ----------------------------------------------------------------------------- policy tables


def test_releasers_table_matches_a_scan_of_every_call() -> None:
    policy = default_policy()
    for kind in list(policy.kinds) + ["no.such.kind"]:
        scan = sorted({s.name for s in policy.calls.values() if s.release and kind in s.release.kinds and s.suggest})
        helpers = sorted({s.name for s in policy.calls.values() if s.release and kind in s.release.kinds})
        assert policy.releasers_of(kind) == (scan or helpers)  # `suggest = false`: named only when alone


# ----------------------------------------------------------------------------- whole-run cache


def go(paths, cache: Path, **kw):
    return run(RunConfig([str(p) for p in paths], default_policy(), cache_dir=str(cache), **kw))


def findings(report):
    return [(Path(f.path).name, f.line, f.col, f.rule, f.message) for f in report.findings]


def test_an_unchanged_tree_is_replayed_whole(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "multi" / "helpers", tree)
    cold = go([tree], tmp_path / "cache")
    warm = go([tree], tmp_path / "cache")
    assert "run_cache" not in cold.stats and warm.stats.get("run_cache") == 1
    assert findings(warm) == findings(cold) and warm.notices == cold.notices
    assert warm.summaries == cold.summaries and warm.files == cold.files
    (tree / "user.c").write_text((tree / "user.c").read_text() + "\nint added(void) { return 0; }\n")
    edited = go([tree], tmp_path / "cache")
    assert "run_cache" not in edited.stats and edited.stats["parsed_files"] == 1
    assert findings(edited) == findings(run(RunConfig([str(tree)], default_policy())))


def test_the_whole_run_cache_is_not_used_once_other_files_could_add_context(tmp_path: Path) -> None:
    """`ortlint user.c` knows nothing of check() in status.c; once a run over the folder has
    cached status.c, a cold run on user.c uses its summary: so must the rerun."""
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "multi" / "helpers", tree)
    cache = tmp_path / "cache"
    alone = go([tree / "user.c"], cache)
    assert go([tree / "user.c"], cache).stats.get("run_cache") == 1
    go([tree], cache)
    again = go([tree / "user.c"], cache)
    assert "run_cache" not in again.stats
    fresh = go([tree / "user.c"], tmp_path / "other-cache")
    go([tree], tmp_path / "other-cache")
    assert findings(again) == findings(go([tree / "user.c"], tmp_path / "other-cache"))
    assert findings(alone) == findings(fresh)


def test_recursive_functions_are_reused_from_the_cache(tmp_path: Path) -> None:
    """Their summaries change from round to round; what they depend on is outside their
    component, so a warm run on a changed file elsewhere does not analyze them again."""
    (tmp_path / "r.c").write_text(
        "#include <stdlib.h>\nstruct node { struct node *next; char *text; };\n"
        "void drop(struct node *n) { if (!n) return; drop(n->next); free(n->text); free(n); }\n")
    (tmp_path / "other.c").write_text("int other(void) { return 1; }\n")
    cold = go([tmp_path / "r.c", tmp_path / "other.c"], tmp_path / "cache")
    (tmp_path / "other.c").write_text("int other(void) { return 2; }\n")
    warm = go([tmp_path / "r.c", tmp_path / "other.c"], tmp_path / "cache")
    assert cold.stats["analyzed_functions"] >= 2 and warm.stats["analyzed_functions"] == 1
    assert findings(cold) == findings(warm)


# ----------------------------------------------------------------------------- parallel runs


def test_parallel_runs_match_serial_ones_whatever_the_scheduling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers parse in streamed chunks and analyze in chunks; ownership depends on timing,
    the results may not."""
    monkeypatch.setattr(runner, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(runner.os, "cpu_count", lambda: 4)  # workers are capped at the cores
    targets = [str(FIXTURES)]
    serial = run(RunConfig(targets, default_policy(), jobs=1))
    for jobs in (2, 3):
        parallel = run(RunConfig(targets, default_policy(), jobs=jobs))
        assert parallel.stats["workers"] == jobs
        assert findings(parallel) == findings(serial) and parallel.notices == serial.notices
        assert parallel.summaries == serial.summaries and parallel.unknown_callees == serial.unknown_callees
