"""Java expressions -> IR expressions: names, fields, arrays, literals, lambdas and what they capture."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Const, Deref, Field, Index, Opaque, Var
from .scopes import PendingFunction
from .syntax import F_ARRAY, F_FIELD, F_INDEX, F_LEFT, F_NAME, F_OBJECT, F_RIGHT
from .tables import _FALSE, _NULL, _THIS, _TRUE, nested_name, parse_int


class JavaExpressions:
    """Java expressions -> IR expressions: names, fields, arrays, literals, lambdas and what they capture."""

    def expr_fallback(self, node: Node) -> ir.Expr:
        if node.type == "ERROR" or node.is_missing:
            self.unparsed(node)
            return Opaque("?")
        return self.expr_generic(node)

    def expr_identifier(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        name = self.text(node)
        if name in self.visible:
            return self.var(name)
        if name not in self.captured and self.cls.field_type(name) is not None:
            return self.this_field(name)
        return self.var(name)

    def expr_this(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return _THIS

    def expr_null_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return _NULL

    def expr_true(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return _TRUE

    def expr_false(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return _FALSE

    def expr_decimal_integer_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        text = self.text(node)
        found = self.int_consts.get(text)
        if found is None:
            found = self.int_consts[text] = Const(parse_int(text), text)
        return found
    expr_hex_integer_literal = expr_octal_integer_literal = expr_binary_integer_literal = expr_decimal_integer_literal

    def expr_string_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        text = self.short_text(node)
        found = self.text_consts.get(text)
        if found is None:
            found = self.text_consts[text] = Const(None, text)
        return found
    expr_character_literal = expr_text_block = expr_decimal_floating_point_literal = expr_string_literal
    expr_hex_floating_point_literal = expr_class_literal = expr_string_literal

    def expr_method_reference(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return Opaque(self.short_text(node))

    def expr_field_access(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`this.f` is a field of this object, `Type.F` a global, `o.f` memory we do not own."""
        obj = node.child_by_field_id(F_OBJECT)
        fld = node.child_by_field_id(F_FIELD)
        name = self.text(fld) if fld is not None else "?"
        if obj is None or name == "this":  # `Outer.this`
            return _THIS
        if obj.type == "this" or (obj.type == "field_access" and self.text(obj).endswith(".this")):
            return self.this_field(name)
        if obj.type == "super":
            return self.this_field(name)
        if self.static_type_of(obj) is not None:  # `Type.CONSTANT`, `System.out`
            return Var(f"{self.static_type_of(obj)}.{name}")
        base = self.lower_expr(obj)
        if name == "length":
            return Opaque(f"{ir.expr_text(base)}.length", (base,))
        return Field(Deref(base), name)  # another object's field: storing into it hands the value away

    def expr_array_access(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        base = self.lower_expr(node.child_by_field_id(F_ARRAY))
        index = self.lower_expr(node.child_by_field_id(F_INDEX))
        return Index(base, index)

    def expr_array_creation_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.expr_generic(node)

    def expr_array_initializer(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`{a, f()}`: arrays are not tracked element by element, so what goes into one is
        handed on (stored into memory this function does not own)."""
        parts = tuple(self.lower_expr(c) for c in self.named(node))
        array = Var(f"<array@{node.start_point[0] + 1}>")
        for part in parts:
            if isinstance(part, Var):
                self.emit(ir.Assign(self.loc(node), Index(array, Opaque("i")), part))
        return Opaque("{...}", parts)

    def expr_ternary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_choice(node, dest)

    def expr_instanceof_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        left = self.lower_expr(node.child_by_field_id(F_LEFT))
        name = node.child_by_field_id(F_NAME)
        if name is not None:  # `o instanceof OnnxTensor t`: t is o
            self.declare(self.text(name), self.types.canon(node.child_by_field_id(F_RIGHT)))
            self.emit(ir.Assign(self.loc(node), Var(self.text(name)), left))
        return Opaque(self.short_text(node), (left,))

    def expr_switch_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        result = dest if dest is not None else (None if discard else self.temp())
        self.lower_switch(node, result)
        return result if result is not None else Opaque("switch")

    def expr_lambda_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        name = nested_name(self.name, f"lambda@{node.start_point[0] + 1}", node)
        self.unit.queue(PendingFunction(node, name, self.cls, self.visible_types(), "lambda"))
        self.capture(node, f"lambda@{node.start_point[0] + 1}")
        return Opaque(f"lambda@{node.start_point[0] + 1}")

    def capture(self, body: Node, label: str) -> None:
        """A lambda or anonymous class that closes, returns or stores a captured local takes
        it over: the local escapes into the closure. Merely using it leaves it with us."""
        names = self.visible_types()
        for name in sorted(self.unit.take_overs.names(body, set(names))):
            if self.is_local(name) or name in self.params:
                self.emit(ir.Assign(self.loc(body), Field(Var(f"<{label}>"), name), Var(name)))
