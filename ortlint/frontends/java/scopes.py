"""The Java lowering's bookkeeping: `finally` blocks to run and functions still to lower (break targets and
inlined calls are `managed/scopes.py`'s)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tree_sitter import Node

from .type_index import ClassInfo


@dataclass
class Finalizer:
    """A `finally` block or a try-with-resources close that every exit through it must run."""

    run: Callable[[], None]
    handler: int | None  # where exceptions go while it runs (outside the try)


@dataclass
class PendingFunction:
    """A lambda or anonymous-class method found while lowering another function."""

    node: Node
    name: str
    cls: ClassInfo
    captured: dict[str, str]
    kind: str  # "lambda" | "method"
