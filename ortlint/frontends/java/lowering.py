"""One Java method body -> IR (`JavaLowering`); the constructs it understands live in the mixins it is assembled from."""
from __future__ import annotations

import re
from typing import Callable
from tree_sitter import Node
from ... import ir
from ...ir import Block, Branch, Const, Deref, Field, Index, Jump, Op, Opaque, Return, Var
from ..common.cfg import CfgBuilder, TooDeep, TooManyCleanups, field_ids
from .syntax import JAVA_LANGUAGE, lambda_param_names
from .syntax import F_ALTERNATIVE, F_ARGUMENTS, F_ARRAY, F_BODY, F_CONDITION, F_CONSEQUENCE, F_CONSTRUCTOR, F_DECLARATOR, F_DIMENSIONS, F_ELEMENT, F_FIELD, F_INDEX, F_INIT, F_LEFT, F_NAME, F_OBJECT, F_OPERATOR, F_PARAMETERS, F_RESOURCES, F_RIGHT, F_TYPE, F_UPDATE, F_VALUE  # noqa: F401
from .type_index import ClassInfo
from .tables import CATCH_ALL, MAX_FINALLY_BYTES, MAX_NESTING, _HEAD_BYTES, _INT_LITERALS, _OPERATORS, _SIMPLE_STATEMENTS, _SKIP, _THIS, _VOID, _short, nested_name, parse_int
from .names import _DOTTED_NAME, _no_space, _split_package, base_type, element_type
from .scopes import Breakable, Finalizer, Inlined, PendingFunction
from .tables import _FALSE, _HAS_NEXT, _NULL, _SOME_INDEX, _TRUE
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .frontend import JavaFrontEnd


