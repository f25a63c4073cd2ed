"""Leaving a Go function: `return` (named results), deferred calls run last first at every exit, goroutines and
closures, and what a returned or captured value takes over."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Branch, Deref, Index, Loc, Op, Opaque, Return, Var
from .scan import ORT, walk
from .scopes import Deferred, PendingClosure
from .syntax import FALSE, MAX_DEFERRED_RUNS, NIL, SOME, TRUE, F, TooManyDeferred


class GoExits:
    """Leaving a Go function: `return` (named results), deferred calls run last first at every exit, goroutines and
closures, and what a returned or captured value takes over."""

    def stmt_return_statement(self, node: Node) -> None:
        self.stmt_temps = []
        values = []
        for c in self.named(node):
            values.extend(self.named(c) if c.type == "expression_list" else [c])
        loc = self.loc(node)
        self.returned_flag = self.flag_text(values)
        if self.inline_returns:  # a return inside a deferred closure inlined at an exit
            for v in values:
                self.lower_expr(v)
            self.jump(self.inline_returns[-1])
            return
        if self.named_results and not self.drop_returns and len(self.named_results) == self.results:
            # `return a, err` sets the named results first: deferred closures see them
            if len(values) == 1 and self.results >= 2:
                value = self.unparen(values[0])
                self.lower_call(value, outs=[Var(n) for n in self.named_results[:-1]],
                                dest=Var(self.named_results[-1]))
            elif values:
                temps = []
                for v in values:
                    tmp = self.temp()
                    self.assign_from(tmp, v, loc)
                    temps.append(tmp)
                for name, tmp in zip(self.named_results, temps):
                    self.emit(ir.Assign(loc, Var(name), tmp))
            self.stmt_temps = []
            self.exit_function(None, loc, named=True)
            return
        if not values:
            ret = self.named_return_value()
        elif self.drop_returns:
            for v in values:
                tmp = self.temp()
                self.assign_from(tmp, v, loc)
            ret = None
        elif self.results >= 2 and len(values) == 1:
            value = self.unparen(values[0])
            outs: list[ir.Expr] = [Deref(Var(f"ret%{k}")) for k in range(self.results - 1)]
            ret = self.temp()
            if value.type == "call_expression" or self.generic_binding_call(value):
                self.lower_call(value, outs=outs, dest=ret, outs_are_pointers=True)
            else:
                self.assign_from(ret, value, loc)
        elif self.results >= 2:
            for k, v in enumerate(values[:-1]):
                self.assign_from(Deref(Var(f"ret%{k}")), v, loc)
            ret = self.temp()
            self.assign_from(ret, values[-1], loc)
        else:
            ret = self.temp()
            self.assign_from(ret, values[0], loc)
        self.stmt_temps = []
        self.exit_function(ret, loc)

    def exit_function(self, ret: ir.Expr | None, loc: Loc, named: bool = False) -> None:
        """Run the deferred calls registered so far, last first, then return (named results
        are read after the deferred calls, which may change them). Each exit lowers them
        again: a bound on that work keeps a function of thousands of defers and returns linear
        (it is skipped with a note; real functions stay far below it)."""
        self.deferred_runs += len(self.defers)
        if self.deferred_runs > MAX_DEFERRED_RUNS:
            raise TooManyDeferred(self.deferred_runs)
        for d in reversed(list(self.defers)):
            if self.cur is None:
                break
            self.run_deferred(d, loc)
        if self.cur is None:
            return
        if named:
            ret = self.named_return_value()
        if self.tracks_env:
            if self.returns_error and ret is not None:
                self.env_kept_unless_error(ret, loc)
            else:
                self.emit_env_kept(loc)
        self.terminate(Return(ret, loc))

    def env_kept_unless_error(self, ret: ir.Expr, loc: Loc) -> None:
        """A nil error hands the environment to the caller. So does a non-nil one returned with
        a true bool result (`return true, err` of `func initialise() (bool, error)`): the flag
        tells the caller that it was initialized, and the caller destroys it."""
        keep, done = self.new_block(), self.new_block()
        flag = self.returned_flag
        failed = keep if flag == "true" else done if flag in (None, "false") else self.new_block()
        self.terminate(Branch(Op("==", (ret, NIL)), keep.id, failed.id, loc, "err == nil", "if"))
        if failed is not keep and failed is not done:
            self.start(failed)
            value = Deref(Var(f"ret%{self.flag_result}"))
            self.terminate(Branch(Op("!=", (value, FALSE)), keep.id, done.id, loc, flag or "", "if"))
        self.start(keep)
        self.emit_env_kept(loc)
        self.jump(done)
        self.start(done)

    def flag_text(self, values: list[Node]) -> str | None:
        """The source of the bool result this `return` gives beside its error (`true`, `false`,
        `initialized`), or None: no such result."""
        k = self.flag_result
        if k is None:
            return None
        if len(values) == self.results:
            return self.short_text(self.unparen(values[k]))
        if not values and k < len(self.named_results):
            return self.named_results[k]
        return "" if values else None

    def emit_env_kept(self, loc: Loc) -> None:
        self.call_counter += 1
        self.emit(ir.Call(self.call_counter, loc, f"{ORT}.$environment_kept", "plain", None, (), None,
                          "return with the environment initialized"))

    def stmt_defer_statement(self, node: Node) -> None:
        call = next((c for c in self.named(node) if c.type == "call_expression"), None)
        if call is None:
            return
        if self.inline_returns or self.is_binding_release(call):
            # `defer x.Destroy()`: x is destroyed at every exit from here on, so for what leaks
            # it is destroyed here (the loop that defers it for each element destroys them all);
            # a defer inside an inlined deferred closure runs right there too
            self.stmt_temps = []
            self.lower_expr(call, discard=True)
            self.finish_statement(node)
            return
        d = self.defer_by_node.get(call.id)
        nested = node.parent is not None and node.parent.parent is not None and \
            node.parent.parent != self.node.child_by_field_id(F.body)
        if d is None:
            d = self.new_deferred(call, nested)
            self.defers.append(d)
        loc = self.loc(node)
        self.stmt_temps = []
        d.scopes = [dict(scope) for scope in self.scopes]
        fn = call.child_by_field_id(F.function)
        if fn is not None and fn.type != "func_literal":
            self.bind_deferred(d, call, fn, loc)
        if d.flag is not None:
            self.emit(ir.Assign(loc, d.flag, TRUE))
        self.finish_statement(node)

    def is_binding_release(self, call: Node) -> bool:
        """A deferred `Destroy()` of a binding object, or `DestroyEnvironment()`."""
        fn = call.child_by_field_id(F.function)
        if fn is None or fn.type == "func_literal":
            return False
        callee, style, _recv, binding = self.callee_of(fn)
        spec = self.policy.lookup(style, callee) if binding else None
        return spec is not None and spec.release is not None

    def new_deferred(self, call: Node, nested: bool) -> Deferred:
        number = len(self.defer_by_node) + 1
        d = Deferred(call, number)
        if nested or self.loop_depth:
            d.flag = Var(f"defer%{number}.on")
            self.locals[d.flag.name] = False
            self.blocks[0].events.insert(0, ir.Assign(self.loc(call), d.flag, FALSE))
        if self.loop_depth:
            d.keep = Var(f"defer%{number}.all")
            self.locals[d.keep.name] = True
        self.defer_by_node[call.id] = d
        self.plan_binding(d)
        return d

    def register_loop_defers(self, loop: Node) -> None:
        """Defers inside a loop are live at every exit after the loop starts: the `return`
        in the second iteration runs the `defer` of the first."""
        stack = list(self.named(loop))
        while stack:
            n = stack.pop()
            if n.type == "func_literal":
                continue
            if n.type == "defer_statement":
                call = next((c for c in self.named(n) if c.type == "call_expression"), None)
                if call is not None and call.id not in self.defer_by_node and not self.is_binding_release(call):
                    self.loop_depth += 1
                    self.defers.append(self.new_deferred(call, True))
                    self.loop_depth -= 1
                continue
            stack.extend(self.named(n))

    def deferred_operands(self, call: Node) -> list[Node]:
        """The receiver and arguments a deferred call evaluates when the `defer` runs."""
        fn = call.child_by_field_id(F.function)
        if fn is None or fn.type == "func_literal":
            return []
        nodes: list[Node] = []
        if fn.type == "selector_expression":
            operand = fn.child_by_field_id(F.operand)
            if operand is not None and not self.is_package(operand):
                nodes.append(operand)
        nodes.extend(self.named(call.child_by_field_id(F.arguments)))
        return [n for n in nodes if n.type not in ("func_literal", "type_identifier") and not n.type.endswith("_type")]

    def plan_binding(self, d: Deferred) -> None:
        """Where each operand is kept from the `defer` to the exits (known before the `defer`
        is lowered: an exit earlier in a loop body runs the defer of the previous iteration)."""
        nodes = self.deferred_operands(d.node)
        for i, n in enumerate(nodes):
            if d.keep is not None and i == 0 and len(nodes) == 1:
                d.bound[n.id] = Index(d.keep, SOME)
                continue
            var = Var(f"defer%{d.number}.{i}")
            self.locals[var.name] = False
            d.bound[n.id] = var

    def bind_deferred(self, d: Deferred, call: Node, fn: Node, loc: Loc) -> None:
        """Evaluate the receiver and the arguments now, as Go does."""
        for n in self.deferred_operands(call):
            target = d.bound.get(n.id)
            value = self.lower_expr(n)
            if isinstance(target, Index):
                self.call_counter += 1
                self.emit(ir.Call(self.call_counter, loc, "$keep", "plain", target.base, (value,), None, "defer"))
            elif target is not None:
                if isinstance(target, Var) and isinstance(value, Var) and self.locals.get(value.name):
                    # `defer destroyAll(outputs)` of a local slice: the copy shares its elements
                    self.locals[target.name] = True
                self.emit(ir.Assign(loc, target, value))

    def run_deferred(self, d: Deferred, loc: Loc) -> None:
        done = None
        if d.flag is not None:
            run, done = self.new_block(), self.new_block()
            self.terminate(Branch(d.flag, run.id, done.id, loc, f"the defer at line {d.node.start_point[0] + 1} ran", "if"))
            self.start(run)
        fn = d.node.child_by_field_id(F.function)
        saved, saved_scopes = self.loc_override, self.scopes
        self.loc_override = loc
        if d.scopes is not None:
            self.scopes = [dict(scope) for scope in d.scopes] + [{}]
        try:
            if fn is not None and fn.type == "func_literal":
                end = self.new_block()
                self.inline_returns.append(end)
                try:
                    self.stmt(fn.child_by_field_id(F.body))
                finally:
                    self.inline_returns.pop()
                self.jump(end)
                self.start(end)
            else:
                self.stmt_temps = []
                saved_over = self.overrides
                self.overrides = dict(d.bound)
                try:
                    self.lower_expr(d.node, discard=True)
                finally:
                    self.overrides = saved_over
                self.finish_statement(d.node)
        finally:
            self.loc_override, self.scopes = saved, saved_scopes
        if done is not None:
            self.jump(done)
            self.start(done)

    def stmt_go_statement(self, node: Node) -> None:
        """`go f(x)`: for what it owns, the goroutine is the call `f(x)`: a function of the
        package that destroys x (its summary says so) takes it, an unknown one takes it too;
        `go func(p){...}(x)` is a call of its own function, which also takes over the captured
        variables it destroys."""
        self.stmt_temps = []
        call = next((c for c in self.named(node) if c.type == "call_expression"), None)
        if call is None:
            return
        self.lower_expr(call, discard=True)
        self.finish_statement(node)

    def closure(self, node: Node, drop_returns: bool = False, handoff: bool = True) -> ir.Expr:
        """A function literal: its own function; the captured variables it takes over are
        handed over here."""
        name = self.closure_name(node)
        self.unit.queue(PendingClosure(node, name, drop_returns))
        if handoff:
            taken = self.taken_over(node)
            if taken:
                self.call_counter += 1
                self.emit(ir.Call(self.call_counter, self.loc(node), "$handoff", "plain", None,
                                  tuple(Var(self.resolve(n)) for n in sorted(taken)), None, "func literal"))
        return Opaque("func literal")

    def closure_name(self, node: Node) -> str:
        return f"{self.name}$func{node.start_point[0] + 1}"

    def taken_over(self, lit: Node) -> set[str]:
        """Captured names the closure destroys, returns, sends or stores elsewhere."""
        known = set(self.locals) | set(self.params) | set(self.types)
        out: set[str] = set()
        body = lit.child_by_field_id(F.body)
        own = set(self.scan.declared_types(lit))

        def captured(n: Node | None) -> str | None:
            while n is not None and n.type in ("index_expression", "parenthesized_expression", "unary_expression",
                                               "type_assertion_expression"):
                n = n.child_by_field_id(F.operand) or (self.named(n)[0] if self.named(n) else None)
            if n is not None and n.type == "identifier":
                name = self.text(n)
                return name if name in known and name not in own else None
            return None

        for n in walk(body) if body is not None else ():
            hit = None
            if n.type == "call_expression":
                fn = n.child_by_field_id(F.function)
                if fn is not None and fn.type == "selector_expression" and \
                        self.text(fn.child_by_field_id(F.field)) in ("Destroy", "Close"):
                    hit = captured(fn.child_by_field_id(F.operand))
            elif n.type == "return_statement":  # `return t` hands t on; `return t.GetData()[0]` does not
                for c in self.named(n):
                    for v in (self.named(c) if c.type == "expression_list" else [c]):
                        name = captured(v)
                        if name:
                            out.add(name)
            elif n.type == "send_statement":
                hit = captured(n.child_by_field_id(F.value))
            elif n.type == "assignment_statement":
                for v in self.named(n.child_by_field_id(F.right)):
                    name = captured(v)
                    if name:
                        out.add(name)
            elif n.type == "range_clause" and b"Destroy()" in self.src[n.parent.start_byte:n.parent.end_byte]:
                hit = captured(n.child_by_field_id(F.right))
            if hit:
                out.add(hit)
        return out
