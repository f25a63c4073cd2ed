"""The statements Java and C# lower alike: expression statements, `return` (through `finally`
blocks), `if`, `while`, `do`, `for`, loops over the elements of a collection, `break` and
`continue`. Where the languages differ, a class attribute or a hook of the language decides:

* `COND_SCOPES`: a condition declares locals of its own (C# patterns: `if (x is OrtValue v)`),
  so `if` and `while` open a scope around it;
* `jump_label(node)`: the label a `break`/`continue` names (Java; C# uses `goto` instead);
* `for_inits(node, cond, body, updates)` and `lower_for_init(init)`: the first part of a `for`;
* `has_finally()`: whether a `return` here runs a `finally` (its value is held first);
* `loop_header(elem, coll)`: the text of a loop over elements, for explanations (`coll` is the
  collection's source text: the lowered expression may be a temporary such as `$4`)."""
from __future__ import annotations

from typing import Callable

from tree_sitter import Node

from ... import ir
from ...ir import Branch, Const, Index, Jump, Opaque, Return, Var
from .scopes import Breakable, Inlined

HAS_NEXT, SOME_INDEX = Opaque("hasNext"), Opaque("i")


class ManagedStatements:
    """Statements and loops shared by the Java and C# lowerings (see the module's docstring)."""

    COND_SCOPES = False
    pending_label: tuple[str, ...] = ()  # labels waiting for the loop they name (Java)

    # ------------------------------------------------------------------ hooks

    def jump_label(self, node: Node) -> str | None:
        """The label of a `break`/`continue` (None: the innermost target)."""
        return None

    def has_finally(self) -> bool:
        """Does a `return` here leave a `finally` (or a disposal) that runs before it returns?"""
        raise NotImplementedError

    def for_inits(self, node: Node, cond: Node | None, body: Node | None, updates: list[Node]) -> list[Node]:
        """The initializers of a `for` (declarations or expressions)."""
        raise NotImplementedError

    def lower_for_init(self, init: Node) -> None:
        """One initializer of a `for`: a declaration, else an expression."""
        raise NotImplementedError

    def loop_header(self, elem: Var, coll: str) -> str:
        """The text of the branch that starts each iteration over elements."""
        raise NotImplementedError

    # ------------------------------------------------------------------ simple statements

    def lower_expr_stmt(self, node: Node) -> None:
        self.stmt_temps = []
        self.lower_expr(node, discard=True)
        self.finish_statement(node)

    def stmt_expression_statement(self, node: Node) -> None:
        for child in self.named(node):
            self.lower_expr_stmt(child)

    def stmt_return_statement(self, node: Node) -> None:
        kids = self.named(node)
        self.lower_return_value(kids[0] if kids else None, node)

    def lower_return_value(self, value: Node | None, node: Node) -> None:
        """`return v`: v is computed first, then every `finally` (and disposal) it leaves runs;
        in a lambda body lowered in place it goes on with the next element."""
        self.stmt_temps = []
        expr = self.lower_expr(value) if value is not None else None
        ctx = self.ctx
        inlined = next((i for i in range(len(ctx) - 1, -1, -1) if isinstance(ctx[i], Inlined)), None) if ctx else None
        if inlined is not None:
            self.run_finalizers(inlined + 1)
            self.jump(ctx[inlined].cont)  # type: ignore[union-attr]
            return
        if expr is not None and ctx and not isinstance(expr, Const) and self.has_finally():
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
        cond = node.child_by_field_id(self.F.condition)
        then = node.child_by_field_id(self.F.consequence)
        alt = node.child_by_field_id(self.F.alternative)
        then_b, join = self.new_block(), self.new_block()
        else_b = self.new_block() if alt is not None else join
        self.stmt_temps = []
        if self.COND_SCOPES:
            self.push_scope()
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
        if self.COND_SCOPES:
            self.pop_scope(None)

    def lower_scoped(self, node: Node) -> None:
        """A statement that is its own scope (an arm of an `if`, a loop body)."""
        self.push_scope()
        self.lower_stmt(node)
        self.pop_scope(node)

    # ------------------------------------------------------------------ loops

    def take_labels(self) -> tuple[str, ...]:
        labels, self.pending_label = self.pending_label, ()
        return labels

    def loop_body(self, body: Node | None, brk: ir.Block, cont: ir.Block, labels: tuple[str, ...] = ()) -> None:
        self.ctx.append(Breakable(brk.id, cont.id, labels))
        try:
            if body is not None:
                self.lower_scoped(body)
        finally:
            self.ctx.pop()

    def close_loop(self, exit_b: ir.Block, first: int, extra: set[int], node: Node) -> None:
        """The loop's exit: a ScopeExit naming the loop's blocks (what it did to elements)."""
        self.start(exit_b)
        self.emit(ir.ScopeExit(self.end_loc(node), frozenset(extra | set(range(first, len(self.blocks))))))

    def stmt_while_statement(self, node: Node) -> None:
        """header -> body -> header, with a ScopeExit on the exit edge for loops over elements."""
        labels = self.take_labels()
        header, body_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        first = len(self.blocks)
        self.stmt_temps = []
        if self.COND_SCOPES:
            self.push_scope()
        self.lower_cond(node.child_by_field_id(self.F.condition), body_b, exit_b, kind="loop")
        temps = self.take_temps()
        self.start(body_b)
        self.kill_at(temps, node)
        self.loop_body(node.child_by_field_id(self.F.body), exit_b, header, labels)
        self.jump(header)
        if self.COND_SCOPES:
            self.pop_scope(None)
        self.close_loop(exit_b, first, {header.id, body_b.id}, node)
        self.kill_at(temps, node)

    def stmt_do_statement(self, node: Node) -> None:
        """The body runs once before the condition is tested."""
        labels = self.take_labels()
        body_b, cond_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(body_b)
        first = len(self.blocks)
        self.start(body_b)
        self.loop_body(node.child_by_field_id(self.F.body), exit_b, cond_b, labels)
        self.jump(cond_b)
        self.start(cond_b)
        self.stmt_temps = []
        again = self.new_block()
        self.lower_cond(node.child_by_field_id(self.F.condition), again, exit_b, kind="loop")
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
        cond = node.child_by_field_id(self.F.condition)
        body = node.child_by_field_id(self.F.body)
        updates = node.children_by_field_id(self.F.update)
        for init in self.for_inits(node, cond, body, updates):
            self.lower_for_init(init)
        header, body_b, update_b, exit_b = self.new_block(), self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        first = len(self.blocks)
        self.stmt_temps = []
        if cond is not None:
            self.lower_cond(cond, body_b, exit_b, kind="loop")
        else:
            self.jump(body_b)
        temps = self.take_temps()
        self.start(body_b)
        self.kill_at(temps, node)
        self.loop_body(body, exit_b, update_b, labels)
        self.jump(update_b)
        self.start(update_b)
        for update in updates:
            self.lower_expr_stmt(update)
        self.jump(header)
        self.close_loop(exit_b, first, {header.id, body_b.id, update_b.id}, node)
        self.kill_at(temps, node)
        self.pop_scope(node)

    def element_loop(self, node: Node, coll: ir.Expr, elem: Var, body: Callable[[], None],
                     labels: tuple[str, ...] = (), coll_node: Node | None = None) -> None:
        """A loop over the elements of `coll` whose body is produced by `body()`: each iteration
        reads one element (`elem = coll[i]`), so a loop that closes `elem` is recognised by
        the engine as closing every element of `coll`."""
        loc = self.loc(node)
        more = Var(f"$more{loc.line}_{len(self.blocks)}")
        self.locals[more.name] = False
        header, body_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        first = len(self.blocks)
        coll_text = " ".join(self.text(coll_node).split()) if coll_node is not None else ir.expr_text(coll)
        self.terminate(Branch(more, body_b.id, exit_b.id, loc, self.loop_header(elem, coll_text), "loop"))
        self.start(body_b)
        self.emit(ir.Assign(loc, more, HAS_NEXT))
        self.emit(ir.Assign(loc, elem, Index(coll, SOME_INDEX)))
        self.ctx.append(Breakable(exit_b.id, header.id, labels))
        try:
            body()
        finally:
            self.ctx.pop()
        self.jump(header)
        self.close_loop(exit_b, first, {header.id, body_b.id}, node)

    def inline_body(self, body: Node | None) -> None:
        """A lambda's body lowered in place as a loop body (`forEach`, `List.ForEach`): its
        `return` goes on with the next element."""
        cont = self.new_block()
        self.ctx.append(Inlined(cont.id))
        try:
            if body is not None and body.type == "block":
                self.stmt_block(body)
            elif body is not None:
                self.lower_expr_stmt(body)
        finally:
            self.ctx.pop()
        self.jump(cont)
        self.start(cont)

    # ------------------------------------------------------------------ jumps

    def stmt_break_statement(self, node: Node) -> None:
        """`break` runs the finalizers it leaves; without a label it leaves a loop or a switch."""
        label = self.jump_label(node)
        for i in range(len(self.ctx) - 1, -1, -1):
            c = self.ctx[i]
            if isinstance(c, Breakable) and (label in c.labels if label else (c.cont is not None or c.is_switch)):
                self.run_finalizers(i + 1)
                self.jump(c.brk)
                return
        self.terminate(Jump(self.new_block().id))  # break outside anything: unreachable rest

    def stmt_continue_statement(self, node: Node) -> None:
        """`continue` (labeled or not) runs the finalizers it leaves, like `break`."""
        label = self.jump_label(node)
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
