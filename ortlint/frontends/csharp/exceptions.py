"""C# exceptions: `throw`, `try`/`catch`/`finally`, `using` statements and declarations.

Every exit of a `try` runs its own copy of the `finally` (normal completion, `return`,
`break`/`continue`/`goto case`, each exception), as the compiler's lowering does. Exceptions are
routed by what throws them (see `TryFrame`): a catch clause takes an exception when its type
catches it ("ORT": an ONNX Runtime call, caught by `catch`, `catch (Exception)` and
`catch (OnnxRuntimeException)`; an explicit `throw new T(...)`, caught by T and its bases), may
take it (a `when` filter, a type whose ancestry is unknown, an exception of unknown type) or
cannot (the suite's README, item 13)."""
from __future__ import annotations

from typing import Callable

from tree_sitter import Node

from ... import ir
from ...ir import Branch, Halt, Jump, Opaque
from ..common.cfg import TooDeep
from ..managed.limits import MAX_NESTING
from .api import exception_catches
from .scopes import Catch, TryFrame
from .syntax import F_BODY, F_NAME, F_TYPE, has_token
from .types import base_name, canon

_CATCH_ALL = frozenset({"Exception", "SystemException"})
ORT = "ORT"
ANY = "*"


class CSharpExceptions:
    """C# exceptions: handlers per thrown token, `finally` copies, `using`."""

    # ------------------------------------------------------------------ routing

    def handler_for(self, token: str) -> int | None:
        """The block an exception of `token` raised here goes to (None: out of the function)."""
        for frame in reversed(self.ctx):
            if not isinstance(frame, TryFrame):
                continue
            if frame.phase == "body" and frame.catches:
                block = frame.dispatch.get(token)
                if block is None:
                    block = frame.dispatch[token] = self.new_block(handler=None)
                return block.id
            if frame.final is not None:
                block = frame.fin_exc.get(token)
                if block is None:
                    block = frame.fin_exc[token] = self.new_block(handler=None)
                return block.id
        return None

    def ensure_handler(self, token: str) -> None:
        """Make the current block's handler the one for `token` (a new block when it differs)."""
        target = self.handler_for(token)
        if self.cur is None:
            self.start(self.new_block(handler=target))
            return
        if self.cur.handler != target:
            block = self.new_block(handler=target)
            self.jump(block)
            self.start(block)

    def raise_token(self, token: str, loc: ir.Loc) -> None:
        target = self.handler_for(token)
        if target is not None:
            self.terminate(Jump(target))
        else:
            self.terminate(Halt(loc, "throw"))

    def run_finalizers(self, stop: int) -> None:
        """Emit, innermost first, every finally above context index `stop` (a jump out)."""
        saved = self.ctx
        try:
            for i in range(len(saved) - 1, stop - 1, -1):
                frame = saved[i]
                if not isinstance(frame, TryFrame) or frame.final is None:
                    continue
                if self.cur is None:
                    break
                self.ctx = saved[:i]
                self.fresh_region()
                self.stmt_temps = []
                frame.final()
        finally:
            self.ctx = saved

    # ------------------------------------------------------------------ throw

    def stmt_throw_statement(self, node: Node) -> None:
        self.stmt_temps = []
        kids = self.named(node)
        token = self.thrown_token(kids[0] if kids else None)
        if kids:
            self.lower_expr(kids[0])
        self.raise_token(token, self.loc(node))
        self.stmt_temps = []

    def expr_throw_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        kids = self.named(node)
        token = self.thrown_token(kids[0] if kids else None)
        if kids:
            self.lower_expr(kids[0])
        self.raise_token(token, self.loc(node))
        return Opaque("throw")

    def thrown_token(self, value: Node | None) -> str:
        """`throw new T(...)`: T; `throw;` in a catch: what that catch took; else unknown."""
        if value is not None and value.type == "object_creation_expression":
            name = base_name(canon(self.text(value.child_by_field_id(F_TYPE))))
            return ORT if name == "OnnxRuntimeException" else name
        if value is None:
            return self.rethrow_token
        return ANY

    rethrow_token = ANY

    # ------------------------------------------------------------------ try

    def stmt_try_statement(self, node: Node) -> None:
        body = node.child_by_field_id(F_BODY)
        clauses = [c for c in self.named(node) if c.type == "catch_clause"]
        fin_clause = next((c for c in self.named(node) if c.type == "finally_clause"), None)
        fin_body = next((c for c in self.named(fin_clause) if c.type == "block"), None) if fin_clause is not None else None
        catches = [self.catch_of(c) for c in clauses]
        final = (lambda: self.run_finally(fin_body)) if fin_body is not None else None
        self.lower_protected(node, lambda: self.stmt_block(body) if body is not None else None, catches, final)

    def catch_of(self, clause: Node) -> Catch:
        decl = next((c for c in self.named(clause) if c.type == "catch_declaration"), None)
        ctype = canon(self.text(decl.child_by_field_id(F_TYPE))) if decl is not None else ""
        filtered = any(c.type == "catch_filter_clause" for c in self.named(clause))
        return Catch(clause, base_name(ctype) if ctype else None, filtered)

    def lower_protected(self, node: Node, body: Callable[[], None], catches: list[Catch],
                        final: Callable[[], None] | None) -> None:
        """try body catch... finally: each exception token reaching the frame gets a dispatch to
        the catches that may take it; a finally runs on every way out."""
        frame = TryFrame(catches=catches, final=final)
        join = self.new_block()
        self.ctx.append(frame)
        depth = len(self.ctx) - 1
        self.depth += 1  # `using var` after `using var` nests as deep as there are of them
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            self.fresh_region()
            body()
            self.jump(join)
            frame.phase = "catch"
            if catches:
                self.lower_catches(node, frame, join)
        finally:
            del self.ctx[depth:]
            self.depth -= 1
        if final is not None:
            self.finish_final(node, frame, join)
        self.start(join)

    def lower_catches(self, node: Node, frame: TryFrame, after: ir.Block) -> None:
        """Dispatch every token that reached the body, then the catch bodies (in the "catch"
        phase: what they raise goes to the finally and outward, never to their siblings)."""
        for c in frame.catches:
            c.block = self.new_block()
        for token in sorted(frame.dispatch):
            self.fill_dispatch(node, frame, token)
        for c in frame.catches:
            self.lower_catch_body(c, after)

    def fill_dispatch(self, node: Node, frame: TryFrame, token: str) -> None:
        self.start(frame.dispatch[token])
        for c in frame.catches:
            verdict = self.catch_verdict(c, token)
            if verdict == "no":
                continue
            assert c.block is not None
            if verdict == "yes" and not c.filtered:
                self.jump(c.block)
                return
            nxt = self.new_block(handler=None)
            text = f"catch ({c.type or ''})"
            self.terminate(Branch(Opaque(f"{text}@{c.node.start_point[0] + 1}:{token}"), c.block.id, nxt.id,
                                  self.loc(c.node), text, "case"))
            self.start(nxt)
        self.raise_token(token, self.loc(node))

    def catch_verdict(self, c: Catch, token: str) -> str:
        if c.type is None or c.type in _CATCH_ALL:
            return "yes"
        if token == ANY:
            return "maybe"
        if token == ORT:
            return "yes" if c.type == "OnnxRuntimeException" else "no"
        return exception_catches(c.type, token, self.unit.exception_bases())

    def lower_catch_body(self, c: Catch, after: ir.Block) -> None:
        self.start(c.block)
        self.push_scope()
        decl = next((k for k in self.named(c.node) if k.type == "catch_declaration"), None)
        name = decl.child_by_field_id(F_NAME) if decl is not None else None
        if name is not None:
            self.declare(self.text(name), c.type or "Exception")
            self.emit(ir.Assign(self.loc(name), self.var(self.text(name)), Opaque("exception")))
        saved = self.rethrow_token
        self.rethrow_token = ORT if c.type == "OnnxRuntimeException" else (c.type if c.type and c.type not in _CATCH_ALL
                                                                           else ANY)
        try:
            body = c.node.child_by_field_id(F_BODY)
            if body is not None:
                self.stmt_block(body)
        finally:
            self.rethrow_token = saved
        self.pop_scope(c.node)
        self.jump(after)

    def finish_final(self, node: Node, frame: TryFrame, join: ir.Block) -> None:
        """The normal path's copy of the finally (the body's and the catches' ends reach `join`
        first), then one exceptional copy per token that reached it, each raising on."""
        normal = self.new_block()
        self.redirect(join, normal)
        self.start(normal)
        self.stmt_temps = []
        frame.final()
        self.jump(join)
        done: set[str] = set()
        while set(frame.fin_exc) - done:
            for token in sorted(set(frame.fin_exc) - done):
                done.add(token)
                self.start(frame.fin_exc[token])
                self.stmt_temps = []
                frame.final()
                if self.cur is not None:
                    self.raise_token(token, self.loc(node))

    def redirect(self, old: ir.Block, new: ir.Block) -> None:
        """Every jump to `old` made so far goes to `new` instead (the normal exits of a try
        reach its finally before what follows)."""
        for b in self.blocks:
            t = b.term
            if isinstance(t, Jump) and t.target == old.id:
                t.target = new.id
            elif isinstance(t, Branch):
                if t.then == old.id:
                    t.then = new.id
                if t.orelse == old.id:
                    t.orelse = new.id

    # ------------------------------------------------------------------ using

    def stmt_using_statement(self, node: Node) -> None:
        """`using (var a = x, b = y) body` is `using (a = x) using (b = y) body`: each resource
        is disposed on every exit of what follows it, the later ones first; a creation that
        throws created nothing. `using (expr) body` disposes the value of expr."""
        self.push_scope()
        decl = next((c for c in self.named(node) if c.type == "variable_declaration"), None)
        body = node.child_by_field_id(F_BODY)

        def lower_body() -> None:
            if body is not None:
                self.lower_scoped(body)
        if decl is not None:
            declared = canon(self.text(decl.child_by_field_id(F_TYPE)))
            declarators = [d for d in self.named(decl) if d.type == "variable_declarator"]
            self.lower_using_declarators(node, declared, declarators, lower_body)
        else:
            expr = next((c for c in self.named(node) if c.id != (body.id if body is not None else -1)), None)
            targets: list[ir.Expr] = []
            if expr is not None:
                self.stmt_temps = []
                held = ir.Var(f"$using{node.start_point[0] + 1}_{node.start_point[1]}")
                self.locals[held.name] = False
                self.assign_from(held, expr, self.loc(expr))
                self.finish_statement(expr)
                targets.append(held)
            self.lower_disposing(node, targets, lower_body)
        self.pop_scope(node)

    def lower_using_declarators(self, node: Node, declared: str, declarators: list[Node],
                                body: Callable[[], None]) -> None:
        if not declarators:
            body()
            return
        self.stmt_temps = []
        names = self.lower_declarator(declarators[0], declared)
        self.finish_statement(declarators[0])
        self.lower_disposing(node, [self.var(n) for n in names],
                             lambda: self.lower_using_declarators(node, declared, declarators[1:], body))

    def lower_using_declaration(self, stmt: Node, rest: list[Node], block: Node) -> None:
        """`using var x = e;` disposes x when the enclosing block ends, on every exit from it."""
        decl = next((c for c in self.named(stmt) if c.type == "variable_declaration"), None)
        if decl is None:
            self.lower_statements(rest, block)
            return
        declared = canon(self.text(decl.child_by_field_id(F_TYPE)))
        declarators = [d for d in self.named(decl) if d.type == "variable_declarator"]
        self.lower_using_declarators(stmt, declared, declarators, lambda: self.lower_statements(rest, block))

    def lower_disposing(self, node: Node, targets: list[ir.Expr], body: Callable[[], None]) -> None:
        if not targets:
            body()
            return
        loc = self.loc(node)
        asynchronous = has_token(node, "await")

        def dispose() -> None:
            for target in reversed(targets):
                self.emit_dispose(target, loc, asynchronous)
        self.lower_protected(node, body, [], dispose)
