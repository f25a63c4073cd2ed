"""C# calls: invocations named by the receiver's static type, overloads of the ONNX Runtime API
picked by argument types, methods, constructors, local functions and extension methods of the
analyzed code, collections, and the static types of expressions that qualify them.

Names the policy sees: `OrtValue.CreateTensorValueFromMemory` (a static call, style "plain"),
`InferenceSession.Run` (an instance call, style "method", with its receiver), `new SessionOptions`
(a constructor: style "plain", since Java's and C++'s `new T` entries have style "new" and the
bindings share class names), `Dispose` on a receiver of unknown type. A call of the analyzed code is "plain",
named after its function (`Helper.DisposeAll`, `Owner.Owner` for a constructor), so its summary
applies. An API member with `void` and value-returning overloads gets `/void` after its name when
the call resolves to a `void` one (`InferenceSession.Run/void` writes into caller-provided
outputs). Calls of other libraries keep nothing they are given (README item 13: `borrows` every
argument), but collections keep what is added (`List.Add`: the policy's `stores`).
"""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import AddrOf, Deref, Opaque, Var
from .exceptions import ANY, ORT
from .project import MethodDecl
from .static_types import argument_expr, method_of
from .syntax import F_ARGUMENTS, F_BODY, F_FUNCTION, F_INITIALIZER, F_NAME, F_PARAMETERS, F_TYPE, has_token
from .types import PRIMITIVES, base_name, canon, element_type, is_array, is_collection

_NO_THROW = frozenset({"Dispose", "DisposeAsync", "ToString", "GetHashCode", "Equals", "GetType"})
_VOID = Opaque("void")


_INTERLOCKED = frozenset({"Interlocked", "System.Threading.Interlocked", "Threading.Interlocked"})
_TASKS = frozenset({"Task", "ValueTask", "System.Threading.Tasks.Task", "System.Threading.Tasks.ValueTask"})
_VIEWS = frozenset({"AsReadOnly", "ToArray", "ToList", "AsEnumerable", "ToImmutableArray", "ToImmutableList",
                    "ToHashSet"})


