"""One Java method body -> IR (`JavaLowering`); the constructs it understands live in the mixins it is assembled from."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from tree_sitter import Node

from ... import ir
from ...ir import Block, Field, Opaque, Return, Var
from ..common.cfg import CfgBuilder, TooDeep, field_ids
from .calls import JavaCalls
from .exceptions import JavaExceptions
from .expressions import JavaExpressions
from .scopes import Breakable, Finalizer, Inlined
from .statements import JavaStatements
from .syntax import F_OPERATOR, JAVA_LANGUAGE
from .tables import _HEAD_BYTES, _OPERATORS, _SIMPLE_STATEMENTS, _SKIP, _THIS, MAX_NESTING, _short
from .type_index import ClassInfo

if TYPE_CHECKING:
    from .frontend import JavaFrontEnd


class JavaLowering(JavaStatements, JavaExceptions, JavaExpressions, JavaCalls, CfgBuilder):
    """Builds the control-flow graph of one method, constructor, initializer or lambda."""

    language = "java"
    COMMENT_TYPES = _SKIP
    CALL_NODE_TYPES = ("method_invocation", "object_creation_expression", "ternary_expression", "switch_expression")
    UNARY_OPERAND = "operand"
    TERNARY_TYPE = "ternary_expression"
    MAX_NESTING = MAX_NESTING

    def __init__(self, unit: "JavaFrontEnd", node: Node, name: str, cls: ClassInfo,
                 captured: dict[str, str] | None = None):
        self.init_graph()
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
        self.finally_bytes = 0  # source lowered again as copies of `finally` blocks (run_finally)
        self.thrown: list[set[str]] = []  # per enclosing try body: the checked exceptions it may throw ("*": unknown)
        self.library_calls: list[tuple[ir.Call, int]] = []  # calls inside a try declaring unknown exceptions, and their handler
        self.scopes: list[dict[str, str]] = [{}]
        self.visible: dict[str, str] = {}  # the innermost declaration of every local in scope
        self.shadowed: list[dict[str, str | None]] = [{}]  # per scope: what its names hid (None: nothing)
        self.pending_label: tuple[str, ...] = ()
        self.vars, self.this_fields = unit.vars, unit.this_fields
        self.int_consts, self.text_consts = unit.int_consts, unit.text_consts

    # ------------------------------------------------------------------ graph plumbing

    def fresh_region(self) -> None:
        """Continue in a new block, so a handler change applies to what follows."""
        block = self.new_block()
        self.jump(block)
        self.start(block)

    # ------------------------------------------------------------------ shared IR values

    def var(self, name: str) -> Var:
        """`Var(name)`, one instance per name and file. IR expressions are immutable, and the
        IR of a large tree is mostly small objects: fewer of them are fewer to build and fewer
        for the garbage collector to walk again and again while the run goes on."""
        found = self.vars.get(name)
        if found is None:
            found = self.vars[name] = Var(name)
        return found

    def this_field(self, name: str) -> Field:
        """`Field(this, name)`, one instance per name and file (see `var`)."""
        found = self.this_fields.get(name)
        if found is None:
            found = self.this_fields[name] = Field(_THIS, name)
        return found

    # ------------------------------------------------------------------ scopes

    def declare(self, name: str, type_: str) -> None:
        """Declare a local in the innermost scope. `visible` is kept up to date, so looking a
        name up (several times per identifier) is one dict access, not a walk over scopes."""
        scope = self.scopes[-1]
        if name not in scope:
            self.shadowed[-1][name] = self.visible.get(name)
        scope[name] = type_
        self.visible[name] = type_
        self.locals[name] = False

    def declare_param(self, name: str, type_: str) -> None:
        """Parameters live in the outermost scope and are not `locals`."""
        self.scopes[0][name] = type_
        self.visible[name] = type_

    def local_type(self, name: str) -> str | None:
        return self.visible.get(name)

    def is_local(self, name: str) -> bool:
        return name in self.visible

    def visible_types(self) -> dict[str, str]:
        """Everything a lambda or anonymous class declared here can capture, with its type."""
        out = dict(self.captured)
        out.update(self.visible)
        return out

    def kill_at(self, names: tuple[str, ...], node: Node) -> None:
        """`kill(names, self.loc(node))`, building the location only when something dies."""
        if names and self.cur is not None:
            self.emit(ir.Kill(self.loc(node), names))

    def push_scope(self) -> None:
        self.scopes.append({})
        self.shadowed.append({})

    def pop_scope(self, node: Node | None) -> None:
        """Leaving a block: its locals are gone, so a resource only they held is lost here."""
        scope = self.scopes.pop()
        visible = self.visible
        for name, hidden in self.shadowed.pop().items():
            if hidden is None:
                del visible[name]
            else:
                visible[name] = hidden
        if node is not None and scope and self.cur is not None:
            self.kill(tuple(sorted(scope)), self.end_loc(node))

    # ------------------------------------------------------------------ entry point

    def lower(self, params: list[tuple[str, str]], body: Node | Callable[[], None] | None,
              kind: str = "method") -> ir.Function:
        """Parameters, then the body; an implicit `return` closes the last open block."""
        for pname, ptype in params:
            self.params.append(pname)
            self.declare_param(pname, ptype)
        entry = self.new_block()
        self.start(entry)
        if callable(body):
            body()
        elif body is not None:
            if kind == "lambda-expr":
                self.lower_return_value(body, body)
            else:
                self.lower_body(body)
        end = self.end_loc(self.node)
        if self.cur is not None:
            self.terminate(Return(None, end))
        for block in self.blocks:
            if block.term is None:
                block.term = Return(None, end)
        return ir.Function(name=self.name, path=self.unit.path, loc=self.loc(self.node), language=self.language,
                           params=self.params, locals=self.locals, blocks=self.blocks, entry=0,
                           is_static=False, notes=self.notes)

    def lower_body(self, body: Node) -> None:
        """The outermost block: no Kill at its end, the implicit return reports what leaks."""
        for child in self.named(body):
            self.lower_stmt(child)

    # ------------------------------------------------------------------ statements

    def lower_stmt(self, node: Node) -> None:
        """Dispatch on the statement type; a statement with a syntax error is havocked whole."""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            t = node.type
            if t in _SKIP:
                return
            handler = _STMT_HANDLERS.get(t)
            if t in _SIMPLE_STATEMENTS and node.has_error:
                self.unparsed(node)  # the whole statement: its names are what the error hides
            elif handler is not None:
                handler(self, node)
            elif t == "ERROR" or node.is_missing:
                self.unparsed(node)
            elif node.is_named:
                self.lower_expr_stmt(node)
        finally:
            self.depth -= 1

    def lower_expr(self, node: Node | None, discard: bool = False, dest: ir.Expr | None = None) -> ir.Expr:
        """`CfgBuilder.lower_expr`, dispatching through a table instead of `getattr`."""
        if node is None:
            return Opaque("")
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            handler = _EXPR_HANDLERS.get(node.type)
            if handler is not None:
                return handler(self, node, discard, dest)
            return self.expr_fallback(node)
        finally:
            self.depth -= 1

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

    def lower_cond(self, node: Node | None, t: Block, f: Block, kind: str = "if") -> None:
        """`CfgBuilder.lower_cond`, counted in `depth`: a chain of `&&` recurses once per term."""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            super().lower_cond(node, t, f, kind)
        finally:
            self.depth -= 1

    # -- loops

    # -- switch

    # -- try

    # -- the rest

    # ------------------------------------------------------------------ conditions

    # ------------------------------------------------------------------ expressions

    # ------------------------------------------------------------------ calls

    # ------------------------------------------------------------------ static types

def _handlers(cls: type, prefix: str) -> dict[str, Callable]:
    """node type -> unbound `<prefix><type>` method: the `getattr(self, prefix + type)` lookup
    of every statement and expression, done once."""
    return {name[len(prefix):]: getattr(cls, name) for name in dir(cls)
            if name.startswith(prefix) and callable(getattr(cls, name))}


_STMT_HANDLERS = _handlers(JavaLowering, "stmt_")


_EXPR_HANDLERS = _handlers(JavaLowering, "expr_")
