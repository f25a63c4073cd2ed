"""Java statements and control flow -> blocks: declarations, returns, `if`, loops and labels, `switch` (old and
new forms, `yield`), `synchronized`, `assert`."""
from __future__ import annotations

import re
from typing import Callable

from tree_sitter import Node

from ... import ir
from ...ir import Block, Branch, Const, Index, Jump, Op, Opaque, Return, Var
from .names import element_type
from .scopes import Breakable, Finalizer, Inlined
from .syntax import F_ALTERNATIVE, F_ARGUMENTS, F_BODY, F_CONDITION, F_CONSEQUENCE, F_CONSTRUCTOR, F_DECLARATOR, F_DIMENSIONS, F_INIT, F_NAME, F_TYPE, F_UPDATE, F_VALUE
from .tables import _HAS_NEXT, _INT_LITERALS, _SOME_INDEX, _short


class JavaStatements:
    """Java statements and control flow -> blocks: declarations, returns, `if`, loops and labels, `switch` (old and
new forms, `yield`), `synchronized`, `assert`."""

    def lower_expr_stmt(self, node: Node) -> None:
        self.stmt_temps = []
        self.lower_expr(node, discard=True)
        self.finish_statement(node)

    def stmt_block(self, node: Node) -> None:
        self.push_scope()
        for child in self.named(node):
            self.lower_stmt(child)
        self.pop_scope(node)
    stmt_constructor_body = stmt_block

    def stmt_expression_statement(self, node: Node) -> None:
        for child in self.named(node):
            self.lower_expr_stmt(child)

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

    def stmt_return_statement(self, node: Node) -> None:
        kids = self.named(node)
        self.lower_return_value(kids[0] if kids else None, node)

    def lower_return_value(self, value: Node | None, node: Node) -> None:
        """`return v` through finally blocks: v is computed first, then the finalizers run."""
        self.stmt_temps = []
        expr = self.lower_expr(value) if value is not None else None
        ctx = self.ctx
        target = next((i for i in range(len(ctx) - 1, -1, -1) if isinstance(ctx[i], Inlined)), None) if ctx else None
        if target is not None:  # `return` in a lambda body lowered in place: next element
            self.run_finalizers(target + 1)
            self.jump(self.ctx[target].cont)  # type: ignore[union-attr]
            return
        if expr is not None and ctx and any(isinstance(c, Finalizer) for c in ctx) and not isinstance(expr, Const):
            held = Var(f"$ret{self.loc(node).line}_{self.temp_counter}")
            self.locals[held.name] = False
            self.emit(ir.Assign(self.loc(node), held, expr))
            expr = held
        self.run_finalizers(0)
        if self.cur is not None:
            self.terminate(Return(expr, self.loc(node)))
        self.stmt_temps = []

    def stmt_if_statement(self, node: Node) -> None:
        """Both arms get the condition's temporaries killed on entry, so nothing leaks twice."""
        cond = node.child_by_field_id(F_CONDITION)
        then = node.child_by_field_id(F_CONSEQUENCE)
        alt = node.child_by_field_id(F_ALTERNATIVE)
        then_b, join = self.new_block(), self.new_block()
        else_b = self.new_block() if alt is not None else join
        self.stmt_temps = []
        self.lower_cond(cond, then_b, else_b)
        temps = self.take_temps()
        self.start(then_b)
        self.kill_at(temps, cond if cond is not None else node)
        if then is not None:
            self.lower_scoped(then)
        self.jump(join)
        if alt is not None:
            self.start(else_b)
            self.kill_at(temps, cond if cond is not None else node)
            self.lower_scoped(alt)
            self.jump(join)
        self.start(join)
        if alt is None:
            self.kill_at(temps, node)

    def lower_scoped(self, node: Node) -> None:
        """A statement that is its own scope (`if (c) T x = ...;` is not Java, but blocks are)."""
        self.push_scope()
        self.lower_stmt(node)
        self.pop_scope(node)

    def take_labels(self) -> tuple[str, ...]:
        labels, self.pending_label = self.pending_label, ()
        return labels

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

    def loop_body(self, body: Node | None, brk: Block, cont: Block, labels: tuple[str, ...]) -> None:
        self.ctx.append(Breakable(brk.id, cont.id, labels))
        try:
            if body is not None:
                self.lower_scoped(body)
        finally:
            self.ctx.pop()

    def close_loop(self, exit_b: Block, first: int, extra: set[int], node: Node) -> None:
        self.start(exit_b)
        ids = frozenset(extra | set(range(first, len(self.blocks))))
        self.emit(ir.ScopeExit(self.end_loc(node), ids))

    def stmt_while_statement(self, node: Node) -> None:
        """header -> body -> header, with a ScopeExit on the exit edge for loops over elements."""
        labels = self.take_labels()
        header, body_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        first = len(self.blocks)
        self.stmt_temps = []
        cond = node.child_by_field_id(F_CONDITION)
        self.lower_cond(cond, body_b, exit_b, kind="loop")
        temps = self.take_temps()
        self.start(body_b)
        self.kill_at(temps, node)
        self.loop_body(node.child_by_field_id(F_BODY), exit_b, header, labels)
        self.jump(header)
        self.close_loop(exit_b, first, {header.id, body_b.id}, node)
        self.kill_at(temps, node)

    def stmt_do_statement(self, node: Node) -> None:
        """The body runs once before the condition is tested."""
        labels = self.take_labels()
        body_b, cond_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(body_b)
        first = len(self.blocks)
        self.start(body_b)
        self.loop_body(node.child_by_field_id(F_BODY), exit_b, cond_b, labels)
        self.jump(cond_b)
        self.start(cond_b)
        self.stmt_temps = []
        again = self.new_block()
        self.lower_cond(node.child_by_field_id(F_CONDITION), again, exit_b, kind="loop")
        temps = self.take_temps()
        self.start(again)
        self.kill_at(temps, node)
        self.jump(body_b)
        self.close_loop(exit_b, first, {body_b.id, cond_b.id}, node)
        self.kill_at(temps, node)

    def stmt_for_statement(self, node: Node) -> None:
        """`for (init; cond; update)`: init locals live in a scope around the whole loop."""
        labels = self.take_labels()
        self.push_scope()
        for init in node.children_by_field_id(F_INIT):
            if init.type == "local_variable_declaration":
                self.lower_stmt(init)
            else:
                self.lower_expr_stmt(init)
        header, body_b, update_b, exit_b = self.new_block(), self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        first = len(self.blocks)
        cond = node.child_by_field_id(F_CONDITION)
        self.stmt_temps = []
        if cond is not None:
            self.lower_cond(cond, body_b, exit_b, kind="loop")
        else:
            self.jump(body_b)
        temps = self.take_temps()
        self.start(body_b)
        self.kill_at(temps, node)
        self.loop_body(node.child_by_field_id(F_BODY), exit_b, update_b, labels)
        self.jump(update_b)
        self.start(update_b)
        for update in node.children_by_field_id(F_UPDATE):
            self.lower_expr_stmt(update)
        self.jump(header)
        self.close_loop(exit_b, first, {header.id, body_b.id, update_b.id}, node)
        self.kill_at(temps, node)
        self.pop_scope(node)

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
        self.element_loop(node, coll, Var(name), labels, lambda: self.loop_body_stmt(node))
        self.pop_scope(None)
        self.kill(temps, self.end_loc(node))

    def loop_body_stmt(self, node: Node) -> None:
        body = node.child_by_field_id(F_BODY)
        if body is not None:
            self.lower_scoped(body)

    def element_loop(self, node: Node, coll: ir.Expr, elem: Var, labels: tuple[str, ...],
                     body: Callable[[], None]) -> None:
        """A loop over the elements of `coll` whose body is produced by `body()`."""
        loc = self.loc(node)
        more = Var(f"$more{loc.line}_{len(self.blocks)}")
        self.locals[more.name] = False
        header, body_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        first = len(self.blocks)
        header_text = f"{elem.name} : {_short(ir.expr_text(coll))}"
        self.terminate(Branch(more, body_b.id, exit_b.id, loc, header_text, "loop"))
        self.start(body_b)
        self.emit(ir.Assign(loc, more, _HAS_NEXT))
        self.emit(ir.Assign(loc, elem, Index(coll, _SOME_INDEX)))
        self.ctx.append(Breakable(exit_b.id, header.id, labels))
        try:
            body()
        finally:
            self.ctx.pop()
        self.jump(header)
        self.close_loop(exit_b, first, {header.id, body_b.id}, node)

    def stmt_break_statement(self, node: Node) -> None:
        kids = self.named(node)
        label = self.text(kids[0]) if kids else None
        for i in range(len(self.ctx) - 1, -1, -1):
            c = self.ctx[i]
            if isinstance(c, Breakable) and (label in c.labels if label else (c.cont is not None or c.is_switch)):
                self.run_finalizers(i + 1)
                self.jump(c.brk)
                return
        self.terminate(Jump(self.new_block().id))  # break outside anything: unreachable rest

    def stmt_continue_statement(self, node: Node) -> None:
        """`continue` (labeled or not) runs the finalizers it leaves, like `break`."""
        kids = self.named(node)
        label = self.text(kids[0]) if kids else None
        for i in range(len(self.ctx) - 1, -1, -1):
            c = self.ctx[i]
            if isinstance(c, Inlined) and not label:
                self.run_finalizers(i + 1)
                self.jump(c.cont)
                return
            if isinstance(c, Breakable) and c.cont is not None and (label in c.labels if label else True):
                self.run_finalizers(i + 1)
                self.jump(c.cont)
                return

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

    def unparsed(self, node: Node) -> None:
        names = sorted(set(re.findall(r"[A-Za-z_$][\w$]*", self.text(node))))
        loc = self.loc(node)
        self.notes.append((loc, f"could not parse code at line {loc.line} in {self.name}(); "
                                "resources it names are not checked"))
        self.emit(ir.Havoc(loc, tuple(names), "unparsed code"))
