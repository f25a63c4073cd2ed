"""Java calls: `new`, method invocations qualified by the receiver's type, `forEach` and method references,
and the static types of expressions that qualify them."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Var
from ..common.cfg import TooDeep
from .names import _DOTTED_NAME, _no_space, _split_package, base_type, element_type
from .syntax import F_ALTERNATIVE, F_ARGUMENTS, F_ARRAY, F_BODY, F_CONSEQUENCE, F_FIELD, F_NAME, F_OBJECT, F_TYPE, lambda_param_names
from .tables import _THIS, _VOID, MAX_NESTING, nested_name
from .type_index import ClassInfo

# (callee, style, receiver, the checked exceptions it declares (None: a library call whose
# declarations are unknown), index of its varargs parameter)
Resolved = tuple[str, str, "ir.Expr | None", "tuple[str, ...] | None", "int | None"]


class JavaCalls:
    """Java calls: `new`, method invocations qualified by the receiver's type, `forEach` and method references,
and the static types of expressions that qualify them."""

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
            spread = local_cls.spread("<init>", len(args))
            if spread is not None:
                args = self.pack_varargs(node, self.named(node.child_by_field_id(F_ARGUMENTS)), args, spread)
        throws: tuple[str, ...] | None
        if body is not None:
            throws = ()
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
        callee, style, receiver, throws, spread = self.resolve_call(obj, name, len(arg_nodes))
        args = tuple([self.lower_expr(a) for a in arg_nodes]) if arg_nodes else ()
        if style == "method" and receiver is not None and self.unit.is_indexed_element(callee, len(args)):
            # `list.get(i)` is `list[i]`: a loop closing it closes every element, as an array's
            return ir.Index(receiver, args[0])
        if spread is not None:
            args = self.pack_varargs(node, arg_nodes, args, spread)
        return self.emit_call(node, callee, style, receiver, args, discard, dest, throws)

    def resolve_call(self, obj: Node | None, name: str, arity: int) -> Resolved:
        """(callee, style, receiver, declared checked exceptions, index of its varargs parameter)
        for `obj.name(...)`."""
        kind = obj.type if obj is not None else ""
        if obj is None or kind == "this":
            owner = self.cls.method_owner(name) if obj is None else self.cls.own_method(name)
            if owner is None and obj is None:
                imported = self.unit.static_import(name)  # `import static a.b.Helpers.load;`
                owner = imported.own_method(name) if imported is not None else None
            if owner is None:
                return self.unseen_method(name) if obj is None else (name, "plain", None, None, None)
            if owner.is_placeholder(name, arity):  # an override runs: a call we cannot see
                return self.unit.method_callee(owner.path, name), "method", _THIS, owner.throwing.get(name, ()), None
            return self.own_call(owner, name, arity)
        if kind == "super":
            owner = self.cls.superclass.own_method(name) if self.cls.superclass is not None else None
            if owner is not None:
                return self.own_call(owner, name, arity)
            return f"super.{name}", "method", None, None, None
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
                return self.own_call(owner, name, arity)
            return f"{static}.{name}", "plain", None, self.unit.ort_throws(static, name, arity), None
        type_ = self.expr_type(obj)
        return self.resolve_method(type_, self.lower_expr(obj), name, arity)

    def unseen_method(self, name: str) -> Resolved:
        """`name(...)` that no class of the file (nor the project) declares. Unless a static
        import may bring it (`import static a.b.C.name;`, or `a.b.C.*` in a class that extends
        nothing), it is a method this object inherits from a supertype we cannot see: a method
        call on `this` (`Base.delete` for `class S extends Base`), never a C function of the
        policy (`delete(ids)` in a Java class is not C++ `delete`, `free()` not libc's)."""
        supers = [c.super_name for c in self.cls_chain() if c.super_name]
        if name in self.types.static_members or (self.types.static_wildcards and not supers):
            return name, "plain", None, None, None
        callee = self.unit.method_callee(supers[0], name) if supers else name
        return callee, "method", _THIS, None, None

    def cls_chain(self) -> list[ClassInfo]:
        """The class of the code being lowered and the classes around it, innermost first."""
        out: list[ClassInfo] = []
        cls: ClassInfo | None = self.cls
        while cls is not None:
            out.append(cls)
            cls = cls.outer
        return out

    def resolve_method(self, type_: str, receiver: ir.Expr, name: str, arity: int) -> Resolved:
        """`resolve_call` for a receiver that is a value of type `type_` ("" when unknown)."""
        cls = self.unit.class_info(base_type(type_)) if type_ else None
        owner = cls.own_method(name) if cls is not None else None
        if owner is not None and owner.is_placeholder(name, arity):  # an override runs: a call we cannot see
            return self.unit.method_callee(type_, name), "method", receiver, owner.throwing.get(name, ()), None
        if owner is not None:
            return self.own_call(owner, name, arity)
        return self.unit.method_callee(type_, name), "method", receiver, self.unit.ort_throws(type_, name, arity), None

    @staticmethod
    def own_call(owner: ClassInfo, name: str, arity: int) -> Resolved:
        """A method of the analyzed code: its function, called like a C helper (`this` is
        not an argument); a varargs method is named by its declared arity."""
        spread = owner.spread(name, arity)
        declared = arity if spread is None else spread + 1
        return owner.function_name(name, declared), "plain", None, owner.throwing.get(name, ()), spread

    def pack_varargs(self, node: Node, arg_nodes: list[Node], args: tuple[ir.Expr, ...], spread: int) -> tuple[ir.Expr, ...]:
        """`closeAll(a, b, c)` of `closeAll(AutoCloseable... all)`: the trailing arguments are
        one array the callee sees as its last parameter (`$varargs`, a local collection that
        keeps them: a helper closing each element closes a, b and c). An array passed as is
        (`closeAll(array)`, `closeAll(new T[] {...})`, `null`) is that parameter already."""
        if len(args) == spread + 1 and self.is_array_argument(arg_nodes[spread]):
            return args
        packed = self.temp()
        self.call_counter += 1
        self.emit(ir.Call(self.call_counter, self.loc(node), "$varargs", "plain", None, args[spread:], packed,
                          "..."))
        return args[:spread] + (packed,)

    def is_array_argument(self, node: Node) -> bool:
        node = self.unparen(node)
        if node.type in ("array_creation_expression", "null_literal"):
            return True
        return self.expr_type(node).endswith("[]")

    def emit_call(self, node: Node, callee: str, style: str, receiver: ir.Expr | None, args: tuple[ir.Expr, ...],
                  discard: bool, dest: ir.Expr | None, throws: tuple[str, ...] | None) -> ir.Expr:
        """One call; `throws` are the checked exceptions it declares (none: it does not fork
        an exceptional edge), noted for the `catch` clauses of the enclosing `try`. A library
        call whose declarations are unknown (None) is remembered inside a `try`: a catch of a
        checked exception that no known call declares says it throws (`lower_try`)."""
        target = dest if dest is not None else (None if discard else self.temp())
        self.call_counter += 1
        if throws and self.thrown:
            self.thrown[-1].update(throws)
        call = ir.Call(self.call_counter, self.loc(node), callee, style, receiver, args, target,
                       self.short_text(node), bool(throws))
        if throws is None and self.thrown and self.handler is not None:
            self.library_calls.append((call, self.handler))
        self.emit(call)
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
            self.element_loop(node, coll, elem, lambda: self.apply_method_ref(fn, elem, elem_t), coll_node=obj)
        else:
            names = lambda_param_names(fn, self.src, self.named)
            elem = Var(names[-1] if names else f"$each{node.start_point[0] + 1}")
            for n in names:
                self.declare(n, elem_t if n == elem.name else "")
            self.element_loop(node, coll, elem, lambda: self.inline_lambda_body(fn), coll_node=obj)
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
            callee, style, receiver, throws, _spread = self.resolve_call(target, method, 1)
            self.emit_call(ref, callee, style, receiver, (elem,), True, None, throws)
        elif static is not None:  # `OnnxValue::close`: an instance method of each element
            type_ = static if static else elem_t
            self.emit_call(ref, self.unit.method_callee(type_, method), "method", elem, (), True, None,
                           self.unit.ort_throws(type_, method, 0))
        else:  # `out::add`: a method of another object, given the element
            callee, style, receiver, throws, _spread = self.resolve_call(target, method, 1)
            self.emit_call(ref, callee, style, receiver, (elem,), True, None, throws)

    def inline_lambda_body(self, fn: Node) -> None:
        """The lambda's body as a loop body: its `return` goes to the next element."""
        body = fn.child_by_field_id(F_BODY)
        if body is not None:
            self.inline_body(body)

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
