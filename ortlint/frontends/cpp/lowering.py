"""One C++ function body -> IR (`CppLowering`, on top of the C lowering); the constructs it understands live in
the mixins it is assembled from."""
from __future__ import annotations

import dataclasses
import re
from contextlib import contextmanager
from typing import Callable, Iterator
from tree_sitter import Node
from ... import ir
from ...ir import AddrOf, Const, Deref, Field, Halt, Index, Jump, Loc, Opaque, Return, Var
from ..c.syntax import _UNINITIALIZED, _VOID, _short, declarator_name, find_function_declarator, is_array_declarator
from ..c.lowering import FunctionLowering
from ..common.cfg import MAX_CLEANUP_RUNS, TooManyCleanups, has_side_effects
from .containers import owning_map_store
from .guards import construction_args, guard_condition, guard_method, guard_spec, guard_type_of, hold_constructed_status, hold_status
from .model import TABLE_TYPES, VIEWS, ClassInfo, Ownership, ReleaseFn, TypeRef, clean_name, declared_type_text, is_reference_param, parse_type
from .scopes import Frame, InlineTarget, Scope, TryContext
from .syntax import MAX_INLINED_BYTES, MAX_INLINE_DEPTH, _API_GETTERS, _AUTO, _CASTS, _CONTAINER_SELF, _CONTAINER_STORE, _DEFER_WORDS, _MACRO_NAME, _MAKERS, _MOVES, _ORT_CREATE, _ORT_RETURNS, _SCALARS, _STD_PREFIX, _UNKNOWN, _WithoutInit, _deref_text, _expr_vars, _unknown_type, declarator_name_node, end_loc, pick_overload, strip_template_args
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .frontend import CppFrontEnd


