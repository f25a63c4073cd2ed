"""What both managed front ends do around the lowering of one file's functions: a function that
cannot be lowered becomes a note naming it (never a crash), and a file with a syntax error that
no function noted gets a note of its own."""
from __future__ import annotations

from typing import Callable

from tree_sitter import Node

from ... import ir
from ...ir import Loc
from ..common.cfg import TooDeep, TooManyCleanups
from .limits import MAX_FINALLY_BYTES
from .syntax import walk


def lower_or_note(lower: Callable[[], ir.Function | None], node: Node, name: str,
                  notes: list[tuple[Loc, str]]) -> ir.Function | None:
    """`lower()`; too deep a nesting, too many `finally` copies or (plain Python only: the
    compiled build crashes) a walk without its own bound skips the function with a note."""
    try:
        return lower()
    except TooDeep:
        reason = "is nested too deeply to analyze"
    except TooManyCleanups:
        reason = (f"has too many copies of its finally blocks to analyze (more than {MAX_FINALLY_BYTES >> 10} KB "
                  "of source, each exit running its own copy)")
    except RecursionError:
        reason = "exceeded the recursion limit"
    notes.append((Loc(node.start_point[0] + 1, 1, node.end_point[0] + 1, 1), f"{name}() {reason}; skipped"))
    return None


def note_syntax_error(root: Node, functions: list[ir.Function], notes: list[tuple[Loc, str]]) -> None:
    """A tree with errors that no function's notes mention: one note at the first error."""
    if root.has_error and not any(fn.notes for fn in functions):
        first = next((n for n in walk(root) if n.type == "ERROR" or n.is_missing), None)
        line = first.start_point[0] + 1 if first is not None else 1
        notes.append((Loc(line, 1, line, 1), f"syntax error near line {line}; code tree-sitter could not parse is not checked"))