class JavaLowering(CfgBuilder):
    """Builds the control-flow graph of one method, constructor, initializer or lambda."""

    language = "java"
    COMMENT_TYPES = _SKIP
    CALL_NODE_TYPES = ("method_invocation", "object_creation_expression", "ternary_expression", "switch_expression")
    UNARY_OPERAND = "operand"
    TERNARY_TYPE = "ternary_expression"
    MAX_NESTING = MAX_NESTING

    def __init__(self, unit: "JavaFrontEnd", node: Node, name: str, cls: ClassInfo,
                 captured: dict[str, str] | None = None):
        self.init_graph()
        self.F = field_ids(JAVA_LANGUAGE)  # the shared expressions of CfgBuilder find fields by id
        self.unit = unit
        self.named = unit.named  # type: ignore[method-assign]  # this file's comment-aware filter
        self.types = unit.types
        self.src = unit.src
        self.ascii = unit.ascii
        self.node = node
        self.name = name
        self.cls = cls
        self.captured = dict(captured or {})
        self.ctx: list[Finalizer | Breakable | Inlined] = []
        self.finally_bytes = 0  # source lowered again as copies of `finally` blocks (run_finally)
        self.thrown: list[set[str]] = []  # per enclosing try body: the checked exceptions it may throw ("*": unknown)
        self.scopes: list[dict[str, str]] = [{}]
        self.visible: dict[str, str] = {}  # the innermost declaration of every local in scope
        self.shadowed: list[dict[str, str | None]] = [{}]  # per scope: what its names hid (None: nothing)
        self.pending_label: tuple[str, ...] = ()
        self.vars, self.this_fields = unit.vars, unit.this_fields
        self.int_consts, self.text_consts = unit.int_consts, unit.text_consts

    # ------------------------------------------------------------------ graph plumbing

    def fresh_region(self) -> None:
        """Continue in a new block, so a handler change applies to what follows."""
        block = self.new_block()
        self.jump(block)
        self.start(block)

    # ------------------------------------------------------------------ shared IR values

    def var(self, name: str) -> Var:
        """`Var(name)`, one instance per name and file. IR expressions are immutable, and the
        IR of a large tree is mostly small objects: fewer of them are fewer to build and fewer
        for the garbage collector to walk again and again while the run goes on."""
        found = self.vars.get(name)
        if found is None:
            found = self.vars[name] = Var(name)
        return found

    def this_field(self, name: str) -> Field:
        """`Field(this, name)`, one instance per name and file (see `var`)."""
        found = self.this_fields.get(name)
        if found is None:
            found = self.this_fields[name] = Field(_THIS, name)
        return found

    # ------------------------------------------------------------------ scopes

    def declare(self, name: str, type_: str) -> None:
        """Declare a local in the innermost scope. `visible` is kept up to date, so looking a
        name up (several times per identifier) is one dict access, not a walk over scopes."""
        scope = self.scopes[-1]
        if name not in scope:
            self.shadowed[-1][name] = self.visible.get(name)
        scope[name] = type_
        self.visible[name] = type_
        self.locals[name] = False

    def declare_param(self, name: str, type_: str) -> None:
        """Parameters live in the outermost scope and are not `locals`."""
        self.scopes[0][name] = type_
        self.visible[name] = type_

    def local_type(self, name: str) -> str | None:
        return self.visible.get(name)

    def is_local(self, name: str) -> bool:
        return name in self.visible

    def visible_types(self) -> dict[str, str]:
        """Everything a lambda or anonymous class declared here can capture, with its type."""
        out = dict(self.captured)
        out.update(self.visible)
        return out

    def kill_at(self, names: tuple[str, ...], node: Node) -> None:
        """`kill(names, self.loc(node))`, building the location only when something dies."""
        if names and self.cur is not None:
            self.emit(ir.Kill(self.loc(node), names))

    def push_scope(self) -> None:
        self.scopes.append({})
        self.shadowed.append({})

    def pop_scope(self, node: Node | None) -> None:
        """Leaving a block: its locals are gone, so a resource only they held is lost here."""
        scope = self.scopes.pop()
        visible = self.visible
        for name, hidden in self.shadowed.pop().items():
            if hidden is None:
                del visible[name]
            else:
                visible[name] = hidden
        if node is not None and scope and self.cur is not None:
            self.kill(tuple(sorted(scope)), self.end_loc(node))

    # ------------------------------------------------------------------ entry point

    def lower(self, params: list[tuple[str, str]], body: Node | Callable[[], None] | None,
              kind: str = "method") -> ir.Function:
        """Parameters, then the body; an implicit `return` closes the last open block."""
        for pname, ptype in params:
            self.params.append(pname)
            self.declare_param(pname, ptype)
        entry = self.new_block()
        self.start(entry)
        if callable(body):
            body()
        elif body is not None:
            if kind == "lambda-expr":
                self.lower_return_value(body, body)
            else:
                self.lower_body(body)
        end = self.end_loc(self.node)
        if self.cur is not None:
            self.terminate(Return(None, end))
        for block in self.blocks:
            if block.term is None:
                block.term = Return(None, end)
        return ir.Function(name=self.name, path=self.unit.path, loc=self.loc(self.node), language=self.language,
                           params=self.params, locals=self.locals, blocks=self.blocks, entry=0,
                           is_static=False, notes=self.notes)

    def lower_body(self, body: Node) -> None:
        """The outermost block: no Kill at its end, the implicit return reports what leaks."""
        for child in self.named(body):
            self.lower_stmt(child)

    # ------------------------------------------------------------------ statements

    def lower_stmt(self, node: Node) -> None:
        """Dispatch on the statement type; a statement with a syntax error is havocked whole."""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            t = node.type
            if t in _SKIP:
                return
            handler = _STMT_HANDLERS.get(t)
            if t in _SIMPLE_STATEMENTS and node.has_error:
                self.unparsed(node)  # the whole statement: its names are what the error hides
            elif handler is not None:
                handler(self, node)
            elif t == "ERROR" or node.is_missing:
                self.unparsed(node)
            elif node.is_named:
                self.lower_expr_stmt(node)
        finally:
            self.depth -= 1

    def lower_expr(self, node: Node | None, discard: bool = False, dest: ir.Expr | None = None) -> ir.Expr:
        """`CfgBuilder.lower_expr`, dispatching through a table instead of `getattr`."""
        if node is None:
            return Opaque("")
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            handler = _EXPR_HANDLERS.get(node.type)
            if handler is not None:
                return handler(self, node, discard, dest)
            return self.expr_fallback(node)
        finally:
            self.depth -= 1

    def short_text(self, node: Node) -> str:
        """`short(self.text(node))` without decoding and folding all of a long node: a call's
        text includes its arguments' (lambda bodies, anonymous classes), so nested calls made
        this quadratic. When the folded head of the text is already cut, so is the whole."""
        start, end = node.start_byte, node.end_byte
        if end - start > _HEAD_BYTES:
            head = self.src[start:start + _HEAD_BYTES].decode("utf-8", "replace")
            cut = _short(head)
            if cut != " ".join(head.split()):
                return cut
        return _short(self.src[start:end].decode("utf-8", "replace"))

    def expr_generic(self, node: Node) -> ir.Expr:
        """`CfgBuilder.expr_generic` with `short_text`."""
        parts = tuple(self.lower_expr(c) for c in self.named(node))
        return Opaque(self.short_text(node), parts)

    def operator(self, node: Node) -> str:
        """`CfgBuilder.operator`, memoized on the operator's bytes (a handful of distinct tokens)."""
        op_node = node.child_by_field_id(F_OPERATOR)
        if op_node is None:
            return "?"
        raw = self.src[op_node.start_byte:op_node.end_byte]
        op = _OPERATORS.get(raw)
        if op is None:
            op = CfgBuilder.operator(self, node)
            if len(raw) <= 4:
                _OPERATORS[raw] = op
        return op

    def lower_cond(self, node: Node | None, t: Block, f: Block, kind: str = "if") -> None:
        """`CfgBuilder.lower_cond`, counted in `depth`: a chain of `&&` recurses once per term."""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            super().lower_cond(node, t, f, kind)
        finally:
            self.depth -= 1

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

    # -- loops

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

    # -- switch

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

    # -- try

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

    def run_finally(self, body: Node) -> None:
        """One copy of a `finally` block (each exit through it runs its own copy, as javac
        does). A `finally` holding a `try` with a `return` copies the inner one at each of the
        outer one's exits: the copies grow with the nesting exponentially (a fuzzed method of
        twelve: minutes). Past MAX_FINALLY_BYTES of copied source the method is skipped with a
        note (TooManyCleanups); real methods copy a few kilobytes."""
        self.finally_bytes += body.end_byte - body.start_byte
        if self.finally_bytes > MAX_FINALLY_BYTES:
            raise TooManyCleanups()
        self.stmt_block(body)

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

    # -- the rest

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

    # ------------------------------------------------------------------ conditions

    # ------------------------------------------------------------------ expressions

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

    # ------------------------------------------------------------------ calls

    def expr_object_creation_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`new T(...)` is a `new` call; an anonymous class body becomes functions of its own."""
        type_ = self.types.canon(node.child_by_field_id(F_TYPE))
        args = tuple(self.lower_expr(a) for a in self.named(node.child_by_field_id(F_ARGUMENTS)))
        body = next((c for c in self.named(node) if c.type == "class_body"), None)
        if body is not None:  # anonymous class: its methods are functions of their own
            label = f"anon@{node.start_point[0] + 1}"
            info = ClassInfo(nested_name(self.name, label, node), outer=self.cls)
            self.unit.queue_class_body(body, info, self.visible_types())
            self.capture(body, label)
        callee = f"new {base_type(type_)}"
        local_cls = self.unit.class_info(base_type(type_))
        style = "new"
        if body is None and local_cls is not None and len(local_cls.constructors) == 1:
            # the constructor's own function (`Wrapper.Wrapper`): its summary says whether it
            # keeps an argument (stores it in a field) or only uses it
            callee, style = f"{local_cls.path}.{local_cls.path.rsplit('.', 1)[-1]}", "plain"
        if body is not None:
            throws: tuple[str, ...] = ()
        elif local_cls is not None:
            throws = local_cls.throwing.get("<init>", ())
        else:
            throws = self.unit.ort_throws(type_, "<init>", len(args))
        return self.emit_call(node, callee, style, None, args, discard, dest, throws)

    def expr_method_invocation(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        obj = node.child_by_field_id(F_OBJECT)
        name = self.text(node.child_by_field_id(F_NAME))
        arg_nodes = self.named(node.child_by_field_id(F_ARGUMENTS))
        if name == "forEach" and obj is not None and len(arg_nodes) == 1 \
                and arg_nodes[0].type in ("lambda_expression", "method_reference"):
            return self.lower_for_each(node, obj, arg_nodes[0])
        callee, style, receiver, throws = self.resolve_call(obj, name, len(arg_nodes))
        args = tuple([self.lower_expr(a) for a in arg_nodes]) if arg_nodes else ()
        return self.emit_call(node, callee, style, receiver, args, discard, dest, throws)

    def resolve_call(self, obj: Node | None, name: str, arity: int) -> tuple[str, str, ir.Expr | None, tuple[str, ...]]:
        """(callee, style, receiver, declared checked exceptions) for `obj.name(...)`."""
        kind = obj.type if obj is not None else ""
        if obj is None or kind == "this":
            owner = self.cls.method_owner(name) if obj is None else self.cls.own_method(name)
            if owner is None:
                return name, "plain", None, ()
            return owner.function_name(name, arity), "plain", None, owner.throwing.get(name, ())
        if kind == "super":
            owner = self.cls.superclass.own_method(name) if self.cls.superclass is not None else None
            if owner is not None:
                return owner.function_name(name, arity), "plain", None, owner.throwing.get(name, ())
            return f"super.{name}", "method", None, ()
        if kind == "identifier":  # the most common receiver: a local (never a class name)
            var = self.text(obj)
            declared = self.visible.get(var)
            if declared is not None:
                if self.depth >= MAX_NESTING:  # where `lower_expr(obj)` would stop
                    raise TooDeep()
                return self.resolve_method(declared, self.var(var), name, arity)
        static = self.static_type_of(obj)
        if static is not None:
            owner = self.unit.class_info(static)
            owner = owner.own_method(name) if owner is not None else None
            if owner is not None:
                return owner.function_name(name, arity), "plain", None, owner.throwing.get(name, ())
            return f"{static}.{name}", "plain", None, self.unit.ort_throws(static, name, arity)
        type_ = self.expr_type(obj)
        return self.resolve_method(type_, self.lower_expr(obj), name, arity)

    def resolve_method(self, type_: str, receiver: ir.Expr, name: str, arity: int) -> tuple[str, str, ir.Expr | None, tuple[str, ...]]:
        """`resolve_call` for a receiver that is a value of type `type_` ("" when unknown)."""
        cls = self.unit.class_info(base_type(type_)) if type_ else None
        owner = cls.own_method(name) if cls is not None else None
        if owner is not None:
            return owner.function_name(name, arity), "plain", None, owner.throwing.get(name, ())
        return self.unit.method_callee(type_, name), "method", receiver, self.unit.ort_throws(type_, name, arity)

    def emit_call(self, node: Node, callee: str, style: str, receiver: ir.Expr | None, args: tuple[ir.Expr, ...],
                  discard: bool, dest: ir.Expr | None, throws: tuple[str, ...]) -> ir.Expr:
        """One call; `throws` are the checked exceptions it declares (none: it does not fork
        an exceptional edge), noted for the `catch` clauses of the enclosing `try`."""
        target = dest if dest is not None else (None if discard else self.temp())
        self.call_counter += 1
        if throws and self.thrown:
            self.thrown[-1].update(throws)
        self.emit(ir.Call(self.call_counter, self.loc(node), callee, style, receiver, args, target,
                          self.short_text(node), bool(throws)))
        return target if target is not None else _VOID

    def lower_for_each(self, node: Node, obj: Node, fn: Node) -> ir.Expr:
        """`c.forEach(T::close)` / `c.forEach(v -> ...)` run synchronously on each element:
        they are lowered as the loop they stand for."""
        coll_type = self.expr_type(obj)
        coll = self.lower_expr(obj)
        elem_t = element_type(coll_type)
        self.push_scope()
        if fn.type == "method_reference":
            elem = Var(f"$each{node.start_point[0] + 1}")
            self.declare(elem.name, elem_t)
            self.element_loop(node, coll, elem, (), lambda: self.apply_method_ref(fn, elem, elem_t))
        else:
            names = lambda_param_names(fn, self.src, self.named)
            elem = Var(names[-1] if names else f"$each{node.start_point[0] + 1}")
            for n in names:
                self.declare(n, elem_t if n == elem.name else "")
            self.element_loop(node, coll, elem, (), lambda: self.inline_lambda_body(fn))
        self.pop_scope(None)
        return _VOID

    def apply_method_ref(self, ref: Node, elem: Var, elem_t: str) -> None:
        """One element `e` passed through a method reference: `T::close` is `e.close()`."""
        kids = self.named(ref)
        if len(kids) < 2:
            return
        target, method = kids[0], self.text(kids[-1])
        static = self.static_type_of(target) if target.type != "this" else None
        static_cls = self.unit.class_info(static) if static is not None else None
        if target.type == "this" or (static_cls is not None and static_cls.own_method(method) is not None):
            callee, style, receiver, throws = self.resolve_call(target, method, 1)
            self.emit_call(ref, callee, style, receiver, (elem,), True, None, throws)
        elif static is not None:  # `OnnxValue::close`: an instance method of each element
            type_ = static if static else elem_t
            self.emit_call(ref, self.unit.method_callee(type_, method), "method", elem, (), True, None,
                           self.unit.ort_throws(type_, method, 0))
        else:  # `out::add`: a method of another object, given the element
            callee, style, receiver, throws = self.resolve_call(target, method, 1)
            self.emit_call(ref, callee, style, receiver, (elem,), True, None, throws)

    def inline_lambda_body(self, fn: Node) -> None:
        """The lambda's body as a loop body: its `return` goes to the next element."""
        body = fn.child_by_field_id(F_BODY)
        if body is None:
            return
        cont = self.new_block()
        self.ctx.append(Inlined(cont.id))
        try:
            if body.type == "block":
                self.stmt_block(body)
            else:
                self.lower_expr_stmt(body)
        finally:
            self.ctx.pop()
        self.jump(cont)
        self.start(cont)

    # ------------------------------------------------------------------ static types

    def static_type_of(self, node: Node) -> str | None:
        """The class named by `node` when it names a class rather than a value (`OnnxTensor`
        in `OnnxTensor.createTensor(...)`), else None."""
        if node.type == "identifier":
            name = self.text(node)
            if self.is_local(name) or name in self.captured or self.cls.field_type(name) is not None:
                return None
            if name in self.types.imports or name in self.types.local_classes or name[:1].isupper():
                return self.types.resolve(name)
            return None
        if node.type in ("field_access", "scoped_identifier", "scoped_type_identifier"):
            text = _no_space(self.text(node))
            if not _DOTTED_NAME.fullmatch(text):
                return None
            head = text.split(".")[0]
            if self.is_local(head) or head in self.captured or self.cls.field_type(head) is not None:
                return None
            pkg, path = _split_package(text)
            if path[:1].isupper() and (pkg or all(p[:1].isupper() for p in path.split("."))):
                return self.types.resolve(text)
        return None

    def expr_type(self, node: Node | None) -> str:
        """The static type of an expression where the file (or the policy) tells it; "" when not.
        Counted in `depth` like lowering: a chain of 15 000 calls recursed through here."""
        if node is None:
            return ""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            return self._expr_type(node)
        finally:
            self.depth -= 1

    def _expr_type(self, node: Node) -> str:
        node = self.unparen(node)
        t = node.type
        if t == "identifier":
            name = self.text(node)
            local = self.local_type(name)
            if local is not None:
                return local
            if name in self.captured:
                return self.captured[name]
            return self.cls.field_type(name) or ""
        if t == "this":
            return self.cls.path
        if t == "field_access":
            obj = node.child_by_field_id(F_OBJECT)
            fld = node.child_by_field_id(F_FIELD)
            if obj is None or fld is None:
                return ""
            if obj.type == "this" or self.text(obj).endswith(".this"):
                return self.cls.field_type(self.text(fld)) or ""
            if obj.type == "super":
                sup = self.cls.superclass
                return (sup.own_field(self.text(fld)) or "") if sup is not None else ""
            # `model.session`: a field of another object, typed by that object's class
            owner = self.static_type_of(obj)
            holder = self.unit.class_info(base_type(owner if owner is not None else self.expr_type(obj)))
            return (holder.own_field(self.text(fld)) or "") if holder is not None else ""
        if t in ("object_creation_expression", "cast_expression"):
            return self.types.canon(node.child_by_field_id(F_TYPE))
        if t == "array_access":
            return element_type(self.expr_type(node.child_by_field_id(F_ARRAY)))
        if t == "ternary_expression":
            return (self.expr_type(node.child_by_field_id(F_CONSEQUENCE))
                    or self.expr_type(node.child_by_field_id(F_ALTERNATIVE)))
        if t in ("string_literal", "text_block"):
            return "String"
        if t == "method_invocation":
            return self.call_type(node)
        return ""

    def call_type(self, node: Node) -> str:
        """The declared return type of a call: this file's methods first, then the policy."""
        obj = node.child_by_field_id(F_OBJECT)
        name = self.text(node.child_by_field_id(F_NAME))
        if obj is None or obj.type == "this":
            owner = self.cls.method_owner(name)
            return owner.returns.get(name, "") if owner else ""
        if obj.type == "super":
            owner = self.cls.superclass.own_method(name) if self.cls.superclass is not None else None
            return owner.returns.get(name, "") if owner else ""
        static = self.static_type_of(obj)
        if static is not None:
            cls = self.unit.class_info(static)
            owner = cls.own_method(name) if cls is not None else None
            if owner is not None and name in owner.returns:
                return owner.returns[name]
            return self.unit.returned_type("plain", f"{static}.{name}")
        recv = self.expr_type(obj)
        if not recv:
            return ""
        cls = self.unit.class_info(base_type(recv))
        owner = cls.own_method(name) if cls is not None else None
        if owner is not None and name in owner.returns:
            return owner.returns[name]
        if name in ("get", "remove", "poll", "peek", "pop", "next", "getFirst", "getLast") and element_type(recv):
            return element_type(recv)
        callee = self.unit.method_callee(recv, name)
        if self.unit.is_view(callee):  # `map.values()`, `list.iterator()`: the same elements
            kind = "Iterator" if name == "iterator" else "Collection"
            return f"{kind}<{element_type(recv)}>" if element_type(recv) else kind
        return self.unit.returned_type("method", callee)


def _handlers(cls: type, prefix: str) -> dict[str, Callable]:
    """node type -> unbound `<prefix><type>` method: the `getattr(self, prefix + type)` lookup
    of every statement and expression, done once."""
    return {name[len(prefix):]: getattr(cls, name) for name in dir(cls)
            if name.startswith(prefix) and callable(getattr(cls, name))}


_STMT_HANDLERS = _handlers(JavaLowering, "stmt_")


_EXPR_HANDLERS = _handlers(JavaLowering, "expr_")
