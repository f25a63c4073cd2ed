"""The IR a worker holds until analysis is kept pickled (orchestration/irstore.py) and goes once
its function is analyzed: what a run holds between parsing and analysis is a fifth of the live
objects, and nothing is left at the end (issue 31: peak memory on ONNX Runtime's tree)."""
from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from ortlint import ir
from ortlint.api import default_policy
from ortlint.discover import SourceFile
from ortlint.engine.analyze import Options
from ortlint.orchestration import parallel, runner
from ortlint.orchestration.irstore import IRStore, key_of, load_blob
from ortlint.orchestration.parsing import parse_file
from ortlint.orchestration.runner import run
from ortlint.orchestration.settings import RunConfig

SOURCE = """#include <stdlib.h>
#include <string.h>
struct pair { char *left; char *right; };
static int fill(char *buf, int n) { for (int i = 0; i < n; i++) { buf[i] = (char)('a' + i % 26); } return n; }
int copy_twice(const char *src, int n) {
    char *a = malloc(n + 1);
    if (!a) return -1;
    char *b = malloc(n + 1);
    if (!b) { free(a); return -1; }
    memcpy(a, src, n);
    fill(b, n);
    if (n > 64) { free(b); return -2; }  /* a leaks here */
    free(a);
    free(b);
    return 0;
}
int make_pair(struct pair *out, int n) {
    out->left = malloc(n);
    if (!out->left) return -1;
    out->right = malloc(n);
    if (!out->right) { free(out->left); out->left = NULL; return -1; }
    return 0;
}
"""


def _functions(tmp_path: Path, copies: int = 1) -> list[ir.Function]:
    path = tmp_path / "pairs.c"
    path.write_text(SOURCE)
    out = []
    for i in range(copies):
        renamed = SOURCE.replace("copy_twice", f"copy_twice{i}").replace("make_pair", f"make_pair{i}") \
            .replace("fill(", f"fill{i}(")
        out.extend(parse_file(SourceFile(str(path), "c"), default_policy(), renamed.encode()).functions)
    return out


def test_a_function_comes_back_equal_and_is_then_gone(tmp_path: Path) -> None:
    functions = _functions(tmp_path)
    store = IRStore()
    for fn in functions:
        store.put(fn)
    assert len(store) == len(functions) == 3
    assert store.nbytes > 0
    for fn in functions:
        key = key_of(fn)
        assert isinstance(store.blob(key), bytes)
        back = store.take(key)
        assert back == fn and back is not fn
        assert key not in store and store.take(key) is None
    assert len(store) == 0 and store.nbytes == 0


def test_held_ir_is_much_smaller_than_the_parsed_objects(tmp_path: Path) -> None:
    """What a worker waits with: the bytes held against the live IR they stand for."""
    gc.collect()
    tracemalloc.start()
    try:
        functions = _functions(tmp_path, copies=40)
        gc.collect()
        live = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    store = IRStore()
    for fn in functions:
        store.put(fn)
    assert len(store) == 120
    assert store.nbytes * 3 < live, (store.nbytes, live)


def test_ir_too_deep_to_pickle_is_kept_as_it_is(tmp_path: Path) -> None:
    loc = ir.Loc(1, 1, 1, 1)
    expr: ir.Expr = ir.Var("x")
    for _ in range(5000):
        expr = ir.Op("+", (expr, ir.Const(1, "1")))
    fn = ir.Function("deep", str(tmp_path / "deep.c"), loc, "c", [], {}, [ir.Block(0, [ir.Assign(loc, ir.Var("y"), expr)], ir.Return(None, loc))])
    store = IRStore()
    store.put(fn)
    assert store.blob(key_of(fn)) is fn and store.nbytes == 0
    assert load_blob(store.blob(key_of(fn))) is fn
    assert store.take(key_of(fn)) is fn and len(store) == 0


def test_a_worker_releases_each_function_it_analyzes(tmp_path: Path) -> None:
    """`_analyze_batch` as a worker runs it: every analyzed function's IR leaves the store."""
    functions = _functions(tmp_path)
    store = IRStore()
    for fn in functions:
        store.put(fn)
    keys = sorted(key_of(fn) for fn in functions)
    results = parallel._analyze_batch(store, [(key, {}) for key in keys], default_policy(), Options(), {})
    assert sorted(results) == keys and all(r is not None for r in results.values())
    assert len(store) == 0 and store.nbytes == 0


def test_a_parallel_run_holds_pickled_ir_then_none_and_finds_the_same(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        (tmp_path / f"unit{i}.c").write_text(SOURCE.replace("copy_twice", f"copy_twice{i}")
                                             .replace("make_pair", f"make_pair{i}"))
    alone = run(RunConfig([str(tmp_path)], default_policy(), jobs=1, isolate=False))
    monkeypatch.setattr(runner, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(runner, "PARALLEL_MIN_BYTES", 0)
    together = run(RunConfig([str(tmp_path)], default_policy(), jobs=2))
    assert together.stats["workers"] == 2
    assert together.stats["max_ir_bytes"] > 1000  # the workers held the parsed IR, pickled
    assert together.stats["ir_bytes_left"] == 0  # and none of it once every function was analyzed
    assert together.findings == alone.findings
    assert len(alone.findings) == 6


def test_ir_sent_to_the_main_process_leaves_the_worker(tmp_path: Path) -> None:
    """IR fetched by the main process (a recursive component spread over workers is analyzed
    there) or moved to another worker is no longer held where it was parsed: nothing waits
    for the end of the run (ONNX Runtime's tree kept 9 MB of it)."""
    path = tmp_path / "pairs.c"
    path.write_text(SOURCE)
    pool = parallel.WorkerPool(2, default_policy(), Options(), None)
    try:
        metas = pool.parse([(str(path), "c", None)])
        keys = [(str(path), name, line) for name, line, *_rest in metas[0].functions]
        w = pool.owner[str(path)]
        held = pool.ir_bytes[w]
        assert len(keys) == 3 and held > 0
        moved = pool._export(w, keys[:1])
        assert moved is not None and 0 < pool.ir_bytes[w] < held
        fetched = pool.fetch_ir(keys[1:])
        assert sorted(fn.name for fn in fetched.values()) == sorted(k[1] for k in keys[1:])
        assert pool.ir_bytes[w] == 0
        assert pool.fetch_ir(keys[1:2]) == {keys[1]: None}  # asked again: gone
    finally:
        pool.close()
