"""The IR a worker holds between parsing a file and analyzing its functions, kept compact.

A worker parses its share of the tree first and analyzes each function later, when the main
process has the summaries of its callees (the call graph needs every file's names). Until then
the IR waited as live objects: on ONNX Runtime's tree (45 K functions) about 15 KB per function,
300-350 MB per worker, most of the run's peak memory. Kept pickled instead (`pickling`: each IR
class pickles as a call of its constructor), a function takes about a fifth of that; it becomes
objects again only when it is analyzed (or sent to the main process), and its bytes go then:
nothing of a function outlives its analysis. The objects made again are equal to the parsed
ones (pickle is how IR already moves between processes), so results do not change.
"""
from __future__ import annotations

import pickle
from typing import Iterable, Iterator

from .. import ir

FunctionKey = tuple[str, str, int]


def key_of(fn: ir.Function) -> FunctionKey:
    return (fn.path, fn.name, fn.loc.line)


class IRStore:
    """Functions by key, pickled; `take` gives a function back as objects and forgets it."""

    def __init__(self) -> None:
        self._blobs: dict[FunctionKey, bytes | ir.Function] = {}  # (live: too deep to pickle)
        self.nbytes = 0  # bytes held now (for tests and stats)

    def __len__(self) -> int:
        return len(self._blobs)

    def __contains__(self, key: object) -> bool:
        return key in self._blobs

    def __iter__(self) -> Iterator[FunctionKey]:
        return iter(self._blobs)

    def put(self, fn: ir.Function) -> None:
        """Keep `fn` (a function parsed again replaces the one held under its key). IR nested
        deeper than pickle recurses is kept as it is (as live objects)."""
        try:
            held: bytes | ir.Function = pickle.dumps(fn, pickle.HIGHEST_PROTOCOL)
        except RecursionError:
            held = fn
        self.put_blob(key_of(fn), held)

    def put_blob(self, key: FunctionKey, blob: "bytes | ir.Function") -> None:
        self.discard(key)
        self._blobs[key] = blob
        self.nbytes += len(blob) if isinstance(blob, bytes) else 0

    def add_blobs(self, items: Iterable[tuple[FunctionKey, "bytes | ir.Function"]]) -> None:
        """Functions another worker parsed (moved here to balance the work), as `blob` gave them."""
        for key, blob in items:
            self.put_blob(key, blob)

    def blob(self, key: FunctionKey) -> "bytes | ir.Function | None":
        """The IR of `key` as held (pickled, or live when too deep), still held: to copy it to
        another process, where `load_blob` or `add_blobs` takes it."""
        return self._blobs.get(key)

    def take(self, key: FunctionKey) -> ir.Function | None:
        """The IR of `key` as objects, no longer held here (None when it is not held)."""
        blob = self._blobs.get(key)
        self.discard(key)
        return load_blob(blob)

    def discard(self, key: FunctionKey) -> None:
        blob = self._blobs.pop(key, None)
        if isinstance(blob, bytes):
            self.nbytes -= len(blob)


def load_blob(blob: "bytes | ir.Function | None") -> ir.Function | None:
    """A function from what `IRStore.blob` gave (in the main process: IR fetched from a worker)."""
    return pickle.loads(blob) if isinstance(blob, bytes) else blob
