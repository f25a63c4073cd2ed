"""Inlining the file's own methods, constructors, destructors and lambdas into the caller, within a size and
depth budget, so that what they do to the caller's resources is seen."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from tree_sitter import Node

from ... import ir
from ...ir import Loc, Opaque, Var
from ..c.syntax import declarator_name
from .model import ClassInfo, declared_type_text
from .scopes import Frame, InlineTarget
from .syntax import MAX_INLINE_DEPTH, MAX_INLINED_BYTES


class CppInlining:
    """Inlining the file's own methods, constructors, destructors and lambdas into the caller, within a size and
depth budget, so that what they do to the caller's resources is seen."""

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
        """Parameters of a body lowered in place become fresh locals holding the arguments; a
        `T &` parameter given a variable is that variable (`Open(stream)` with
        `Status Open(std::unique_ptr<T>& s) { s = std::move(f); }`: what the body stores into `s`
        is the caller's `stream`, which its own scope then destroys)."""
        params = self._params_node(fn_node)
        binds: dict[str, ir.Expr] = {}
        self.reference_aliases: frozenset[str] = frozenset()
        for i, p in enumerate(params.named_children if params is not None else []):
            if p.type not in ("parameter_declaration", "optional_parameter_declaration"):
                continue
            decl = p.child_by_field_id(self.F.declarator)
            name = declarator_name(decl, self.src)
            if not name:
                continue
            if i < len(args) and type(args[i]) is Var and _lvalue_reference(decl, self.src):
                binds[name] = args[i]
                self.reference_aliases = self.reference_aliases | {name}
                continue
            clash = name in self.locals or name in self.params or name in self.rename
            var = Var(self.fresh_name(name) if clash else name)
            self.locals[var.name] = False
            self.emit(ir.Assign(loc, var, args[i] if i < len(args) else Opaque("default argument")))
            binds[name] = var
        return binds

    def param_types(self, fn_node: Node, aliases: frozenset[str] = frozenset()) -> dict[str, str]:
        """Parameter types of a body lowered in place (for the calls it makes); a parameter
        bound to the caller's variable itself (bind_params) keeps that variable's type."""
        params = self._params_node(fn_node)
        out = {}
        for p in params.named_children if params is not None else []:
            decl = p.child_by_field_id(self.F.declarator)
            name = declarator_name(decl, self.src)
            if name and not (aliases and name in aliases):
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
        types = self.param_types(fn_node, self.reference_aliases)
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
        types = self.param_types(lam, self.reference_aliases)
        self.src = saved_src
        with self.inlining(self.cls, self.this_obj, binds, None, result, closure=True, src=src):
            self.frames[-1].types.update(types)
            self.lower_stmt(body)
        return True

    def expr_lambda_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """A lambda as a value. Kept for later (stored in a member container the destructor runs,
        `cleanups.emplace_back([v] { delete v; })`, handed to a method, assigned, returned) it
        runs when this function is over: what it captures is the lambda's to use or release."""
        self.register_lambda(node)
        if self.lambda_kept_for_later(node):
            self.havoc_captures(node)
        return Opaque("lambda")

    def lambda_kept_for_later(self, node: Node) -> bool:
        """Not a scope guard (run at scope exit) and not an argument of a call by name, which
        decides for itself (`lower_plain_call`: a `std::` algorithm runs it in place)."""
        if node.start_byte in self.guard_lambdas:
            return False
        parent = node.parent
        while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
            parent = parent.parent
        if parent is not None and parent.type == "argument_list":
            call = parent.parent
            fn = call.child_by_field_id(self.F.function) if call is not None and call.type == "call_expression" else None
            if fn is not None and self.unparen(fn).type != "field_expression":
                return False
        return True

    def register_lambda(self, node: Node) -> None:
        """Analyze the lambda's body on its own too (not for lambdas inside macro expansions,
        whose syntax tree belongs to the expansion text)."""
        if self.src is self.unit.src:
            self.unit.add_lambda(node, self.name, self.cls, self.ns)


def _lvalue_reference(decl: Node | None, src: bytes) -> bool:
    """Whether a parameter is an lvalue reference (`T& name`, `T*& name`; not `&&`): the
    declarator right around its name is `& name` (`*&name` is a pointer_declarator around it)."""
    inner = decl
    while inner is not None and inner.type in ("pointer_declarator", "reference_declarator"):
        if inner.type == "reference_declarator" and inner.named_children and \
                inner.named_children[-1].type == "identifier":
            return not src[inner.start_byte:inner.end_byte].lstrip().startswith(b"&&")
        inner = inner.named_children[-1] if inner.named_children else None
    return False
