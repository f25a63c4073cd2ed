"""C++ expressions and calls: `new`/`delete` (a class-scope `operator delete` too), assignments, plain, member,
table and method calls (typed by the receiver), `std::move`, makers."""
from __future__ import annotations

import re

from tree_sitter import Node

from ... import ir
from ...ir import AddrOf, Const, Deref, Field, Index, Loc, Opaque, Var
from ..c.syntax import _VOID
from ..common.cfg import has_side_effects
from .containers import owning_map_store
from .guards import guard_method, guard_type_of, hold_constructed_status
from .model import TABLE_TYPES, Ownership, TypeRef, clean_name, parse_type, strip_template
from .self_owning import (hand_over_self, may_register_themselves, may_start_themselves, may_store_themselves,
                          self_ownership, stores_this_through_param)
from .status_values import constructed_status, status_factory, status_method
from .syntax import (
    _API_GETTERS,
    _CASTS,
    _DEFER_WORDS,
    _MACRO_NAME,
    _MAKERS,
    _MOVES,
    _STD_PREFIX,
    _UNKNOWN,
    pick_overload,
    strip_template_args,
)


class CppExpressions:
    """C++ expressions and calls: `new`/`delete` (a class-scope `operator delete` too), assignments, plain, member,
table and method calls (typed by the receiver), `std::move`, makers."""

    def expr_identifier(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        name = self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")  # `text`, inlined (hot)
        if name in self.rename:
            return self.rename[name]
        if name in self.ref_params and name not in self.locals:
            return Deref(Var(name))  # a reference parameter: the caller's object
        if self.this_obj is not None and self.cls is not None and name in self.cls.fields:
            return Field(self.this_obj, name)
        if self.object_macros and name in self.object_macros:
            expanded = self.object_macro_use(name, node, discard, dest)
            if expanded is not None:
                return expanded
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
        if self.is_ref_new(node):
            # C++/CX `ref new T(args)`: a reference-counted WinRT object behind a `T^` handle; the
            # runtime destroys it when the last handle goes, nothing is the caller's to delete
            return self.emit_call_node(node, "ref new", "plain", None, args, discard, dest)
        if may_register_themselves(self.model) and self.registers_itself(node):
            # `new Watcher(loop, fd);`: owned by whoever its constructor registered it with
            result = self.emit_call_node(node, callee, "new", None, args, False, dest)
            hand_over_self(self, result, self.loc(node), "registered with another object by its constructor")
            return result
        return self.emit_call_node(node, callee, "new", None, args, discard, dest)

    def is_ref_new(self, node: Node) -> bool:
        """Is this C++/CX's `ref new`? tree-sitter's C++ grammar reads the contextual keyword `ref`
        before `new` as an ERROR node holding it, the node right before the new-expression."""
        prev = node.prev_sibling
        return prev is not None and prev.type == "ERROR" and self.text(prev) == "ref"

    def registers_itself(self, node: Node) -> bool:
        """Does the constructor of the class `new` builds give `this` to a call (`attach(loop,
        this)`)? Then the object is owned by that one from its construction (`self_owning.py`)."""
        type_node = node.child_by_field_id(self.F.type)
        found = self_ownership(self.model, self.unit.policy, self.text(type_node), self.ns) if type_node is not None else None
        if found is None:
            return False
        return found.on_construction or (found.parent_argument and self.has_parent_argument(node))

    def has_parent_argument(self, node: Node) -> bool:
        """Is one of the arguments of `new T(...)` a pointer to a parent, an object of a class
        listed with `parent_argument` or derived from one (`new Dialog(this)` in a QWidget's
        method, `new QLabel(text, (QWidget *)w)`)? A null literal, or a pointer whose type is
        not known, is no parent: the object stays the caller's."""
        arguments = node.child_by_field_id(self.F.arguments)
        for arg in (arguments.named_children if arguments is not None else ()):
            text = self.text(arg.child_by_field_id(self.F.type)) if arg.type == "cast_expression" \
                else self.expr_type(arg)
            ref = parse_type(text) if text else None
            if ref is None or ref.pointers != 1 or not ref.name:
                continue
            owner = self_ownership(self.model, self.unit.policy, ref.name, self.ns)
            if owner is not None and owner.parent_argument:
                return True
        return False

    def expr_delete_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        callee = "delete[]" if any(c.type == "[" for c in node.children) else "delete"
        operand = next((c for c in node.named_children if c.type != "comment"), None)
        if callee == "delete" and operand is not None and not any(c.type == "::" for c in node.children):
            callee = self.delete_operator_of(operand) or callee  # `::delete p` is always the global one
        arg = self.lower_expr(operand) if operand is not None else Opaque("?")
        return self.emit_call_node(node, callee, "plain", None, (arg,), True, None)

    def delete_operator_of(self, operand: Node) -> str | None:
        """The class-scope `operator delete` that `delete operand` calls (`model.delete_operator`),
        from the operand's static type; None when the type is unknown or has none."""
        found = self.expr_type(operand)
        if not found:
            return None
        ref = self.model.resolve_alias(parse_type(found))
        return self.model.delete_operator(ref.name, self.ns) if ref.pointers == 1 and not ref.array else None

    def expr_compound_literal_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`T{args}` in C++ constructs a T like `T(args)`; an aggregate literal (designated
        initializers, or C's `(T){...}`) builds the aggregate slot by slot (`aggregate_literal`)."""
        type_node = node.child_by_field_id(self.F.type)
        value = node.child_by_field_id(self.F.value)
        args = [a for a in value.named_children if a.type != "comment"] if value is not None else []
        if type_node is None:
            return super().expr_compound_literal_expression(node, discard, dest)
        if value is not None and self.is_aggregate_literal(node, type_node, args):
            return self.aggregate_literal(value, dest)
        return self.lower_named_call(node, type_node, args, discard, dest)

    def assign_special(self, target: ir.Expr, value: Node, loc: Loc) -> bool:
        """`Tensor t = (Tensor){.data = p, ...};` / `t = (Tensor){...}`: the members are stored
        into t's slots directly, as for `Tensor t = {...}` (the C lowering's reading)."""
        if value.type == "compound_literal_expression":
            type_node = value.child_by_field_id(self.F.type)
            init = value.child_by_field_id(self.F.value)
            args = [a for a in init.named_children if a.type != "comment"] if init is not None else []
            if type_node is not None and init is not None and init.type == "initializer_list" \
                    and self.is_aggregate_literal(value, type_node, args):
                self.lower_initializer(target, init)
                return True
        return super().assign_special(target, value, loc)

    def is_aggregate_literal(self, node: Node, type_node: Node, args: list[Node]) -> bool:
        """`(Tensor){.data = new uint8_t[n], .shape = ...}` / `Tensor{.data = p}`: designated
        initializers, or the C spelling with the type in parentheses, initialize an aggregate
        member by member; no constructor runs (a class of the file with constructors is
        constructed as written)."""
        designated = any(a.type == "initializer_pair" for a in args)
        c_style = node.children[0].type == "(" if node.children else False
        if not (designated or c_style):
            return False
        cls = self.model.find_class(clean_name(self.text(type_node)), self.ns)
        return cls is None or not cls.ctors

    def aggregate_literal(self, value: Node, dest: ir.Expr | None) -> ir.Expr:
        """The aggregate a compound literal builds: its members are slots of a temporary (or of
        the variable it initializes), so what they hold goes where the aggregate goes (copied
        into a local, stored through a pointer, returned), as for a C initializer."""
        target = dest if dest is not None else self.temp()
        if type(target) is Var and target.name not in self.locals:
            self.locals[target.name] = True
        self.lower_initializer(target, value)
        return target

    def expr_condition_clause(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        value = node.child_by_field_id(self.F.value)
        return self.lower_expr(value, discard, dest) if value is not None else Opaque("?")

    def expr_assignment_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """Assigning to a smart pointer releases what it held first (a `std::shared_ptr` drops
        its reference: for what this function acquired, the last one). A `std::shared_ptr`
        assigned a copy of another one (`body = cache_[k];`) then holds a reference it shares:
        its value is no longer one this function decides the fate of."""
        left = self.unparen(node.child_by_field_id(self.F.left))
        op = self.operator(node)
        if left.type == "subscript_expression" and op == "=":
            stored = self.store_into_owning_element(node, left)
            if stored is not None:
                return stored
        if left.type in ("field_expression", "subscript_expression") and op == "=":
            moved = self.move_into_object(node, left)
            if moved is not None:
                return moved
            copied = self.copy_into_string(node, left)
            if copied is not None:
                return copied
        if left.type == "identifier" and op == "=":
            own = self.owner_of(self.text(left)) or self.smart_reference_param(self.text(left), node.child_by_field_id(self.F.right))
            if own is not None and own.what == "smart":
                target = self.lower_expr(left)
                right = node.child_by_field_id(self.F.right)
                if own.shared and self.is_shared_copy(own, right):
                    self.lower_expr(right, discard=True)
                    if own.releases():
                        self.release_smart(target, own, self.loc(node))
                    self.emit(ir.Assign(self.loc(node), target, Opaque(self.short_text(right))))
                    return target
                value = self.lower_expr(self.unwrap_guard_construction(right))
                if own.releases():
                    self.release_smart(target, own, self.loc(node))
                self.emit(ir.Assign(self.loc(node), target, value))
                self.adopt_deleter(self.text(left), right, own)
                return target
            copied = self.copy_into_string(node, left)  # `std::string s; ... s = raw;` copies, as a member does
            if copied is not None:
                return copied
        return self.assignment_value(node, op)

    def smart_reference_param(self, name: str, right: Node | None) -> Ownership | None:
        """How a `std::unique_ptr<T> &out` parameter owns when a local is moved into it
        (`out = std::move(info);`, an out-parameter filled): the caller's smart pointer, whose
        old object that assignment destroys, as assigning to a local one does (the parameter
        itself is destroyed by nobody here). Other assignments (`out = nullptr;`, then a new
        value, then maybe a throw) keep the plain store: a callee's writes to out-parameters
        are not carried to the caller on its exceptional exits, so the caller's object would
        look destroyed twice."""
        if name not in self.borrowed_params or not self.is_moved_local(right):
            return None
        type_text = self.lookup("types", name)
        own = self.model.ownership(type_text) if type_text is not None else None
        return own if own is not None and own.what == "smart" and not own.shared else None

    def is_moved_local(self, node: Node | None) -> bool:
        """`std::move(name)` of a local."""
        inner = self.unparen(node) if node is not None else None
        if inner is None or inner.type != "call_expression":
            return False
        fn = inner.child_by_field_id(self.F.function)
        args = self.call_args(inner)
        return (fn is not None and strip_template_args(clean_name(self.text(fn))) in _MOVES and len(args) == 1
                and self.unparen(args[0]).type == "identifier" and self.text(self.unparen(args[0])) in self.locals)

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
        """A call; one whose result is a smart pointer that only lives to the end of the full
        expression (`*Make()`, `Make()->f()`, `Make();`) is destroyed there (`temporary_owner`)."""
        if dest is None:
            own = self.temporary_owner(node)
            if own is not None:
                result = self.lower_call_expression(node, False, None)
                if isinstance(result, Var):
                    self.destroy_temporary(result, own, self.loc(node))
                return result
        return self.lower_call_expression(node, discard, dest)

    def lower_call_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
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
                              args, discard, dest, written=len(arg_nodes))

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
        ort_name = self.model.qualify_ort(name, self.ns) if fn.type in ("identifier", "type_identifier") else name
        if ort_name != name and self.unit.policy.lookup("plain", ort_name) is not None:
            # `MemoryInfo(p)` inside ONNX Runtime's own header (namespace Ort): the C++ API's
            # adopting constructor, as the policy describes it, like `Ort::MemoryInfo(p)` elsewhere
            name = ort_name
        elif self.is_type_name(name):
            own = self.model.ownership(name)
            if own.what == "smart" and arg_nodes:  # a temporary guard around a raw pointer
                return self.lower_expr(arg_nodes[0], discard, dest)
            failed = constructed_status(self, name, arg_nodes, discard, dest)  # `Status(cat, code, text)`
            if failed is not None:
                return failed
            cls = self.model.find_class(name, self.ns)
            name = cls.qualname if cls is not None else name
        elif self.cls is not None and "::" not in name and self.cls.has_method(name) and self.type_of_name(name) is None:
            return self.call_own_method(node, name, arg_nodes, discard, dest)
        name = status_factory(self, name)  # status_values: `Status::OK()` through `using common::Status;`
        name = self.unqualify_library_name(name)
        return self.lower_plain_call(node, self.own_function_callee(fn, name, len(arg_nodes)), arg_nodes, discard, dest)

    def own_function_callee(self, fn: Node, name: str, arity: int) -> str:
        """A bare call of a name the policy knows (`ThrowOnError(api, st)`) that C++ lookup
        binds to a function this file defines, which the policy's description does not fit
        (an argument it names is not a pointer there: the file's own two-argument helper, not
        the C++ API's `Ort::ThrowOnError(status)`): spelled from the global scope
        (`::ThrowOnError`), so that it is that function, analyzed, not the policy's."""
        if fn.type != "identifier" or "::" in name:
            return name
        spec = self.unit.policy.lookup("plain", name)
        if spec is None:
            return name
        own = self.model.own_function(name, self.ns, arity)
        if own is None:
            return name
        full, pointers = own
        named = {a for a in (spec.status_check.arg if spec.status_check else None,
                             spec.release.arg if spec.release else None) if a is not None}
        named |= {int(a.into[1:]) for a in spec.acquires if a.into[:1] == "*" and a.into[1:].isdigit()}
        fits = all(i < len(pointers) and pointers[i] for i in named)
        return name if fits else "::" + full

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
        args = tuple([self.by_reference(self.lower_expr(a)) if i in refs or self.is_unique_lvalue(a) else self.lower_expr(a)
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

    def is_unique_lvalue(self, node: Node) -> bool:
        """A `std::unique_ptr` local named as an argument (`Info::Create(path, out)`): it cannot
        be copied and does not convert to a raw pointer, so the parameter is a reference to the
        caller's object (`std::unique_ptr<T> &out`), even when the callee's declaration is not in
        sight: what the callee stores into it is the caller's smart pointer's."""
        inner = self.unparen(node)
        if inner is None or inner.type != "identifier":
            return False
        own = self.owner_of(self.text(inner))
        return own is not None and own.what == "smart" and not own.shared

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
        return self.lower_plain_call(node, f"{self.cls.method_owner(name)}::{name}", arg_nodes, discard, dest)

    def lower_move(self, arg: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`std::move(p)` of a smart pointer empties p: its destructor then releases nothing."""
        inner = self.unparen(arg)
        if inner.type == "identifier":
            own = self.owner_of(self.text(inner))
            if own is not None and own.what == "smart":  # a moved-from std::shared_ptr is empty too
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
        """`x.f(...)` / `x->f(...)`; an object that deletes itself is its own once one of its
        methods starts its work (`worker->Queue()`: `self_owning.py`)."""
        result = self.lower_member_call_of(node, fn, arg_nodes, discard, dest)
        if may_start_themselves(self.model):
            self.hand_over_started_object(node, fn)
        if may_store_themselves(self.model):
            self.hand_over_stored_receiver(node, fn)
        return result

    def hand_over_stored_receiver(self, node: Node, fn: Node) -> None:
        """`p->QueryInterface(iid, ppv)` whose definition stores `this` through a parameter
        (`*ppv = static_cast<IUnknown*>(this)`): the object is held by the caller's out-parameter
        now. Calls pass no receiver to the method in the IR, so the store is not seen from here."""
        base = fn.child_by_field_id(self.F.argument)
        field_node = fn.child_by_field_id(self.F.field)
        if base is None or field_node is None or self.strip_casts(base).type == "this":
            return
        base_type = self.expr_type(base)
        ref = parse_type(base_type) if base_type else None
        cls = self.model.find_class(clean_name(strip_template(ref.name)), self.ns) if ref is not None and ref.name else None
        if cls is not None and stores_this_through_param(self.model, cls, strip_template_args(clean_name(self.text(field_node)))):
            hand_over_self(self, self.lower_expr(base), self.loc(node), "stored by the method through its out-parameter")

    def hand_over_started_object(self, node: Node, fn: Node) -> None:
        """`w->Queue()` on a `Napi::AsyncWorker`, `job->Start()` on a class with `delete this`."""
        base = fn.child_by_field_id(self.F.argument)
        field_node = fn.child_by_field_id(self.F.field)
        if base is None or field_node is None or self.strip_casts(base).type == "this":
            return
        base_type = self.expr_type(base)
        found = self_ownership(self.model, self.unit.policy, base_type, self.ns) if base_type else None
        if found is not None and found.handed_over_by(strip_template_args(clean_name(self.text(field_node)))):
            hand_over_self(self, self.lower_expr(base), self.loc(node), "an object that deletes itself, started here")

    def lower_member_call_of(self, node: Node, fn: Node, arg_nodes: list[Node], discard: bool, dest: ir.Expr | None) -> ir.Expr:
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
        if op == "." and base_own is not None and base_own.what == "container" and name == "swap":
            swapped = self.swap_containers(node, base, arg_nodes)  # container_moves: `tmp.swap(v)`
            if swapped is not None:
                return swapped
        if op == ".":
            stored = owning_map_store(self, node, base, name, arg_nodes)  # cpp_containers: `cache.emplace(k, std::move(p))`
            if stored is not None:
                return stored
        if base is not None and not arg_nodes:  # a guard's test takes no argument: no type to work out otherwise
            tested = guard_method(self, rtype.name if rtype is not None and rtype.name else guard_type_of(self, base),
                                  name, base, op, arg_nodes, discard, dest)  # cpp_guards: `st.IsOK()`
            if tested is not None:
                return tested
            tested = status_method(self, rtype_text, name, base, op, arg_nodes, discard, dest)  # `st.IsOk()`, `st.Code()`
            if tested is not None:
                return tested
        if rtype is not None and rtype.name:
            return self.typed_method_call(node, base, op, rtype, name, arg_nodes, discard, dest)
        if op == "->":
            callee, style, receiver, drop_first = self.normalize_callee(fn, arg_nodes)
            args = tuple([self.lower_expr(a) for a in (arg_nodes[1:] if drop_first else arg_nodes)])
            return self.emit_call(node, callee, style, self.lower_expr(receiver) if receiver is not None else None,
                                  args, discard, dest, written=len(arg_nodes))
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
                                  args, discard, dest, written=len(arg_nodes))
        receiver = self.lower_expr(base) if base is not None else None
        return self.emit_call(node, name, "table", receiver, tuple([self.lower_expr(a) for a in arg_nodes]), discard, dest)

    def typed_method_call(self, node: Node, base: Node | None, op: str, rtype: TypeRef, name: str,
                          arg_nodes: list[Node], discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """A method of a known class: an `Ort::` object, a class of this file, anything else."""
        cls = self.model.find_class(rtype.name, self.ns)
        if op == "->" and base is not None and not arg_nodes and cls is not None and self.model.returns_this(cls, name):
            # `n.release()->ToExternal()` whose body is `return static_cast<OrtNode*>(this);`: the
            # object itself (a call of a known class's method passes no receiver in the IR)
            value = self.lower_expr(base)
            if dest is None:
                return value
            self.emit(ir.Assign(self.loc(node), dest, value))
            return dest
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
                return self.lower_plain_call(node, f"{cls.method_owner(name)}::{name}", arg_nodes, discard, dest)
        receiver = self.lower_expr(base) if base is not None else None
        qualified = f"{self.model.qualify_ort(rtype.name)}::{name}"
        refs = self.model.ref_params.get(qualified, frozenset())  # (a method of a header's class defined here)
        args = tuple([self.by_reference(self.lower_expr(a)) if i in refs else self.lower_expr(a)
                      for i, a in enumerate(arg_nodes)])
        return self.emit_call(node, qualified, "method", receiver, args, discard, dest)

    def policy_method(self, qualname: str, name: str) -> bool:
        """Does the policy describe `Class::name` itself (not through an untyped field)?"""
        calls = self.unit.policy.calls
        qualified = f"{qualname}::{name}"
        return ("method", qualified) in calls or ("any", qualified) in calls or ("plain", qualified) in calls
