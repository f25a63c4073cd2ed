"""What the header index costs: every C/C++ file of a tree asks for the headers it can see.

    .venv/bin/python bench/header_index_cost.py /work/realcode/native

Prints the files, lines, headers read, and the seconds of a cold pass (every header read and
parsed) and of a second pass in the same process (headers unchanged: only stat calls), plus
the seconds of the tree-sitter parse of the same files for scale.
"""
from __future__ import annotations

import sys
import time

from ortlint.discover import discover
from ortlint.frontends.common import header_index


def main(root: str) -> None:
    found = discover([root], (), True, None)
    files = [s.path for s in found.files if s.language in ("c", "cpp")]
    data = {p: open(p, "rb").read() for p in files}
    lines = sum(d.count(b"\n") for d in data.values())
    header_index.configure((), (root,))
    index = header_index.current()
    started = time.perf_counter()
    seen = [index.visible(p, data[p]) for p in files]
    cold = time.perf_counter() - started
    started = time.perf_counter()
    for p in files:
        index.visible(p, data[p])
    warm = time.perf_counter() - started
    from tree_sitter import Language, Parser
    import tree_sitter_cpp
    parser = Parser(Language(tree_sitter_cpp.language()))
    started = time.perf_counter()
    for p in files:
        parser.parse(data[p])
    parse = time.perf_counter() - started
    used = sum(len(v.headers) for v in seen)
    print(f"files {len(files)}  lines {lines}  headers read {index.parsed}  header uses {used}")
    print(f"index cold {cold:.2f} s  index warm (same process) {warm:.2f} s  tree-sitter parse of the files {parse:.2f} s")


if __name__ == "__main__":
    main(sys.argv[1])
