"""One C# function body -> IR (`CSharpLowering`); the constructs it understands live in the mixins
it is assembled from (statements, exceptions, expressions, calls), over the lowering it shares with
Java (`managed/lowering.py`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from tree_sitter import Node

from ... import ir
from ...ir import Const, Deref, Field, Opaque, Var
from ..common.cfg import field_ids
from ..managed.lowering import THIS, ManagedLowering
from ..managed.scopes import Breakable, Inlined
from .calls import CSharpCalls
from .containers import CSharpContainers
from .exceptions import CSharpExceptions
from .expressions import CSharpExpressions
from .project import ClassDecl
from .scopes import TryFrame
from .statements import CSharpStatements
from .static_types import CSharpTypes
from .syntax import CSHARP_LANGUAGE, SKIP, named
from .types import is_collection

if TYPE_CHECKING:
    from .frontend import CSharpFrontEnd

NULL, TRUE, FALSE = Const(0, "null"), Const(1, "true"), Const(0, "false")
VOID = Opaque("void")
_SIMPLE_STATEMENTS = frozenset({"expression_statement", "local_declaration_statement", "return_statement",
                                "throw_statement", "yield_statement"})


class CSharpLowering(CSharpStatements, CSharpExceptions, CSharpExpressions, CSharpCalls, CSharpContainers, CSharpTypes,
                     ManagedLowering):
    """Builds the control-flow graph of one method, constructor, accessor, lambda or local function."""

    language = "csharp"
    COMMENT_TYPES = SKIP
    SIMPLE_STATEMENTS = _SIMPLE_STATEMENTS
    COND_SCOPES = True  # pattern variables (`if (x is OrtValue v)`) live in the statement
    CALL_NODE_TYPES = ("invocation_expression", "object_creation_expression", "implicit_object_creation_expression",
                       "conditional_expression", "switch_expression", "await_expression",
                       "array_creation_expression", "implicit_array_creation_expression", "collection_expression",
                       "conditional_access_expression", "binary_expression", "tuple_expression")
    UNARY_OPERAND = "operand"
    TERNARY_TYPE = "conditional_expression"

    def __init__(self, unit: "CSharpFrontEnd", node: Node, name: str, cls: ClassDecl | None,
                 captured: dict[str, str] | None = None, static: bool = False):
        self.init_graph()
        self.init_lowering()
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
        self.vars, self.this_fields = unit.vars, unit.this_fields
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

    # ------------------------------------------------------------------ scopes

    def declare_param(self, name: str, type_: str, mode: str = "") -> None:
        self.scopes[0][name] = type_
        self.visible[name] = type_
        self.params.append(name)
        if mode in ("ref", "out"):
            self.ref_params.add(name)

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
            return self.this_field(name)
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
        return self.lower_function(body, kind)

    def lower_expr_body(self, body: Node) -> None:
        """`=> expr` bodies: the value is returned (evaluated only, in a `void` function)."""
        if self.returns_void:
            self.lower_expr_stmt(body)
        else:
            self.lower_return_value(body, body)

    returns_void = False

    def lower_body(self, body: Node) -> None:
        """The outermost block: no Kill at its end (the implicit return reports what leaks)."""
        if body.type != "block":
            self.lower_stmt(body)
            return
        self.lower_statements(self.named(body), body)

    def operator(self, node: Node) -> str:
        op_node = node.child_by_field_id(self.F.operator)
        if op_node is None:
            return "?"
        return self.src[op_node.start_byte:op_node.end_byte].decode("utf-8", "replace").strip()