class CppLowering(FunctionLowering):
    """Builds the control-flow graph of one C++ function, method or lambda."""

    language = "cpp"
    unit: "CppFrontEnd"

    def __init__(self, unit: "CppFrontEnd", node: Node, name: str, cls: ClassInfo | None = None,
                 ns: tuple[str, ...] = ()):
        super().__init__(unit, node, name)
        self.model = unit.model
        self.cls = cls
        self.ns = ns
        self.this_obj: ir.Expr | None = None  # the object whose members are in scope (inlined methods)
        self.rename: dict[str, ir.Expr] = {}
        self.frames: list[Frame] = [Frame()]
        self.scopes: list[Scope] = []
        self.cleanup_runs = 0  # destructor calls lowered at exits so far (MAX_CLEANUP_RUNS)
        self.try_stack: list[TryContext] = []
        self.break_depths: list[int] = []
        self.type_depth_cut = False  # expr_type stopped at its depth bound (see receiver_type)
        self.base_type_seen: tuple[Node, str | None] | None = None  # see receiver_type
        self.continue_depths: list[int] = []
        self.inline_target: InlineTarget | None = None
        self.inline_depth = 0
        self.inlined_bytes = 0  # see MAX_INLINED_BYTES
        self.fresh = 0
        self.guard_lambdas: set[int] = set()  # lambdas that are scope guards (run at scope exit)
        self.guard_init: ir.Expr | None = None  # the smart pointer being initialized
        self.ref_params: set[str] = set()  # `T &p` parameters: `p` is `*p` of the caller's address
        self.borrowed_params: set[str] = set()  # reference parameters of any type (no destructor at exit)
        self.node_src: dict[int, bytes] = {}  # lambdas kept for later -> the text their tree belongs to

    # ================================================================== entry

    def function_is_static(self) -> bool:
        return self.node.start_byte in self.model.internal or self.node.type == "lambda_expression"

    def collect_params(self, declarator: Node | None) -> list[str]:
        """Parameter names, with their declared types (which decide how calls on them are lowered)."""
        params_node = self._params_node(self.node)
        names: list[str] = []
        for p in params_node.named_children if params_node is not None else []:
            if p.type not in ("parameter_declaration", "optional_parameter_declaration", "variadic_parameter_declaration"):
                continue
            decl = p.child_by_field_id(self.F.declarator)
            name = declarator_name(decl, self.src) or f"$arg{len(names)}"
            names.append(name)
            self.frames[-1].types[name] = self.declared_type(p.child_by_field_id(self.F.type), decl)
            if is_reference_param(p):
                self.borrowed_params.add(name)  # the caller's object: not destroyed when we return
                if self.node.type != "lambda_expression" and self.model.is_value_reference(self.frames[-1].types[name]):
                    self.ref_params.add(name)
        return names

    def _params_node(self, fn_node: Node) -> Node | None:
        declarator = fn_node.child_by_field_id(self.F.declarator)
        if fn_node.type == "lambda_expression":
            return declarator.child_by_field_id(self.F.parameters) if declarator is not None else None
        func = find_function_declarator(declarator)
        return func.child_by_field_id(self.F.parameters) if func is not None else None

    def lower_function_body(self, body: Node) -> None:
        self.push_scope()
        for name in self.params:  # a guard passed by value is destroyed when the function ends
            if name not in self.borrowed_params:  # `std::unique_ptr<T> &p` is the caller's
                self.own_parameter(name)
        self.lower_member_initializers(self.node)
        self.lower_stmt(body)
        self.pop_scope(self.node)

    def own_parameter(self, name: str) -> None:
        own = self.model.ownership(self.frames[-1].types.get(name, ""))
        if own.what == "smart" and own.release is not None:
            self.frames[-1].owners[name] = own
            self.register_cleanup(name, lambda loc, v=Var(name), r=own.release: self.emit_release(v, r, loc), self.loc(self.node))

    def lower_member_initializers(self, fn_node: Node) -> None:
        """`Model(...) : api_(api), session_(nullptr)`: stores to members (escapes when the
        method is analyzed alone, fields of the object when it is lowered in place)."""
        init_list = next((c for c in fn_node.named_children if c.type == "field_initializer_list"), None)
        if init_list is None:
            return
        for init in init_list.named_children:
            if init.type != "field_initializer" or not init.named_children:
                continue
            member = clean_name(self.text(init.named_children[0]))
            args = [a for a in init.named_children[1].named_children if a.type != "comment"] if len(init.named_children) > 1 else []
            self.stmt_temps = []
            target = self.member_expr(member)
            if len(args) == 1:
                self.assign_from(target, args[0], self.loc(init))
            else:
                for a in args:
                    self.lower_expr(a)
            self.finish_statement(init)

    # ================================================================== names, types

    def lookup(self, table: str, name: str):
        for frame in reversed(self.frames):
            found = getattr(frame, table).get(name)
            if found is not None:
                return found
        return None

    def type_of_name(self, name: str) -> str | None:
        found = None
        for frame in reversed(self.frames):  # `lookup("types", name)`, without its `getattr` (every identifier's type)
            found = frame.types.get(name)
            if found is not None:
                break
        if found is not None:
            return None if _unknown_type(found) else found
        if self.cls is not None and name in self.cls.fields:
            return self.cls.fields[name]
        return self.model.globals.get(name)

    def owner_of(self, name: str) -> Ownership | None:
        return self.lookup("owners", name)

    def member_expr(self, member: str) -> ir.Expr:
        if self.this_obj is not None:
            return Field(self.this_obj, member)
        return Var(member)

    def declared_type(self, type_node: Node | None, declarator: Node | None) -> str:
        """The declared type, from libclang when it knows (aliases from headers, `auto`)."""
        oracle = self.unit.oracle
        if oracle is not None and declarator is not None and self.macro_depth == 0:
            found = declarator_name_node(declarator)
            if found is not None:
                t = oracle.decl_type(found.start_point[0] + 1, found.start_point[1] + 1)
                if t:
                    return t
        return declared_type_text(self.src, type_node, declarator)

    def expr_type(self, node: Node | None, depth: int = 0) -> str | None:
        """The static type of an expression, as far as declarations in the file tell."""
        if node is None:
            return None
        if depth > 12:
            self.type_depth_cut = True  # (see receiver_type)
            return None
        node = self.strip_casts(node)
        t = node.type
        if t == "identifier":
            return self._identifier_type(node)
        if t == "qualified_identifier":
            return self.model.globals.get(clean_name(self.text(node)))
        if t == "this":
            return f"{self.cls.qualname}*" if self.cls is not None else None
        if t == "field_expression":
            return self._field_type(node, depth)
        if t == "call_expression":
            return self.call_type(node, depth)
        if t == "subscript_expression":
            return self._element_type(self.expr_type(node.child_by_field_id(self.F.argument), depth + 1))
        if t == "pointer_expression":
            inner = self.expr_type(node.child_by_field_id(self.F.argument), depth + 1)
            op = self.text(node.child_by_field_id(self.F.operator)).strip()
            if inner is None:
                return None
            return inner + "*" if op == "&" else _deref_text(inner)
        if t == "new_expression":
            return self.text(node.child_by_field_id(self.F.type)) + "*"
        if t == "compound_literal_expression":
            return self.text(node.child_by_field_id(self.F.type))
        return None

    def _identifier_type(self, node: Node) -> str | None:
        name = self.text(node)
        oracle = self.unit.oracle
        if oracle is not None and self.macro_depth == 0:
            found = oracle.ref_type(node.start_point[0] + 1, node.start_point[1] + 1)
            if found:
                return found
        return self.type_of_name(name)

    def _field_type(self, node: Node, depth: int) -> str | None:
        """`a.m` / `p->m` / `this->m`: the member's declared type, when the class is in this file."""
        base = self.strip_casts(node.child_by_field_id(self.F.argument))
        member = clean_name(self.text(node.child_by_field_id(self.F.field)))
        if base.type == "this":
            return self.cls.fields.get(member) if self.cls is not None else None
        base_type = self.expr_type(base, depth + 1)
        if base_type is None:
            return None
        ref = self.model.resolve_alias(parse_type(base_type))
        cls = self.model.find_class(ref.name)
        return cls.fields.get(member) if cls is not None else None

    def _element_type(self, text: str | None) -> str | None:
        """What `x[i]` (or a range-for over x) yields: the pointee or the container's element type."""
        if text is None:
            return None
        ref = self.model.resolve_alias(parse_type(text))
        if ref.pointers or ref.array:
            return _deref_text(text)
        if ref.args and self.model.ownership(text).what == "container":
            return ref.args[0]
        return None

    def call_type(self, node: Node, depth: int = 0) -> str | None:
        """The type a call returns: file functions, API getters, factories, smart pointer ops."""
        fn = self.unparen(node.child_by_field_id(self.F.function))
        if fn is None:
            return None
        if fn.type == "field_expression":
            return self._member_call_type(fn, depth)
        name = strip_template_args(clean_name(self.text(fn)))
        if name in _API_GETTERS:
            return _API_GETTERS[name]
        if name in _CASTS:  # `auto *ep = static_cast<MyEp *>(this_ptr);`
            return self.template_arg_text(fn) or None
        if name in _MAKERS:
            return f"{_MAKERS[name]}<{self.template_arg_text(fn)}>"
        if name in _MOVES:
            args = self.call_args(node)
            return self.expr_type(args[0], depth + 1) if args else None
        if self.cls is not None and name in self.cls.methods:
            return self.model.returns.get(f"{self.cls.qualname}::{name}")
        found = self.model.returns.get(name)
        if found is not None:
            return found
        m = _ORT_CREATE.match(self.model.qualify_ort(name))
        if m:
            return m.group(1)
        if self.is_type_name(name) or guard_spec(self, name) is not None:
            return name
        return None

    def _member_call_type(self, fn: Node, depth: int) -> str | None:
        """`x.f()`: smart-pointer get/release give the pointee; known Ort:: methods and this file's methods their declared return type."""
        name = strip_template_args(clean_name(self.text(fn.child_by_field_id(self.F.field))))
        if name in _API_GETTERS and name != "Ort::GetApi":
            return _API_GETTERS[name]
        base_type = self.receiver_type(fn, depth)
        if base_type is None:
            return None
        ref = self.model.resolve_alias(parse_type(base_type))
        own = self.model.ownership(base_type)
        if own.what == "smart" and name in ("get", "release") and own.pointee is not None:
            return own.pointee.text + "*"
        qualified = f"{self.model.qualify_ort(ref.name)}::{name}"
        if qualified in _ORT_RETURNS:
            return _ORT_RETURNS[qualified]
        return self.model.returns.get(qualified)

    def receiver_type(self, fn: Node, depth: int = 0) -> str | None:
        """The type of the object a member call is made on (pointer stripped for `->`).

        At depth 0 the type of the object expression itself is kept in `base_type_seen` as
        (its node, its type): `lower_member_call` asks for it next, and a type worked out one
        level deeper is the same unless the depth bound cut the walk short (`type_depth_cut`)."""
        base = fn.child_by_field_id(self.F.argument)
        oracle = self.unit.oracle
        if oracle is not None and self.macro_depth == 0:
            field_node = fn.child_by_field_id(self.F.field)
            if field_node is not None:
                found = oracle.member_call(field_node.start_point[0] + 1, field_node.start_point[1] + 1)
                if found is not None and found[0] == "method" and found[1]:
                    return found[1]
        if depth == 0:
            self.type_depth_cut = False
            text = self.expr_type(base, 1)
            self.base_type_seen = (base, text) if base is not None and not self.type_depth_cut else None
        else:
            text = self.expr_type(base, depth + 1)
        if text is None or not self.is_arrow(fn):
            return text
        own = self.model.ownership(text)
        if own.what == "smart" and own.pointee is not None:
            return own.pointee.text
        return _deref_text(text)

    def template_arg_text(self, fn: Node) -> str:
        text = self.text(fn)
        start = text.find("<")
        return text[start + 1:text.rfind(">")].strip() if start >= 0 else ""

    def is_type_name(self, name: str) -> bool:
        """A name used as `T(args)` / `T{args}` that denotes a type, not a function."""
        if name in self.model.aliases or self.model.find_class(name, self.ns) is not None:
            return True
        ref = parse_type(name)
        return ref.name in ("std::unique_ptr", "std::shared_ptr", "unique_ptr", "shared_ptr")

    # ================================================================== scopes and destructors

    def push_scope(self) -> None:
        self.scopes.append(Scope([], self.handler))

    def pop_scope(self, node: Node) -> None:
        scope = self.scopes.pop()
        if self.cur is not None and scope.cleanups:
            self.run_cleanups([scope], end_loc(self.loc(node)))
        if self.handler != scope.handler:
            self.handler = scope.handler
            self.split()

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
        pad = self.new_block()
        saved = (self.cur, self.stmt_temps, self.loc_override)
        self.stmt_temps = []
        self.start(pad)
        self.loc_override = loc
        emit(loc)
        if self.handler is not None:
            self.terminate(Jump(self.handler))
        else:
            self.terminate(Halt(loc, "throw"))
        self.cur, self.stmt_temps, self.loc_override = saved
        self.handler = pad.id
        self.split()

    def run_cleanups(self, scopes: list[Scope], loc: Loc, skip: frozenset[str] = frozenset()) -> None:
        """Emit the destructors of `scopes`, innermost first (`skip`: objects moved out by a return)."""
        for scope in scopes:  # (a loop: `sum(<genexpr>)` cost a generator step per scope, at every exit)
            self.cleanup_runs += len(scope.cleanups)
        if self.cleanup_runs > MAX_CLEANUP_RUNS:
            raise TooManyCleanups()
        saved = self.loc_override
        self.loc_override = loc
        try:
            for scope in reversed(scopes):
                for name, emit in reversed(scope.cleanups):
                    if name not in skip and self.cur is not None:
                        emit(loc)
        finally:
            self.loc_override = saved

    def emit_release(self, target: ir.Expr, release: ReleaseFn, loc: Loc) -> None:
        """The release a destructor performs: `ReleaseX(p)`, `delete p`, `Deleter::operator()(p)`."""
        self.call_counter += 1
        text = f"{release.callee}({ir.expr_text(target)}) at scope exit"
        self.emit(ir.Call(self.call_counter, loc, release.callee, release.style, None, (target,), None, _short(text)))

    # ================================================================== statements

    def stmt_compound_statement(self, node: Node) -> None:
        self.push_scope()
        for child in node.named_children:
            self.lower_stmt(child)
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
            value = self.lower_expr(value_node)
        self.leave_by_return(value, self.loc(node), skip)
        self.stmt_temps = []

    stmt_co_return_statement = stmt_return_statement

    def returned_object(self, node: Node) -> str | None:
        """`return p;` / `return std::move(p);` of a local guard moves it out: no destructor."""
        node = self.unparen(node)
        if node.type == "call_expression":
            fn = node.child_by_field_id(self.F.function)
            if fn is not None and clean_name(self.text(fn)) in _MOVES:
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
        else:
            self.terminate(Halt(loc, "throw"))
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

    # ================================================================== declarations

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

    def stmt_declaration(self, node: Node) -> None:
        self.stmt_temps = []
        type_node = node.child_by_field_id(self.F.type)
        static = False
        for c in node.children:  # a plain loop: `any(<genexpr>)` cost a generator frame per child
            if c.type == "storage_class_specifier" and self.text(c) in ("static", "thread_local"):
                static = True
                break
        for child in node.children_by_field_id(self.F.declarator):
            self.lower_cpp_declarator(child, type_node, static)
        self.finish_statement(node)

    def lower_cpp_declarator(self, decl: Node, type_node: Node | None, static: bool) -> None:
        """One declarator of a declaration: name, type (from libclang when known), construction.

        Most declarators are a bare name (`T x = v;`): that is no function declarator, no
        structured binding, and its name is its text, so the walks for those are skipped."""
        target, value = (decl.child_by_field_id(self.F.declarator), decl.child_by_field_id(self.F.value)) \
            if decl.type == "init_declarator" else (decl, None)
        args: list[Node] | None = None
        bare = target is not None and target.type == "identifier"
        if not bare and find_function_declarator(target) is not None:
            decl = self.reparse_as_construction(decl, target)
            if decl is None:
                return  # a local function prototype
            target, value = decl.child_by_field_id(self.F.declarator), decl.child_by_field_id(self.F.value)
        if value is not None and value.type in ("argument_list", "initializer_list"):
            args = [a for a in value.named_children if a.type != "comment"]
        if not bare and target is not None and target.type == "structured_binding_declarator":
            self.declare_structured_binding(target, value)
            return
        # (`declarator_name` of an identifier is its text)
        name = self.src[target.start_byte:target.end_byte].decode("utf-8", "replace") if bare \
            else declarator_name(target, self.src)
        if not name:
            return
        type_text = self.declared_type(type_node, target)
        if value is not None and args is None and "auto" in type_text and _AUTO.search(type_text):
            type_text = self.infer_auto(type_text, value)
        var = self.declare_local(name, type_text, target, static or self.refers_elsewhere(target, value))
        self.initialize(decl, var, name, type_text, args, None if args is not None else value, self.loc(decl))

    def refers_elsewhere(self, target: Node | None, value: Node | None) -> bool:
        """`T& ep = info->ep;`, `auto& cache = Cache();`: a reference to an object this function
        does not hold (reached through a pointer, a member, a call's result). What is stored
        into it is stored there, not in a local (like a static local)."""
        if target is None or target.type != "reference_declarator" or value is None:
            return False
        inner = self.strip_casts(value)
        if inner.type == "identifier":
            name = self.text(inner)
            return name not in self.locals and name not in self.rename
        return inner.type in ("field_expression", "call_expression", "pointer_expression", "subscript_expression")

    def reparse_as_construction(self, decl: Node, target: Node) -> Node | None:
        """`OptionsPtr opts(raw);` and `Ptr p(static_cast<T *>(malloc(n)));` parse as function
        declarations. Inside a body they construct an object, unless every parameter looks like
        one (`int count`, a type): the declaration is parsed again with braces for parentheses
        (same offsets, so locations stay right) and the init-declarator is returned."""
        func = find_function_declarator(target)
        params = func.child_by_field_id(self.F.parameters) if func is not None else None
        stmt = decl.parent
        if params is None or stmt is None or not params.named_children or self.looks_like_prototype(params):
            return None
        data = bytearray(self.src)
        data[params.start_byte] = ord("{")
        data[params.end_byte - 1] = ord("}")
        tree = self.unit.parse_range(bytes(data), stmt)
        for node in tree.root_node.named_children:
            for child in node.children_by_field_id(self.F.declarator):
                if child.start_byte == decl.start_byte and child.type == "init_declarator":
                    return child
        return None

    def looks_like_prototype(self, params: Node) -> bool:
        """True when every parameter of `T x(...)` reads as a parameter (`int n`, a type) rather than a value."""
        for p in params.named_children:
            if p.type not in ("parameter_declaration", "optional_parameter_declaration", "variadic_parameter_declaration"):
                return False
            decl = p.child_by_field_id(self.F.declarator)
            if decl is not None and declarator_name(decl, self.src):
                continue
            if decl is not None and decl.type == "abstract_function_declarator":
                return False  # `g(x)`: a call
            type_node = p.child_by_field_id(self.F.type)
            name = clean_name(self.text(type_node)) if type_node is not None else ""
            base = strip_template_args(name)
            if base in _CASTS or base in _MOVES or base in _MAKERS:
                return False
            if type_node is not None and type_node.type in ("type_identifier", "qualified_identifier") and \
                    (name in self.locals or name in self.params or name in self.rename or self.type_of_name(name)):
                return False
        return True

    def declare_structured_binding(self, target: Node, value: Node | None) -> None:
        if value is not None:
            self.lower_expr(value)
        for ident in target.named_children:
            name = self.text(ident)
            var = self.bind_local(name, False)
            self.emit(ir.Assign(self.loc(ident), var, Opaque("structured binding")))

    def fresh_name(self, base: str) -> str:
        self.fresh += 1
        return f"{base}@{self.fresh}"

    def bind_local(self, name: str, aggregate: bool, static: bool = False) -> Var:
        """Declare a local; inside a body lowered in place it gets a fresh name when it would
        clash with a name of the function (names stay readable in messages otherwise)."""
        if self.inline_depth > 0 and (name in self.locals or name in self.params):
            new = self.fresh_name(name)
            self.rename[name] = Var(new)
            name = new
        elif name in self.rename:
            del self.rename[name]
        if not static:
            self.locals[name] = aggregate
        return self.var(name)

    def declare_local(self, name: str, type_text: str, target: Node | None, static: bool) -> Var:
        """Declare a local with its type; objects with destructors and containers are aggregates."""
        own = self.model.ownership(type_text)
        view = own.what == "container" and self.model.resolve_alias(parse_type(type_text)).name in VIEWS
        # an identifier (most declarators) is no array: no walk for that
        aggregate = target is not None and target.type != "identifier" and is_array_declarator(target) \
            or (own.what in ("container", "class") and not view)
        var = self.bind_local(name, aggregate, static)
        frame = self.frames[-1]
        frame.types[name] = type_text
        frame.lambdas.pop(name, None)
        frame.owners.pop(name, None)
        return var

    def infer_auto(self, declared: str, value: Node) -> str:
        """`auto x = init`: the type of the initializer, so that RAII objects declared with auto are recognized."""
        inner = self.strip_casts(value)
        if inner.type == "lambda_expression":
            return "<lambda>"
        found = self.expr_type(inner)
        if found is None:
            return declared
        pointers = declared.count("*")
        return found + ("*" * pointers if pointers and "*" not in found else "")

    def initialize(self, decl: Node, var: Var, name: str, type_text: str, args: list[Node] | None,
                   value: Node | None, loc: Loc) -> None:
        """Construct a declared object; register its destructor when it has one."""
        own = self.model.ownership(type_text)
        inner = self.strip_casts(value) if value is not None else None
        if inner is not None and inner.type == "lambda_expression":
            self.frames[-1].lambdas[name] = self.keep(inner)
            self.register_lambda(inner)
            self.emit(ir.Assign(loc, var, Opaque("lambda")))
            return
        ref = self.model.resolve_alias(parse_type(type_text))
        is_object = not ref.pointers and not ref.array and ref.name not in _SCALARS and own.what != "smart"
        guards = self.scope_guard_args(args, value) if is_object else []
        if guards:
            self.guard_lambdas.update(g.start_byte for g in guards)
        if args is None and own.what == "ort":
            args = construction_args(self, type_text, value)  # cpp_guards: `Ort::Status st = Ort::Status{call};`
        if own.what == "smart":
            self.init_smart_pointer(var, name, own, args, value, loc)
        elif own.what == "class" and own.cls is not None:
            self.init_class_object(var, name, own.cls, args, value, loc)
        elif own.what == "ort" and args:
            lowered = tuple([self.lower_expr(a) for a in args])
            hold_status(self, var, type_text, lowered, loc)  # cpp_guards: `Ort::Status st{call}`
            self.emit_call_node(decl, strip_template_args(self.model.qualify_ort(parse_type(type_text).name)),
                                "plain", None, lowered, True, None, loc)
        elif own.what == "container" and args and ref.name in VIEWS:
            # a view aliases the array it is built from: `result[i] = x` stores into `out[i]`
            self.emit(ir.Assign(loc, var, self.lower_expr(args[0])))
            for a in args[1:]:
                self.lower_expr(a, discard=True)
        elif own.what == "container" and args is not None:
            for a in args:
                self.lower_expr(a, discard=True)
        elif args is not None:
            self.init_from_args(decl, var, type_text, args, loc)
        elif value is not None and value.type == "initializer_list" and self.unknown_destructor(ref):
            self.init_from_args(decl, var, type_text, self.named(value), loc)  # `Guard g{arr, n, ReleaseX};`
        elif value is not None and self.converts_on_copy(type_text, value):
            self.init_from_args(decl, var, type_text, [value], loc)
        elif value is not None:
            if value.type == "initializer_list":
                self.lower_initializer(var, value)
            else:
                self.assign_from(var, value, loc)
        elif not self.locals.get(var.name, True):
            self.emit(ir.Assign(loc, var, _UNINITIALIZED))
        if guards:
            self.scope_guard_lambdas(name, guards, loc)

    def converts_on_copy(self, type_text: str, value: Node) -> bool:
        """`std::string msg = api->GetErrorMessage(st);` copies the characters: the object does
        not hold the pointer. True for object types initialized from a value of another type."""
        ref = self.model.resolve_alias(parse_type(type_text))
        if ref.pointers or ref.array or not ref.name or ref.name in _SCALARS or _AUTO.search(type_text):
            return False
        if not ref.name.startswith("std::") and self.model.find_class(ref.name, self.ns) is None:
            return False  # an unknown type may be a typedef of a pointer or a number
        if value.type == "initializer_list":
            return False
        source = self.expr_type(value)
        return source is None or self.model.resolve_alias(parse_type(source)).name != ref.name

    def init_from_args(self, decl: Node, var: Var, type_text: str, args: list[Node], loc: Loc) -> None:
        """`T x(a, b)` of a type with no known destructor: a pointer or number copies its single
        argument; an object of an unknown class is an unknown constructor call."""
        ref = self.model.resolve_alias(parse_type(type_text))
        scalar = ref.pointers > 0 or ref.name in _SCALARS or ref.name.startswith(("Ort", "j")) and not ref.args
        if scalar and len(args) == 1:
            self.assign_from(var, args[0], loc)
            return
        if scalar and not args:
            self.emit(ir.Assign(loc, var, Const(0, "{}")))
            return
        lowered = tuple([self.lower_expr(a) for a in args])
        self.emit_call_node(decl, clean_name(ref.name) or "<constructor>", "plain", None, lowered, True, None, loc)
        cls = self.unknown_destructor(ref) if lowered else None
        if cls is not None:
            self.destroy_unknown(var.name, cls, decl, lowered, loc)

    def unknown_destructor(self, ref: TypeRef) -> ClassInfo | None:
        """The class of `ref` when it is declared in a header with a destructor we cannot read."""
        if ref.pointers or ref.array or not ref.name:
            return None
        cls = self.model.find_class(ref.name, self.ns)
        return cls if cls is not None and cls.from_header and cls.has_dtor_decl else None

    def destroy_unknown(self, name: str, cls: ClassInfo, decl: Node, args: tuple[ir.Expr, ...], loc: Loc) -> None:
        """An object of a header class whose destructor we cannot read (`DeferRelease d(arr, n,
        ReleaseX)`) may release what its constructor was given when its scope ends: at every
        exit of the scope, its destructor is an unknown call receiving those arguments."""
        callee = f"{cls.qualname}::~{cls.name}"
        text = _short(self.text(decl))

        def emit(at: Loc, args: tuple[ir.Expr, ...] = args) -> None:
            self.call_counter += 1
            # "indirect": never resolved to a definition by name (the header's inline body is a
            # method whose `this` and parameters are not these arguments)
            self.emit(ir.Call(self.call_counter, at, callee, "indirect", None, args, None, text))

        self.register_cleanup(name, emit, loc)

    def scope_guard_args(self, args: list[Node] | None, value: Node | None) -> list[Node]:
        """A local object built from a lambda is a scope guard: `ScopeGuard g([&] {...});`,
        `auto g = gsl::finally([&] {...});` (any non-std function). The lambda runs when the
        scope ends."""
        if args is None and value is not None:
            inner = self.strip_casts(value)
            if inner.type != "call_expression":
                return []
            fn = inner.child_by_field_id(self.F.function)
            if fn is None or fn.type == "field_expression" or clean_name(self.text(fn)).startswith("std::"):
                return []
            args = self.call_args(inner)
        return self.lambda_args(args or [])

    def scope_guard_lambdas(self, name: str, lambdas: list[Node], loc: Loc) -> None:
        for lam in lambdas:
            node = self.lambda_var(lam) or self.keep(self.strip_casts(lam))
            self.register_cleanup(name, lambda at, n=node: self.inline_lambda(n, [], at), loc)

    def keep(self, node: Node) -> Node:
        """Remember which text a node kept for later belongs to (a macro expansion's or the file's)."""
        self.node_src[node.id] = self.src
        return node

    def lambda_var(self, node: Node) -> Node | None:
        if not self.has_lambda_vars():
            return None  # no lambda variable anywhere: nothing to look up
        node = self.strip_casts(node)
        if node.type == "identifier":
            return self.lookup("lambdas", self.text(node))
        return None

    def has_lambda_vars(self) -> bool:
        """Does any frame hold a lambda variable (`auto f = [&] {...};`)? Most functions have none."""
        for frame in self.frames:  # (a loop, not `any(<genexpr>)`: asked for every call argument)
            if frame.lambdas:
                return True
        return False

    def lambda_args(self, args: list[Node]) -> list[Node]:
        """The arguments that are lambdas or lambda variables: `[a for a in args if
        strip_casts(a).type == "lambda_expression" or lambda_var(a) is not None]`, with each
        argument's casts stripped once and the frames asked once (every call's arguments)."""
        if not args:
            return []
        variables = self.has_lambda_vars()
        found = []
        for a in args:
            inner = self.strip_casts(a)
            kind = inner.type
            if kind == "lambda_expression" or variables and kind == "identifier" \
                    and self.lookup("lambdas", self.text(inner)) is not None:
                found.append(a)
        return found

    def init_smart_pointer(self, var: Var, name: str, own: Ownership, args: list[Node] | None,
                           value: Node | None, loc: Loc) -> None:
        """`std::unique_ptr<T, D> p(raw, deleter)`: p holds raw; the deleter runs at scope exit."""
        release: ReleaseFn | None = own.release
        deleter_lambda: Node | None = None
        if args and len(args) >= 2:
            release, deleter_lambda = self.deleter_from_arg(args[1], own)
        self.guard_init = var
        try:
            if args:
                self.assign_from(var, args[0], loc)
            elif value is not None and value.type != "initializer_list":
                value = self.unwrap_guard_construction(value)
                if self.is_shared_copy(own, value):
                    self.assign_from(var, value, loc)
                    return
                self.assign_from(var, value, loc)
            else:
                self.emit(ir.Assign(loc, var, Const(0, "nullptr")))
        finally:
            self.guard_init = None
        own = dataclasses.replace(own, release=release, deleter_lambda=deleter_lambda)
        frame = self.frames[-1]
        frame.owners[name] = own
        self.register_cleanup(name, lambda at: self.release_named(frame, name, var, at), loc)

    def release_named(self, frame: Frame, name: str, var: ir.Expr, loc: Loc) -> None:
        """A smart pointer's destructor, with the deleter it has by then (`p = Ptr(raw, deleter)`
        may give it one after its declaration); with no deleter known, what it holds is
        no longer checked."""
        own = frame.owners.get(name)
        if own is not None and own.releases():
            self.release_smart(var, own, loc)
        elif self.cur is not None:
            names = tuple(sorted(_expr_vars(var)))
            self.emit(ir.Havoc(loc, names, "a smart pointer with a deleter ortlint cannot see"))

    def release_smart(self, target: ir.Expr, own: Ownership, loc: Loc) -> None:
        """What a smart pointer's deleter does to the pointer it holds."""
        if own.deleter_lambda is not None:
            self.inline_lambda(own.deleter_lambda, [target], loc)
        elif own.release is not None:
            self.emit_release(target, own.release, loc)

    def adopt_deleter(self, name: str, value: Node | None, own: Ownership) -> None:
        """`p = Ptr(raw, deleter)`: from now on p releases with that deleter."""
        inner = self.strip_casts(value) if value is not None else None
        if inner is None or inner.type != "call_expression":
            return
        args = self.call_args(inner)
        if len(args) < 2 or self.model.ownership(clean_name(self.text(inner.child_by_field_id(self.F.function)))).what != "smart":
            return
        release, lam = self.deleter_from_arg(args[1], own)
        for frame in reversed(self.frames):
            if name in frame.owners:
                frame.owners[name] = dataclasses.replace(own, release=release, deleter_lambda=lam)
                return

    def unwrap_guard_construction(self, value: Node) -> Node:
        """`auto p = SessionPtr(raw)` / `= std::unique_ptr<T, D>(raw, d)`: the raw pointer."""
        inner = self.strip_casts(value)
        if inner.type == "call_expression":
            fn = inner.child_by_field_id(self.F.function)
            args = self.call_args(inner)
            if fn is not None and fn.type != "field_expression" and args and \
                    self.model.ownership(clean_name(self.text(fn))).what == "smart":
                return args[0]
        return value

    def is_shared_copy(self, own: Ownership, value: Node) -> bool:
        """A copy of a shared_ptr shares ownership: the original still releases."""
        inner = self.strip_casts(value)
        return own.shared and inner.type == "identifier" and self.owner_of(self.text(inner)) is not None

    def deleter_from_arg(self, node: Node, own: Ownership) -> tuple[ReleaseFn | None, Node | None]:
        """The deleter passed to a smart pointer's constructor: `g_api->ReleaseStatus`,
        `&ReleaseX`, `free`, a lambda or a variable holding one."""
        inner = self.strip_casts(node)
        if inner.type == "pointer_expression":
            inner = self.strip_casts(inner.child_by_field_id(self.F.argument))
        if inner.type == "lambda_expression":
            self.register_lambda(inner)
            return None, self.keep(inner)
        if inner.type == "field_expression":
            return ReleaseFn(strip_template_args(self.text(inner.child_by_field_id(self.F.field))), "table"), None
        if inner.type in ("identifier", "qualified_identifier"):
            lam = self.lambda_var(inner)
            if lam is not None:
                return None, lam
            name = clean_name(self.text(inner))
            if "::" in name and parse_type(name.rsplit("::", 1)[0]).name in TABLE_TYPES:
                return ReleaseFn(name.rsplit("::", 1)[1], "table"), None
            return ReleaseFn(name, "plain"), None
        return own.release, None

    def init_class_object(self, var: Var, name: str, cls: ClassInfo, args: list[Node] | None,
                          value: Node | None, loc: Loc) -> None:
        """An object of a class of this file with a destructor: its constructor and destructor
        bodies are lowered in place, with the members as fields of the object."""
        if args is None and value is not None:
            inner = self.strip_casts(value)
            fn = inner.child_by_field_id(self.F.function) if inner.type == "call_expression" else None
            if fn is not None and clean_name(self.text(fn)) in (cls.name, cls.qualname):
                args = self.call_args(inner)
            elif inner.type == "compound_literal_expression":
                body = inner.child_by_field_id(self.F.value)
                args = [a for a in body.named_children if a.type != "comment"] if body is not None else []
            else:
                self.lower_expr(value, discard=True)
        arg_exprs = [self.lower_expr(a) for a in args or []]
        self.construct(cls, var, arg_exprs, loc)
        self.frames[-1].owners[name] = Ownership("class", cls=cls)
        self.register_cleanup(name, lambda at: self.destroy(cls, var, at), loc)

    def construct(self, cls: ClassInfo, obj: ir.Expr, args: list[ir.Expr], loc: Loc) -> None:
        """Default member initializers, then the constructor that fits the arguments (or aggregate initialization)."""
        for member, default in cls.field_defaults.items():
            with self.object_context(cls, obj), self.file_source(loc):
                self.assign_from(Field(obj, member), default, loc)
        ctor = pick_overload(cls.ctors, len(args), self.src)
        if ctor is not None:
            self.inline_method(ctor, cls, obj, args, loc)
        elif args and not cls.ctors:
            for member, value in zip(cls.field_order, args):  # aggregate initialization
                self.emit(ir.Assign(loc, Field(obj, member), value))

    def destroy(self, cls: ClassInfo, obj: ir.Expr, loc: Loc, depth: int = 0) -> None:
        """The destructor body, then the members' destructors in reverse order."""
        if cls.dtor is not None:
            self.inline_method(cls.dtor, cls, obj, [], loc)
        if depth > 3:
            return
        for member in reversed(cls.field_order):
            own = self.model.ownership(cls.fields.get(member, ""))
            if own.what == "smart" and own.release is not None and self.cur is not None:
                self.emit_release(Field(obj, member), own.release, loc)
            elif own.what == "class" and own.cls is not None and own.cls is not cls:
                self.destroy(own.cls, Field(obj, member), loc, depth + 1)

    # ================================================================== lowering bodies in place

    @contextmanager
    def object_context(self, cls: ClassInfo | None, obj: ir.Expr | None) -> Iterator[None]:
        saved = (self.cls, self.this_obj)
        self.cls, self.this_obj = cls, obj
        try:
            yield
        finally:
            self.cls, self.this_obj = saved

    @contextmanager
    def file_source(self, loc: Loc) -> Iterator[None]:
        """Lower nodes of this file's tree (class bodies) from anywhere, at location `loc`."""
        saved = (self.src, self.loc_override)
        self.src, self.loc_override = self.unit.src, loc
        try:
            yield
        finally:
            self.src, self.loc_override = saved

    @contextmanager
    def inlining(self, cls: ClassInfo | None, obj: ir.Expr | None, binds: dict[str, ir.Expr], loc: Loc | None,
                 result: ir.Expr | None, closure: bool, src: bytes | None = None) -> Iterator[None]:
        """Lower another body at the current point: its `return` jumps to the end; a method's
        events carry the location of the call or scope exit (`loc`), a lambda's keep their own
        (it is written inside this function); clashing local names are renamed."""
        exit_b = self.new_block()
        saved = (self.rename, self.cls, self.this_obj, self.inline_target, self.loc_override, self.loop_stack,
                 self.break_stack, self.break_depths, self.continue_depths, self.src, self.stmt_temps, self.try_stack)
        self.rename = {**(self.rename if closure else {}), **binds}
        self.cls, self.this_obj = cls, obj
        self.inline_target = InlineTarget(exit_b.id, result, len(self.scopes))
        self.loc_override = loc
        self.loop_stack, self.break_stack, self.break_depths, self.continue_depths = [], [], [], []
        self.src = src if src is not None else self.unit.src
        self.stmt_temps = []
        self.frames.append(Frame())
        self.inline_depth += 1
        try:
            yield
            self.jump(exit_b)
        finally:
            self.inline_depth -= 1
            self.frames.pop()
            (self.rename, self.cls, self.this_obj, self.inline_target, self.loc_override, self.loop_stack,
             self.break_stack, self.break_depths, self.continue_depths, self.src, self.stmt_temps,
             self.try_stack) = saved
            self.start(exit_b)

    def bind_params(self, fn_node: Node, args: list[ir.Expr], loc: Loc) -> dict[str, ir.Expr]:
        """Parameters of a body lowered in place become fresh locals holding the arguments."""
        params = self._params_node(fn_node)
        binds: dict[str, ir.Expr] = {}
        for i, p in enumerate(params.named_children if params is not None else []):
            if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
                continue
            decl = p.child_by_field_id(self.F.declarator)
            name = declarator_name(decl, self.src)
            if not name:
                continue
            clash = name in self.locals or name in self.params or name in self.rename
            var = Var(self.fresh_name(name) if clash else name)
            self.locals[var.name] = False
            self.emit(ir.Assign(loc, var, args[i] if i < len(args) else Opaque("default argument")))
            binds[name] = var
        return binds

    def param_types(self, fn_node: Node) -> dict[str, str]:
        """Parameter types of a body lowered in place (for the calls it makes)."""
        params = self._params_node(fn_node)
        out = {}
        for p in params.named_children if params is not None else []:
            decl = p.child_by_field_id(self.F.declarator)
            name = declarator_name(decl, self.src)
            if name:
                out[name] = declared_type_text(self.src, p.child_by_field_id(self.F.type), decl)
        return out

    def inline_room(self) -> bool:
        return self.inline_depth < MAX_INLINE_DEPTH and self.inlined_bytes < MAX_INLINED_BYTES

    def take_inline_room(self, body: Node) -> bool:
        """Whether `body` may be lowered in place; counts it against MAX_INLINED_BYTES (a note
        the first time the budget runs out: later calls are left as calls)."""
        if not self.inline_room():
            return False
        self.inlined_bytes += body.end_byte - body.start_byte
        if self.inlined_bytes >= MAX_INLINED_BYTES:
            self.note(body, f"{self.name}() inlines more than {MAX_INLINED_BYTES // 1024} KB of method and lambda "
                            "bodies; further calls to them are left as calls")
        return True

    def inline_method(self, fn_node: Node, cls: ClassInfo, obj: ir.Expr, args: list[ir.Expr], loc: Loc,
                      result: ir.Expr | None = None) -> bool:
        """Lower a method, constructor or destructor body in place with `obj` as `*this`; False when it cannot be."""
        body = fn_node.child_by_field_id(self.F.body)
        if body is None or not self.take_inline_room(body):
            return False
        saved_src = self.src
        self.src = self.unit.src
        binds = self.bind_params(fn_node, args, loc)
        types = self.param_types(fn_node)
        self.src = saved_src
        with self.inlining(cls, obj, binds, loc, result, closure=False):
            self.frames[-1].types.update(types)
            self.lower_member_initializers(fn_node)
            self.lower_stmt(body)
        return True

    def inline_lambda(self, lam: Node, args: list[ir.Expr], loc: Loc, result: ir.Expr | None = None) -> bool:
        """Lower a lambda body in place (captures are the enclosing variables); False when it cannot be."""
        body = lam.child_by_field_id(self.F.body)
        if body is None or not self.take_inline_room(body):
            return False
        src = self.node_src.get(lam.id, self.src)
        saved_src = self.src
        self.src = src
        binds = self.bind_params(lam, args, loc)
        types = self.param_types(lam)
        self.src = saved_src
        with self.inlining(self.cls, self.this_obj, binds, None, result, closure=True, src=src):
            self.frames[-1].types.update(types)
            self.lower_stmt(body)
        return True

    # ================================================================== expressions

    def expr_identifier(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        name = self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")  # `text`, inlined (hot)
        if name in self.rename:
            return self.rename[name]
        if name in self.ref_params and name not in self.locals:
            return Deref(Var(name))  # a reference parameter: the caller's object
        if self.this_obj is not None and self.cls is not None and name in self.cls.fields:
            return Field(self.this_obj, name)
        found = self.name_values.get(name)  # `name_value`'s cache lookup, inlined (hot)
        return found if found is not None else self.name_value(name)

    expr_type_identifier = expr_identifier  # a "parameter type" of a vexing parse is a variable

    def expr_qualified_identifier(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.var(clean_name(self.text(node)))

    def expr_this(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return AddrOf(self.this_obj) if self.this_obj is not None else Var("this")

    def expr_field_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        base = node.child_by_field_id(self.F.argument)
        if base is not None and self.strip_casts(base).type == "this":
            return self.member_expr(strip_template_args(self.text(node.child_by_field_id(self.F.field))))
        return super().expr_field_expression(node, discard, dest)

    def expr_lambda_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        self.register_lambda(node)
        return Opaque("lambda")

    def register_lambda(self, node: Node) -> None:
        """Analyze the lambda's body on its own too (not for lambdas inside macro expansions,
        whose syntax tree belongs to the expansion text)."""
        if self.src is self.unit.src:
            self.unit.add_lambda(node, self.name, self.cls, self.ns)

    def expr_new_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        declarator = node.child_by_field_id(self.F.declarator)
        callee = "new[]" if declarator is not None and declarator.type == "new_declarator" else "new"
        placement = node.child_by_field_id(self.F.placement)
        if placement is not None:
            callee = callee + "(nothrow)" if "nothrow" in self.text(placement) else "new(placement)"
        if declarator is not None:
            length = declarator.child_by_field_id(self.F.length)
            if length is not None:
                self.lower_expr(length, discard=True)
        arguments = node.child_by_field_id(self.F.arguments)
        args = tuple([self.lower_expr(a) for a in (arguments.named_children if arguments is not None else [])
                     if a.type != "comment"])
        if callee == "new(placement)" and placement is not None and len(self.named(placement)) == 1:
            # `new (buf) T(...)` builds the object in buf's storage: the result IS buf (no new allocation)
            storage = self.lower_expr(self.named(placement)[0])
            self.emit_call_node(node, callee, "new", None, args, True, None)
            return storage
        return self.emit_call_node(node, callee, "new", None, args, discard, dest)

    def expr_delete_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        callee = "delete[]" if any(c.type == "[" for c in node.children) else "delete"
        operand = next((c for c in node.named_children if c.type != "comment"), None)
        arg = self.lower_expr(operand) if operand is not None else Opaque("?")
        return self.emit_call_node(node, callee, "plain", None, (arg,), True, None)

    def expr_compound_literal_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`T{args}` in C++ constructs a T like `T(args)`."""
        type_node = node.child_by_field_id(self.F.type)
        value = node.child_by_field_id(self.F.value)
        args = [a for a in value.named_children if a.type != "comment"] if value is not None else []
        if type_node is None:
            return super().expr_compound_literal_expression(node, discard, dest)
        return self.lower_named_call(node, type_node, args, discard, dest)

    def expr_throw_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        self.stmt_throw_statement(node)
        return Opaque("throw")

    def expr_condition_clause(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        value = node.child_by_field_id(self.F.value)
        return self.lower_expr(value, discard, dest) if value is not None else Opaque("?")

    def expr_assignment_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """Assigning to a smart pointer releases what it held first."""
        left = self.unparen(node.child_by_field_id(self.F.left))
        op = self.operator(node)
        if left.type == "identifier" and op == "=":
            own = self.owner_of(self.text(left))
            if own is not None and own.what == "smart" and not own.shared:
                target = self.lower_expr(left)
                right = node.child_by_field_id(self.F.right)
                value = self.lower_expr(self.unwrap_guard_construction(right))
                if own.releases():
                    self.release_smart(target, own, self.loc(node))
                self.emit(ir.Assign(self.loc(node), target, value))
                self.adopt_deleter(self.text(left), right, own)
                return target
        return self.assignment_value(node, op)

    # ================================================================== calls

    def call_args(self, node: Node) -> list[Node]:
        arguments = node.child_by_field_id(self.F.arguments)
        return [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []

    def emit_call_node(self, node: Node, callee: str, style: str, receiver: ir.Expr | None,
                       args: tuple[ir.Expr, ...], discard: bool, dest: ir.Expr | None, loc: Loc | None = None) -> ir.Expr:
        """emit_call at an explicit location (constructors run at the declaration)."""
        if loc is None:
            return self.emit_call(node, callee, style, receiver, args, discard, dest)
        saved = self.loc_override
        self.loc_override = loc
        try:
            return self.emit_call(node, callee, style, receiver, args, discard, dest)
        finally:
            self.loc_override = saved

    def expr_call_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        function = node.child_by_field_id(self.F.function)
        fn = self.unparen(function) if function is not None else None
        arg_nodes = self.call_args(node)
        kind = fn.type if fn is not None else None
        macros = self.unit.macros
        if macros and kind == "identifier":
            fn_text = self.text(fn)
            macro = macros.get(fn_text)
            if macro is not None and self.macro_depth < 8 and fn_text not in self.rename:
                expanded = self.expand_macro(macro, node, node.child_by_field_id(self.F.arguments), discard, dest)
                if expanded is not None:
                    return expanded
        if fn is None:
            return self.emit_call(node, "<indirect>", "indirect", None, tuple([self.lower_expr(a) for a in arg_nodes]), discard, dest)
        if kind == "field_expression":
            return self.lower_member_call(node, fn, arg_nodes, discard, dest)
        if kind in ("identifier", "qualified_identifier", "template_function", "scoped_identifier",
                       "primitive_type", "type_identifier", "template_type"):
            return self.lower_named_call(node, fn, arg_nodes, discard, dest)
        if fn.type == "lambda_expression":  # immediately invoked: its body runs here, once
            result = dest if dest is not None else (None if discard else self.temp())
            if not self.inline_lambda(fn, [self.lower_expr(a) for a in arg_nodes], self.loc(node), result):
                self.register_lambda(fn)  # too deep to inline: analyzed on its own instead
            return result if result is not None else _VOID
        callee, style, receiver, drop_first = self.normalize_callee(fn, arg_nodes)
        args = tuple([self.lower_expr(a) for a in (arg_nodes[1:] if drop_first else arg_nodes)])
        return self.emit_call(node, callee, style, self.lower_expr(receiver) if receiver is not None else None,
                              args, discard, dest)

    def lower_named_call(self, node: Node, fn: Node, arg_nodes: list[Node], discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """A call by name: casts, std::move, make_unique, lambdas, constructors of guard types, same-class methods, library functions."""
        raw = clean_name(self.text(fn))
        name = strip_template_args(raw)
        short = name.rsplit("::", 1)[-1]
        if name in _CASTS or short in _CASTS:
            return self.lower_expr(arg_nodes[0], discard, dest) if arg_nodes else Opaque("cast")
        if name in _MOVES:
            return self.lower_move(arg_nodes[0], discard, dest) if arg_nodes else Opaque("move")
        if name in _MAKERS:
            return self.lower_maker(node, fn, name, arg_nodes, discard, dest)
        if self.is_deferral_macro(fn, name):
            return self.defer_arguments(node, name, arg_nodes)
        if fn.type == "identifier" and name not in self.rename and self.has_lambda_vars():
            lam = self.lookup("lambdas", name)
            if lam is not None:
                result = dest if dest is not None else (None if discard else self.temp())
                self.inline_lambda(lam, [self.lower_expr(a) for a in arg_nodes], self.loc(node), result)
                return result if result is not None else _VOID
        if self.is_type_name(name):
            own = self.model.ownership(name)
            if own.what == "smart" and arg_nodes:  # a temporary guard around a raw pointer
                return self.lower_expr(arg_nodes[0], discard, dest)
            cls = self.model.find_class(name, self.ns)
            name = cls.qualname if cls is not None else name
        elif self.cls is not None and "::" not in name and self.cls.has_method(name) and self.type_of_name(name) is None:
            return self.call_own_method(node, name, arg_nodes, discard, dest)
        name = self.unqualify_library_name(name)
        return self.lower_plain_call(node, name, arg_nodes, discard, dest)

    def is_deferral_macro(self, fn: Node, name: str) -> bool:
        """`DEFER(image, free(image))`, `SCOPE_EXIT(...)`: a macro from a header whose code
        argument runs when the scope ends. Tree-sitter mode only (libclang expands it)."""
        return (fn.type == "identifier" and _MACRO_NAME.match(name) is not None and _DEFER_WORDS.search(name) is not None
                and name not in self.unit.macros and name not in self.model.returns
                and self.unit.policy.lookup("plain", name) is None)

    def defer_arguments(self, node: Node, name: str, arg_nodes: list[Node]) -> ir.Expr:
        for arg in arg_nodes:
            if has_side_effects(arg):
                kept = self.keep(arg)
                self.register_cleanup(name, lambda at, n=kept: self.lower_deferred(n), self.loc(node))
        return Opaque(self.short_text(node))

    def lower_deferred(self, node: Node) -> None:
        """Lower a deferred code argument (DEFER / SCOPE_EXIT) at a scope exit, at its own location."""
        saved = (self.src, self.stmt_temps, self.loc_override)
        self.src, self.stmt_temps, self.loc_override = self.node_src.get(node.id, self.src), [], None
        try:
            self.lower_expr(node, discard=True)
            if self.stmt_temps:
                self.emit(ir.Kill(self.loc(node), tuple(self.stmt_temps)))
        finally:
            self.src, self.stmt_temps, self.loc_override = saved

    def unqualify_library_name(self, name: str) -> str:
        """`std::free`, `::fopen` are the C library's `free` / `fopen` (asked for every call by
        name: remembered per file)."""
        found = self.unit.unqualified.get(name)
        if found is None:
            found = self.unit.unqualified[name] = self._unqualify_library_name(name)
        return found

    def _unqualify_library_name(self, name: str) -> str:
        policy = self.unit.policy
        if policy.lookup("plain", name) is not None or policy.is_neutral("plain", name):
            return name
        bare = _STD_PREFIX.sub("", name, count=1)
        if bare != name and (policy.lookup("plain", bare) is not None or policy.is_neutral("plain", bare)):
            return bare
        return name

    def lower_plain_call(self, node: Node, name: str, arg_nodes: list[Node], discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """A call by name; lambdas passed to `std::` algorithms run in place, lambdas passed
        elsewhere may run later, so what they touch is no longer checked."""
        lambdas = self.lambda_args(arg_nodes)
        refs = self.model.ref_params.get(name, frozenset())
        args = tuple([self.by_reference(self.lower_expr(a)) if i in refs else self.lower_expr(a)
                      for i, a in enumerate(arg_nodes)])
        result = self.emit_call(node, name, "plain", None, args, discard, dest)
        hold_constructed_status(self, node, name, args, result)  # cpp_guards: `auto st = Ort::Status(call)`
        for lam_node in lambdas:
            lam = self.lambda_var(lam_node) or self.strip_casts(lam_node)
            if lam.start_byte in self.guard_lambdas:
                continue
            if name.startswith("std::"):
                count = len(self._params_node(lam).named_children) if self._params_node(lam) is not None else 0
                self.inline_lambda(lam, [Opaque("element")] * count, self.loc(node))
            else:
                self.havoc_captures(lam)
        return result

    @staticmethod
    def by_reference(arg: ir.Expr) -> ir.Expr:
        """An argument bound to a `T &` parameter: the callee sees its address."""
        if isinstance(arg, Deref):
            return arg.base
        if isinstance(arg, (Var, Field, Index)):
            return AddrOf(arg)
        return arg

    def havoc_captures(self, lam: Node) -> None:
        body = lam.child_by_field_id(self.F.body)
        if body is None:
            return
        names = sorted({self.rename_target(n) for n in re.findall(r"[A-Za-z_]\w*", self.text(body))})
        self.emit(ir.Havoc(self.loc(lam), tuple(n for n in names if n), "captured by a lambda that may run later"))

    def rename_target(self, name: str) -> str:
        target = self.rename.get(name)
        return target.name if isinstance(target, Var) else (name if target is None else "")

    def call_own_method(self, node: Node, name: str, arg_nodes: list[Node], discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`fail(st)` / `this->fail(st)` inside class Model: the method `Model::fail`; lowered in
        place when the object is known (inside a constructor/destructor lowered in place)."""
        assert self.cls is not None
        defs = self.cls.methods.get(name, [])
        if self.this_obj is not None:
            chosen = pick_overload(defs, len(arg_nodes), self.unit.src)
            if chosen is not None and self.inline_room():
                args = [self.lower_expr(a) for a in arg_nodes]
                result = dest if dest is not None else (None if discard else self.temp())
                self.inline_method(chosen, self.cls, self.this_obj, args, self.loc(node), result)
                return result if result is not None else _VOID
        return self.lower_plain_call(node, f"{self.cls.qualname}::{name}", arg_nodes, discard, dest)

    def lower_move(self, arg: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`std::move(p)` of a smart pointer empties p: its destructor then releases nothing."""
        inner = self.unparen(arg)
        if inner.type == "identifier":
            own = self.owner_of(self.text(inner))
            if own is not None and own.what == "smart" and not own.shared:
                source = self.lower_expr(inner)
                target = dest if dest is not None else self.temp()
                self.emit(ir.Assign(self.loc(arg), target, source))
                self.emit(ir.Assign(self.loc(arg), source, Const(0, "nullptr")))
                return target
        return self.lower_expr(arg, discard, dest)

    def lower_maker(self, node: Node, fn: Node, name: str, arg_nodes: list[Node], discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`std::make_unique<T>(args)` initializing a declared smart pointer is `new T(args)`
        (released by that pointer's destructor). Anywhere else the temporary smart pointer
        owns the object and hands it on: nothing for this function to release; what the
        arguments give the object's constructor (`std::move(impl)`) is the object's."""
        if dest is None or dest != self.guard_init:
            args = tuple([self.lower_expr(a) for a in arg_nodes])
            if args:
                # "indirect": a constructor never resolved by name; an unknown callee takes its arguments
                self.emit_call(node, f"{self.template_arg_text(fn) or 'T'}::<constructor>", "indirect", None, args, True, None)
            return Opaque(self.short_text(node))
        array = self.template_arg_text(fn).rstrip().endswith("]")
        if array:
            for a in arg_nodes:
                self.lower_expr(a, discard=True)
            return self.emit_call(node, "new[]", "new", None, (), discard, dest)
        args = tuple([self.lower_expr(a) for a in arg_nodes])
        return self.emit_call(node, "new", "new", None, args, discard, dest)

    def lower_member_call(self, node: Node, fn: Node, arg_nodes: list[Node], discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`x.f(...)` / `x->f(...)`: classified by what x is (see the module docstring)."""
        base = fn.child_by_field_id(self.F.argument)
        field_node = fn.child_by_field_id(self.F.field)
        name = strip_template_args(clean_name(self.text(field_node))) if field_node is not None else "?"
        op_node = fn.child_by_field_id(self.F.operator)
        op = self.text(op_node).strip() if op_node else "."
        base_inner = self.strip_casts(base) if base is not None else None
        if base_inner is not None and base_inner.type == "this" and self.cls is not None and self.cls.has_method(name):
            return self.call_own_method(node, name, arg_nodes, discard, dest)
        self.base_type_seen = None
        is_table, rtype_text = self.table_call_and_receiver(fn, base_inner)
        if is_table:
            return self.lower_table_call(node, fn, op, name, base, arg_nodes, discard, dest)
        if rtype_text is _UNKNOWN:
            rtype_text = self.receiver_type(fn)
        rtype = self.model.resolve_alias(parse_type(rtype_text)) if rtype_text else None
        seen = self.base_type_seen  # `expr_type(base)`, when receiver_type just worked it out
        base_type = seen[1] if seen is not None and seen[0] == base else self.expr_type(base) if base is not None else None
        base_own = self.model.ownership(base_type or "") if base is not None else None
        if op == "." and base_own is not None and base_own.what == "smart":
            return self.smart_pointer_op(node, base, name, arg_nodes, discard, dest, base_own)
        if rtype is None and op == "." and name in ("get", "release") and not arg_nodes:
            return self.lower_expr(base, discard, dest)  # smart-pointer idiom on an unknown type
        if op == "." and base_own is not None and base_own.what == "container":
            handled = self.container_op(node, base, name, arg_nodes, discard, dest)
            if handled is not None:
                return handled
        if op == ".":
            stored = owning_map_store(self, node, base, name, arg_nodes)  # cpp_containers: `cache.emplace(k, std::move(p))`
            if stored is not None:
                return stored
        if base is not None and not arg_nodes:  # a guard's test takes no argument: no type to work out otherwise
            tested = guard_method(self, rtype.name if rtype is not None and rtype.name else guard_type_of(self, base),
                                  name, base, op, arg_nodes, discard, dest)  # cpp_guards: `st.IsOK()`
            if tested is not None:
                return tested
        if rtype is not None and rtype.name:
            return self.typed_method_call(node, base, op, rtype, name, arg_nodes, discard, dest)
        if op == "->":
            callee, style, receiver, drop_first = self.normalize_callee(fn, arg_nodes)
            args = tuple([self.lower_expr(a) for a in (arg_nodes[1:] if drop_first else arg_nodes)])
            return self.emit_call(node, callee, style, self.lower_expr(receiver) if receiver is not None else None,
                                  args, discard, dest)
        receiver = self.lower_expr(base)
        return self.emit_call(node, name, "method", receiver, tuple([self.lower_expr(a) for a in arg_nodes]), discard, dest)

    def is_table_call(self, fn: Node, base: Node | None) -> bool:
        """`api->F(...)`, `api.F(...)` on a `const OrtApi&`, `Ort::GetApi().F(...)`, `env->F(...)`."""
        return self.table_call_and_receiver(fn, base)[0]

    def table_call_and_receiver(self, fn: Node, base: Node | None) -> tuple[bool, str | None | object]:
        """`is_table_call`, with the `receiver_type(fn)` it computed on the way (`_UNKNOWN` when
        it did not need it), so that a member call does not work the receiver's type out twice."""
        oracle = self.unit.oracle
        if oracle is not None and self.macro_depth == 0:
            field_node = fn.child_by_field_id(self.F.field)
            if field_node is not None:
                found = oracle.member_call(field_node.start_point[0] + 1, field_node.start_point[1] + 1)
                if found is not None:
                    return found[0] == "table", _UNKNOWN
        if base is None:
            return False, _UNKNOWN
        if base.type == "call_expression":
            callee = strip_template_args(clean_name(self.text(base.child_by_field_id(self.F.function) or base)))
            if callee in _API_GETTERS or callee.endswith("GetApi"):
                return True, _UNKNOWN
        rtype = self.receiver_type(fn)
        return rtype is not None and self.model.resolve_alias(parse_type(rtype)).name in TABLE_TYPES, rtype

    def lower_table_call(self, node: Node, fn: Node, op: str, name: str, base: Node | None, arg_nodes: list[Node],
                         discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """An OrtApi / JNIEnv entry: the same `table` call as in C (the self argument dropped for `(*env)->F(env, ...)`)."""
        if op == "->":
            callee, style, receiver, drop_first = self.normalize_callee(fn, arg_nodes)
            args = tuple([self.lower_expr(a) for a in (arg_nodes[1:] if drop_first else arg_nodes)])
            return self.emit_call(node, callee, "table", self.lower_expr(receiver) if receiver is not None else None,
                                  args, discard, dest)
        receiver = self.lower_expr(base) if base is not None else None
        return self.emit_call(node, name, "table", receiver, tuple([self.lower_expr(a) for a in arg_nodes]), discard, dest)

    def typed_method_call(self, node: Node, base: Node | None, op: str, rtype: TypeRef, name: str,
                          arg_nodes: list[Node], discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """A method of a known class: an `Ort::` object, a class of this file, anything else."""
        cls = self.model.find_class(rtype.name, self.ns)
        if cls is not None and cls.from_header and not cls.methods and name in cls.declared_methods \
                and name in self.unit.policy.untyped_fields and not self.policy_method(cls.qualname, name):
            # a method a header of the tree declares that hides a same-named function-pointer field
            # of a base struct (`Ort::Status CreateSyncStreamForDevice(...)` in a class deriving
            # from OrtEp): that method (its definition's summary if the tree has one), not the field
            if base is not None:
                self.lower_expr(base)
            return self.lower_plain_call(node, f"{cls.qualname}::{name}", arg_nodes, discard, dest)
        if cls is not None and not (cls.from_header and not cls.methods):
            own = self.model.ownership(rtype.name)
            defs = cls.methods.get(name, [])
            chosen = pick_overload(defs, len(arg_nodes), self.unit.src)
            if own.what == "class" and chosen is not None and base is not None and self.inline_room():
                obj = self.lower_expr(base)
                obj = Deref(obj) if op == "->" else obj
                args = [self.lower_expr(a) for a in arg_nodes]
                result = dest if dest is not None else (None if discard else self.temp())
                self.inline_method(chosen, cls, obj, args, self.loc(node), result)
                return result if result is not None else _VOID
            if cls.has_method(name):
                if base is not None:
                    self.lower_expr(base)
                return self.lower_plain_call(node, f"{cls.qualname}::{name}", arg_nodes, discard, dest)
        receiver = self.lower_expr(base) if base is not None else None
        qualified = f"{self.model.qualify_ort(rtype.name)}::{name}"
        return self.emit_call(node, qualified, "method", receiver, tuple([self.lower_expr(a) for a in arg_nodes]), discard, dest)

    def policy_method(self, qualname: str, name: str) -> bool:
        """Does the policy describe `Class::name` itself (not through an untyped field)?"""
        calls = self.unit.policy.calls
        qualified = f"{qualname}::{name}"
        return ("method", qualified) in calls or ("any", qualified) in calls or ("plain", qualified) in calls

    def smart_pointer_op(self, node: Node, base: Node, name: str, arg_nodes: list[Node], discard: bool,
                         dest: ir.Expr | None, own: Ownership) -> ir.Expr:
        """`p.get()` borrows, `p.release()` hands the pointer out, `p.reset(q)` releases and
        takes q; anything else on the smart pointer itself touches nothing."""
        target = self.lower_expr(base)
        loc = self.loc(node)
        if name == "get" or name == "operator->":
            return target
        if name == "release":
            out = dest if dest is not None else (None if discard else self.temp())
            if out is not None:
                self.emit(ir.Assign(loc, out, target))
            self.emit(ir.Assign(loc, target, Const(0, "nullptr")))
            return out if out is not None else _VOID
        if name == "reset":
            value = self.lower_expr(arg_nodes[0]) if arg_nodes else Const(0, "nullptr")
            own = self.owner_of(self.text(self.unparen(base))) or own
            if own.releases() and not own.shared:
                self.release_smart(target, own, loc)
            self.emit(ir.Assign(loc, target, value))
            return _VOID
        for a in arg_nodes:
            self.lower_expr(a, discard=True)
        return Opaque(self.short_text(node))

    def container_op(self, node: Node, base: Node, name: str, arg_nodes: list[Node], discard: bool,
                     dest: ir.Expr | None) -> ir.Expr | None:
        """`v.data()` is the array itself; `v.push_back(h)` stores h into an element."""
        if name in _CONTAINER_SELF:
            return self.lower_expr(base, discard, dest)
        if name in _CONTAINER_STORE and arg_nodes:
            target = self.lower_expr(base)
            value = self.lower_expr(arg_nodes[-1])
            element = self._element_type(self.expr_type(base)) or ""
            if self.model.ownership(element).what in ("smart", "ort", "class"):
                names = tuple(sorted(_expr_vars(value)))  # the element's destructor owns it now
                if names:
                    self.emit(ir.Havoc(self.loc(node), names, "owned by a container of RAII objects"))
            else:
                self.emit(ir.Assign(self.loc(node), Index(target, Opaque("i")), value))
            return _VOID
        if name in ("size", "empty", "capacity", "reserve", "resize", "at", "front", "back", "clear", "length"):
            for a in arg_nodes:
                self.lower_expr(a, discard=True)
            if name in ("at", "front", "back"):
                return Index(self.lower_expr(base), Opaque("i"))
            return Opaque(self.short_text(node))
        return None
