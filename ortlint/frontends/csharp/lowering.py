"""One C# function body -> IR (`CSharpLowering`); the constructs it understands live in the mixins
it is assembled from (statements, exceptions, expressions, calls)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

from tree_sitter import Node

from ... import ir
from ...ir import Const, Deref, Field, Opaque, Return, Var
from ..common.cfg import CfgBuilder, TooDeep, field_ids
from .calls import CSharpCalls
from .containers import CSharpContainers
from .exceptions import MAX_NESTING, CSharpExceptions
from .expressions import CSharpExpressions
from .project import ClassDecl
from .scopes import Breakable, Inlined, TryFrame
from .statements import CSharpStatements
from .static_types import CSharpTypes
from .syntax import CSHARP_LANGUAGE, SKIP, named
from .types import is_collection

if TYPE_CHECKING:
    from .frontend import CSharpFrontEnd

THIS = Var("this")
NULL, TRUE, FALSE = Const(0, "null"), Const(1, "true"), Const(0, "false")
VOID = Opaque("void")
_SIMPLE_STATEMENTS = frozenset({"expression_statement", "local_declaration_statement", "return_statement",
                                "throw_statement", "yield_statement"})


class CSharpLowering(CSharpStatements, CSharpExceptions, CSharpExpressions, CSharpCalls, CSharpContainers, CSharpTypes, CfgBuilder):
    """Builds the control-flow graph of one method, constructor, accessor, lambda or local function."""

    language = "csharp"
    COMMENT_TYPES = SKIP
    CALL_NODE_TYPES = ("invocation_expression", "object_creation_expression", "implicit_object_creation_expression",
                       "conditional_expression", "switch_expression", "await_expression",
                       "array_creation_expression", "implicit_array_creation_expression", "collection_expression",
                       "conditional_access_expression", "binary_expression", "tuple_expression")
    UNARY_OPERAND = "operand"
    TERNARY_TYPE = "conditional_expression"
    MAX_NESTING = MAX_NESTING

    def __init__(self, unit: "CSharpFrontEnd", node: Node, name: str, cls: ClassDecl | None,
                 captured: dict[str, str] | None = None, static: bool = False):
        self.init_graph()
        self.F = field_ids(CSHARP_LANGUAGE)
        self.unit = unit
        self.src = unit.src
        self.ascii = unit.ascii
        self.node = node
        self.name = name
        self.cls = cls
        self.static = static
        self.captured = dict(captured or {})
        self.ctx: list[TryFrame | Breakable | Inlined] = []
        self.finally_bytes = 0
        self.scopes: list[dict[str, str]] = [{}]
        self.visible: dict[str, str] = {}
        self.shadowed: list[dict[str, str | None]] = [{}]
        self.ref_params: set[str] = set()  # `ref`/`out` parameters: reads and writes go through them
        self.local_functions: dict[str, tuple[str, tuple[str, ...], list]] = {}  # name -> (function, extra args, params)
        self.labels: dict[str, ir.Block] = {}
        self.is_iterator = False
        self.type_memo: dict[tuple[str, int], object] = {}  # node -> its static type / the type it names
        self.null_tests: dict[str, tuple[Node, str]] = {}  # bool local -> (the local it null-tests, "==" | "!=")

    named = staticmethod(named)  # type: ignore[assignment]

    def text(self, node: Node | None) -> str:
        """The source of `node` ("" for a missing one: the grammar leaves optional parts out)."""
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace") if node is not None else ""

    # ------------------------------------------------------------------ graph plumbing

    def fresh_region(self) -> None:
        block = self.new_block()
        self.jump(block)
        self.start(block)

    def var(self, name: str) -> Var:
        found = self.unit.vars.get(name)
        if found is None:
            found = self.unit.vars[name] = Var(name)
        return found

    # ------------------------------------------------------------------ scopes

    def declare(self, name: str, type_: str) -> None:
        scope = self.scopes[-1]
        if name not in scope:
            self.shadowed[-1][name] = self.visible.get(name)
        scope[name] = type_
        self.visible[name] = type_
        self.locals[name] = False

    def declare_param(self, name: str, type_: str, mode: str = "") -> None:
        self.scopes[0][name] = type_
        self.visible[name] = type_
        self.params.append(name)
        if mode in ("ref", "out"):
            self.ref_params.add(name)

    def is_local(self, name: str) -> bool:
        return name in self.visible

    def push_scope(self) -> None:
        self.scopes.append({})
        self.shadowed.append({})

    def pop_scope(self, node: Node | None) -> None:
        scope = self.scopes.pop()
        for name, hidden in self.shadowed.pop().items():
            if hidden is None:
                self.visible.pop(name, None)
            else:
                self.visible[name] = hidden
        if node is not None and scope and self.cur is not None:
            self.kill(tuple(sorted(scope)), self.end_loc(node))

    def kill_at(self, names: tuple[str, ...], node: Node) -> None:
        if names and self.cur is not None:
            self.emit(ir.Kill(self.loc(node), names))

    def visible_types(self) -> dict[str, str]:
        out = dict(self.captured)
        out.update(self.visible)
        return out

    # ------------------------------------------------------------------ members of this class

    def member_type(self, name: str) -> str | None:
        """The declared type of a field or property of this class (or a project base class)."""
        if self.cls is None:
            return None
        found = self.unit.member(self.cls, name)
        return found[0] if found is not None else None

    def member_ref(self, name: str) -> ir.Expr:
        """`name` / `this.name` as a place: a static member lives for the process (a global); an
        instance member is this object's field when the class disposes it somewhere, else a
        place of this function only (storing there hands nothing on: README item 13)."""
        found = self.unit.member(self.cls, name) if self.cls is not None else None
        if found is None:
            return Field(THIS, name)
        _type, static, owner = found
        if static:
            return self.var(f"{owner.path}.{name}")
        if name in owner.computed or self.unit.owns(self.cls, name):  # a setter's code may store it anywhere
            field = self.unit.this_fields.get(name)
            if field is None:
                field = self.unit.this_fields[name] = Field(THIS, name)
            return field
        place = f"this.{name}"
        if place not in self.locals:
            self.locals[place] = False
            if is_collection(_type):
                self.seed_collection(place)
        return self.var(place)

    def seed_collection(self, place: str) -> None:
        """A collection member the class never disposes: what is added to it stays this
        function's (it leaks when the function ends), so it starts as a local collection."""
        self.call_counter += 1
        loc = self.loc(self.node)
        self.blocks[0].events.insert(0, ir.Call(self.call_counter, loc, "new[]", "plain", None, (), self.var(place),
                                                f"{place} (a collection member)", False))

    def param_ref(self, name: str) -> ir.Expr:
        """A `ref`/`out` parameter is the caller's variable: reads and writes go through it."""
        return Deref(self.var(name)) if name in self.ref_params else self.var(name)

    # ------------------------------------------------------------------ entry point

    def lower(self, params: list[tuple[str, str, str]], body: Node | Callable[[], None] | None,
              kind: str = "method") -> ir.Function:
        for pname, ptype, mode in params:
            self.declare_param(pname, ptype, mode)
        entry = self.new_block()
        self.start(entry)
        if callable(body):
            body()
        elif body is not None:
            if kind == "expr":  # `=> expr` bodies: the value is returned
                if self.returns_void:
                    self.lower_expr_stmt(body)
                else:
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

    returns_void = False

    def lower_body(self, body: Node) -> None:
        """The outermost block: no Kill at its end (the implicit return reports what leaks)."""
        if body.type != "block":
            self.lower_stmt(body)
            return
        self.lower_statements(self.named(body), body)

    def lower_stmt(self, node: Node) -> None:
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            t = node.type
            if t in SKIP:
                return
            handler = _STMT_HANDLERS.get(t)
            if t in _SIMPLE_STATEMENTS and node.has_error:
                self.unparsed(node)
            elif handler is not None:
                handler(self, node)
            elif t == "ERROR" or node.is_missing:
                self.unparsed(node)
            elif node.is_named:
                self.lower_expr_stmt(node)
        finally:
            self.depth -= 1

    def lower_expr(self, node: Node | None, discard: bool = False, dest: ir.Expr | None = None) -> ir.Expr:
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

    def lower_cond(self, node: Node | None, t: ir.Block, f: ir.Block, kind: str = "if") -> None:
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            super().lower_cond(node, t, f, kind)
        finally:
            self.depth -= 1

    def operator(self, node: Node) -> str:
        op_node = node.child_by_field_id(self.F.operator)
        if op_node is None:
            return "?"
        return self.src[op_node.start_byte:op_node.end_byte].decode("utf-8", "replace").strip()

    def unparsed(self, node: Node) -> None:
        names = sorted(set(re.findall(r"[A-Za-z_]\w*", self.text(node))))
        loc = self.loc(node)
        self.notes.append((loc, f"could not parse code at line {loc.line} in {self.name}(); "
                                "resources it names are not checked"))
        self.emit(ir.Havoc(loc, tuple(names), "unparsed code"))


def _handlers(cls: type, prefix: str) -> dict[str, Callable]:
    return {name[len(prefix):]: getattr(cls, name) for name in dir(cls)
            if name.startswith(prefix) and callable(getattr(cls, name))}


_STMT_HANDLERS = _handlers(CSharpLowering, "stmt_")
_EXPR_HANDLERS = _handlers(CSharpLowering, "expr_")
