"""Limits both managed lowerings keep: how deep code may nest, how much source the copies of
`finally` blocks may take, and room on the Python stack for that nesting."""
from __future__ import annotations

import contextlib
import sys
from typing import Iterator

MAX_NESTING = 300  # nested statements and expressions; deeper code is skipped with a note
MAX_FINALLY_BYTES = 1 << 20  # source lowered as copies of `finally` blocks, per function (run_finally)


@contextlib.contextmanager
def frames_for_nesting(frames_per_level: int) -> Iterator[None]:
    """Room for MAX_NESTING levels (`frames_per_level` Python frames each) below the caller's
    frames. The bounds on nesting are the front end's own depth counters (the compiled build has
    no recursion limit to stop a walk); plain Python's default limit of 1 000 frames would
    otherwise cut some legal nesting short."""
    saved = sys.getrecursionlimit()
    needed = frames_per_level * MAX_NESTING + 1000
    if saved < needed:
        sys.setrecursionlimit(needed)
    try:
        yield
    finally:
        if saved < needed:
            sys.setrecursionlimit(saved)
