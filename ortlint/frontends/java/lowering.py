"""One Java method body -> IR (`JavaLowering`); the constructs it understands live in the mixins it is assembled
from, over the lowering it shares with C# (`managed/lowering.py`)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

from tree_sitter import Node

from ... import ir
from ...ir import Opaque
from ..common.cfg import CfgBuilder, field_ids
from ..managed.lowering import ManagedLowering
from .calls import JavaCalls
from .exceptions import JavaExceptions
from .expressions import JavaExpressions
from ..managed.scopes import Breakable, Inlined
from .scopes import Finalizer
from .statements import JavaStatements
from .syntax import F_OPERATOR, JAVA_LANGUAGE
from .tables import _HEAD_BYTES, _OPERATORS, _SIMPLE_STATEMENTS, _SKIP, _short
from .type_index import ClassInfo

if TYPE_CHECKING:
    from .frontend import JavaFrontEnd


class JavaLowering(JavaStatements, JavaExceptions, JavaExpressions, JavaCalls, ManagedLowering):
    """Builds the control-flow graph of one method, constructor, initializer or lambda."""

    language = "java"
    COMMENT_TYPES = _SKIP
    SIMPLE_STATEMENTS = _SIMPLE_STATEMENTS
    IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
    EXPR_BODY_KIND = "lambda-expr"
    CALL_NODE_TYPES = ("method_invocation", "object_creation_expression", "ternary_expression", "switch_expression")
    UNARY_OPERAND = "operand"
    TERNARY_TYPE = "ternary_expression"

    def __init__(self, unit: "JavaFrontEnd", node: Node, name: str, cls: ClassInfo,
                 captured: dict[str, str] | None = None):
        self.init_graph()
        self.init_lowering()
        self.F = field_ids(JAVA_LANGUAGE)  # the shared expressions of CfgBuilder find fields by id
        self.unit = unit
        self.named = unit.named  # type: ignore[method-assign]  # this file's comment-aware filter
        self.types = unit.types
        self.src = unit.src
        self.ascii = unit.ascii
        self.node = node
        self.name = name
        self.cls = cls
        self.captured = dict(captured or {})
        self.ctx: list[Finalizer | Breakable | Inlined] = []
        self.thrown: list[set[str]] = []  # per enclosing try body: the checked exceptions it may throw ("*": unknown)
        self.library_calls: list[tuple[ir.Call, int]] = []  # calls inside a try declaring unknown exceptions, and their handler
        self.pending_label: tuple[str, ...] = ()
        self.vars, self.this_fields = unit.vars, unit.this_fields
        self.int_consts, self.text_consts = unit.int_consts, unit.text_consts

    # ------------------------------------------------------------------ scopes

    def declare_param(self, name: str, type_: str) -> None:
        """Parameters live in the outermost scope and are not `locals`."""
        self.scopes[0][name] = type_
        self.visible[name] = type_

    def local_type(self, name: str) -> str | None:
        return self.visible.get(name)

    # ------------------------------------------------------------------ entry point

    def lower(self, params: list[tuple[str, str]], body: Node | Callable[[], None] | None,
              kind: str = "method") -> ir.Function:
        """Parameters, then the body (`lambda-expr`: an expression whose value is returned)."""
        for pname, ptype in params:
            self.params.append(pname)
            self.declare_param(pname, ptype)
        return self.lower_function(body, kind)

    def lower_body(self, body: Node) -> None:
        """The outermost block: no Kill at its end, the implicit return reports what leaks."""
        for child in self.named(body):
            self.lower_stmt(child)

    # ------------------------------------------------------------------ source text and operators

    def short_text(self, node: Node) -> str:
        """`short(self.text(node))` without decoding and folding all of a long node: a call's
        text includes its arguments' (lambda bodies, anonymous classes), so nested calls made
        this quadratic. When the folded head of the text is already cut, so is the whole."""
        start, end = node.start_byte, node.end_byte
        if end - start > _HEAD_BYTES:
            head = self.src[start:start + _HEAD_BYTES].decode("utf-8", "replace")
            cut = _short(head)
            if cut != " ".join(head.split()):
                return cut
        return _short(self.src[start:end].decode("utf-8", "replace"))

    def expr_generic(self, node: Node) -> ir.Expr:
        """`CfgBuilder.expr_generic` with `short_text`."""
        parts = tuple(self.lower_expr(c) for c in self.named(node))
        return Opaque(self.short_text(node), parts)

    def operator(self, node: Node) -> str:
        """`CfgBuilder.operator`, memoized on the operator's bytes (a handful of distinct tokens)."""
        op_node = node.child_by_field_id(F_OPERATOR)
        if op_node is None:
            return "?"
        raw = self.src[op_node.start_byte:op_node.end_byte]
        op = _OPERATORS.get(raw)
        if op is None:
            op = CfgBuilder.operator(self, node)
            if len(raw) <= 4:
                _OPERATORS[raw] = op
        return op
