"""Go control flow: `if`, `for` and range loops, `switch`/type switch/`select`, labels, `goto`, `break`, `continue`."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Block, Branch, Const, Index, Jump, Op, Opaque, Var
from .scopes import Breakable
from .syntax import _MAX_UNROLL, SOME, F


class GoControl:
    """Go control flow: `if`, `for` and range loops, `switch`/type switch/`select`, labels, `goto`, `break`, `continue`."""

    def stmt_if_statement(self, node: Node) -> None:
        self.scoped(self.stmt_if_statement_body, node)

    def stmt_if_statement_body(self, node: Node) -> None:
        self.stmt_temps = []
        self.simple(node.child_by_field_id(F.initializer))
        alternative = node.child_by_field_id(F.alternative)
        then_b, join = self.new_block(), self.new_block()
        else_b = self.new_block() if alternative is not None else join
        self.stmt_temps = []
        self.lower_cond(node.child_by_field_id(F.condition), then_b, else_b)
        temps = self.take_temps()
        self.start(then_b)
        self.kill(temps, self.loc(node))
        self.stmt(node.child_by_field_id(F.consequence))
        self.jump(join)
        if alternative is not None:
            self.start(else_b)
            self.kill(temps, self.loc(node))
            self.stmt(alternative)
            self.jump(join)
        self.start(join)
        if alternative is None:
            self.kill(temps, self.loc(node))

    def take_labels(self) -> tuple[str, ...]:
        labels, self.pending_label = self.pending_label, ()
        return labels

    def stmt_for_statement(self, node: Node) -> None:
        self.scoped(self.stmt_for_statement_body, node)

    def stmt_for_statement_body(self, node: Node) -> None:
        labels = self.take_labels()
        if self.loop_depth == 0:
            self.register_loop_defers(node)
        self.loop_depth += 1
        try:
            clause = next((c for c in self.named(node) if c != node.child_by_field_id(F.body)), None)
            if clause is not None and clause.type == "range_clause":
                self.range_loop(node, clause, labels)
                return
            cond = clause
            update = None
            if clause is not None and clause.type == "for_clause":
                self.stmt_temps = []
                self.simple(clause.child_by_field_id(F.initializer))
                cond = clause.child_by_field_id(F.condition)
                update = clause.child_by_field_id(F.update)
            header, body_b, update_b, exit_b = self.new_block(), self.new_block(), self.new_block(), self.new_block()
            self.jump(header)
            self.start(header)
            first = header.id
            self.stmt_temps = []
            if cond is not None:
                self.lower_cond(cond, body_b, exit_b, kind="loop")
            else:
                self.jump(body_b)
            temps = self.take_temps()
            self.start(body_b)
            self.kill(temps, self.loc(node))
            kills = self.loop_locals(node.child_by_field_id(F.body)) if node.child_by_field_id(F.body) else ()
            self.loop_body(node.child_by_field_id(F.body), exit_b, update_b, labels, kills)
            self.jump(update_b)
            self.start(update_b)
            self.simple(update)
            self.jump(header)
            self.close_loop(exit_b, first, node)
            self.kill(kills, self.end_loc(node))
        finally:
            self.loop_depth -= 1

    def loop_body(self, body: Node | None, brk: Block, cont: Block, labels: tuple[str, ...],
                  kills: tuple[str, ...] = ()) -> None:
        self.ctx.append(Breakable(brk.id, cont.id, labels, kills))
        try:
            self.stmt(body)
        finally:
            self.ctx.pop()
        self.kill(kills, self.end_loc(body) if body is not None else self.loc(self.node))

    def loop_locals(self, loop: Node) -> tuple[str, ...]:
        """Variables declared in a loop (its body, its range clause) and nowhere else in the
        function: each iteration has its own, which is gone when the iteration ends (what only
        it still held is lost there)."""
        if self.decl_sites is None:
            self.decl_sites = {}
            body = self.node.child_by_field_id(F.body)
            for n in self.declaring_identifiers(body):
                self.decl_sites.setdefault(self.text(n), []).append(n.start_byte)
            for name in list(self.params) + self.named_results:
                self.decl_sites.setdefault(name, []).append(-1)
        start, end = loop.start_byte, loop.end_byte
        return tuple(sorted(name for name, sites in self.decl_sites.items()
                            if sites and all(start <= b < end for b in sites) and name != "_"))

    def declaring_identifiers(self, body: Node | None) -> list[Node]:
        out: list[Node] = []
        stack = [body] if body is not None else []
        while stack:
            n = stack.pop()
            t = n.type
            if t == "func_literal":
                continue
            if t in ("short_var_declaration", "range_clause", "receive_statement"):
                if t == "short_var_declaration" or any(c.type == ":=" for c in n.children):
                    out.extend(c for c in self.named(n.child_by_field_id(F.left)) if c.type == "identifier")
            elif t == "var_spec":
                out.extend(n.children_by_field_id(F.name))
            elif t == "type_switch_statement":
                out.extend(c for c in self.named(n.child_by_field_id(F.alias)) if c.type == "identifier")
            stack.extend(n.named_children)
        return out

    def close_loop(self, exit_b: Block, first: int, node: Node) -> None:
        self.start(exit_b)
        self.emit(ir.ScopeExit(self.end_loc(node), frozenset(range(first, len(self.blocks)))))

    def range_loop(self, node: Node, clause: Node, labels: tuple[str, ...]) -> None:
        lefts = self.named(clause.child_by_field_id(F.left))
        right = clause.child_by_field_id(F.right)
        declare = any(c.type == ":=" for c in clause.children)
        if right is not None and right.type == "identifier" and self.text(right) in self.slots \
                and self.slots[self.text(right)] <= _MAX_UNROLL:
            self.unrolled_range(node, self.text(right), lefts, labels)
            return
        self.stmt_temps = []
        coll = self.lower_expr(right) if right is not None else Opaque("?")
        rtype = self.type_of(right) if right is not None else ""
        temps = self.take_temps()
        is_chan = rtype == "chan"
        if declare:
            for n in lefts:
                self.declare(self.text(n), rtype[2:] if rtype.startswith("[]") and n is lefts[-1] else "")
        # (the loop's scope is opened by stmt_for_statement)
        header, body_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        first = header.id
        more = Var(f"$more{node.start_point[0] + 1}_{len(self.blocks)}")
        self.locals[more.name] = False
        self.terminate(Branch(more, body_b.id, exit_b.id, self.loc(clause), self.short_text(clause), "loop"))
        self.start(body_b)
        loc = self.loc(clause)
        self.emit(ir.Assign(loc, more, Opaque("more")))
        targets = [self.target(n) for n in lefts]
        if is_chan:
            values: list[ir.Expr] = [Opaque("received")]
        else:
            values = [Opaque("key"), Index(coll, SOME)]
        for tgt, value in zip(targets, values):
            self.emit(ir.Assign(loc, tgt, value))
        kills = self.loop_locals(node)
        self.loop_body(node.child_by_field_id(F.body), exit_b, header, labels, kills)
        self.jump(header)
        self.close_loop(exit_b, first, node)
        self.kill(temps + kills, self.end_loc(node))

    def unrolled_range(self, node: Node, name: str, lefts: list[Node], labels: tuple[str, ...]) -> None:
        """`for i, v := range outputs` over a slot slice: once per slot."""
        after = self.new_block()
        loc = self.loc(node)
        kills = self.loop_locals(node)
        for k in range(self.slots[name]):
            nxt = self.new_block()
            targets = [self.target(n) for n in lefts]
            values = [Const(k, str(k)), Var(f"{name}[{k}]")]
            for tgt, value in zip(targets, values):
                self.emit(ir.Assign(loc, tgt, value))
            self.loop_body(node.child_by_field_id(F.body), after, nxt, labels, kills)
            self.jump(nxt)
            self.start(nxt)
        self.jump(after)
        self.start(after)
        self.kill(kills, self.end_loc(node))

    def cases(self, node: Node) -> list[Node]:
        return [c for c in self.named(node) if c.type in ("expression_case", "type_case", "default_case",
                                                          "communication_case")]

    def switch_like(self, node: Node, value: ir.Expr | None, tagless: bool) -> None:
        labels = self.take_labels()
        cases = self.cases(node)
        after = self.new_block()
        bodies = [self.new_block() for _ in cases]
        default = next((i for i, c in enumerate(cases) if c.type == "default_case"), None)
        for i, case in enumerate(cases):
            if case.type == "default_case":
                continue
            nxt = self.new_block()
            self.case_test(case, value, tagless, bodies[i], nxt)
            self.start(nxt)
        self.jump(bodies[default] if default is not None else after)
        self.ctx.append(Breakable(after.id, None, labels))
        try:
            for i, case in enumerate(cases):
                self.start(bodies[i])
                self.scopes.append({})
                if case.type == "communication_case":
                    self.communication(case.child_by_field_id(F.communication))
                stmts = [s for s in self.named(case) if s.type == "statement_list"]
                falls = False
                for sl in stmts:
                    for s in self.named(sl):
                        self.stmt(s)
                        falls = s.type == "fallthrough_statement"
                self.scopes.pop()
                self.jump(bodies[i + 1] if falls and i + 1 < len(bodies) else after)
        finally:
            self.ctx.pop()
        self.start(after)

    def case_test(self, case: Node, value: ir.Expr | None, tagless: bool, body: Block, nxt: Block) -> None:
        if case.type == "expression_case" and tagless:
            exprs = self.named(case.child_by_field_id(F.value))
            if len(exprs) == 1:
                self.stmt_temps = []
                self.lower_cond(exprs[0], body, nxt)
                return
        if case.type == "expression_case" and value is not None:
            exprs = self.named(case.child_by_field_id(F.value))
            if len(exprs) == 1 and exprs[0].type in ("nil", "int_literal", "true", "false", "identifier"):
                cond = Op("==", (value, self.lower_expr(exprs[0])))
                self.terminate(Branch(cond, body.id, nxt.id, self.loc(case), self.short_text(case), "case"))
                return
        self.terminate(Branch(Opaque(self.short_text(case)), body.id, nxt.id, self.loc(case),
                              self.short_text(case)[:40], "case"))

    def communication(self, comm: Node | None) -> None:
        """The send or receive of a select case, done when the case is chosen."""
        if comm is None:
            return
        self.stmt_temps = []
        if comm.type == "send_statement":
            self.stmt_send_statement(comm)
            return
        if comm.type == "receive_statement":
            declare = any(c.type == ":=" for c in comm.children)
            for n in self.named(comm.child_by_field_id(F.left)):
                if declare:
                    self.declare(self.text(n), "")
                self.emit(ir.Assign(self.loc(comm), self.target(n), Opaque("received")))
            self.finish_statement(comm)
            return
        self.stmt(comm)

    def stmt_expression_switch_statement(self, node: Node) -> None:
        self.scoped(self.stmt_expression_switch_statement_body, node)

    def stmt_expression_switch_statement_body(self, node: Node) -> None:
        self.stmt_temps = []
        self.simple(node.child_by_field_id(F.initializer))
        value_node = node.child_by_field_id(F.value)
        value = None
        if value_node is not None:
            self.stmt_temps = []
            value = self.temp()
            self.assign_from(value, value_node, self.loc(value_node))
        self.switch_like(node, value, tagless=value_node is None)

    def stmt_type_switch_statement(self, node: Node) -> None:
        self.scoped(self.stmt_type_switch_statement_body, node)

    def stmt_type_switch_statement_body(self, node: Node) -> None:
        self.stmt_temps = []
        self.simple(node.child_by_field_id(F.initializer))
        value = self.lower_expr(node.child_by_field_id(F.value))
        for alias in self.named(node.child_by_field_id(F.alias)):
            var = self.declare(self.text(alias), "")
            self.emit(ir.Assign(self.loc(alias), Var(var), value))
        self.switch_like(node, None, tagless=False)

    def stmt_select_statement(self, node: Node) -> None:
        self.switch_like(node, None, tagless=False)

    def stmt_labeled_statement(self, node: Node) -> None:
        label_node = node.child_by_field_id(F.label)
        label = self.text(label_node) if label_node is not None else ""
        block = self.label_block(label)
        self.jump(block)
        self.start(block)
        inner = [c for c in self.named(node) if c != label_node]
        if not inner:
            return
        body = inner[0]
        if body.type in ("for_statement", "expression_switch_statement", "type_switch_statement", "select_statement"):
            self.pending_label = self.pending_label + (label,)
        self.stmt(body)
        self.pending_label = ()

    def label_block(self, label: str) -> Block:
        block = self.labels.get(label)
        if block is None:
            block = self.labels[label] = self.new_block()
        return block

    def stmt_goto_statement(self, node: Node) -> None:
        label = self.text(self.named(node)[0]) if self.named(node) else ""
        self.jump(self.label_block(label))

    def stmt_break_statement(self, node: Node) -> None:
        label = self.text(self.named(node)[0]) if self.named(node) else None
        dying: list[str] = []
        for c in reversed(self.ctx):
            dying.extend(c.kills)
            if label in c.labels if label else True:
                self.kill(tuple(dying), self.loc(node))
                self.jump(c.brk)
                return
        self.terminate(Jump(self.new_block().id))

    def stmt_continue_statement(self, node: Node) -> None:
        label = self.text(self.named(node)[0]) if self.named(node) else None
        dying: list[str] = []
        for c in reversed(self.ctx):
            dying.extend(c.kills)
            if c.cont is not None and (label in c.labels if label else True):
                self.kill(tuple(dying), self.loc(node))
                self.jump(c.cont)
                return
        self.terminate(Jump(self.new_block().id))
