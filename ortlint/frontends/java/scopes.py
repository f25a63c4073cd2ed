"""The Java lowering's bookkeeping: `finally` blocks to run, break targets, inlined calls, functions still to lower."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tree_sitter import Node

from ... import ir
from .type_index import ClassInfo


@dataclass
class Finalizer:
    """A `finally` block or a try-with-resources close that every exit through it must run."""

    run: Callable[[], None]
    handler: int | None  # where exceptions go while it runs (outside the try)


@dataclass
class Breakable:
    """A loop, a switch or a labeled statement: a target for `break` (and `continue`)."""

    brk: int
    cont: int | None
    labels: tuple[str, ...] = ()
    is_switch: bool = False
    yield_to: ir.Expr | None = None  # switch expressions: where `yield` stores its value


@dataclass
class Inlined:
    """A lambda body lowered in place (`forEach`): its `return` continues the loop."""

    cont: int


@dataclass
class PendingFunction:
    """A lambda or anonymous-class method found while lowering another function."""

    node: Node
    name: str
    cls: ClassInfo
    captured: dict[str, str]
    kind: str  # "lambda" | "method"
