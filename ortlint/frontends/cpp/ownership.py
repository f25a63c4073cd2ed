"""Ownership in C++ objects: smart pointers and their deleters (temporaries destroyed at the end of their full
expression, `get`/`release`/`reset`), containers (`data`, `push_back`), scope guards and deleter lambdas, objects of
the file's own classes constructed and destroyed (members released by their destructors)."""
from __future__ import annotations

import dataclasses
import re
from contextlib import contextmanager
from typing import Iterator

from tree_sitter import Node

from ... import ir
from ...ir import Const, Field, Index, Loc, Opaque, Var
from ..c.syntax import _UNINITIALIZED, _VOID, _short
from .model import TABLE_TYPES, ClassInfo, Ownership, ReleaseFn, TypeRef, clean_name, parse_type
from .scopes import Frame
from .status_values import status_class
from .syntax import _CONTAINER_SELF, _CONTAINER_STORE, _MOVES, _expr_vars, pick_overload, strip_template_args

# Objects that copy the characters they are assigned (a `std::string_view` would not: not here)
_STRING_OBJECTS = frozenset({"std::string", "std::wstring", "std::u16string", "std::u32string", "std::u8string",
                             "string", "wstring", "std::filesystem::path"})


class CppOwnership:
    """Ownership in C++ objects: smart pointers and their deleters (temporaries destroyed at the end of their full
expression, `get`/`release`/`reset`), containers (`data`, `push_back`), scope guards and deleter lambdas, objects of
the file's own classes constructed and destroyed (members released by their destructors)."""

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
        callee = ir.unread_destructor(cls.qualname, cls.name)
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
        return [lam for lam in self.lambda_args(args or []) if self.callable_without_arguments(lam)]

    def callable_without_arguments(self, arg: Node) -> bool:
        """A guard calls its function with no arguments when it is destroyed: a lambda whose
        parameters need arguments (`[&](const Ctx &c, Args &a) {...}` handed to a factory that
        wraps it as a value, `Value::callable(...)`) is not a guard's."""
        lam = self.lambda_var(arg) or self.strip_casts(arg)
        params = self._params_node(lam) if lam.type == "lambda_expression" else None
        for p in params.named_children if params is not None else []:
            if p.type == "parameter_declaration" and self.text(p).strip() != "void":
                return False
        return True

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
            if args and own.shared and len(args) == 1 and self.is_shared_copy(own, args[0], typed=True):
                self.init_shared_copy(var, args[0], loc)  # `std::shared_ptr<T> q(p)`: a copy of p's reference
            elif args:
                self.assign_from(var, args[0], loc)
            elif value is not None and value.type != "initializer_list":
                value = self.unwrap_guard_construction(value)
                if self.is_shared_copy(own, value):
                    self.init_shared_copy(var, value, loc)
                else:
                    self.assign_from(var, value, loc)
            else:
                self.emit(ir.Assign(loc, var, Const(0, "nullptr")))
        finally:
            self.guard_init = None
        own = dataclasses.replace(own, release=release, deleter_lambda=deleter_lambda)
        frame = self.frames[-1]
        frame.owners[name] = own
        self.register_cleanup(name, lambda at: self.release_named(frame, name, var, at), loc)

    def init_shared_copy(self, var: Var, value: Node, loc: Loc) -> None:
        """`std::shared_ptr<T> q = p;`: q shares p's object, whose fate is not q's to decide (an
        opaque value, as assigning a copy gives: `CppExpressions`). q is still a smart pointer of
        this scope: given its own object later (`if (!q) q = T::Load();`), it is the one
        reference to it, released when q goes out of scope."""
        self.lower_expr(value, discard=True)
        self.emit(ir.Assign(loc, var, Opaque(self.short_text(value))))

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

    def is_shared_copy(self, own: Ownership, value: Node, typed: bool = False) -> bool:
        """A `std::shared_ptr` initialized from another one (a local, a member, an element:
        `auto node = (*nodes)[j];`) shares its ownership: the copy's destruction releases
        nothing while the original lives. A shared_ptr cannot be copy-initialized from a raw
        pointer, so any such object expression is a shared_ptr; in parentheses
        (`std::shared_ptr<T> q(x)`, `typed`) x may be a raw pointer adopted, so its declared
        type must say it is a smart pointer."""
        if not own.shared:
            return False
        inner = self.strip_casts(value)
        kind = inner.type
        if kind == "pointer_expression" and self.text(inner.child_by_field_id(self.F.operator)).strip() != "*":
            return False
        if kind not in ("identifier", "field_expression", "subscript_expression", "pointer_expression",
                        "qualified_identifier"):
            return False
        if kind == "identifier" and self.owner_of(self.text(inner)) is not None:
            return True
        if not typed:
            return True
        found = self.expr_type(inner)
        return found is not None and self.model.ownership(found).what == "smart"

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

    def temporary_owner(self, call: Node) -> Ownership | None:
        """The ownership of a call's result when it is a temporary `std::unique_ptr` (the call's
        declared return type) that nothing takes over: dereferenced (`*Make()`), a member of it
        used (`Make()->f()`, `Make().get()`; not `.release()`, which hands the pointer out) or
        dropped (`Make();`). Passed on, returned, stored or moved, it is someone else's."""
        parent, child = call.parent, call
        while parent is not None and parent.type == "parenthesized_expression":
            parent, child = parent.parent, parent
        if parent is None:
            return None
        kind = parent.type
        if kind == "pointer_expression":
            if self.text(parent.child_by_field_id(self.F.operator)).strip() != "*":
                return None
        elif kind == "field_expression":
            field_node = parent.child_by_field_id(self.F.field)
            if parent.child_by_field_id(self.F.argument) != child or field_node is None \
                    or self.text(field_node) == "release":
                return None
        elif kind != "expression_statement":
            return None
        found = self.call_type(call)
        if not found:
            return None
        own = self.model.ownership(found)
        return own if own.what == "smart" and not own.shared and own.releases() else None

    def destroy_temporary(self, temp: Var, own: Ownership, loc: Loc) -> None:
        """A smart-pointer temporary's destructor: on the exceptional paths of the rest of the
        statement (a landing pad, as for a local) and where the statement ends (`release_temps`,
        which also takes the pad's entry out of the scope)."""
        self.register_cleanup(temp.name, lambda at: self.release_smart(temp, own, at), loc)
        self.smart_temps[temp.name] = (own, self.scopes[-1], self.scopes[-1].cleanups[-1])

    def release_temps(self, names: list[str] | tuple[str, ...], loc: Loc) -> list[str]:
        """Run the destructors of the smart-pointer temporaries among `names` (the end of their
        full expression) and set them to null, so that a landing pad still in force releases
        nothing; the names left to kill are returned."""
        if not self.smart_temps:
            return list(names)
        rest = []
        for name in names:
            found = self.smart_temps.get(name)
            if found is None:
                rest.append(name)
                continue
            own, scope, entry = found
            if self.cur is not None:
                self.release_smart(Var(name), own, loc)
                self.emit(ir.Assign(loc, Var(name), Const(0, "nullptr")))
            if entry in scope.cleanups:
                scope.cleanups.remove(entry)
        return rest

    def init_class_object(self, var: Var, name: str, cls: ClassInfo, args: list[Node] | None,
                          value: Node | None, loc: Loc) -> None:
        """An object of a class of this file with a destructor: its constructor and destructor
        bodies are lowered in place, with the members as fields of the object."""
        status: ir.Expr | None = None
        if args is None and value is not None:
            inner = self.strip_casts(value)
            fn = inner.child_by_field_id(self.F.function) if inner.type == "call_expression" else None
            if fn is not None and clean_name(self.text(fn)) in (cls.name, cls.qualname):
                args = self.call_args(inner)
            elif inner.type == "compound_literal_expression":
                body = inner.child_by_field_id(self.F.value)
                args = [a for a in body.named_children if a.type != "comment"] if body is not None else []
            elif status_class(self, cls.qualname) is cls:  # status_values: `Status st = Check();`
                status = self.lower_expr(value)
            else:
                self.lower_expr(value, discard=True)
        arg_exprs = [self.lower_expr(a) for a in args or []]
        # a new object: declared again on the next iteration of a loop, it holds nothing of the
        # last one (members its constructor leaves alone start empty, not as the last one ended);
        # a status object holds the status it was initialized with
        self.emit(ir.Assign(loc, var, _UNINITIALIZED if status is None else status))
        # While the constructor runs, an exception destroys the members built so far, but not
        # the object: its destructor runs only for an object whose constructor returned.
        outside = self.handler
        self.register_cleanup(name, lambda at: self.destroy(cls, var, at, body=False), loc)
        scope, partial = self.scopes[-1], self.scopes[-1].cleanups[-1]
        self.construct(cls, var, arg_exprs, loc)
        if partial in scope.cleanups:
            scope.cleanups.remove(partial)
        self.handler = outside
        self.frames[-1].owners[name] = Ownership("class", cls=cls)
        self.register_cleanup(name, lambda at: self.destroy(cls, var, at), loc)

    def construct(self, cls: ClassInfo, obj: ir.Expr, args: list[ir.Expr], loc: Loc) -> None:
        """Default member initializers, then the constructor that fits the arguments (or aggregate initialization)."""
        for member, default in cls.field_defaults.items():
            with self.object_context(cls, obj), self.file_source(loc):
                self.assign_from(Field(obj, member), default, loc)
        ctor = pick_overload(cls.ctors, len(args), self.src, args)
        if ctor is not None:
            self.inline_method(ctor, cls, obj, args, loc)
        elif args and not cls.ctors:
            for member, value in zip(cls.field_order, args):  # aggregate initialization
                self.emit(ir.Assign(loc, Field(obj, member), value))

    def destroy(self, cls: ClassInfo, obj: ir.Expr, loc: Loc, depth: int = 0, body: bool = True) -> None:
        """The destructor body, then the members' destructors in reverse order (`body=False`:
        the members only, for an object whose constructor threw)."""
        if cls.dtor is not None and body:
            self.inline_method(cls.dtor, cls, obj, [], loc)
        if depth > 3:
            return
        for member in reversed(cls.field_order):
            own = self.model.ownership(cls.fields.get(member, ""))
            if own.what == "smart" and own.shared and self.cur is not None:
                # a std::shared_ptr member is one reference among others (it may be a copy of the
                # caller's, `control_{std::move(control)}` of a by-value parameter): what it holds
                # is no longer this object's to release or to leak
                names = tuple(sorted(_expr_vars(Field(obj, member))))
                if names:
                    self.emit(ir.Havoc(loc, names, "held by a std::shared_ptr member of an object destroyed here"))
            elif own.what == "smart" and own.release is not None and self.cur is not None:
                self.emit_release(Field(obj, member), own.release, loc)
            elif own.what == "class" and own.cls is not None and own.cls is not cls:
                self.destroy(own.cls, Field(obj, member), loc, depth + 1)

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
            elif self.raw_pointer_handed_out(self.text(self.unparen(base))):
                names = tuple(sorted(_expr_vars(target)))
                if names:
                    self.emit(ir.Havoc(loc, names, "its raw pointer was handed to a call before (`p.get()`)"))
            self.emit(ir.Assign(loc, target, Const(0, "nullptr")))
            return out if out is not None else _VOID
        if name == "reset":
            value = self.lower_expr(arg_nodes[0]) if arg_nodes else Const(0, "nullptr")
            own = self.owner_of(self.text(self.unparen(base))) or own
            if own.releases():  # (a std::shared_ptr drops its reference)
                self.release_smart(target, own, loc)
            self.emit(ir.Assign(loc, target, value))
            return _VOID
        for a in arg_nodes:
            self.lower_expr(a, discard=True)
        return Opaque(self.short_text(node))

    def raw_pointer_handed_out(self, name: str) -> bool:
        """Whether this function passes `name.get()` as an argument of a call: then a
        `name.release()` whose result is dropped says the callee (an async call's user data, a
        registry) took the object (`run(cb, p.get()); p.release();`), not that it is lost."""
        body = self.node.child_by_field_id(self.F.body)
        if body is None or not name.isidentifier():
            return False
        return re.search(rf"[(,]\s*{re.escape(name)}\s*\.\s*get\s*\(\s*\)\s*[,)]", self.text(body)) is not None

    def move_into_object(self, node: Node, left: Node) -> ir.Expr | None:
        """`gemm.layer = std::move(layer)`: a smart pointer moved into a member or an element of
        an object is taken by a smart pointer there (only one can receive it), which that
        object's destructor releases; what it holds is no longer this function's to release.
        None when the right side is not such a move."""
        right = self.unparen(node.child_by_field_id(self.F.right))
        if right.type != "call_expression":
            return None
        fn = right.child_by_field_id(self.F.function)
        args = self.call_args(right)
        if fn is None or clean_name(self.text(fn)) not in _MOVES or len(args) != 1:
            return None
        source = self.unparen(args[0])
        own = self.owner_of(self.text(source)) if source.type == "identifier" else None
        if own is None or own.what != "smart":
            return None
        target = self.lower_expr(left)
        value = self.lower_expr(right)
        self.emit(ir.Assign(self.loc(node), target, value))
        names = tuple(sorted(_expr_vars(value)))
        if names:
            self.emit(ir.Havoc(self.loc(node), names, "moved into a smart pointer of another object"))
        return target

    def copy_into_string(self, node: Node, left: Node) -> ir.Expr | None:
        """`cfg.model = p;` into a `std::string` member (or element), or `s = p;` into a local
        string declared earlier, copies the characters, as `std::string s = p;` does: the
        string holds no pointer to what `p` points to, so
        releasing `p` afterwards leaves nothing dangling and a struct returned by value hands
        nothing on. None when the target is not a string object assigned from another type."""
        target_type = self.expr_type(left)
        right = node.child_by_field_id(self.F.right)
        if not target_type or right is None:
            return None
        ref = self.model.resolve_alias(parse_type(target_type))
        if ref.pointers or ref.array or ref.name not in _STRING_OBJECTS:
            return None
        source = self.expr_type(right)
        if source is not None and self.model.resolve_alias(parse_type(source)).name == ref.name:
            return None  # a string copied from a string: the C lowering's store is right
        self.lower_expr(right, discard=True)
        target = self.lower_expr(left)
        self.emit(ir.Assign(self.loc(node), target, Opaque(self.short_text(right))))
        return target

    def store_into_owning_element(self, node: Node, left: Node) -> ir.Expr | None:
        """`infos[i] = std::move(info)` into a container whose elements own what they hold (a
        vector of smart pointers): the element's destructor owns it now, as for `push_back`.
        None when the container's elements own nothing (the C lowering's store stands)."""
        container = left.child_by_field_id(self.F.argument)
        element = self._element_type(self.expr_type(container)) if container is not None else None
        if not element or self.model.ownership(self.expr_type(container) or "").what != "container" \
                or not self.model.owns_what_it_holds(element):
            return None
        self.lower_expr(left)
        value = self.lower_expr(node.child_by_field_id(self.F.right))
        names = tuple(sorted(_expr_vars(value)))
        if names:
            self.emit(ir.Havoc(self.loc(node), names, "owned by a container of RAII objects"))
        return value

    def container_op(self, node: Node, base: Node, name: str, arg_nodes: list[Node], discard: bool,
                     dest: ir.Expr | None) -> ir.Expr | None:
        """`v.data()` is the array itself; `v.push_back(h)` stores h into an element."""
        if name in _CONTAINER_SELF:
            return self.lower_expr(base, discard, dest)
        if name in _CONTAINER_STORE and arg_nodes:
            target = self.lower_expr(base)
            element = self._element_type(self.expr_type(base)) or ""
            owning = self.model.owns_what_it_holds(element)
            self.plain_initializers = True  # (an element's members: the store below says where they go)
            try:
                values = [self.lower_expr(a) for a in arg_nodes[:-1]] if owning else []
                value = self.lower_expr(arg_nodes[-1])
            finally:
                self.plain_initializers = False
            if owning:  # (an element built in place from several arguments holds them all)
                names = tuple(sorted(set().union(*(_expr_vars(v) for v in values + [value]))))
                if names:
                    self.emit(ir.Havoc(self.loc(node), names, "owned by a container of RAII objects"))
            else:
                if self.borrowed_from_smart_pointer(arg_nodes[-1]):
                    value = Opaque(self.short_text(arg_nodes[-1]))
                self.emit(ir.Assign(self.loc(node), Index(target, Opaque("i")), value))
            return _VOID
        if name == "clear" and not arg_nodes and self.model.owns_what_it_holds(self._element_type(self.expr_type(base)) or ""):
            return self.clear_container(node, base)
        if name in ("size", "empty", "capacity", "reserve", "resize", "at", "front", "back", "clear", "length"):
            for a in arg_nodes:
                self.lower_expr(a, discard=True)
            if name in ("at", "front", "back"):
                return Index(self.lower_expr(base), Opaque("i"))
            return Opaque(self.short_text(node))
        return None

    def borrowed_from_smart_pointer(self, arg: Node) -> bool:
        """`seen.push_back(w.get())` with `w` a local smart pointer: the container of raw
        pointers gets a copy the smart pointer still owns (it deletes the object, or hands it on
        with `std::move(w)`): the copy is no hand-over, so a container the caller sees does not
        receive the object. (`w.release()` gives up ownership and keeps its reading.)"""
        inner = self.strip_casts(arg)
        if inner.type != "call_expression":
            return False
        fn = inner.child_by_field_id(self.F.function)
        args = inner.child_by_field_id(self.F.arguments)
        if fn is None or fn.type != "field_expression" or (args is not None and args.named_child_count):
            return False
        field = fn.child_by_field_id(self.F.field)
        op = fn.child_by_field_id(self.F.operator)
        base = fn.child_by_field_id(self.F.argument)
        if field is None or self.text(field) != "get" or base is None or (op is not None and self.text(op).strip() != "."):
            return False
        base = self.unparen(base)
        if base.type != "identifier" or self.text(base) not in self.locals:
            return False
        return self.model.ownership(self.expr_type(base) or "").what == "smart"

    def clear_container(self, node: Node, base: Node) -> ir.Expr:
        """`v.clear()` of a container whose elements own what they hold (smart pointers): the
        elements are destroyed, what is stored afterwards is new (`for (auto &t : done)
        t.reset(); done.clear();` then refilled on the next iteration is not the same elements
        released twice). (A container of raw pointers keeps its reading: clearing it drops
        the pointers, and what they held leaks unless released before.)"""
        target = self.lower_expr(base)
        self.emit(ir.Assign(self.loc(node), target, Opaque(self.short_text(node))))
        return Opaque(self.short_text(node))

    @contextmanager
    def object_context(self, cls: ClassInfo | None, obj: ir.Expr | None) -> Iterator[None]:
        saved = (self.cls, self.this_obj)
        self.cls, self.this_obj = cls, obj
        try:
            yield
        finally:
            self.cls, self.this_obj = saved
