"""Go expressions -> IR expressions: names, selectors, indexes and slices, composite literals, conversions."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import AddrOf, Const, Deref, Field, Index, Op, Opaque, Var
from .scan import ORT
from .syntax import FALSE, NIL, TRUE, F


class GoExpressions:
    """Go expressions -> IR expressions: names, selectors, indexes and slices, composite literals, conversions."""

    def expr_identifier(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        name = self.text(node)
        if name in self.slots:  # the whole slot slice as a value: a collection of its slots
            coll = self.temp()
            self.locals[coll.name] = True
            self.call_counter += 1
            self.emit(ir.Call(self.call_counter, self.loc(node), "$keep", "plain", coll,
                              tuple(Var(f"{name}[{k}]") for k in range(self.slots[name])), None, name))
            return coll
        return Var(self.resolve(name))

    def expr_nil(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return NIL

    def expr_true(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return TRUE

    def expr_false(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return FALSE

    def expr_int_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        text = self.text(node).replace("_", "")
        try:
            return Const(int(text, 0), text)
        except ValueError:
            return Const(None, text)

    def expr_parenthesized_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        inner = self.named(node)
        return self.lower_expr(inner[0], discard, dest) if inner else Opaque("()")

    def expr_selector_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        operand = node.child_by_field_id(F.operand)
        name = self.text(node.child_by_field_id(F.field))
        if operand is not None and self.is_package(operand):
            pkg = self.text(operand)
            return Var(f"{ORT}.{name}" if pkg in self.scan.ort_aliases else f"{pkg}.{name}")
        return Field(Deref(self.lower_expr(operand)), name)

    def expr_index_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        operand = node.child_by_field_id(F.operand)
        index = node.child_by_field_id(F.index)
        if operand is not None and operand.type == "identifier" and self.text(operand) in self.slots \
                and index is not None and index.type == "int_literal":
            return Var(f"{self.text(operand)}[{int(self.text(index), 0)}]")
        base = self.lower_expr(operand)
        return Index(base, self.lower_expr(index))

    def expr_slice_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`s[a:b]` shows the elements of s."""
        for part in ("start", "end", "capacity"):
            child = node.child_by_field_name(part)
            if child is not None:
                self.lower_expr(child)
        return self.lower_expr(node.child_by_field_id(F.operand))

    def expr_call_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_call(node, outs=[], dest=dest)

    def expr_type_assertion_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_expr(node.child_by_field_id(F.operand), discard, dest)

    def expr_type_conversion_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        if self.generic_binding_call(node):
            return self.lower_call(node, outs=[], dest=dest)
        return self.lower_expr(node.child_by_field_id(F.operand), discard, dest)

    def expr_unary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        op = self.operator(node)
        operand = node.child_by_field_id(F.operand)
        if op == "&":
            if operand is not None and operand.type == "composite_literal":
                return self.lower_expr(operand)
            if operand is not None and operand.type == "identifier" and self.resolve(self.text(operand)) in self.value_structs:
                # a struct variable is lowered like a pointer to its fields (`s.f` is `(*s).f`),
                # so `&s` is `s`: `setup(&s)` writes the fields `s.Close()` reads
                return self.lower_expr(operand)
            return AddrOf(self.lower_expr(operand))
        if op == "<-":
            self.lower_expr(operand)
            return Opaque("received")
        if op == "*":
            return Deref(self.lower_expr(operand))
        return Op(op, (self.lower_expr(operand),))

    def expr_func_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.closure(node)

    def expr_composite_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        ctype = node.child_by_field_id(F.type)
        body = node.child_by_field_id(F.body)
        ttype = self.scan.norm_type(ctype)
        loc = self.loc(node)
        elements = [e for e in self.named(body) if e.type in ("keyed_element", "literal_element", "element")]
        if ctype is not None and ctype.type in ("slice_type", "array_type", "implicit_length_array_type", "map_type"):
            coll = self.temp()
            self.locals[coll.name] = True
            values = []
            for e in elements:
                parts = self.named(e)
                value = parts[-1] if parts else None
                if e.type == "keyed_element" and len(parts) == 2:
                    self.lower_literal_part(parts[0])
                values.append(self.lower_literal_part(value))
            if values:
                self.call_counter += 1
                self.emit(ir.Call(self.call_counter, loc, "$keep", "plain", coll, tuple(values), None,
                                  self.short_text(node)))
            return coll
        is_pool = ttype == "sync.Pool"
        for e in elements:
            parts = self.named(e)
            if not parts:
                continue
            fname = ""
            if e.type == "keyed_element" and len(parts) == 2:
                fname = self.text(parts[0]).strip()
            value_node = parts[-1]
            inner = self.named(value_node)[0] if value_node.type == "literal_element" and self.named(value_node) else value_node
            if is_pool and fname == "New" and inner.type == "func_literal":
                self.closure(inner, drop_returns=True, handoff=False)
                continue
            value = self.lower_literal_part(value_node)
            if self.scan.non_owning(ttype, fname):
                continue  # a field nobody destroys: not handed to anyone
            self.emit(ir.Assign(loc, Deref(Opaque("struct literal")), value))
        return Opaque(self.short_text(node))

    def lower_literal_part(self, node: Node | None) -> ir.Expr:
        if node is None:
            return Opaque("")
        if node.type == "literal_element":
            inner = self.named(node)
            return self.lower_literal_part(inner[0]) if inner else Opaque("")
        if node.type == "literal_value":
            for e in self.named(node):
                self.lower_literal_part(e)
            return Opaque("{...}")
        if node.type == "keyed_element":
            parts = self.named(node)
            for p in parts[:-1]:
                self.lower_literal_part(p)
            return self.lower_literal_part(parts[-1]) if parts else Opaque("")
        return self.lower_expr(node)

    def expr_binary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return super().expr_binary_expression(node, discard, dest)

    def expr_fallback(self, node: Node) -> ir.Expr:
        if node.type.endswith("_type") or node.type in ("type_identifier", "qualified_type"):
            return Opaque(self.short_text(node))
        return self.expr_generic(node)
