"""Giving freed memory back to the system (glibc), so that a process's resident size follows
what it holds rather than the most it ever held.

tree-sitter's syntax trees, and the front ends' work on them, are allocated with malloc and
freed file by file; glibc keeps freed blocks inside its heap, and a worker's resident size
stayed at its high-water mark while it went on holding only the IR. `malloc_trim` returns the
free pages of the heap (not only its top) to the system. Elsewhere (no glibc) nothing is done.
"""
from __future__ import annotations

from typing import Callable


def _trim_function() -> Callable[[int], int] | None:
    try:
        import ctypes
        import ctypes.util
        name = ctypes.util.find_library("c")
        function = ctypes.CDLL(name).malloc_trim if name else None
    except (ImportError, OSError, AttributeError):
        return None
    if function is not None:
        function.argtypes = [ctypes.c_size_t]
        function.restype = ctypes.c_int
    return function


_TRIM = _trim_function()


def release_free_memory() -> None:
    """Hand the allocator's free pages back to the system (a few milliseconds)."""
    if _TRIM is not None:
        _TRIM(0)
