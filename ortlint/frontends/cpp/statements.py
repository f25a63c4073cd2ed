"""C++ statements and scopes: destructors run at every scope exit (return, break, continue, end of block),
range-for loops, `using` declarations, conditions with declarations."""
from __future__ import annotations

from typing import Callable

from tree_sitter import Node

from ... import ir
from ...ir import Const, Deref, Field, Halt, Index, Jump, Loc, Opaque, Return, Var
from ..c.syntax import _short, declarator_name
from ..common.cfg import MAX_CLEANUP_RUNS, TooManyCleanups
from .guards import guard_condition
from .model import ReleaseFn, clean_name
from .scopes import Scope
from .status_values import returned_status
from .syntax import _MOVE_TEXT, _MOVES, _WithoutInit, end_loc


class CppStatements:
    """C++ statements and scopes: destructors run at every scope exit (return, break, continue, end of block),
range-for loops, `using` declarations, conditions with declarations."""

    def push_scope(self) -> None:
        self.scopes.append(Scope([], self.handler))

    def pop_scope(self, node: Node) -> None:
        scope = self.scopes.pop()
        if self.cur is not None and scope.cleanups:
            self.run_cleanups([scope], end_loc(self.loc(node)))
            self.forget_destroyed_pointers(scope, end_loc(self.loc(node)))
        for name, outside in reversed(scope.shadowing):  # the hidden locals are visible again
            if outside is None:
                self.rename.pop(name, None)
            else:
                self.rename[name] = outside
        if self.handler != scope.handler:
            self.handler = scope.handler
            self.split()

    def forget_destroyed_pointers(self, scope: Scope, loc: Loc) -> None:
        """A smart pointer destroyed at its scope's end holds nothing afterwards. A sibling
        block's object of the same name is the same variable here, and a path that skips its
        declaration (`#if` / `#else` around it) still runs its destructor: it must find the
        pointer empty, not the first object, already destroyed."""
        for name, _emit in scope.cleanups:
            own = self.owner_of(name)
            if own is not None and own.what == "smart" and self.cur is not None:
                target = self.rename.get(name, Var(name))
                self.emit(ir.Assign(loc, target, Const(0, "nullptr")))

    def split(self) -> None:
        """Start a new block so that a changed handler applies from here on."""
        if self.cur is None:
            return
        block = self.new_block()
        self.jump(block)
        self.start(block)

    def register_cleanup(self, name: str, emit: Callable[[Loc], None], loc: Loc) -> None:
        """A destructor to run when the current scope ends, on every path out of it: normal exit,
        return/break/continue/throw (emitted there), and exceptions from calls (a landing pad)."""
        if not self.scopes:
            self.push_scope()
        self.scopes[-1].cleanups.append((name, emit))
        self.cleanup_outer[id(emit)] = self.handler
        pad = self.new_block()
        saved = (self.cur, self.stmt_temps, self.loc_override)
        self.stmt_temps = []
        self.start(pad)
        self.loc_override = loc
        self.running_cleanups.add(id(emit))
        try:
            emit(loc)
        finally:
            self.running_cleanups.discard(id(emit))
        if self.handler is not None:
            self.terminate(Jump(self.handler))
        else:
            self.terminate(Halt(loc, "throw"))
        self.cur, self.stmt_temps, self.loc_override = saved
        self.handler = pad.id
        self.split()

    def run_cleanups(self, scopes: list[Scope], loc: Loc, skip: frozenset[str] = frozenset()) -> None:
        """Emit the destructors of `scopes`, innermost first (`skip`: objects moved out by a return).

        A destructor that runs code of its own (a scope guard's lambda, an inlined `~T()`) may
        throw: the exception leaves through the destructors not yet run, never through this one
        or those already run at this exit (`running_cleanups`), as the landing pad of a call
        made before this destructor's object existed would (`cleanup_outer`). Otherwise a
        `throw` in a guard's lambda runs the guard again, and the locals of its first run
        (a `std::shared_ptr` copy) are destroyed a second time."""
        for scope in scopes:  # (a loop: `sum(<genexpr>)` cost a generator step per scope, at every exit)
            self.cleanup_runs += len(scope.cleanups)
        if self.cleanup_runs > MAX_CLEANUP_RUNS:
            raise TooManyCleanups()
        saved = (self.loc_override, self.handler)
        self.loc_override = loc
        ran: list[int] = []
        try:
            for scope in reversed(scopes):
                for name, emit in reversed(scope.cleanups):
                    key = id(emit)
                    if name in skip or self.cur is None or key in self.running_cleanups:
                        continue
                    self.running_cleanups.add(key)
                    ran.append(key)
                    self.unwind_to(self.cleanup_outer.get(key, self.handler))
                    emit(loc)
        finally:
            self.running_cleanups.difference_update(ran)
            self.loc_override = saved[0]
            self.unwind_to(saved[1])

    def unwind_to(self, handler: int | None) -> None:
        """Make `handler` the one exceptions go to from here on (a new block when it changes)."""
        if handler != self.handler:
            self.handler = handler
            self.split()

    def emit_release(self, target: ir.Expr, release: ReleaseFn, loc: Loc) -> None:
        """The release a destructor performs: `ReleaseX(p)`, `delete p`, `Deleter::operator()(p)`."""
        self.call_counter += 1
        text = f"{release.callee}({ir.expr_text(target)}) at scope exit"
        self.emit(ir.Call(self.call_counter, loc, release.callee, release.style, None, (target,), None, _short(text)))

    def finish_statement(self, node: Node) -> None:
        """The full expression is over: smart-pointer temporaries are destroyed, then the
        other temporaries die."""
        if self.smart_temps and self.stmt_temps:
            self.stmt_temps = self.release_temps(self.stmt_temps, self.loc(node))
        super().finish_statement(node)

    def kill(self, names: tuple[str, ...], loc: Loc) -> None:
        if self.smart_temps and names:
            names = tuple(self.release_temps(names, loc))
        super().kill(names, loc)

    def stmt_compound_statement(self, node: Node) -> None:
        self.push_scope()
        self.lower_statements(node.named_children)
        self.pop_scope(node)

    def stmt_declaration_list(self, node: Node) -> None:
        for child in node.named_children:
            self.lower_stmt(child)

    def stmt_return_statement(self, node: Node) -> None:
        self.stmt_temps = []
        for value_node in node.named_children:  # the first one that is not a comment
            if value_node.type != "comment":
                break
        else:
            value_node = None
        skip: frozenset[str] = frozenset()
        value = None
        if value_node is not None:
            moved = self.returned_object(value_node)
            if moved is not None:
                skip = frozenset({moved})
            value = returned_status(self, value_node)  # status_values: `return {};` of a status class
            if value is None:
                value = self.returned_construction(value_node)
            if value is None:
                value = self.lower_expr(value_node)
        self.leave_by_return(value, self.loc(node), skip)
        self.stmt_temps = []
    stmt_co_return_statement = stmt_return_statement

    def returned_construction(self, node: Node) -> ir.Expr | None:
        """`return p;` in a function declared to return a class of the program that has a
        destructor (`OgaString ApplyChatTemplate(...)` of a wrapper header, whose `~OgaString()`
        destroys the string) constructs that object from `p`: `p` is handed to the object's
        constructor and the caller receives the object, not `p`. None when the function returns
        a pointer, a reference or a value of the same type."""
        if self.node.type != "function_definition" or self.inline_target is not None:
            return None
        type_node = self.node.child_by_field_id(self.F.type)
        declarator = self.node.child_by_field_id(self.F.declarator)
        if type_node is None or declarator is None or declarator.type != "function_declarator":
            return None  # `T *f()`, `T &f()`: a pointer or a reference is returned as it is
        type_text = self.text(type_node)
        cls = self.model.find_class(clean_name(type_text), self.ns)
        if cls is None or not (cls.has_dtor_decl or cls.dtor is not None) or not self.converts_on_copy(type_text, node):
            return None
        value = self.lower_expr(node)
        return self.emit_call_node(node, clean_name(type_text), "plain", None, (value,), False, None)

    def returned_object(self, node: Node) -> str | None:
        """`return p;` / `return std::move(p);` of a local guard moves it out: no destructor."""
        node = self.unparen(node)
        if node.type == "call_expression":
            fn = node.child_by_field_id(self.F.function)
            # (only a short callee can be std::move: the text of an immediately-invoked lambda is
            # its whole body, and 8 000 nested ones read it over and over)
            if fn is not None and fn.end_byte - fn.start_byte <= _MOVE_TEXT and clean_name(self.text(fn)) in _MOVES:
                args = self.call_args(node)
                node = self.unparen(args[0]) if args else node
        if node.type == "identifier" and self.owner_of(self.text(node)) is not None:
            return self.text(node)
        return None

    def leave_by_return(self, value: ir.Expr | None, loc: Loc, skip: frozenset[str] = frozenset()) -> None:
        """`return` runs every destructor; inside a body lowered in place it jumps to the body's end instead."""
        target = self.inline_target
        if target is not None:
            if target.result is not None and value is not None:
                self.emit(ir.Assign(loc, target.result, value))
            self.run_cleanups(self.scopes[target.depth:], loc, skip)
            self.terminate(Jump(target.exit))
            return
        self.run_cleanups(self.scopes, loc, skip)
        self.terminate(Return(value, loc))

    def stmt_break_statement(self, node: Node) -> None:
        if self.break_depths:
            self.run_cleanups(self.scopes[self.break_depths[-1]:], self.loc(node))
        super().stmt_break_statement(node)

    def stmt_continue_statement(self, node: Node) -> None:
        if self.continue_depths:
            self.run_cleanups(self.scopes[self.continue_depths[-1]:], self.loc(node))
        super().stmt_continue_statement(node)

    def lower_loop_body(self, body: Node | None, break_to: ir.Block, continue_to: ir.Block) -> None:
        self.break_depths.append(len(self.scopes))
        self.continue_depths.append(len(self.scopes))
        try:
            super().lower_loop_body(body, break_to, continue_to)
        finally:
            self.break_depths.pop()
            self.continue_depths.pop()

    def stmt_switch_statement(self, node: Node) -> None:
        self.break_depths.append(len(self.scopes))
        try:
            super().stmt_switch_statement(node)
        finally:
            self.break_depths.pop()

    def stmt_for_range_loop(self, node: Node) -> None:
        """`for (T v : range) body`: `v` stands for `range[i]`, so a body that releases `v`
        releases every element (the engine's release-loop rule)."""
        self.push_scope()
        self.stmt_temps = []
        right = node.child_by_field_id(self.F.right)
        range_expr = self.lower_expr(right) if right is not None else Opaque("?")
        if not isinstance(range_expr, (Var, Field, Deref, Index)):
            tmp = Var(self.fresh_name("range"))
            self.locals[tmp.name] = True
            self.emit(ir.Assign(self.loc(node), tmp, range_expr))
            range_expr = tmp
        self.finish_statement(node)
        header, body_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        self.terminate(ir.Branch(Opaque("range-for"), body_b.id, exit_b.id, self.loc(node), "range-for", "loop"))
        first = len(self.blocks)
        self.start(body_b)
        saved = dict(self.rename)
        self.bind_range_variable(node, range_expr, right)
        self.lower_loop_body(node.child_by_field_id(self.F.body), exit_b, header)
        self.rename = saved
        self.jump(header)
        self.close_loop(exit_b, {body_b.id, header.id} | set(range(first, len(self.blocks))), (), None, node)
        self.pop_scope(node)

    def bind_range_variable(self, node: Node, range_expr: ir.Expr, right: Node | None) -> None:
        """Bind the loop variable of a range-for to `range[i]` (structured bindings are opaque)."""
        decl = node.child_by_field_id(self.F.declarator)
        element = Index(range_expr, Opaque("i"))
        if decl is not None and decl.type == "structured_binding_declarator":
            for ident in decl.named_children:
                self.rename[self.text(ident)] = Opaque("element")
            return
        name = declarator_name(decl, self.src) if decl is not None else None
        if not name:
            return
        self.rename[name] = element
        declared = self.declared_type(node.child_by_field_id(self.F.type), decl)
        if "auto" in declared:
            declared = self._element_type(self.expr_type(right)) or declared
        self.frames[-1].types[name] = declared

    def stmt_alias_declaration(self, node: Node) -> None:
        name = self.text(node.child_by_field_id(self.F.name))
        self.model.aliases.setdefault(name, self.text(node.child_by_field_id(self.F.type)))

    def stmt_using_declaration(self, node: Node) -> None:
        """`using namespace X;` / `using X::y;` inside a body: nothing runs."""
    stmt_namespace_alias_definition = stmt_static_assert_declaration = stmt_using_declaration
    stmt_template_declaration = stmt_class_specifier = stmt_struct_specifier = stmt_using_declaration

    def lower_condition_clause(self, node: Node, t: ir.Block, f: ir.Block, kind: str) -> None:
        for child in node.named_children:
            if child.type == "init_statement":
                for stmt in child.named_children:
                    self.lower_stmt(stmt)
        super().lower_condition_clause(_WithoutInit(node), t, f, kind)

    def lower_cond_special(self, node: Node, t: ir.Block, f: ir.Block, kind: str) -> bool:
        """C's forms, then `if (g)` on a guard object. The C forms are never a plain name and a
        guard object always is: each condition is handed to the one that can take it."""
        if node.type != "identifier":
            return super().lower_cond_special(node, t, f, kind)
        cond = guard_condition(self, node)  # cpp_guards: `if (g)` on a guard object
        if cond is None:
            return False
        self.terminate(ir.Branch(cond, t.id, f.id, self.loc(node), self.short_text(node), kind))
        return True
