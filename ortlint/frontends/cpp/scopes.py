"""The C++ lowering's bookkeeping: scopes and the destructors they run, try contexts, inlined-call targets,
and the `Oracle` protocol through which libclang answers type questions."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from tree_sitter import Node

from ... import ir
from ...ir import Loc
from ..common.macro_args import Macro
from .model import Ownership


class Oracle(Protocol):
    """What libclang knows that syntax alone does not (see clang_frontend.ClangOracle)."""

    macros: dict[str, Macro]

    def member_call(self, line: int, col: int) -> tuple[str, str | None] | None:
        """('table', None) for a function-table entry, ('method', receiver type) otherwise."""

    def decl_type(self, line: int, col: int) -> str | None:
        """The type of the variable declared at this position."""

    def ref_type(self, line: int, col: int) -> str | None:
        """The type of the variable named at this position."""


@dataclass
class Scope:
    """A `{...}` block: destructors to run when it ends, and the handler in force outside it."""

    cleanups: list[tuple[str, Callable[[Loc], None]]] = field(default_factory=list)
    handler: int | None = None
    names: set[str] = field(default_factory=set)  # locals declared in it (as written)
    shadowing: list[tuple[str, "ir.Expr | None"]] = field(default_factory=list)  # (name, what it meant outside)


@dataclass
class Frame:
    """Names declared by one function body (the analyzed one, or one lowered in place)."""

    types: dict[str, str] = field(default_factory=dict)
    owners: dict[str, Ownership] = field(default_factory=dict)
    lambdas: dict[str, Node] = field(default_factory=dict)


@dataclass
class TryContext:
    dispatch: int
    depth: int


@dataclass
class InlineTarget:
    """Where a `return` inside a body lowered in place goes."""

    exit: int
    result: ir.Expr | None
    depth: int
