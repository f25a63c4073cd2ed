"""Go simple statements: declarations (`var`, `:=`), assignments with several values, sends, increments."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Deref, Loc, Opaque, Var
from .scan import ORT, walk
from .syntax import NIL, F


class GoStatements:
    """Go simple statements: declarations (`var`, `:=`), assignments with several values, sends, increments."""

    def stmt_block(self, node: Node) -> None:
        self.scopes.append({})
        try:
            self.block_statements(node)
        finally:
            self.scopes.pop()

    def block_statements(self, node: Node | None) -> None:
        for child in self.named(node):
            if child.type == "statement_list":
                for s in self.named(child):
                    self.stmt(s)
            else:
                self.stmt(child)

    def stmt_statement_list(self, node: Node) -> None:
        for s in self.named(node):
            self.stmt(s)

    def stmt_expression_statement(self, node: Node) -> None:
        self.stmt_temps = []
        inner = self.named(node)
        if inner:
            self.lower_expr(inner[0], discard=True)
        self.finish_statement(node)

    def simple(self, node: Node | None) -> None:
        """An `init` / `update` statement of if, for and switch."""
        if node is not None:
            self.stmt(node)

    def stmt_inc_statement(self, node: Node) -> None:
        self.stmt_temps = []
        target = self.lower_expr(self.named(node)[0]) if self.named(node) else Opaque("?")
        self.emit(ir.Assign(self.loc(node), target, Opaque(self.short_text(node), (target,))))
        self.finish_statement(node)
    stmt_dec_statement = stmt_inc_statement

    def stmt_send_statement(self, node: Node) -> None:
        """`ch <- v`: v is handed to whoever receives it."""
        self.stmt_temps = []
        self.lower_expr(node.child_by_field_id(F.channel))
        value = self.lower_expr(node.child_by_field_id(F.value))
        self.emit(ir.Assign(self.loc(node), Deref(Opaque("channel")), value))
        self.finish_statement(node)

    def stmt_var_declaration(self, node: Node) -> None:
        for spec in walk(node):
            if spec.type != "var_spec":
                continue
            self.stmt_temps = []
            names = [self.text(n) for n in spec.children_by_field_id(F.name)]
            if len(names) == 1 and names[0] in self.slots:
                for k in range(self.slots[names[0]]):
                    self.emit(ir.Assign(self.loc(spec), Var(f"{names[0]}[{k}]"), NIL))
                continue
            vtype = self.scan.norm_type(spec.child_by_field_id(F.type))
            name_nodes = spec.children_by_field_id(F.name)
            fresh = [self.fresh(n) for n in names]
            if self.is_struct_value_type(spec.child_by_field_id(F.type)):
                self.value_structs.update(fresh)
            values = self.named(spec.child_by_field_id(F.value))
            targets = [self.declared_target(n, v) for n, v in zip(name_nodes, fresh)]
            if values:
                self.assign_lists(targets, values, self.loc(spec), declare=True)
            else:
                for tgt in targets:
                    self.emit(ir.Assign(self.loc(spec), tgt, NIL))
            for name, var in zip(names, fresh):
                self.declare(name, vtype, var)
                if self.is_holder_value_type(spec.child_by_field_id(F.type)):
                    self.locals[var] = True
            self.finish_statement(spec)

    def declare(self, name: str, vtype: str, var: str | None = None) -> str:
        """Declare `name` (as `var`, else a fresh variable) in the current scope."""
        if name == "_":
            return name
        var = var or self.fresh(name)
        if vtype:
            self.types[name] = vtype
        aggregate = vtype.startswith(("[]", "map["))
        if var not in self.params:
            self.locals[var] = self.locals.get(var, False) or aggregate
        self.bind(name, var)
        return var

    def is_holder_value_type(self, node: Node | None) -> bool:
        """`var h atomic.Pointer[T]`, `var m sync.Map`: a holder value of this function (not a
        pointer to one elsewhere) keeps what its Store/Swap methods are given, like a local
        slice keeps what is appended (rules/onnxruntime-go.toml)."""
        if node is None or node.type == "pointer_type":
            return False
        return self.scan.norm_type(node) in self.policy.holder_types()

    def is_struct_value_type(self, node: Node | None) -> bool:
        """A struct type of this package written as a value (`T`, not `*T`)."""
        return node is not None and node.type == "type_identifier" and self.text(node) in self.scan.structs

    def collection_results_of(self, rights: list[Node], nlefts: int) -> frozenset[int]:
        """`outputs, err := c.makeOutputs(n)` of a function of this file returning
        `([]ort.Value, error)`: the indices of the declared names that are collections."""
        if len(rights) != 1 or nlefts < 1:
            return frozenset()
        call = self.unparen(rights[0])
        fn = call.child_by_field_id(F.function) if call.type == "call_expression" else None
        if fn is None:
            return frozenset()
        callee, _style, _recv, binding = self.callee_of(fn)
        found = frozenset() if binding else self.scan.collection_results.get(callee, frozenset())
        return frozenset(i for i in found if i < nlefts)

    def declared_target(self, node: Node, var: str) -> ir.Expr:
        return self.target(node) if self.text(node) == "_" else Var(var)

    def stmt_short_var_declaration(self, node: Node) -> None:
        self.stmt_temps = []
        lefts = self.named(node.child_by_field_id(F.left))
        rights = self.named(node.child_by_field_id(F.right))
        fresh = [self.fresh(self.text(n)) for n in lefts]
        for i, n in enumerate(lefts):
            var = fresh[i]
            if var == "_":
                continue
            if var not in self.params:
                self.locals.setdefault(var, False)
            if len(rights) == len(lefts) and rights[i].type == "composite_literal" \
                    and self.is_struct_value_type(rights[i].child_by_field_id(F.type)):
                self.value_structs.add(var)
            if len(rights) == len(lefts) and rights[i].type in ("composite_literal", "call_expression") \
                    and self.is_collection_value(rights[i]):
                self.locals[var] = True
                if self.holds_values(rights[i]):
                    self.made.add(var)
        for i in self.collection_results_of(rights, len(lefts)):
            if fresh[i] != "_" and fresh[i] not in self.params:
                self.locals[fresh[i]] = True
        if len(lefts) == 1 and len(rights) == 1 and self.text(lefts[0]) in self.slots:
            self.declare_slots(self.text(lefts[0]), rights[0], self.loc(node))
        else:
            targets = [self.declared_target(n, v) for n, v in zip(lefts, fresh)]
            self.assign_lists(targets, rights, self.loc(node), declare=True)
        for i, n in enumerate(lefts):  # declared once the values are computed (`x := f(x)`)
            vtype = self.value_type(rights[i]) if len(rights) == len(lefts) else ""
            if len(rights) == 1 and len(lefts) > 1 and i == 0:
                vtype = self.value_type(rights[0])
            self.declare(self.text(n), vtype, fresh[i])
        self.finish_statement(node)

    def declare_slots(self, name: str, value: Node, loc: Loc) -> None:
        """`outputs := []ort.Value{nil, x}` / `make([]ort.Value, 2)`: each slot gets its value."""
        elems = []
        if value.type == "composite_literal":
            elems = [e for e in self.named(value.child_by_field_id(F.body)) if e.type in ("literal_element", "element")]
        for k in range(self.slots[name]):
            slot_value = self.lower_literal_part(elems[k]) if k < len(elems) else NIL
            self.emit(ir.Assign(loc, Var(f"{name}[{k}]"), slot_value))

    def holds_values(self, node: Node) -> bool:
        """A slice literal or `make` of the binding's values (`[]ort.Value`): what Run fills."""
        stype = node.child_by_field_id(F.type) if node.type == "composite_literal" else None
        if node.type == "call_expression":
            args = self.named(node.child_by_field_id(F.arguments))
            stype = args[0] if args else None
        if stype is None or stype.type != "slice_type":
            return False
        return self.scan.norm_type(stype.child_by_field_id(F.element)).startswith(f"{ORT}.")

    def is_collection_value(self, node: Node) -> bool:
        if node.type == "composite_literal":
            ctype = node.child_by_field_id(F.type)
            return ctype is not None and ctype.type in ("slice_type", "map_type", "array_type",
                                                        "implicit_length_array_type")
        fn = node.child_by_field_id(F.function)
        return fn is not None and self.text(fn) == "make"

    def stmt_assignment_statement(self, node: Node) -> None:
        self.stmt_temps = []
        lefts = self.named(node.child_by_field_id(F.left))
        rights = self.named(node.child_by_field_id(F.right))
        op = self.operator(node)
        if op != "=":
            for left, right in zip(lefts, rights):
                target = self.lower_expr(left)
                value = self.lower_expr(right)
                self.emit(ir.Assign(self.loc(node), target, Opaque(self.short_text(node), (target, value))))
            self.finish_statement(node)
            return
        self.assign_lists([self.target(n) for n in lefts], rights, self.loc(node), declare=False, left_nodes=lefts)
        self.finish_statement(node)

    def target(self, node: Node) -> ir.Expr:
        """An assignment target; `_` drops the value (a temporary that dies with the statement)."""
        if node.type == "identifier" and self.text(node) == "_":
            # a value dropped here stays unreachable to the end of the function (a variable
            # of its own, not a temporary): the test `if err == nil { t.Fatal(...) }` that
            # follows decides whether anything was created at all
            self.blank_counter += 1
            blank = Var(f"$_{self.blank_counter}")  # `$`: no name to show in messages
            self.locals[blank.name] = False
            return blank
        if node.type == "selector_expression":
            operand = node.child_by_field_id(F.operand)
            fname = self.text(node.child_by_field_id(F.field))
            if operand is not None and self.scan.non_owning(self.type_of(operand), fname):
                self.lower_expr(operand)
                return self.temp()  # a field nobody destroys: the value is dropped there
        return self.lower_expr(node)

    def assign_lists(self, targets: list[ir.Expr], values: list[Node], loc: Loc, declare: bool,
                     left_nodes: list[Node] | None = None) -> None:
        if len(values) == 1 and len(targets) > 1:
            value = self.unparen(values[0])
            if value.type == "call_expression":
                self.lower_call(value, outs=targets[:-1], dest=targets[-1])
                return
            if value.type == "type_conversion_expression" and self.generic_binding_call(value):
                self.lower_call(value, outs=targets[:-1], dest=targets[-1])
                return
            lowered = self.lower_expr(value)  # `v, ok := m[k]`, `x.(T)`, `<-ch`
            self.emit(ir.Assign(loc, targets[0], lowered))
            for tgt in targets[1:]:
                self.emit(ir.Assign(loc, tgt, Opaque("ok")))
            return
        if len(targets) == 1 and len(values) == 1:
            self.assign_from(targets[0], values[0], loc)
            return
        temps = []
        for value in values:  # `a, b = b, a`: every value first
            tmp = self.temp()
            self.assign_from(tmp, value, loc)
            temps.append(tmp)
        for tgt, tmp in zip(targets, temps):
            self.emit(ir.Assign(loc, tgt, tmp))

    def assign_from(self, target: ir.Expr, value_node: Node | None, loc: Loc) -> None:
        if value_node is None:
            return
        inner = self.unparen(value_node)
        if inner.type == "call_expression" or (inner.type == "type_conversion_expression"
                                               and self.generic_binding_call(inner)):
            value = self.lower_call(inner, outs=[], dest=target)
            if value != target:
                self.emit(ir.Assign(loc, target, value))
            return
        self.emit(ir.Assign(loc, target, self.lower_expr(inner)))
