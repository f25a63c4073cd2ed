"""What the header index costs: every C/C++ file of a tree asks for the headers it can see.

    .venv/bin/python bench/header_index_cost.py /work/realcode/native

Prints the files, lines, headers read, the headers of the repository index (indexed from the
repository root of the tree, as the runner does, and the seconds that walk takes), and the
seconds of a cold pass (every header read and parsed) and of a second pass in the same process (headers unchanged: only stat calls), plus
the seconds of the tree-sitter parse of the same files for scale.
"""
from __future__ import annotations

import sys
import time

from ortlint.discover import discover, repository_root
from ortlint.frontends.common import header_index


def main(root: str) -> None:
    found = discover([root], (), True, None)
    files = [s.path for s in found.files if s.language in ("c", "cpp")]
    data = {p: open(p, "rb").read() for p in files}
    lines = sum(d.count(b"\n") for d in data.values())
    header_index.configure((), (repository_root(root, root),))  # as the runner: the repository, whatever is named
    index = header_index.current()
    started = time.perf_counter()
    indexed = sum(len(v) for v in index._walk_roots().values())  # the repository index, once (the runner: lazily)
    walked = time.perf_counter() - started
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
    print(f"files {len(files)}  lines {lines}  headers read {index.parsed}  header uses {used}  "
          f"headers in the repository index {indexed} (walk {walked:.2f} s)")
    print(f"index cold {cold:.2f} s  index warm (same process) {warm:.2f} s  tree-sitter parse of the files {parse:.2f} s")


if __name__ == "__main__":
    main(sys.argv[1])
