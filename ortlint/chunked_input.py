"""Handing a file to tree-sitter in chunks (a read callback) without keeping the chunks.

tree-sitter calls its progress callback (the parse limits, frontends/common/source.py) only
when it reads through a callback, so files are handed over a chunk at a time. py-tree-sitter
0.26 keeps one reference to every chunk the callback returns: the chunks are never freed, and a
worker that parsed ONNX Runtime's tree kept 1.8 times the bytes of every file and header it
parsed (tree-sitter re-reads while it recovers from errors). `ChunkedInput` gives the chunks
out and, once the parse returned, drops exactly the references nobody accounts for; with a
py-tree-sitter that keeps none there is nothing to drop, and nothing is done.
"""
from __future__ import annotations

import platform
import sys
from typing import Callable

_CPYTHON = platform.python_implementation() == "CPython"  # reference counts are what getrefcount says


def _decref() -> Callable[[object], None] | None:
    """`Py_DecRef` through ctypes (CPython only; None where it is not available)."""
    if not _CPYTHON:
        return None
    try:
        import ctypes
    except ImportError:
        return None
    function = ctypes.pythonapi.Py_DecRef
    function.argtypes = [ctypes.py_object]
    function.restype = None
    return function


_DECREF = _decref()


class ChunkedInput:
    """The read callback over `data`, `chunk` bytes at a time; `release()` after the parse."""

    __slots__ = ("data", "chunk", "handed")

    def __init__(self, data: bytes, chunk: int):
        self.data = data
        self.chunk = chunk
        self.handed: list[bytes] = []  # every chunk given out (each a new object: see `read`)

    def read(self, offset: int, _point: object) -> bytes:
        piece = self.data[offset:offset + self.chunk]
        if len(piece) > 1:  # (empty and one-byte bytes are shared singletons: never counted)
            if piece is self.data:  # a whole small file: a copy, so that only `handed` holds it
                piece = bytes(memoryview(piece))
            self.handed.append(piece)
        return piece

    def release(self) -> None:
        """Drops the references the parser kept to the chunks it was given: a chunk is held by
        `handed` (once per time it was given out: each is a new object, so once), by the loop
        and by getrefcount's argument; a count above that is the parser's leak, at most one
        per time given out."""
        handed, self.handed = self.handed, []
        if _DECREF is None:
            return
        for piece in handed:
            extra = sys.getrefcount(piece) - 3
            if extra == 1:  # (anything else is not the leak this works around: left alone)
                _DECREF(piece)
