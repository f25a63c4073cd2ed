"""Memory the run gives back: chunks handed to tree-sitter are not kept (chunked_input), and
freed heap pages go back to the system (orchestration/memory)."""
from __future__ import annotations

import ctypes
import gc
import sys
import tracemalloc

import tree_sitter
import tree_sitter_c

from ortlint.chunked_input import ChunkedInput
from ortlint.frontends.common.source import parse_limited
from ortlint.orchestration.memory import release_free_memory


def _source(functions: int) -> bytes:
    return b"".join(b"int f%d(int a) { int b = a * %d; if (b > 3) { return b; } return a; }\n" % (i, i)
                    for i in range(functions))


def test_parsing_a_file_again_and_again_keeps_nothing_of_it() -> None:
    """py-tree-sitter 0.26 kept a reference to every chunk the read callback returned: each
    parse of a file leaked about twice its size."""
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_c.language()))
    data = _source(2000)  # ~150 KB
    parse_limited(parser, data)  # (caches warmed)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(5):
            tree = parse_limited(parser, data)
            assert tree.root_node.child_count == 2000
            del tree
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < len(data) // 4, grown


def test_only_references_nobody_accounts_for_are_dropped() -> None:
    """A chunk held once more than `handed` accounts for (the binding's leak) loses that
    reference and is freed; a chunk someone else holds too is left alone; a whole small file
    is handed out as a copy (only `handed` and the parser hold it)."""
    data = bytes(range(256)) * 8192  # 2 MB: chunks of 1 MB
    source = ChunkedInput(data, 1 << 20)
    tracemalloc.start()
    try:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(source.read(0, None)))  # what the binding does
        kept = source.read(1 << 20, None)
        holders = [kept, kept]  # more references than the leak's: left alone
        assert source.read(len(data), None) == b""
        assert len(source.handed) == 2
        before, refs = tracemalloc.get_traced_memory()[0], sys.getrefcount(kept)
        source.release()
        freed = before - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert freed > (1 << 20) * 9 // 10  # the leaked chunk is gone
    assert sys.getrefcount(kept) == refs - 1 and holders[0] is kept  # only `handed`'s reference went
    assert source.handed == []
    small = ChunkedInput(b"int x;", 4096)
    piece = small.read(0, None)
    assert piece == b"int x;" and piece is not small.data


def test_release_free_memory_is_harmless() -> None:
    release_free_memory()
    release_free_memory()


def test_java_and_csharp_parses_keep_no_reference_to_the_file() -> None:
    """Their read callbacks returned memoryview slices, which py-tree-sitter kept: each one
    held the whole file's bytes for the rest of the worker's life."""
    from ortlint.frontends.csharp.syntax import parse_tree as parse_csharp
    from ortlint.frontends.java.syntax import parse_tree as parse_java
    for parse, method in ((parse_java, b"int f(int a)"), (parse_csharp, b"int F(int a)")):
        data = bytes(bytearray(b"class A { %s { return a + 1; } }\n" % method * 2000))
        refs = sys.getrefcount(data)
        tree = parse(data)
        assert tree is not None and tree.root_node.child_count == 2000
        del tree
        gc.collect()
        assert sys.getrefcount(data) == refs


def test_macro_expansion_trees_kept_are_bounded_and_recent() -> None:
    """The process keeps at most MAX_SNIPPETS expansion trees, the least recently used dropped
    (4096 kept cost a worker about 20 MB for 3 % more hits than 256)."""
    from ortlint.frontends.c import frontend
    from ortlint.frontends.c.frontend import CFrontEnd
    fe = CFrontEnd.__new__(CFrontEnd)
    fe.ts_language, fe.parser = frontend.C_LANGUAGE, tree_sitter.Parser(frontend.C_LANGUAGE)
    first = fe.parse_snippet("keep_me(0);")
    for i in range(frontend.MAX_SNIPPETS * 2):
        assert fe.parse_snippet("keep_me(0);") is first  # used again and again: never dropped
        fe.parse_snippet("other(%d);" % i)
    assert len(frontend._SNIPPETS) == frontend.MAX_SNIPPETS
    assert frontend._snippet_chars == sum(len(text) for _lang, text in frontend._SNIPPETS)


def _lambda_with_checks(checks: int) -> bytes:
    """A lambda, inlined where it is called, that checks `checks` statuses through a macro with
    its own local `status` (renamed in each expansion: the caller has a `status` too)."""
    check = (b"    CHECK(api->SessionGetInputCount(session, &count));\n"
             b"    *total += count;\n")
    return (b"#define CHECK(expr) do { OrtStatus *status = (expr); if (status != nullptr) {"
            b" api->ReleaseStatus(status); return false; } } while (0)\n"
            b"OrtStatus *Count(const OrtApi *api, const OrtSession *const *sessions, size_t n, size_t *total) {\n"
            b"  OrtStatus *status = nullptr;\n"
            b"  auto add = [&](const OrtSession *session) {\n"
            b"    size_t count = 0;\n" + check * checks +
            b"    return true;\n"
            b"  };\n"
            b"  for (size_t i = 0; i < n; ++i) {\n"
            b"    if (!add(sessions[i])) { status = api->CreateStatus(ORT_FAIL, \"count\"); break; }\n"
            b"  }\n"
            b"  return status;\n"
            b"}\n")


def test_analysis_memory_grows_linearly_with_dead_locals(tmp_path) -> None:
    """Each block kept the set of the locals dead at its entry (explore._trim_dead): a function
    with N inlined expansions, each with its own `status`, has ~3N blocks and N locals, dead at
    nearly every block: N^2 memory (a fuzzed 2000-check lambda took over 1 GB, the worker's
    limit). Kept as bit masks, the peak grows with N."""
    from ortlint.api import default_policy
    from ortlint.orchestration.runner import run
    from ortlint.orchestration.settings import RunConfig
    peaks = []
    for checks in (1, 50, 200):  # (the first warms the caches)
        path = tmp_path / f"count{checks}.cpp"
        path.write_bytes(_lambda_with_checks(checks))
        config = RunConfig([str(path)], default_policy(), isolate=False, use_default_excludes=False)
        tracemalloc.start()
        try:
            report = run(config)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert not report.findings and not [n for n in report.notices if n.level == "error"]
    assert peaks[2] < 6 * peaks[1], peaks  # 4x the checks: 4x the memory (it was 9x)
