"""C# statements and control flow -> blocks: declarations (`using var` too), returns, `if`,
loops, `foreach` over elements, `switch` with patterns, `goto`, `yield`, `lock`/`fixed`/`checked`,
and local functions; the statements Java has too (`return`, `if`, loops, `break`, `continue`) are
`managed/statements.py`'s, with the hooks below."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Branch, Index, Op, Opaque, Var
from ..managed.scopes import Breakable
from ..managed.statements import SOME_INDEX
from .scopes import TryFrame
from .syntax import F_BODY, F_LEFT, F_NAME, F_RIGHT, F_TYPE, F_VALUE, declarator_value, has_token
from .types import canon, element_type


class CSharpStatements:
    """C# statements and control flow -> blocks."""

    # ------------------------------------------------------------------ hooks of the shared statements

    def has_finally(self) -> bool:
        return any(isinstance(c, TryFrame) and c.final is not None for c in self.ctx)

    def for_inits(self, node: Node, cond: Node | None, body: Node | None, updates: list[Node]) -> list[Node]:
        """The children of a `for` that are neither its condition, its body nor an update."""
        return [init for init in node.named_children
                if not (init in (cond, body) or init.type == "comment" or any(init.id == u.id for u in updates))]

    def lower_for_init(self, init: Node) -> None:
        if init.type == "variable_declaration":
            self.lower_variable_declaration(init)
        else:
            self.lower_expr_stmt(init)

    def loop_header(self, elem: Var, coll: str) -> str:
        name = "element" if elem.name.startswith("$") else elem.name
        return f"{name} in {coll}"[:90]

    # ------------------------------------------------------------------ statements

    def stmt_block(self, node: Node) -> None:
        self.push_scope()
        self.lower_statements(self.named(node), node)
        self.pop_scope(node)

    def lower_statements(self, stmts: list[Node], block: Node) -> None:
        """Statements of one block; a `using` declaration covers the rest of the block, as a
        `try` whose `finally` disposes it (C# 8: disposed when the enclosing block ends)."""
        for i, stmt in enumerate(stmts):
            if stmt.type == "local_declaration_statement" and has_token(stmt, "using"):
                self.lower_using_declaration(stmt, stmts[i + 1:], block)
                return
            if stmt.type == "local_function_statement":
                continue  # declared first (below): a local function may be called before its text
            self.lower_stmt(stmt)

    def stmt_local_declaration_statement(self, node: Node) -> None:
        decl = next((c for c in self.named(node) if c.type == "variable_declaration"), None)
        if decl is not None:
            self.lower_variable_declaration(decl)

    def lower_variable_declaration(self, decl: Node) -> list[str]:
        """`T a = x, b = y;`: each declared (typed), then initialized; the names declared."""
        declared = canon(self.text(decl.child_by_field_id(F_TYPE)))
        names = []
        for d in self.named(decl):
            if d.type != "variable_declarator":
                continue
            self.stmt_temps = []
            names.extend(self.lower_declarator(d, declared))
            self.finish_statement(d)
        return names

    def lower_declarator(self, d: Node, declared: str) -> list[str]:
        name_node = d.child_by_field_id(F_NAME)
        value = declarator_value(d)
        tuple_pat = next((c for c in d.named_children if c.type in ("tuple_pattern", "parenthesized_variable_designation")),
                         None)
        if tuple_pat is not None:  # `var (a, b) = f();`
            names = [self.text(n) for n in tuple_pat.named_children if n.type == "identifier"]
            source = self.lower_expr(value) if value is not None else Opaque("?")
            parts = self.take_from_tuple(d, source)
            for n in names:
                self.declare(n, "")
                self.emit(ir.Assign(self.loc(d), self.var(n), Opaque(f"{n} of {ir.expr_text(parts)}")))
            return names
        if name_node is None:
            return []
        name = self.text(name_node)
        type_ = declared
        if declared in ("var", "") and value is not None:
            type_ = self.expr_type(value)
        self.declare(name, "" if type_ == "var" else type_)
        self.note_null_test(name, value)
        if value is not None:
            self.assign_from(self.var(name), value, self.loc(d))
        return [name]

    def stmt_foreach_statement(self, node: Node) -> None:
        """`foreach (T v in c)`: each iteration reads one element of c (`v = c[i]`), so a loop
        that disposes v disposes every element of c (and a results collection with them)."""
        self.stmt_temps = []
        value = node.child_by_field_id(F_RIGHT)
        coll = self.lower_expr(value) if value is not None else Opaque("?")
        coll_type = self.expr_type(value) if value is not None else ""
        temps = self.take_temps()
        left = node.child_by_field_id(F_LEFT)
        var_type = canon(self.text(node.child_by_field_id(F_TYPE)))
        if var_type in ("var", ""):
            var_type = element_type(coll_type)
        self.push_scope()
        names = [self.text(n) for n in left.named_children if n.type == "identifier"] \
            if left is not None and left.type != "identifier" else []
        if names:  # `foreach (var (k, v) in pairs)`
            elem = Var(f"$elem{node.start_point[0] + 1}")
            self.locals[elem.name] = False
            for n in names:
                self.declare(n, "")
        else:
            name = self.text(left) if left is not None else f"$elem{node.start_point[0] + 1}"
            self.declare(name, var_type)
            elem = self.var(name)

        def body() -> None:
            for n in names:
                self.emit(ir.Assign(self.loc(node), self.var(n), Opaque(f"{n} of {elem.name}", (elem,))))
            b = node.child_by_field_id(F_BODY)
            if b is not None:
                self.lower_scoped(b)
        self.element_loop(node, coll, elem, body, coll_node=value)
        self.pop_scope(None)
        self.kill(temps, self.end_loc(node))


    def stmt_yield_statement(self, node: Node) -> None:
        """`yield return v` hands v to the consumer (not an exit); `yield break` is a return."""
        self.is_iterator = True
        kids = self.named(node)
        if not kids:
            self.lower_return_value(None, node)
            return
        self.stmt_temps = []
        value = self.lower_expr(kids[0])
        self.emit(ir.Assign(self.loc(node), Index(Var("<yield>"), SOME_INDEX), value))
        self.finish_statement(node)

    # -- switch

    def stmt_switch_statement(self, node: Node) -> None:
        """Sections do not fall through (an empty one shares the next one's body); a pattern
        or a `when` clause is an opaque test, the same one each time it is met."""
        self.stmt_temps = []
        value_node = node.child_by_field_id(F_VALUE)
        value = self.lower_expr(value_node) if value_node is not None else Opaque("?")
        temps = self.take_temps()
        exit_b = self.new_block()
        body = node.child_by_field_id(F_BODY)
        sections = [s for s in self.named(body) if s.type == "switch_section"]
        blocks = [self.new_block() for _ in sections]
        default = exit_b.id
        self.push_scope()
        for section, block in zip(sections, blocks):
            labels = [c for c in self.named(section) if not _is_statement(c)]
            if has_token(section, "default"):
                default = block.id
            for label in labels:
                if label.type == "when_clause":
                    continue
                nxt = self.new_block()
                test = self.case_test(value, label)
                self.terminate(Branch(test, block.id, nxt.id, self.loc(label), self.short_text(label), "case"))
                self.start(nxt)
        self.jump(default)
        self.ctx.append(Breakable(exit_b.id, None, is_switch=True))
        try:
            for i, (section, block) in enumerate(zip(sections, blocks)):
                stmts = [c for c in self.named(section) if _is_statement(c)]
                self.start(block)
                self.kill_at(temps, section)
                if not stmts and i + 1 < len(blocks):
                    self.jump(blocks[i + 1])
                    continue
                self.push_scope()
                self.lower_statements(stmts, section)
                self.pop_scope(section)
                self.jump(exit_b)
        finally:
            self.ctx.pop()
        self.pop_scope(None)
        self.start(exit_b)
        self.kill(temps, self.end_loc(node))

    def case_test(self, value: ir.Expr, label: Node) -> ir.Expr:
        """`case 3:` compares; `case OrtValue v:` binds v to the value; others are opaque."""
        if label.type == "constant_pattern":
            kids = self.named(label)
            if kids and kids[0].type in ("integer_literal", "null_literal", "boolean_literal"):
                return Op("==", (value, self.lower_expr(kids[0])))
        if label.type == "declaration_pattern":
            name = label.child_by_field_id(F_NAME)
            if name is not None:
                self.declare(self.text(name), canon(self.text(label.child_by_field_id(F_TYPE))))
                self.emit(ir.Assign(self.loc(label), self.var(self.text(name)), value))
        return Opaque(f"case@{label.start_point[0] + 1}:{label.start_point[1]}")

    # -- the rest

    def stmt_goto_statement(self, node: Node) -> None:
        """`goto label` (forward or back); `goto case`/`goto default` leave the switch's section."""
        kids = self.named(node)
        if kids and kids[0].type == "identifier" and not has_token(node, "case") and not has_token(node, "default"):
            label = self.text(kids[0])
            target = self.labels.get(label)
            if target is None:
                target = self.labels[label] = self.new_block()
            self.jump(target)
            return
        for i in range(len(self.ctx) - 1, -1, -1):
            c = self.ctx[i]
            if isinstance(c, Breakable) and c.is_switch:
                self.run_finalizers(i + 1)
                self.jump(c.brk)
                return

    def stmt_labeled_statement(self, node: Node) -> None:
        kids = self.named(node)
        if not kids:
            return
        label = self.text(kids[0])
        target = self.labels.get(label)
        if target is None:
            target = self.labels[label] = self.new_block()
        self.jump(target)
        self.start(target)
        for stmt in kids[1:]:
            self.lower_stmt(stmt)

    def stmt_lock_statement(self, node: Node) -> None:
        kids = self.named(node)
        self.stmt_temps = []
        if kids and not _is_statement(kids[0]):
            self.lower_expr(kids[0])
        self.finish_statement(node)
        for k in kids:
            if _is_statement(k):
                self.lower_scoped(k)

    def stmt_checked_statement(self, node: Node) -> None:
        for k in self.named(node):
            if _is_statement(k):
                self.lower_scoped(k)
    stmt_unsafe_statement = stmt_checked_statement

    def stmt_fixed_statement(self, node: Node) -> None:
        self.push_scope()
        for k in self.named(node):
            if k.type == "variable_declaration":
                self.lower_variable_declaration(k)
            elif _is_statement(k):
                self.lower_scoped(k)
        self.pop_scope(node)

    def stmt_local_function_statement(self, node: Node) -> None:
        """Declared before the block runs (see `lower_statements`): nothing happens here."""


def _is_statement(node: Node) -> bool:
    t = node.type
    return t.endswith("_statement") or t == "block"
