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
