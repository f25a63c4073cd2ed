"""Go calls: the binding's constructors and methods (multiple results, variadic arguments, `Run` outputs),
`append`, and the types of values that qualify them."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import AddrOf, Branch, Deref, Index, Loc, Op, Opaque, Var
from .scan import BUILTIN_TYPES, ORT
from .syntax import _BUILTINS, _MAX_UNROLL, _NEW_ERRORS, ERROR_VALUE, NIL, SOME, F


class GoCalls:
    """Go calls: the binding's constructors and methods (multiple results, variadic arguments, `Run` outputs),
`append`, and the types of values that qualify them."""

    def is_package(self, node: Node | None) -> bool:
        """An identifier naming an imported package (not shadowed by a local)."""
        if node is None or node.type != "identifier":
            return False
        name = self.text(node)
        if name in self.locals or name in self.params or name in self.types:
            return False
        return name in self.scan.ort_aliases or name in self.scan.imports

    def generic_binding_call(self, node: Node) -> bool:
        """`ort.NewEmptyTensor[float32](shape)` parses as a conversion to a generic type."""
        if node.type != "type_conversion_expression":
            return False
        ctype = node.child_by_field_id(F.type)
        if ctype is None or ctype.type != "generic_type":
            return False
        inner = ctype.child_by_field_id(F.type)
        if inner is None:
            return False
        if inner.type == "qualified_type":
            return self.text(inner.child_by_field_id(F.package)) in self.scan.ort_aliases
        return inner.type == "type_identifier" and self.scan.is_binding and \
            self.policy.lookup("plain", f"{ORT}.{self.text(inner)}") is not None

    def callee_of(self, fn: Node) -> tuple[str, str, Node | None, bool]:
        """(callee, style, receiver node, binding call) for the function part of a call."""
        while fn.type in ("index_expression", "generic_type", "parenthesized_expression"):  # `F[T](...)`
            inner = fn.child_by_field_id(F.operand) or fn.child_by_field_id(F.type) or \
                (self.named(fn)[0] if self.named(fn) else None)
            if inner is None:
                break
            fn = inner
        if fn.type == "qualified_type":
            return f"{ORT}.{self.text(fn.child_by_field_id(F.name))}", "plain", None, True
        if fn.type in ("identifier", "type_identifier"):
            name = self.text(fn)
            if self.scan.is_binding and self.policy.lookup("plain", f"{ORT}.{name}") is not None:
                return f"{ORT}.{name}", "plain", None, True
            if name in self.closure_locals:  # `check := func(v ort.Value) {...}`; `check(t)`
                return self.closure_locals[name], "plain", None, False
            if name in self.locals or name in self.params:
                return name, "indirect", None, False
            return name, "plain", None, False
        if fn.type == "selector_expression":
            operand = fn.child_by_field_id(F.operand)
            method = self.text(fn.child_by_field_id(F.field))
            if self.is_package(operand):
                pkg = self.text(operand)
                if pkg in self.scan.ort_aliases:
                    return f"{ORT}.{method}", "plain", None, True
                return f"{self.scan.imports.get(pkg, pkg)}.{method}", "plain", None, False
            rtype = self.type_of(operand) if operand is not None else ""
            if rtype.startswith(f"{ORT}."):
                kind = self.policy.kinds.get("go." + rtype[len(ORT) + 1:])
                if kind is None:  # Shape, EpDevice, ...: plain values of the binding
                    return f"{rtype}.{method}", "method", operand, False
                return method, "method", operand, True
            if self.scan.is_local_struct(rtype):
                return f"{rtype}.{method}", "plain", operand, False
            if "." in rtype and not rtype.startswith(("[", "map[")):
                return f"{rtype}.{method}", "method", operand, False
            if not self.scan.may_hold_binding():  # a package without the binding: its own method,
                return f"?.{method}", "method", operand, False  # named so that no binding entry matches
            return method, "method", operand, True
        return self.short_text(fn), "indirect", None, False

    def lower_call(self, node: Node, outs: list[ir.Expr] | None = None, dest: ir.Expr | None = None,
                   outs_are_pointers: bool = False) -> ir.Expr:
        """A call; `outs` receive the results before the last, `dest` the last one."""
        outs = outs or []
        loc = self.loc(node)
        if node.type == "type_conversion_expression":
            fn = node.child_by_field_id(F.type)
            arg_nodes = [node.child_by_field_id(F.operand)]
        else:
            fn = node.child_by_field_id(F.function)
            arg_nodes = self.named(node.child_by_field_id(F.arguments))
        if fn is None:
            return Opaque("?")
        if fn.type == "func_literal":  # `func(){...}()`: a function of its own, called here
            args = [self.lower_expr(a) for a in arg_nodes]
            self.closure(fn)
            args += [self.out_pointer(o, outs_are_pointers) for o in outs]
            self.call_counter += 1
            self.emit(ir.Call(self.call_counter, loc, self.closure_name(fn), "plain", None, tuple(args), dest,
                              "func literal"))
            return dest if dest is not None else Opaque("result")
        callee, style, recv_node, binding = self.callee_of(fn)
        if style == "plain" and fn.type == "identifier" and (callee in _BUILTINS or callee in BUILTIN_TYPES) \
                and callee not in self.scan.results:
            parts = tuple(self.lower_expr(a) for a in arg_nodes if not a.type.endswith("_type"))
            return Opaque(self.short_text(node), parts)
        if style == "plain" and callee == "append" and "append" not in self.scan.results:
            return self.lower_append(node, arg_nodes, dest, loc)
        if style == "plain" and callee == "runtime.SetFinalizer":
            args = []
            for a in arg_nodes:
                args.append(self.closure(a, handoff=False) if a.type == "func_literal" else self.lower_expr(a))
            self.call_counter += 1
            self.emit(ir.Call(self.call_counter, loc, callee, style, None, tuple(args), None, self.short_text(node)))
            return Opaque("finalizer")
        if binding and style == "plain" and len(arg_nodes) == 1 and self.is_binding_type(callee):
            return self.lower_expr(arg_nodes[0], dest=dest)  # `ort.Value(t)`: a conversion
        receiver = self.lower_expr(recv_node) if recv_node is not None else None
        spec = self.policy.lookup(style, callee) if binding else None
        fill = binding and style == "method" and len(arg_nodes) >= 2 and self.policy.lookup("new", callee) is not None
        args: list[ir.Expr] = []
        slots: list[ir.Expr] = []
        fill_coll: ir.Expr | None = None
        spread_results = self.multi_value_argument(arg_nodes)
        if spread_results is not None:  # `must.M1(ort.NewTensor(s, d))`: every result of the inner call
            args, arg_nodes = spread_results, []
        for i, a in enumerate(arg_nodes):
            if a.type == "func_literal":
                args.append(self.closure(a))
            elif fill and i == 1:
                value, slots, fill_coll = self.run_outputs(a)
                args.append(value)
            elif a.type.endswith("_type") or a.type in ("type_identifier", "qualified_type"):
                continue  # make([]T, n), new(T)
            else:
                args.append(self.lower_argument(a))
        out_args = [o if outs_are_pointers and isinstance(o, Deref) else o for o in outs]
        if binding:
            pointer_outs = self.binding_outs(spec, out_args, outs_are_pointers)
            args = pointer_outs + args
        else:
            args = args + [self.out_pointer(o, outs_are_pointers) for o in out_args]
        if style == "plain" and recv_node is not None:  # a method of this package: the receiver is argument 0
            args.insert(0, receiver)
            receiver = None
        spread = any(a.type == "variadic_argument" for a in arg_nodes)
        if not binding and callee in self.scan.variadic and not spread:
            args = self.pack_variadic(args, self.scan.variadic[callee], len(out_args), loc)
        if dest is None:
            dest = self.temp() if (fill or callee in _NEW_ERRORS) else None
        self.call_counter += 1
        self.emit(ir.Call(self.call_counter, loc, callee, style, receiver, tuple(args), dest, self.short_text(node)))
        if callee in _NEW_ERRORS and dest is not None:
            self.emit(ir.Assign(loc, dest, ERROR_VALUE))
        if fill and (slots or fill_coll is not None) and dest is not None:
            self.fill_nil_slots(callee, dest, slots, fill_coll, loc, node)
        return dest if dest is not None else Opaque(self.short_text(node))

    def lower_argument(self, node: Node) -> ir.Expr:
        """One argument. The result of a call of a function (not the binding's, not a builtin)
        is held in a temporary, so the object a helper returns reaches the callee: in
        `check(mk(data))` a `check` that destroys its parameter destroys what `mk` made (without
        the temporary the value was text, and the object was lost where it was made)."""
        inner = self.unparen(node)
        if inner.type == "call_expression":
            fn = inner.child_by_field_id(F.function)
            if fn is not None and fn.type != "func_literal":
                callee, style, _recv, binding = self.callee_of(fn)
                if style == "plain" and not binding and callee not in _BUILTINS and callee not in BUILTIN_TYPES:
                    tmp = self.temp()
                    self.lower_call(inner, dest=tmp)
                    return tmp
        return self.lower_expr(node)

    def multi_value_argument(self, arg_nodes: list[Node]) -> list[ir.Expr] | None:
        """`f(g())` where g has several results passes all of them, in order (the Go spec's
        special case of a call as the only argument): each result in its own temporary, the
        objects g creates included, so f's summary (a must-style helper returning its first
        argument) or its taking ownership applies to them. None when the only argument is not
        a call known to have several results."""
        if len(arg_nodes) != 1:
            return None
        inner = self.unparen(arg_nodes[0])
        if inner.type != "call_expression" and not self.generic_binding_call(inner):
            return None
        count = self.result_count(inner)
        if count < 2:
            return None
        values = [self.temp() for _ in range(count)]
        self.lower_call(inner, outs=list(values[:-1]), dest=values[-1])
        return values

    def result_count(self, call: Node) -> int:
        """How many results a call has, where the file or the policy tells: a function or
        method of this file (its signature), a binding call (its out-parameters and error)."""
        fn = call.child_by_field_id(F.function) if call.type == "call_expression" else call.child_by_field_id(F.type)
        if fn is None:
            return 1
        callee, style, _recv, binding = self.callee_of(fn)
        if not binding:
            return self.scan.results.get(callee, 1)
        spec = self.policy.lookup(style, callee)
        if spec is None:
            return 1
        outs = max((acq.arg + 1 for acq in spec.acquires if acq.arg is not None), default=0)
        return outs + (1 if spec.returns == "code" else 0)

    def is_binding_type(self, callee: str) -> bool:
        name = callee[len(ORT) + 1:]
        return f"go.{name}" in self.policy.kinds or name in ("ArbitraryTensor", "Shape", "Value")

    def pack_variadic(self, args: list[ir.Expr], index: int, outs: int, loc: Loc) -> list[ir.Expr]:
        """`f(a, b, c)` of `func f(x int, rest ...T)`: b and c are one slice argument."""
        end = len(args) - outs
        if index > end:
            return args
        coll = self.temp()
        self.locals[coll.name] = True
        packed = tuple(args[index:end])
        if packed:
            self.call_counter += 1
            self.emit(ir.Call(self.call_counter, loc, "$keep", "plain", coll, packed, None, "..."))
        return args[:index] + [coll] + args[end:]

    def out_pointer(self, target: ir.Expr, outs_are_pointers: bool) -> ir.Expr:
        if isinstance(target, Deref) and outs_are_pointers:
            return target.base
        return AddrOf(target)

    def binding_outs(self, spec, outs: list[ir.Expr], outs_are_pointers: bool) -> list[ir.Expr]:
        """Out-arguments of a binding call, first: `&x` for "*k", the slice itself for "k[]"
        (every element is a new value); missing ones are temporaries (a dropped result)."""
        need = len(outs)
        lists: set[int] = set()
        if spec is not None:
            for acq in spec.acquires:
                if acq.arg is not None:
                    need = max(need, acq.arg + 1)
                    if acq.into.endswith("[]"):
                        lists.add(acq.arg)
        result: list[ir.Expr] = []
        for k in range(need):
            target = outs[k] if k < len(outs) else self.temp()
            if k in lists:
                if isinstance(target, Var):
                    self.locals[target.name] = True
                    result.append(target)
                else:
                    result.append(Deref(target) if not isinstance(target, Deref) else target)
                continue
            result.append(self.out_pointer(target, outs_are_pointers))
        return result

    def lower_append(self, node: Node, arg_nodes: list[Node], dest: ir.Expr | None, loc: Loc) -> ir.Expr:
        """`s = append(s, x, y)`: the collection keeps x and y (`$keep`)."""
        if not arg_nodes:
            return Opaque("append")
        coll = self.lower_expr(arg_nodes[0])
        values = tuple(self.lower_expr(a) for a in arg_nodes[1:])
        if isinstance(coll, Var) and coll.name in self.locals and coll.name not in self.slots:
            self.locals[coll.name] = True
        self.call_counter += 1
        self.emit(ir.Call(self.call_counter, loc, "$keep", "plain", coll, values, None, self.short_text(node)))
        return coll

    def run_outputs(self, node: Node) -> tuple[ir.Expr, list[ir.Expr], ir.Expr | None]:
        """The outputs argument of `Run`: its slots (a slot slice or an inline literal), or the
        local slice whose nil elements Run fills; a parameter's or a field's belong elsewhere."""
        node = self.unparen(node)
        if node.type == "slice_expression" and len(self.named(node)) == 1:  # `outs[:]`
            node = node.child_by_field_id(F.operand)
        if node.type == "identifier":
            name = self.text(node)
            if name in self.slots:
                return Opaque(name), [Var(f"{name}[{k}]") for k in range(self.slots[name])], None
            var = self.resolve(name)
            if var in self.made and self.locals.get(var):
                return Var(var), [], Var(var)
            return self.lower_expr(node), [], None
        size = self.constant_slice_size(node)
        if size is not None and size <= _MAX_UNROLL and self.holds_values(node):
            slots: list[ir.Expr] = []
            elems = []
            if node.type == "composite_literal":
                elems = [e for e in self.named(node.child_by_field_id(F.body)) if e.type in ("literal_element", "element")]
            values = []
            for k in range(size):
                value = self.lower_literal_part(elems[k]) if k < len(elems) else NIL
                values.append(value)
                if value == NIL:  # only a literal nil slot is filled: an object put there is not nil
                    slot = self.temp()
                    self.emit(ir.Assign(self.loc(node), slot, value))
                    slots.append(slot)
            return Opaque(self.short_text(node), tuple(v for v in values if v != NIL)), slots, None
        return self.lower_expr(node), [], None

    def fill_nil_slots(self, callee: str, status: ir.Expr, slots: list[ir.Expr], coll: ir.Expr | None,
                       loc: Loc, node: Node) -> None:
        """After a successful Run, one new value in every slot that was nil."""
        ok, join = self.new_block(), self.new_block()
        self.terminate(Branch(Op("==", (status, NIL)), ok.id, join.id, loc, f"{callee}() succeeded", "if"))
        self.start(ok)
        text = self.short_text(node)
        if coll is not None:
            self.call_counter += 1
            self.emit(ir.Call(self.call_counter, loc, callee, "new", None, (), Index(coll, SOME), text))
        for slot in slots:
            fill, nxt = self.new_block(), self.new_block()
            self.terminate(Branch(Op("==", (slot, NIL)), fill.id, nxt.id, loc, f"{ir.expr_text(slot)} == nil", "if"))
            self.start(fill)
            self.call_counter += 1
            self.emit(ir.Call(self.call_counter, loc, callee, "new", None, (), slot, text))
            self.jump(nxt)
            self.start(nxt)
        self.jump(join)
        self.start(join)

    def value_type(self, node: Node) -> str:
        """The type a declaration gets from its value (for naming methods called on it)."""
        node = self.unparen(node)
        if node.type in ("call_expression", "type_conversion_expression"):
            fn = node.child_by_field_id(F.function) if node.type == "call_expression" else node.child_by_field_id(F.type)
            if fn is None:
                return ""
            callee, style, _recv, binding = self.callee_of(fn)
            spec = self.policy.lookup(style, callee) if binding else None
            if spec is not None:
                for acq in spec.acquires:
                    if acq.kind.startswith("go.") and not acq.into.endswith("[]"):
                        return f"{ORT}.{acq.kind[3:]}"
            return ""
        return self.type_of(node)

    def type_of(self, node: Node | None) -> str:
        if node is None:
            return ""
        if node.type == "identifier":
            name = self.text(node)
            return self.types.get(name) or self.scan.globals.get(name, "")
        return self.scan.expr_type(node, self.types)
