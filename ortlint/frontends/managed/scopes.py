"""The bookkeeping both managed lowerings keep on their context stack: break targets and lambda
bodies lowered in place. (What `finally` means differs: each language has its own frame.)"""
from __future__ import annotations

from dataclasses import dataclass

from ... import ir


@dataclass
class Breakable:
    """A loop, a switch or (Java) a labeled statement: a target for `break` (and `continue`)."""

    brk: int
    cont: int | None
    labels: tuple[str, ...] = ()  # Java: the labels naming it (C# has `goto` instead)
    is_switch: bool = False
    yield_to: ir.Expr | None = None  # Java switch expressions: where `yield` stores its value


@dataclass
class Inlined:
    """A lambda body lowered in place (`forEach`, `List.ForEach`): its `return` continues the loop."""

    cont: int
