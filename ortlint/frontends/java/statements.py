"""Java statements and control flow -> blocks: declarations, labels, loops over elements, `switch` (old and
new forms, `yield`), `synchronized`, `assert`; the statements C# has too (`return`, `if`, loops, `break`,
`continue`) are `managed/statements.py`'s, with the hooks below."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Branch, Op, Opaque, Var
from ..managed.scopes import Breakable
from .names import element_type
from .scopes import Finalizer
from .syntax import F_ARGUMENTS, F_BODY, F_CONDITION, F_CONSTRUCTOR, F_DECLARATOR, F_DIMENSIONS, F_INIT, F_NAME, F_TYPE, F_VALUE
from .tables import _INT_LITERALS, _short


class JavaStatements:
    """Java statements and control flow -> blocks: declarations, labels, loops over elements, `switch` (old and
new forms, `yield`), `synchronized`, `assert`."""

    # ------------------------------------------------------------------ hooks of the shared statements

    def jump_label(self, node: Node) -> str | None:
        """`break label;` / `continue label;` name a labeled statement."""
        kids = self.named(node)
        return self.text(kids[0]) if kids else None

    def has_finally(self) -> bool:
        return any(isinstance(c, Finalizer) for c in self.ctx)

    def for_inits(self, node: Node, cond: Node | None, body: Node | None, updates: list[Node]) -> list[Node]:
        return node.children_by_field_id(F_INIT)

    def lower_for_init(self, init: Node) -> None:
        if init.type == "local_variable_declaration":
            self.lower_stmt(init)
        else:
            self.lower_expr_stmt(init)

    def loop_header(self, elem: Var, coll: str) -> str:
        name = "element" if elem.name.startswith("$") else elem.name
        return f"{name} : {_short(coll)}"

    # ------------------------------------------------------------------ statements

    def stmt_block(self, node: Node) -> None:
        self.push_scope()
        for child in self.named(node):
            self.lower_stmt(child)
        self.pop_scope(node)
    stmt_constructor_body = stmt_block

    def stmt_local_variable_declaration(self, node: Node) -> None:
        declared = self.types.canon(node.child_by_field_id(F_TYPE))
        for decl in node.children_by_field_id(F_DECLARATOR):
            self.stmt_temps = []
            self.lower_variable(decl, declared)
            self.finish_statement(decl)

    def lower_variable(self, decl: Node, declared: str) -> None:
        """`T x = v` / `var x = v`: declare x with its type, then store v straight into it."""
        name_node = decl.child_by_field_id(F_NAME)
        if name_node is None:
            return
        name = self.text(name_node)
        value = decl.child_by_field_id(F_VALUE)
        dims = decl.child_by_field_id(F_DIMENSIONS)
        type_ = declared + ("[]" * self.text(dims).count("[") if dims is not None else "")
        if type_ == "var" and value is not None:
            type_ = self.expr_type(value)
        self.declare(name, "" if type_ == "var" else type_)
        if value is not None:
            self.assign_from(self.var(name), value, self.loc(decl))

    def stmt_labeled_statement(self, node: Node) -> None:
        """A label on a loop names that loop; on any other statement it is a `break` target."""
        kids = self.named(node)
        label = self.text(kids[0]) if kids else ""
        body = kids[1] if len(kids) > 1 else None
        if body is None:
            return
        if body.type in ("while_statement", "do_statement", "for_statement", "enhanced_for_statement"):
            self.pending_label = self.pending_label + (label,)
            self.lower_stmt(body)
            return
        after = self.new_block()
        self.ctx.append(Breakable(after.id, None, (label,)))
        try:
            self.lower_stmt(body)
        finally:
            self.ctx.pop()
        self.jump(after)
        self.start(after)

    def stmt_enhanced_for_statement(self, node: Node) -> None:
        """`for (T v : c)`: each iteration reads one element of c (`v = c[i]`), so a loop that
        closes v is recognised by the engine as closing every element of c."""
        labels = self.take_labels()
        self.stmt_temps = []
        value = node.child_by_field_id(F_VALUE)
        coll = self.lower_expr(value) if value is not None else Opaque("?")
        coll_type = self.expr_type(value) if value is not None else ""
        temps = self.take_temps()
        name_node = node.child_by_field_id(F_NAME)
        var_type = self.types.canon(node.child_by_field_id(F_TYPE))
        if var_type in ("var", ""):
            var_type = element_type(coll_type)
        self.push_scope()
        name = self.text(name_node) if name_node is not None else "$elem"
        self.declare(name, var_type)
        self.element_loop(node, coll, Var(name), lambda: self.loop_body_stmt(node), labels, value)
        self.pop_scope(None)
        self.kill(temps, self.end_loc(node))

    def loop_body_stmt(self, node: Node) -> None:
        body = node.child_by_field_id(F_BODY)
        if body is not None:
            self.lower_scoped(body)

    def stmt_yield_statement(self, node: Node) -> None:
        """`yield v` in a switch expression: store v as the switch's value and leave the switch."""
        kids = self.named(node)
        for i in range(len(self.ctx) - 1, -1, -1):
            c = self.ctx[i]
            if isinstance(c, Breakable) and c.is_switch:
                self.stmt_temps = []
                if kids and c.yield_to is not None:
                    self.assign_from(c.yield_to, kids[0], self.loc(node))
                elif kids:
                    self.lower_expr(kids[0], discard=True)
                self.run_finalizers(i + 1)
                self.jump(c.brk)
                self.stmt_temps = []
                return

    def stmt_switch_expression(self, node: Node) -> None:
        self.lower_switch(node, None)
    stmt_switch_statement = stmt_switch_expression

    def lower_switch(self, node: Node, result: ir.Expr | None) -> None:
        """Old-style groups fall through; arrow rules do not; `default` (or no match) last."""
        self.stmt_temps = []
        cond = node.child_by_field_id(F_CONDITION)
        value = self.lower_expr(cond) if cond is not None else Opaque("?")
        temps = self.take_temps()
        exit_b = self.new_block()
        groups = [g for g in self.named(node.child_by_field_id(F_BODY))
                  if g.type in ("switch_block_statement_group", "switch_rule")]
        blocks = [self.new_block() for _ in groups]
        default: int = exit_b.id
        for group, block in zip(groups, blocks):
            labels = [c for c in self.named(group) if c.type == "switch_label"]
            for label in labels:
                vals = self.named(label)
                if not vals:
                    default = block.id
                    continue
                nxt = self.new_block()
                if len(vals) == 1:
                    test: ir.Expr = Op("==", (value, self.case_value(vals[0])))
                else:  # `case 1, 2:` / patterns: unknown, but the same label always decides alike
                    test = Opaque(f"case@{label.start_point[0] + 1}:{label.start_point[1]}")
                self.terminate(Branch(test, block.id, nxt.id, self.loc(label), self.short_text(label), "case"))
                self.start(nxt)
        self.jump(default)
        self.ctx.append(Breakable(exit_b.id, None, self.take_labels(), is_switch=True, yield_to=result))
        try:
            for group, block in zip(groups, blocks):
                self.jump(block)  # fall-through
                self.start(block)
                self.kill_at(temps, group)
                self.lower_switch_group(group, result)
        finally:
            self.ctx.pop()
        self.jump(exit_b)
        self.start(exit_b)
        self.kill(temps, self.end_loc(node))

    def case_value(self, node: Node) -> ir.Expr:
        if node.type in _INT_LITERALS or node.type in ("string_literal", "character_literal", "identifier"):
            return self.lower_expr(node)
        return Opaque(self.short_text(node))

    def lower_switch_group(self, group: Node, result: ir.Expr | None) -> None:
        """One `case ...:` group (falls through) or one `case ... ->` rule (does not)."""
        body = [c for c in self.named(group) if c.type != "switch_label"]
        self.push_scope()
        if group.type == "switch_rule":
            for stmt in body:
                if stmt.type == "expression_statement" and result is not None:
                    self.stmt_temps = []
                    kids = self.named(stmt)
                    if kids:
                        self.assign_from(result, kids[0], self.loc(stmt))
                    self.finish_statement(stmt)
                else:
                    self.lower_stmt(stmt)
            self.pop_scope(group)
            brk = next(c for c in reversed(self.ctx) if isinstance(c, Breakable) and c.is_switch)
            self.jump(brk.brk)
            return
        for stmt in body:
            self.lower_stmt(stmt)
        self.pop_scope(group)

    def stmt_synchronized_statement(self, node: Node) -> None:
        self.stmt_temps = []
        for child in self.named(node):
            if child.type == "parenthesized_expression":
                self.lower_expr(child)
        self.finish_statement(node)
        body = node.child_by_field_id(F_BODY)
        if body is not None:
            self.stmt_block(body)

    def stmt_assert_statement(self, node: Node) -> None:
        """Assertions are usually disabled in production: they neither prune nor add paths."""

    def stmt_explicit_constructor_invocation(self, node: Node) -> None:
        self.stmt_temps = []
        args = node.child_by_field_id(F_ARGUMENTS)
        ctor = node.child_by_field_id(F_CONSTRUCTOR)
        arg_exprs = tuple(self.lower_expr(a) for a in self.named(args))
        name = f"{self.text(ctor)}(...)" if ctor is not None else "super(...)"
        self.call_counter += 1
        self.emit(ir.Call(self.call_counter, self.loc(node), name, "new", None, arg_exprs, None,
                          self.short_text(node), False))
        self.finish_statement(node)

    def stmt_class_declaration(self, node: Node) -> None:
        """A local class: its methods are functions of their own."""
        self.unit.queue_class(node, self.cls, self.visible_types(), prefix=f"{self.name}$")
    stmt_local_class_declaration = stmt_record_declaration = stmt_class_declaration
    stmt_enum_declaration = stmt_interface_declaration = stmt_class_declaration
