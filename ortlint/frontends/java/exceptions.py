"""Java exceptions: `throw`, `try`/`catch`/`finally` (every exit runs the `finally` blocks it leaves) and
try-with-resources (resources closed last first)."""
from __future__ import annotations

from typing import Callable

from tree_sitter import Node

from ... import ir
from ...ir import Block, Branch, Jump, Opaque, Var
from ..common.cfg import TooDeep
from .names import base_type
from .scopes import Finalizer
from .syntax import F_BODY, F_NAME, F_RESOURCES, F_TYPE, F_VALUE
from .tables import CATCH_ALL, CATCH_ANYTHING, MAX_NESTING, UNCHECKED_EXCEPTIONS


class JavaExceptions:
    """Java exceptions: `throw`, `try`/`catch`/`finally` (every exit runs the `finally` blocks it leaves) and
try-with-resources (resources closed last first)."""

    def run_finalizers(self, stop: int) -> None:
        """Emit, innermost first, every finalizer above context index `stop` (a jump out)."""
        saved_ctx, saved_handler, saved_temps = self.ctx, self.handler, self.stmt_temps
        try:
            for i in range(len(saved_ctx) - 1, stop - 1, -1):
                fin = saved_ctx[i]
                if not isinstance(fin, Finalizer):
                    continue
                if self.cur is None:  # a finally that returned or threw: the original exit is void
                    break
                self.ctx = saved_ctx[:i]
                self.handler = fin.handler
                self.fresh_region()
                self.stmt_temps = []
                fin.run()
        finally:  # also when a finally is too deep to lower: the enclosing `try` pops its own context
            self.ctx, self.handler, self.stmt_temps = saved_ctx, saved_handler, saved_temps

    def stmt_throw_statement(self, node: Node) -> None:
        self.stmt_temps = []
        kids = self.named(node)
        if kids:
            self.lower_expr(kids[0])
        if self.thrown:  # `throw new E(...)` throws an E; `throw e` something we do not know
            thrown = self.unparen(kids[0]) if kids else None
            exc = (base_type(self.types.canon(thrown.child_by_field_id(F_TYPE))).split(".")[-1]
                   if thrown is not None and thrown.type == "object_creation_expression" else "*")
            self.thrown[-1].add(exc)
        self.raise_here(self.loc(node))
        self.stmt_temps = []

    def stmt_try_statement(self, node: Node) -> None:
        self.lower_try(node, [])

    def stmt_try_with_resources_statement(self, node: Node) -> None:
        spec = node.child_by_field_id(F_RESOURCES)
        self.lower_try(node, [r for r in self.named(spec) if r.type == "resource"])

    def lower_try(self, node: Node, resources: list[Node]) -> None:
        """try (resources) body catch... finally: resources close before catch and finally
        run; `finally` is copied onto the normal exit, the exceptional exit, and each jump."""
        body = node.child_by_field_id(F_BODY)
        catches = [c for c in self.named(node) if c.type == "catch_clause"]
        fin_clause = next((c for c in self.named(node) if c.type == "finally_clause"), None)
        fin_body = next((c for c in self.named(fin_clause) if c.type == "block"), None) if fin_clause is not None else None
        outer = self.handler
        join = self.new_block()
        fin_exc = self.new_block(handler=outer) if fin_body is not None else None
        fin_norm = self.new_block(handler=outer) if fin_body is not None else None
        dispatch = self.new_block(handler=fin_exc.id if fin_exc else outer) if catches else None
        after_body = fin_norm or join
        if fin_body is not None:
            self.ctx.append(Finalizer(lambda: self.run_finally(fin_body), outer))
        self.thrown.append(set())
        mark = len(self.library_calls)
        try:
            self.handler = dispatch.id if dispatch else (fin_exc.id if fin_exc else outer)
            self.fresh_region()
            self.push_scope()
            self.lower_resources(resources, body)
            self.pop_scope(body)
            self.jump(after_body)
            self.handler = fin_exc.id if fin_exc else outer
        finally:
            thrown = self.thrown.pop()
        if dispatch is not None:
            thrown |= self.library_throws(catches, thrown, dispatch.id, mark)
        try:
            escaping = {e for e in thrown if not any(self.catches_exception(c, e) for c in catches)}
            if self.thrown:
                self.thrown[-1].update(escaping)
            if dispatch is not None:
                self.lower_catches(node, dispatch, catches, fin_exc.id if fin_exc else outer, after_body,
                                   propagates=bool(escaping))
        finally:
            if fin_body is not None:
                self.ctx.pop()
            self.handler = outer
        if fin_body is not None and fin_exc is not None and fin_norm is not None:
            self.start(fin_norm)
            self.run_finally(fin_body)
            self.jump(join)
            self.start(fin_exc)
            self.run_finally(fin_body)
            if self.cur is not None:
                self.raise_here(self.loc(fin_clause))
        self.start(join)

    def library_throws(self, catches: list[Node], thrown: set[str], dispatch: int, mark: int) -> set[str]:
        """A `catch` of a checked exception that no call of the try body is known to declare
        (`catch (IOException e)` around `reader.readLine()`): javac accepts it only because a
        call of the body declares it, so the library calls whose declarations we do not know
        (the JDK's, other projects') may throw it. They fork an exceptional edge into the
        catch; the ones in `finally` copies run by a jump out of the body (another handler)
        are not in the body. Returns the exceptions so explained."""
        unexplained = {t for c in catches for t in self.catch_types(c)
                       if t not in thrown and t not in CATCH_ANYTHING and not self.is_unchecked(t)}
        if not unexplained:
            return set()
        for call, handler in self.library_calls[mark:]:
            if handler >= dispatch:  # the handler of this body, or of a try nested in it
                call.may_throw = True
        return unexplained

    def is_unchecked(self, exc: str) -> bool:
        """A RuntimeException or an Error (by name for the JDK's, by superclass for classes
        of the analyzed code): catching one says nothing about what the body throws."""
        if exc in UNCHECKED_EXCEPTIONS or exc.endswith("Error"):
            return True
        info = self.unit.class_info(exc)
        return info is not None and any(c.super_name.split(".")[-1] in UNCHECKED_EXCEPTIONS for c in info.lineage())

    def catches_exception(self, clause: Node, exc: str) -> bool:
        """Does this clause catch `exc` (a checked exception a call of the try declares)?
        `Exception` and `Throwable` catch everything; a union (`A | B`) catches each of its
        types; an exception we do not know ("*", `throw e`) only the catch-alls."""
        types = self.catch_types(clause)
        return bool(types & {"Exception", "Throwable"}) or (exc != "*" and exc in types)

    def lower_catches(self, node: Node, dispatch: Block, catches: list[Node], uncaught: int | None, after: Block,
                      propagates: bool = True) -> None:
        """Which catch runs is unknown: branch to each. The exception may also propagate when
        some checked exception of the try body is caught by none of the clauses (a
        `catch (IOException | RuntimeException e)` covers calls declaring IOException only)."""
        blocks = [self.new_block() for _ in catches]
        catch_all = not propagates or any(self.catch_types(c) & CATCH_ALL for c in catches)
        self.start(dispatch)
        for i, (clause, block) in enumerate(zip(catches, blocks)):
            last = i == len(catches) - 1
            if last and catch_all:
                self.jump(block)
                break
            nxt = self.new_block()
            text = f"catch ({' | '.join(sorted(self.catch_types(clause)))})"
            which = Opaque(f"{text}@{clause.start_point[0] + 1}")
            self.terminate(Branch(which, block.id, nxt.id, self.loc(clause), text, "case"))
            self.start(nxt)
        if self.cur is not None:
            self.raise_here(self.loc(node)) if uncaught is None else self.terminate(Jump(uncaught))
        for clause, block in zip(catches, blocks):
            self.start(block)
            self.push_scope()
            param = next((c for c in self.named(clause) if c.type == "catch_formal_parameter"), None)
            pname = param.child_by_field_id(F_NAME) if param is not None else None
            if pname is not None:
                self.declare(self.text(pname), "Exception")
                self.emit(ir.Assign(self.loc(pname), Var(self.text(pname)), Opaque("exception")))
            cbody = clause.child_by_field_id(F_BODY)
            if cbody is not None:
                self.stmt_block(cbody)
            self.pop_scope(clause)
            self.jump(after)

    def catch_types(self, clause: Node) -> set[str]:
        param = next((c for c in self.named(clause) if c.type == "catch_formal_parameter"), None)
        ctype = next((c for c in self.named(param) if c.type == "catch_type"), None) if param is not None else None
        return {base_type(self.types.canon(t)).split(".")[-1] for t in self.named(ctype)}

    def lower_resources(self, resources: list[Node], body: Node | None) -> None:
        """Each resource is a nested try/finally closing it (JLS 14.20.3)."""
        if not resources:
            if body is not None:
                self.stmt_block(body)
            return
        res = resources[0]
        if self.depth + len(resources) > MAX_NESTING:  # each resource nests one try/finally
            raise TooDeep()
        self.depth += 1
        try:
            self.lower_resource(res, resources[1:], body)
        finally:
            self.depth -= 1

    def lower_resource(self, res: Node, rest: list[Node], body: Node | None) -> None:
        """One resource: initialized, then the rest inside a try whose finally closes it."""
        self.stmt_temps = []
        target, type_ = self.lower_resource_init(res)
        self.finish_statement(res)
        outer = self.handler
        exc = self.new_block(handler=outer)
        closer = self.make_closer(target, type_, res)
        self.ctx.append(Finalizer(closer, outer))
        try:
            self.handler = exc.id
            self.fresh_region()
            self.lower_resources(rest, body)
        finally:
            self.ctx.pop()
            self.handler = outer
        normal: Block | None = None
        if self.cur is not None:
            self.fresh_region()
            closer()
            normal = self.cur
        self.start(exc)
        closer()
        if self.cur is not None:
            self.raise_here(self.loc(res))
        self.cur = normal  # the normal path goes on after the exceptional copy is built

    def lower_resource_init(self, res: Node) -> tuple[ir.Expr, str]:
        """Declare and initialize one resource; return what to close and its type."""
        name_node = res.child_by_field_id(F_NAME)
        value = res.child_by_field_id(F_VALUE)
        if name_node is not None:
            name = self.text(name_node)
            declared = self.types.canon(res.child_by_field_id(F_TYPE))
            if declared in ("var", "") and value is not None:
                declared = self.expr_type(value)
            self.declare(name, "" if declared == "var" else declared)
            if value is not None:
                self.assign_from(self.var(name), value, self.loc(res))
            return self.var(name), declared
        kids = self.named(res)
        if not kids:
            return Opaque("?"), ""
        return self.lower_expr(kids[0]), self.expr_type(kids[0])

    def make_closer(self, target: ir.Expr, type_: str, res: Node) -> Callable[[], None]:
        """`r.close()` as the compiler generates it. Its `if (r != null)` guard is left out:
        closing a null resource is already a no-op for the engine, and the guard would only
        add a step to every explanation."""
        callee = self.unit.method_callee(type_, "close")
        loc = self.loc(res)
        text = f"{ir.expr_text(target)}.close() (try-with-resources)"

        def close() -> None:
            self.call_counter += 1
            self.emit(ir.Call(self.call_counter, loc, callee, "method", target, (), None, text, False))
        return close