class CSharpCalls:
    """C# calls and the static types of expressions."""

    # ------------------------------------------------------------------ emitting

    def emit_call(self, node: Node, callee: str, style: str, receiver: ir.Expr | None, args: tuple[ir.Expr, ...],
                  discard: bool, dest: ir.Expr | None, token: str | None, borrows: bool = False) -> ir.Expr:
        """One call; `token` says what it may throw ("ORT": an API call, the engine forks an
        exceptional edge before it; "*": a helper of the analyzed code, whose summary says
        whether it throws), None: nothing. `borrows`: a library call that keeps no argument."""
        if token is not None:
            self.ensure_handler(token)
        target = dest if dest is not None else (None if discard else self.temp())
        self.call_counter += 1
        call = ir.Call(self.call_counter, self.loc(node), callee, style, receiver, args, target,
                       self.short_text(node), token == ORT)
        if borrows:
            call.borrows = tuple(range(len(args)))
        self.emit(call)
        return target if target is not None else _VOID

    def emit_dispose(self, target: ir.Expr, loc: ir.Loc, asynchronous: bool = False) -> None:
        """`target.Dispose()` as a `using` ends (the null check it compiles to is left out:
        disposing null does nothing for the engine)."""
        method = "DisposeAsync" if asynchronous else "Dispose"
        type_ = self.visible.get(target.name, "") if isinstance(target, Var) else ""
        callee, style, receiver, _token, _borrow = self.value_method(type_, target, method, [], 0)
        self.call_counter += 1
        text = f"{ir.expr_text(target)}.{method}() (using)"
        self.emit(ir.Call(self.call_counter, loc, callee, style, receiver, (), None, text, False))

    # ------------------------------------------------------------------ arguments

    def lower_args(self, arg_list: Node | None) -> tuple[list[ir.Expr], list[str]]:
        """The argument values (`ref`/`out` ones as addresses) and their static types."""
        values, types = [], []
        for a in self.named(arg_list):
            if a.type != "argument":
                continue
            inner = argument_expr(a)
            mode = next((c.type for c in a.children if not c.is_named and c.type in ("ref", "out", "in")), "")
            if mode in ("ref", "out"):
                place = self.lower_place(inner)
                # `ref p` of a `ref` parameter passes the caller's variable on: `&*p` is p
                values.append(place.base if isinstance(place, Deref) else AddrOf(place))
                types.append(self.visible.get(place.name, "") if isinstance(place, Var) else "")
                continue
            types.append(self.expr_type(inner) if inner is not None else "")
            values.append(self.lower_expr(inner) if inner is not None else Opaque("?"))
        return values, types

    def arg_nodes(self, arg_list: Node | None) -> list[Node]:
        return [a for a in self.named(arg_list) if a.type == "argument"]

    # ------------------------------------------------------------------ object creation

    def expr_object_creation_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        type_ = canon(self.text(node.child_by_field_id(F_TYPE)))
        return self.lower_creation(node, type_, discard, dest)

    def expr_implicit_object_creation_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_creation(node, self.target_type(node), discard, dest)

    call_generics: int | None = None  # the `<...>` of the call being lowered (None: not written)

    def lower_creation(self, node: Node, type_: str, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`new T(...) { ... }`: a constructor of the analyzed code (its function), of the API
        (`new T`, may throw), a collection, or another library class (keeps nothing)."""
        arg_list = node.child_by_field_id(F_ARGUMENTS) or next(
            (c for c in self.named(node) if c.type == "argument_list"), None)
        init = node.child_by_field_id(F_INITIALIZER) or next(
            (c for c in self.named(node) if c.type == "initializer_expression"), None)
        args, types = self.lower_args(arg_list)
        head = base_name(type_)
        api = self.unit.api
        # an API class: the policy's, unless the binding's own sources are analyzed and no public
        # constructor fits (the internal constructor is read from its body)
        is_api = api.is_api(head)
        if is_api and (not api.lookup(head, ".ctor") or not api.public_overload_fits(head, ".ctor", types)):
            decl = self.unit.find_class(head)
            if decl is not None and self.pick_method(decl.ctors, types) is not None:
                is_api = False
        decl = self.unit.find_class(head) if head and not is_api else None
        if init is not None and dest is None:
            dest = self.temp()
        if decl is not None and decl.kind != "interface":
            ctor = self.pick_method(decl.ctors, types)
            if ctor is not None or not decl.ctors:
                callee = decl.function_name(".ctor", ctor) if ctor is not None else f"{decl.path}.{decl.name}"
                args = self.pack_params(node, ctor, args, types) if ctor is not None else args
                result = self.emit_call(node, callee, "plain", None, tuple(args), discard and init is None, dest, ANY)
                self.unit.used(decl)
            else:
                result = self.emit_call(node, f"new {head}", "plain", None, tuple(args), discard and init is None, dest,
                                        None, borrows=True)
        elif is_api:
            internal = "" if api.public_overload_fits(head, ".ctor", types) else "/internal"
            result = self.emit_call(node, f"new {head}{internal}", "plain", None, tuple(args), discard and init is None,
                                    dest, ORT)
        else:
            known = self.unit.policy.lookup("plain", f"new {head}") is not None or self.unit.in_solution(head)
            result = self.emit_call(node, f"new {head}", "plain", None, tuple(args), discard and init is None, dest,
                                    None, borrows=not known)
        if init is not None:
            self.lower_initializer(init, result, type_)
        return result

    def lower_constructor_initializer(self, init: Node) -> None:
        """`: base(...)` / `: this(...)`: the other constructor runs first, with these arguments."""
        self.stmt_temps = []
        arg_list = next((c for c in self.named(init) if c.type == "argument_list"), None)
        args, types = self.lower_args(arg_list)
        decl = None
        if self.cls is not None and has_token(init, "this"):
            decl = self.cls
        elif self.cls is not None:
            chain = self.unit.chain(self.cls)
            decl = chain[1] if len(chain) > 1 else None
        ctor = self.pick_method(decl.ctors, types) if decl is not None else None
        if decl is not None and ctor is not None:
            self.emit_call(init, decl.function_name(".ctor", ctor), "plain", None,
                           tuple(self.pack_params(init, ctor, args, types)), True, None, ANY)
        else:
            self.emit_call(init, self.short_text(init), "plain", None, tuple(args), True, None, None, borrows=True)
        self.finish_statement(init)

    # ------------------------------------------------------------------ invocation

    def expr_invocation_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        fn = node.child_by_field_id(F_FUNCTION)
        arg_list = node.child_by_field_id(F_ARGUMENTS)
        if fn is None:
            return Opaque(self.short_text(node))
        if fn.type == "identifier" and self.text(fn) == "nameof":
            return ir.Const(None, self.short_text(node))
        method, recv = method_of(self.src, fn)
        self.call_generics = _explicit_generics(fn)
        if method == "ForEach" and recv is not None:  # `list.ForEach(v => ...)`, `Array.ForEach(array, v => ...)`
            given = [argument_expr(a) for a in self.arg_nodes(arg_list)]
            if len(given) == 1 and given[0] is not None and given[0].type == "lambda_expression":
                return self.lower_for_each(node, recv, given[0])
            if len(given) == 2 and self.text(recv) == "Array" and given[0] is not None and given[1] is not None \
                    and given[1].type == "lambda_expression":
                return self.lower_for_each(node, given[0], given[1])
        if method in ("Exchange", "CompareExchange") and recv is not None and self.text(recv) in _INTERLOCKED:
            exchanged = self.lower_exchange(node, arg_list, method == "CompareExchange")
            if exchanged is not None:
                return exchanged
        if method in _VIEWS and recv is not None and not self.arg_nodes(arg_list) and self.is_local_view(recv):
            return self.lower_expr(recv)  # `values.ToArray()`, `list.AsReadOnly()`: the same elements
        if method == "FromResult" and recv is not None and self.text(recv) in _TASKS:
            given = [argument_expr(a) for a in self.arg_nodes(arg_list)]
            if len(given) == 1 and given[0] is not None:  # `Task.FromResult(v)` holds v: v itself
                return self.lower_expr(given[0])
        if not method:  # a delegate value called: `callback(x)`, `(f)(x)`
            self.lower_expr(fn)
            args, _types = self.lower_args(arg_list)
            return self.emit_call(node, self.short_text(fn), "indirect", None, tuple(args), discard, dest, None,
                                  borrows=True)
        if recv is None:
            return self.call_unqualified(node, method, arg_list, discard, dest)
        if recv.type in ("this", "base"):
            return self.call_own(node, method, arg_list, discard, dest, base=recv.type == "base")
        static = self.static_type_of(recv)
        if static is not None:
            return self.call_static(node, static, method, arg_list, discard, dest)
        recv_type = self.expr_type(recv)
        receiver = self.lower_expr(recv)
        args, types = self.lower_args(arg_list)
        callee, style, rcv, token, borrow = self.value_method(recv_type, receiver, method, types, len(args),
                                                              used=not discard)
        if style == "plain" and rcv is not None:  # an extension method: the receiver is its first argument
            args = [rcv] + args
            rcv = None
        return self.emit_call(node, callee, style, rcv, tuple(args), discard, dest, token, borrows=borrow)

    def is_local_view(self, recv: Node) -> bool:
        """Whether `recv.ToArray()` (and the other `_VIEWS`) of this receiver holds what `recv`
        holds: a collection of the analyzed code's making (a `List`, an array, ...), not one of
        the API (a `Run` result's copy is a list of borrowed elements, see the policy)."""
        recv_type = self.expr_type(recv)
        if is_array(recv_type):
            return True
        head = base_name(recv_type)
        return bool(head) and is_collection(recv_type) and not self.unit.api.is_api(head) \
            and head != "IDisposableReadOnlyCollection"

    def lower_exchange(self, node: Node, arg_list: Node | None, compare: bool) -> ir.Expr | None:
        """`Interlocked.Exchange(ref place, value)` is `old = place; place = value;` and gives
        `old` (a service swapping its session stores the new one where the old one was);
        `CompareExchange(ref place, value, comparand)` stores only when `old == comparand`
        (lazy initialization: the caller disposes its object when `old` is not null). None when
        it is not that shape."""
        given = self.arg_nodes(arg_list)
        if len(given) != (3 if compare else 2) or not any(not c.is_named and c.type == "ref"
                                                          for c in given[0].children):
            return None
        target, value = argument_expr(given[0]), argument_expr(given[1])
        comparand = argument_expr(given[2]) if compare else None
        if target is None or value is None or (compare and comparand is None):
            return None
        place = self.lower_place(target)
        old = self.temp()
        loc = self.loc(node)
        if not compare:
            self.emit(ir.Assign(loc, old, place))
            self.assign_from(place, value, loc)
            return old
        stored = self.lower_expr(value)
        expected = self.lower_expr(comparand)
        self.emit(ir.Assign(loc, old, place))
        store, join = self.new_block(), self.new_block()
        self.terminate(ir.Branch(ir.Op("==", (old, expected)), store.id, join.id, loc, self.short_text(node), "if"))
        self.start(store)
        self.emit(ir.Assign(loc, place, stored))
        self.jump(join)
        self.start(join)
        return old

    def value_method(self, recv_type: str, receiver: ir.Expr, method: str, types: list[str], count: int,
                     used: bool = True) -> tuple[str, str, ir.Expr | None, str | None, bool]:
        """(callee, style, receiver, token, borrows) of `receiver.method(...)`; an extension
        method comes back as style "plain" with the receiver to prepend to the arguments."""
        head = base_name(recv_type).rstrip("[]") if recv_type else ""
        api = self.unit.api
        decl = self.unit.find_class(head) if head and not api.is_api(head) and head not in PRIMITIVES else None
        if decl is not None:
            found = self.unit.find_method(decl, method, types, generics=self.call_generics)
            if found is not None:
                owner, m = found
                return owner.function_name(method, m), "plain", None, ANY, False
            if self.unit.find_extension(method, recv_type, types) is None:
                # inherited from a class the index cannot see (`class Owned<T> : List<T>`, whose
                # Dispose disposes its items): it may keep what it is given
                return f"{head}.{method}", "method", receiver, None, False
        if head and api.is_api(head):
            members = api.lookup(head, method)
            if members:
                member = api.resolve(head, method, types, used)
                callee = f"{head}.{method}"
                if member is not None and member.returns == "void" and api.has_void_and_value(head, method):
                    callee += "/void"
                return callee, "method", receiver, None if method in _NO_THROW else ORT, False
        ext = self.unit.find_extension(method, recv_type, types)
        if ext is not None:
            owner, m = ext
            return owner.function_name(method, m), "plain", receiver, ANY, False
        if not head or head in ("object", "Object", "dynamic", "var") or _is_type_param(head):
            callee = method
        else:
            callee = f"{head}.{method}"
        policy = self.unit.policy
        known = policy.lookup("method", callee) is not None
        if not known and callee != method:
            bare = policy.lookup("method", method)
            if bare is not None and bare.stores == "receiver":  # `bag.Add(x)` on a collection type of a library
                return method, "method", receiver, None, False
        return callee, "method", receiver, None, not known and not self.unit.in_solution(head)

    def call_unqualified(self, node: Node, method: str, arg_list: Node | None, discard: bool,
                         dest: ir.Expr | None) -> ir.Expr:
        """`M(...)`: a local function, a method of this class (or a base), or something else."""
        local = self.local_functions.get(method) or self.unit.enclosing_local(self, method)
        args, types = self.lower_args(arg_list)
        if local is not None:
            fname, extra = local
            full = tuple(args) + tuple(self.var(x) if x in self.visible or x in self.captured else Opaque(x) for x in extra)
            return self.emit_call(node, fname, "plain", None, full, discard, dest, ANY)
        if self.cls is not None:
            found = self.unit.find_method(self.cls, method, types, generics=self.call_generics)
            if found is not None:
                owner, m = found
                args = self.pack_params(node, m, args, types)
                return self.emit_call(node, owner.function_name(method, m), "plain", None, tuple(args), discard, dest, ANY)
        spec_known = self.unit.policy.lookup("plain", method) is not None
        return self.emit_call(node, method, "plain", None, tuple(args), discard, dest, None, borrows=not spec_known)

    def call_own(self, node: Node, method: str, arg_list: Node | None, discard: bool, dest: ir.Expr | None,
                 base: bool = False) -> ir.Expr:
        args, types = self.lower_args(arg_list)
        if self.cls is not None:
            found = self.unit.find_method(self.cls, method, types, skip_self=base, generics=self.call_generics)
            if found is not None:
                owner, m = found
                args = self.pack_params(node, m, args, types)
                return self.emit_call(node, owner.function_name(method, m), "plain", None, tuple(args), discard, dest, ANY)
        return self.emit_call(node, f"{'base' if base else 'this'}.{method}", "plain", None, tuple(args), discard, dest,
                              None, borrows=True)

    def call_static(self, node: Node, static: str, method: str, arg_list: Node | None, discard: bool,
                    dest: ir.Expr | None) -> ir.Expr:
        args, types = self.lower_args(arg_list)
        api = self.unit.api
        decl = self.unit.find_class(static) if not api.is_api(static) else None
        if decl is not None:
            found = self.unit.find_method(decl, method, types, generics=self.call_generics)
            if found is not None:
                owner, m = found
                args = self.pack_params(node, m, args, types)
                self.unit.used(owner)
                return self.emit_call(node, owner.function_name(method, m), "plain", None, tuple(args), discard, dest, ANY)
        if api.is_api(static):
            member = api.resolve(static, method, types, not discard)
            callee = f"{static}.{method}"
            if member is not None and member.returns == "void" and api.has_void_and_value(static, method):
                callee += "/void"
            takes = self.unit.policy.lookup("plain", f"{callee}$takes")
            if takes is not None:  # ownership passes at the call, before it may throw
                self.call_counter += 1
                self.emit(ir.Call(self.call_counter, self.loc(node), f"{callee}$takes", "plain", None, tuple(args), None,
                                  self.short_text(node), False))
            return self.emit_call(node, callee, "plain", None, tuple(args), discard, dest,
                                  None if method in _NO_THROW else ORT)
        callee = f"{static}.{method}"
        known = self.unit.policy.lookup("plain", callee) is not None or self.unit.in_solution(static)
        return self.emit_call(node, callee, "plain", None, tuple(args), discard, dest, None, borrows=not known)

    def pack_params(self, node: Node, m: MethodDecl | None, args: list[ir.Expr], types: list[str]) -> list[ir.Expr]:
        """A `params T[]` method given its trailing arguments one by one: they go into one array."""
        if m is None or not m.params or m.params[-1].mode != "params":
            return args
        fixed = len(m.params) - 1 - (1 if m.extension else 0)
        if len(args) == fixed + 1 and types[fixed:fixed + 1] and types[fixed].endswith("[]"):
            return args
        packed = self.make_collection(node, "new[]", args[fixed:], None)
        return args[:fixed] + [packed]

    def pick_method(self, cands: list[MethodDecl], types: list[str]) -> MethodDecl | None:
        fitting = [m for m in cands if m.fits(len(types))]
        if len(fitting) > 1:
            typed = [m for m in fitting if all(self.unit.api.compatible(a, p.type) for a, p in
                                                zip(types, m.params[1:] if m.extension else m.params))]
            fitting = typed or fitting
        return fitting[0] if fitting else None

    def lower_for_each(self, node: Node, recv: Node, lam: Node) -> ir.Expr:
        """`items.ForEach(v => ...)` runs synchronously on each element: the loop it stands for."""
        coll_type = self.expr_type(recv)
        coll = self.lower_expr(recv)
        params = lambda_params(self.src, lam)
        self.push_scope()
        elem = self.var(params[0] if params else f"$each{node.start_point[0] + 1}")
        self.declare(elem.name, element_type(coll_type))

        self.element_loop(node, coll, elem, lambda: self.inline_body(lam.child_by_field_id(F_BODY)), coll_node=recv)
        self.pop_scope(None)
        return _VOID


def _explicit_generics(fn: Node) -> int | None:
    """How many type arguments a call writes (`M<T>(...)`), None when it writes none."""
    name = fn.child_by_field_id(F_NAME) if fn.type == "member_access_expression" else fn
    if name is not None and name.type == "generic_name":
        args = next((c for c in name.named_children if c.type == "type_argument_list"), None)
        return len(args.named_children) if args is not None else None
    return None


def lambda_params(src: bytes, lam: Node) -> list[str]:
    params = lam.child_by_field_id(F_PARAMETERS)
    if params is None:
        kids = [c for c in lam.named_children if c.type in ("identifier", "implicit_parameter")]
        return [src[k.start_byte:k.end_byte].decode() for k in kids[:1]]
    if params.type in ("identifier", "implicit_parameter"):
        return [src[params.start_byte:params.end_byte].decode()]
    out = []
    for p in params.named_children:
        name = p.child_by_field_id(F_NAME) if p.type == "parameter" else (p if p.type in ("identifier", "implicit_parameter") else None)
        if name is not None:
            out.append(src[name.start_byte:name.end_byte].decode())
    return out


def _is_type_param(name: str) -> bool:
    return (len(name) == 1 and name.isupper()) or (name.startswith("T") and name[1:2].isupper() and len(name) <= 10
                                                   and name not in ("TimeSpan", "Type", "Task", "Thread", "Tuple"))

