"""C++ exceptions: `throw` (destructors of every open scope run first), `try`/`catch` handlers."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Halt, Jump, Loc, Opaque
from ..c.syntax import _short
from .scopes import TryContext


class CppExceptions:
    """C++ exceptions: `throw` (destructors of every open scope run first), `try`/`catch` handlers."""

    def stmt_throw_statement(self, node: Node) -> None:
        self.stmt_temps = []
        for child in node.named_children:
            if child.type != "comment":
                self.lower_expr(child, discard=True)
        self.leave_by_throw(self.loc(node))

    def leave_by_throw(self, loc: Loc) -> None:
        """Run the destructors of the scopes the exception leaves, then go to the `catch`."""
        depth = self.try_stack[-1].depth if self.try_stack else 0
        self.run_cleanups(self.scopes[depth:], loc)
        if self.try_stack:
            self.terminate(Jump(self.try_stack[-1].dispatch))
        else:  # (out of a noexcept function: std::terminate)
            self.terminate(Halt(loc, "abort" if self.noexcept else "throw"))
        self.stmt_temps = []

    def stmt_try_statement(self, node: Node) -> None:
        body = node.child_by_field_id(self.F.body)
        catches = [c for c in node.named_children if c.type == "catch_clause"]
        if not catches:
            if body is not None:
                self.lower_stmt(body)
            return
        dispatch, join = self.new_block(), self.new_block()
        outer = self.handler
        self.try_stack.append(TryContext(dispatch.id, len(self.scopes)))
        self.handler = dispatch.id
        self.split()
        try:
            if body is not None:
                self.lower_stmt(body)
            self.jump(join)
        finally:
            self.try_stack.pop()
            self.handler = outer
        self.start(dispatch)
        self.lower_catch_clauses(catches, join)
        self.start(join)

    def lower_catch_clauses(self, catches: list[Node], join: ir.Block) -> None:
        """Any exception that reaches a `try` is taken to be caught by one of its clauses."""
        for i, clause in enumerate(catches):
            block = self.new_block()
            if i < len(catches) - 1:
                nxt = self.new_block()
                params = clause.child_by_field_id(self.F.parameters)
                text = "catch " + (self.text(params) if params is not None else "(...)")
                self.terminate(ir.Branch(Opaque(text), block.id, nxt.id, self.loc(clause), _short(text), "case"))
            else:
                self.jump(block)
            self.start(block)
            body = clause.child_by_field_id(self.F.body)
            if body is not None:
                self.lower_stmt(body)
            self.jump(join)
            if i < len(catches) - 1:
                self.start(nxt)

    def expr_throw_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        self.stmt_throw_statement(node)
        return Opaque("throw")
