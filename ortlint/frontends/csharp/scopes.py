"""The C# lowering's bookkeeping: `try` frames (handlers per exception, `finally` blocks and
`using` disposals to run on every exit) and functions to lower (break targets and inlined loop
bodies are `managed/scopes.py`'s)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from tree_sitter import Node

from ... import ir


@dataclass
class Catch:
    """One `catch` clause: the type it names (None: every exception), its `when` filter."""

    node: Node
    type: str | None
    filtered: bool
    block: ir.Block | None = None


@dataclass
class TryFrame:
    """A `try` (with catches and/or a finally), or a `using` (a finally that disposes).

    Exceptions are routed by *token*: "ORT" (an ONNX Runtime call), "*" (anything: a helper of
    the analyzed code, a rethrow of an unknown exception), or the simple name of an explicitly
    thrown type. Each token that reaches the frame gets its own dispatch block (which catches
    can take it) and its own exceptional copy of the finally, so a `catch (OnnxRuntimeException)`
    does not swallow an `ArgumentException` thrown on purpose."""

    catches: list[Catch] = field(default_factory=list)
    final: Callable[[], None] | None = None  # lowers one copy of the finally / the disposal
    final_bytes: int = 0
    phase: str = "body"  # "body": exceptions go to the catches; "catch": only to the finally
    dispatch: dict[str, ir.Block] = field(default_factory=dict)
    fin_exc: dict[str, ir.Block] = field(default_factory=dict)


@dataclass
class PendingFunction:
    """A lambda, anonymous method or local function found while lowering another function."""

    node: Node
    name: str
    outer: "object"  # the enclosing CSharpLowering's context (class, captured types)
    kind: str  # "lambda" | "local"
    captured: dict[str, str] = field(default_factory=dict)  # local name -> type, visible where it was declared
    extra_params: tuple[str, ...] = ()  # local functions: the enclosing locals they use, passed as arguments
