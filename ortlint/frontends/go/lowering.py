"""One Go function body -> IR (`GoLowering`); the constructs it understands live in the mixins it is assembled from."""
from __future__ import annotations

from tree_sitter import Node
from ... import ir
from ...ir import AddrOf, Block, Branch, Const, Deref, Field, Index, Jump, Loc, Op, Opaque, Return, Var
from .scan import BUILTIN_TYPES, ORT, FileScan, walk
from ..common.cfg import CfgBuilder
from .scopes import Breakable, Deferred, PendingClosure
from .syntax import ERROR_VALUE, F, MAX_DEFERRED_RUNS, SOME, TooManyDeferred, _BUILTINS, _MAX_UNROLL, _NEW_ERRORS, walk_with_parents
from .syntax import FALSE, NIL, TRUE
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .frontend import GoFrontEnd


class GoLowering(CfgBuilder):
    """Lowers one function, method or closure."""

    def named(self, node: Node | None) -> list[Node]:
        """Named children without comments; only the few nodes with comments are filtered."""
        if node is None:
            return []
        if node.id in self.unit.commented:
            return [c for c in node.named_children if c.type != "comment"]
        return node.named_children

    UNARY_OPERAND = "operand"
    CALL_NODE_TYPES = ("call_expression",)

    def __init__(self, unit: "GoFrontEnd", node: Node, name: str, drop_returns: bool = False):
        self.unit = unit
        self.scan: FileScan = unit.scan
        self.policy = unit.policy
        self.src = unit.src
        self.ascii = unit.ascii
        self.node = node
        self.name = name
        self.drop_returns = drop_returns
        self.init_graph()
        self.F = F  # the shared expressions of CfgBuilder find fields by id
        self.types: dict[str, str] = {}
        self.slots: dict[str, int] = {}  # slot slices: name -> number of slots
        self.made: set[str] = set()  # local slices made here (make / literal): Run fills their nil slots
        self.scopes: list[dict[str, str]] = [{}]  # source name -> variable (`t~2` when it shadows `t`)
        self.shadow_counter = 0
        self.ctx: list[Breakable] = []
        self.pending_label: tuple[str, ...] = ()
        self.labels: dict[str, Block] = {}
        self.defers: list[Deferred] = []
        self.deferred_runs = 0  # deferred calls lowered at exits so far (see exit_function)
        self.defer_by_node: dict[int, Deferred] = {}
        self.overrides: dict[int, ir.Expr] = {}
        self.inline_returns: list[Block] = []
        self.loop_depth = 0
        self.decl_sites: dict[str, list[int]] | None = None
        self.blank_counter = 0
        self.results = 0
        self.named_results: list[str] = []
        self.returns_error = False
        self.tracks_env = b"InitializeEnvironment" in self.src[node.start_byte:node.end_byte]

    # ------------------------------------------------------------------ driving

    def lower(self) -> ir.Function:
        node = self.node
        entry = self.new_block(handler=None)
        self.start(entry)
        params: list[str] = []
        if node.type == "method_declaration":
            recv, rtype = self.scan.receiver(node)
            params.append(recv or "$recv")
            if recv:
                self.types[recv] = rtype
        params.extend(self.read_params(node.child_by_field_id(F.parameters)))
        result = node.child_by_field_id(F.result)
        self.read_results(result)
        params.extend(f"ret%{k}" for k in range(self.results - 1))
        self.params = params
        for name in self.named_results:
            self.locals[name] = False
            self.emit(ir.Assign(self.loc(node), Var(name), NIL))
        if node.type == "var_declaration":
            self.stmt_var_declaration(node)
            for name in self.scan.globals:  # package variables: a store there is an escape
                self.locals.pop(name, None)
        else:
            self.find_slot_slices(node.child_by_field_id(F.body))
            for name in params + self.named_results:
                self.scopes[0][name] = name
            self.block_statements(node.child_by_field_id(F.body))
        if self.cur is not None:
            end = self.end_loc(node)
            if self.named_results and not self.drop_returns and len(self.named_results) == self.results:
                self.exit_function(None, end, named=True)
            else:
                self.exit_function(self.named_return_value(), end)
        for name in params:
            self.locals.pop(name, None)
        start = self.loc(node)
        return ir.Function(self.name, self.unit.path, start, "go", params, self.locals, self.blocks,
                           notes=self.notes)

    def read_params(self, plist: Node | None) -> list[str]:
        names: list[str] = []
        for p in self.named(plist):
            if p.type not in ("parameter_declaration", "variadic_parameter_declaration"):
                continue
            ptype = self.scan.norm_type(p.child_by_field_id(F.type))
            found = p.children_by_field_id(F.name)
            if not found:
                names.append(f"$arg{len(names)}")
            for n in found:
                name = self.text(n)
                names.append(name if name != "_" else f"$arg{len(names)}")
                self.types[name] = ptype
        return names

    def read_results(self, result: Node | None) -> None:
        if result is None:
            return
        if result.type != "parameter_list":
            self.results = 1
            self.returns_error = self.text(result) == "error"
            return
        last = ""
        for p in self.named(result):
            if p.type != "parameter_declaration":
                continue
            names = p.children_by_field_id(F.name)
            last = self.text(p.child_by_field_id(F.type))
            for n in names:
                self.named_results.append(self.text(n))
                self.types[self.text(n)] = self.scan.norm_type(p.child_by_field_id(F.type))
            self.results += max(1, len(names))
        self.returns_error = last == "error"

    def named_return_value(self) -> ir.Expr | None:
        """A bare `return` (or the end of the body) with named results returns them."""
        if self.named_results and not self.drop_returns:
            for k, name in enumerate(self.named_results[:-1]):
                self.emit(ir.Assign(self.loc(self.node), Deref(Var(f"ret%{k}")), Var(name)))
            return Var(self.named_results[-1])
        return None

    def find_slot_slices(self, body: Node | None) -> None:
        """Local slices of constant length used only through constant indexes, `range`, `len`
        or as arguments: one variable per slot makes `outputs[1]` its own value."""
        text = self.src[body.start_byte:body.end_byte] if body is not None else b""
        if b"Run" not in text or (b"nil" not in text and b"make(" not in text):
            return  # slots matter for the nil slots Run fills; any other slice is a collection
        candidates: dict[str, int] = {}
        declared: dict[str, int] = {}
        for n in walk(body):
            if n.type == "short_var_declaration":
                left, right = n.child_by_field_id(F.left), n.child_by_field_id(F.right)
                lnames, rvals = self.named(left), self.named(right)
                if len(lnames) == len(rvals):
                    for name, value in zip(lnames, rvals):
                        size = self.constant_slice_size(value)
                        key = self.text(name)
                        declared[key] = declared.get(key, 0) + 1
                        if size is not None and self.holds_values(value):
                            candidates[key] = size
            elif n.type == "var_spec" and n.child_by_field_id(F.value) is None:  # `var outs [2]ort.Value`
                atype = n.child_by_field_id(F.type)
                for name in n.children_by_field_id(F.name):
                    key = self.text(name)
                    declared[key] = declared.get(key, 0) + 1
                    length = atype.child_by_field_id(F.length) if atype is not None and atype.type == "array_type" else None
                    if length is not None and length.type == "int_literal" and \
                            self.scan.norm_type(atype.child_by_field_id(F.element)).startswith(f"{ORT}."):
                        candidates[key] = int(self.text(length), 0)
        candidates = {k: v for k, v in candidates.items() if declared.get(k) == 1 and 0 < v <= 16}
        if not candidates:
            return
        for n, parent, grand in walk_with_parents(body):  # `Node.parent` searches from the root
            if n.type != "identifier":
                continue
            name = self.text(n)
            if name not in candidates:
                continue
            if parent is None:
                continue
            pt = parent.type
            if pt == "index_expression" and parent.child_by_field_id(F.operand) == n:
                index = parent.child_by_field_id(F.index)
                if index is not None and index.type == "int_literal" and int(self.text(index), 0) < candidates[name]:
                    continue
                candidates.pop(name)
            elif pt == "expression_list" and grand is not None and grand.type == "short_var_declaration" \
                    and parent == grand.child_by_field_id(F.left):
                continue
            elif pt in ("range_clause", "argument_list"):
                continue
            elif pt == "var_spec" or (pt == "slice_expression" and grand is not None
                                      and grand.type == "argument_list" and len(self.named(parent)) == 1):
                continue  # its declaration; `outs[:]` given whole to a call
            else:
                candidates.pop(name)
        self.slots = candidates
        for name, size in candidates.items():
            for k in range(size):
                self.locals[f"{name}[{k}]"] = False

    def constant_slice_size(self, value: Node) -> int | None:
        if value.type == "composite_literal":
            ctype = value.child_by_field_id(F.type)
            if ctype is not None and ctype.type == "slice_type":
                body = value.child_by_field_id(F.body)
                elems = [e for e in self.named(body) if e.type in ("literal_element", "element")]
                if all(self.named(e) and self.named(e)[0].type != "literal_value" for e in elems):
                    return len(elems)
            return None
        if value.type == "call_expression":
            fn = value.child_by_field_id(F.function)
            args = self.named(value.child_by_field_id(F.arguments))
            if fn is not None and self.text(fn) == "make" and len(args) == 2 and args[0].type == "slice_type" \
                    and args[1].type == "int_literal":
                return int(self.text(args[1]), 0)
        return None

    # ------------------------------------------------------------------ statements

    def stmt(self, node: Node | None) -> None:
        if node is None:
            return
        t = node.type
        handler = getattr(self, "stmt_" + t, None)
        if handler is not None:
            handler(node)
            return
        if t in ("comment", "empty_statement", "type_declaration", "const_declaration", "fallthrough_statement"):
            return
        self.stmt_temps = []
        self.lower_expr(node, discard=True)
        self.finish_statement(node)

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

    # -- scopes: a `:=` in an inner block makes a new variable even with an outer one's name

    def resolve(self, name: str) -> str:
        for scope in reversed(self.scopes):
            found = scope.get(name)
            if found is not None:
                return found
        return name

    def fresh(self, name: str) -> str:
        """The variable a declaration of `name` in the current scope makes."""
        if name == "_":
            return name
        current = self.scopes[-1].get(name)
        if current is not None:
            return current  # `a, err := ...` with err already declared here: the same err
        if any(name in scope for scope in self.scopes[:-1]) or (name in self.locals and name not in self.scopes[-1]):
            self.shadow_counter += 1
            return f"{name}~{self.shadow_counter}"
        return name

    def bind(self, name: str, var: str) -> None:
        if name != "_":
            self.scopes[-1][name] = var

    def scoped(self, fn, *args) -> None:
        self.scopes.append({})
        try:
            fn(*args)
        finally:
            self.scopes.pop()

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
            values = self.named(spec.child_by_field_id(F.value))
            targets = [self.declared_target(n, v) for n, v in zip(name_nodes, fresh)]
            if values:
                self.assign_lists(targets, values, self.loc(spec), declare=True)
            else:
                for tgt in targets:
                    self.emit(ir.Assign(self.loc(spec), tgt, NIL))
            for name, var in zip(names, fresh):
                self.declare(name, vtype, var)
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
            if len(rights) == len(lefts) and rights[i].type in ("composite_literal", "call_expression") \
                    and self.is_collection_value(rights[i]):
                self.locals[var] = True
                if self.holds_values(rights[i]):
                    self.made.add(var)
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

    # -- if / for / switch / select

    def stmt_if_statement(self, node: Node) -> None:
        self.scoped(self.stmt_if_statement_body, node)

    def stmt_if_statement_body(self, node: Node) -> None:
        self.stmt_temps = []
        self.simple(node.child_by_field_id(F.initializer))
        alternative = node.child_by_field_id(F.alternative)
        then_b, join = self.new_block(), self.new_block()
        else_b = self.new_block() if alternative is not None else join
        self.stmt_temps = []
        self.lower_cond(node.child_by_field_id(F.condition), then_b, else_b)
        temps = self.take_temps()
        self.start(then_b)
        self.kill(temps, self.loc(node))
        self.stmt(node.child_by_field_id(F.consequence))
        self.jump(join)
        if alternative is not None:
            self.start(else_b)
            self.kill(temps, self.loc(node))
            self.stmt(alternative)
            self.jump(join)
        self.start(join)
        if alternative is None:
            self.kill(temps, self.loc(node))

    def take_labels(self) -> tuple[str, ...]:
        labels, self.pending_label = self.pending_label, ()
        return labels

    def stmt_for_statement(self, node: Node) -> None:
        self.scoped(self.stmt_for_statement_body, node)

    def stmt_for_statement_body(self, node: Node) -> None:
        labels = self.take_labels()
        if self.loop_depth == 0:
            self.register_loop_defers(node)
        self.loop_depth += 1
        try:
            clause = next((c for c in self.named(node) if c != node.child_by_field_id(F.body)), None)
            if clause is not None and clause.type == "range_clause":
                self.range_loop(node, clause, labels)
                return
            cond = clause
            update = None
            if clause is not None and clause.type == "for_clause":
                self.stmt_temps = []
                self.simple(clause.child_by_field_id(F.initializer))
                cond = clause.child_by_field_id(F.condition)
                update = clause.child_by_field_id(F.update)
            header, body_b, update_b, exit_b = self.new_block(), self.new_block(), self.new_block(), self.new_block()
            self.jump(header)
            self.start(header)
            first = header.id
            self.stmt_temps = []
            if cond is not None:
                self.lower_cond(cond, body_b, exit_b, kind="loop")
            else:
                self.jump(body_b)
            temps = self.take_temps()
            self.start(body_b)
            self.kill(temps, self.loc(node))
            kills = self.loop_locals(node.child_by_field_id(F.body)) if node.child_by_field_id(F.body) else ()
            self.loop_body(node.child_by_field_id(F.body), exit_b, update_b, labels, kills)
            self.jump(update_b)
            self.start(update_b)
            self.simple(update)
            self.jump(header)
            self.close_loop(exit_b, first, node)
            self.kill(kills, self.end_loc(node))
        finally:
            self.loop_depth -= 1

    def loop_body(self, body: Node | None, brk: Block, cont: Block, labels: tuple[str, ...],
                  kills: tuple[str, ...] = ()) -> None:
        self.ctx.append(Breakable(brk.id, cont.id, labels, kills))
        try:
            self.stmt(body)
        finally:
            self.ctx.pop()
        self.kill(kills, self.end_loc(body) if body is not None else self.loc(self.node))

    def loop_locals(self, loop: Node) -> tuple[str, ...]:
        """Variables declared in a loop (its body, its range clause) and nowhere else in the
        function: each iteration has its own, which is gone when the iteration ends (what only
        it still held is lost there)."""
        if self.decl_sites is None:
            self.decl_sites = {}
            body = self.node.child_by_field_id(F.body)
            for n in self.declaring_identifiers(body):
                self.decl_sites.setdefault(self.text(n), []).append(n.start_byte)
            for name in list(self.params) + self.named_results:
                self.decl_sites.setdefault(name, []).append(-1)
        start, end = loop.start_byte, loop.end_byte
        return tuple(sorted(name for name, sites in self.decl_sites.items()
                            if sites and all(start <= b < end for b in sites) and name != "_"))

    def declaring_identifiers(self, body: Node | None) -> list[Node]:
        out: list[Node] = []
        stack = [body] if body is not None else []
        while stack:
            n = stack.pop()
            t = n.type
            if t == "func_literal":
                continue
            if t in ("short_var_declaration", "range_clause", "receive_statement"):
                if t == "short_var_declaration" or any(c.type == ":=" for c in n.children):
                    out.extend(c for c in self.named(n.child_by_field_id(F.left)) if c.type == "identifier")
            elif t == "var_spec":
                out.extend(n.children_by_field_id(F.name))
            elif t == "type_switch_statement":
                out.extend(c for c in self.named(n.child_by_field_id(F.alias)) if c.type == "identifier")
            stack.extend(n.named_children)
        return out

    def close_loop(self, exit_b: Block, first: int, node: Node) -> None:
        self.start(exit_b)
        self.emit(ir.ScopeExit(self.end_loc(node), frozenset(range(first, len(self.blocks)))))

    def range_loop(self, node: Node, clause: Node, labels: tuple[str, ...]) -> None:
        lefts = self.named(clause.child_by_field_id(F.left))
        right = clause.child_by_field_id(F.right)
        declare = any(c.type == ":=" for c in clause.children)
        if right is not None and right.type == "identifier" and self.text(right) in self.slots \
                and self.slots[self.text(right)] <= _MAX_UNROLL:
            self.unrolled_range(node, self.text(right), lefts, labels)
            return
        self.stmt_temps = []
        coll = self.lower_expr(right) if right is not None else Opaque("?")
        rtype = self.type_of(right) if right is not None else ""
        temps = self.take_temps()
        is_chan = rtype == "chan"
        if declare:
            for n in lefts:
                self.declare(self.text(n), rtype[2:] if rtype.startswith("[]") and n is lefts[-1] else "")
        # (the loop's scope is opened by stmt_for_statement)
        header, body_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        first = header.id
        more = Var(f"$more{node.start_point[0] + 1}_{len(self.blocks)}")
        self.locals[more.name] = False
        self.terminate(Branch(more, body_b.id, exit_b.id, self.loc(clause), self.short_text(clause), "loop"))
        self.start(body_b)
        loc = self.loc(clause)
        self.emit(ir.Assign(loc, more, Opaque("more")))
        targets = [self.target(n) for n in lefts]
        if is_chan:
            values: list[ir.Expr] = [Opaque("received")]
        else:
            values = [Opaque("key"), Index(coll, SOME)]
        for tgt, value in zip(targets, values):
            self.emit(ir.Assign(loc, tgt, value))
        kills = self.loop_locals(node)
        self.loop_body(node.child_by_field_id(F.body), exit_b, header, labels, kills)
        self.jump(header)
        self.close_loop(exit_b, first, node)
        self.kill(temps + kills, self.end_loc(node))

    def unrolled_range(self, node: Node, name: str, lefts: list[Node], labels: tuple[str, ...]) -> None:
        """`for i, v := range outputs` over a slot slice: once per slot."""
        after = self.new_block()
        loc = self.loc(node)
        kills = self.loop_locals(node)
        for k in range(self.slots[name]):
            nxt = self.new_block()
            targets = [self.target(n) for n in lefts]
            values = [Const(k, str(k)), Var(f"{name}[{k}]")]
            for tgt, value in zip(targets, values):
                self.emit(ir.Assign(loc, tgt, value))
            self.loop_body(node.child_by_field_id(F.body), after, nxt, labels, kills)
            self.jump(nxt)
            self.start(nxt)
        self.jump(after)
        self.start(after)
        self.kill(kills, self.end_loc(node))

    def cases(self, node: Node) -> list[Node]:
        return [c for c in self.named(node) if c.type in ("expression_case", "type_case", "default_case",
                                                          "communication_case")]

    def switch_like(self, node: Node, value: ir.Expr | None, tagless: bool) -> None:
        labels = self.take_labels()
        cases = self.cases(node)
        after = self.new_block()
        bodies = [self.new_block() for _ in cases]
        default = next((i for i, c in enumerate(cases) if c.type == "default_case"), None)
        for i, case in enumerate(cases):
            if case.type == "default_case":
                continue
            nxt = self.new_block()
            self.case_test(case, value, tagless, bodies[i], nxt)
            self.start(nxt)
        self.jump(bodies[default] if default is not None else after)
        self.ctx.append(Breakable(after.id, None, labels))
        try:
            for i, case in enumerate(cases):
                self.start(bodies[i])
                self.scopes.append({})
                if case.type == "communication_case":
                    self.communication(case.child_by_field_id(F.communication))
                stmts = [s for s in self.named(case) if s.type == "statement_list"]
                falls = False
                for sl in stmts:
                    for s in self.named(sl):
                        self.stmt(s)
                        falls = s.type == "fallthrough_statement"
                self.scopes.pop()
                self.jump(bodies[i + 1] if falls and i + 1 < len(bodies) else after)
        finally:
            self.ctx.pop()
        self.start(after)

    def case_test(self, case: Node, value: ir.Expr | None, tagless: bool, body: Block, nxt: Block) -> None:
        if case.type == "expression_case" and tagless:
            exprs = self.named(case.child_by_field_id(F.value))
            if len(exprs) == 1:
                self.stmt_temps = []
                self.lower_cond(exprs[0], body, nxt)
                return
        if case.type == "expression_case" and value is not None:
            exprs = self.named(case.child_by_field_id(F.value))
            if len(exprs) == 1 and exprs[0].type in ("nil", "int_literal", "true", "false", "identifier"):
                cond = Op("==", (value, self.lower_expr(exprs[0])))
                self.terminate(Branch(cond, body.id, nxt.id, self.loc(case), self.short_text(case), "case"))
                return
        self.terminate(Branch(Opaque(self.short_text(case)), body.id, nxt.id, self.loc(case),
                              self.short_text(case)[:40], "case"))

    def communication(self, comm: Node | None) -> None:
        """The send or receive of a select case, done when the case is chosen."""
        if comm is None:
            return
        self.stmt_temps = []
        if comm.type == "send_statement":
            self.stmt_send_statement(comm)
            return
        if comm.type == "receive_statement":
            declare = any(c.type == ":=" for c in comm.children)
            for n in self.named(comm.child_by_field_id(F.left)):
                if declare:
                    self.declare(self.text(n), "")
                self.emit(ir.Assign(self.loc(comm), self.target(n), Opaque("received")))
            self.finish_statement(comm)
            return
        self.stmt(comm)

    def stmt_expression_switch_statement(self, node: Node) -> None:
        self.scoped(self.stmt_expression_switch_statement_body, node)

    def stmt_expression_switch_statement_body(self, node: Node) -> None:
        self.stmt_temps = []
        self.simple(node.child_by_field_id(F.initializer))
        value_node = node.child_by_field_id(F.value)
        value = None
        if value_node is not None:
            self.stmt_temps = []
            value = self.temp()
            self.assign_from(value, value_node, self.loc(value_node))
        self.switch_like(node, value, tagless=value_node is None)

    def stmt_type_switch_statement(self, node: Node) -> None:
        self.scoped(self.stmt_type_switch_statement_body, node)

    def stmt_type_switch_statement_body(self, node: Node) -> None:
        self.stmt_temps = []
        self.simple(node.child_by_field_id(F.initializer))
        value = self.lower_expr(node.child_by_field_id(F.value))
        for alias in self.named(node.child_by_field_id(F.alias)):
            var = self.declare(self.text(alias), "")
            self.emit(ir.Assign(self.loc(alias), Var(var), value))
        self.switch_like(node, None, tagless=False)

    def stmt_select_statement(self, node: Node) -> None:
        self.switch_like(node, None, tagless=False)

    # -- jumps

    def stmt_labeled_statement(self, node: Node) -> None:
        label_node = node.child_by_field_id(F.label)
        label = self.text(label_node) if label_node is not None else ""
        block = self.label_block(label)
        self.jump(block)
        self.start(block)
        inner = [c for c in self.named(node) if c != label_node]
        if not inner:
            return
        body = inner[0]
        if body.type in ("for_statement", "expression_switch_statement", "type_switch_statement", "select_statement"):
            self.pending_label = self.pending_label + (label,)
        self.stmt(body)
        self.pending_label = ()

    def label_block(self, label: str) -> Block:
        block = self.labels.get(label)
        if block is None:
            block = self.labels[label] = self.new_block()
        return block

    def stmt_goto_statement(self, node: Node) -> None:
        label = self.text(self.named(node)[0]) if self.named(node) else ""
        self.jump(self.label_block(label))

    def stmt_break_statement(self, node: Node) -> None:
        label = self.text(self.named(node)[0]) if self.named(node) else None
        dying: list[str] = []
        for c in reversed(self.ctx):
            dying.extend(c.kills)
            if label in c.labels if label else True:
                self.kill(tuple(dying), self.loc(node))
                self.jump(c.brk)
                return
        self.terminate(Jump(self.new_block().id))

    def stmt_continue_statement(self, node: Node) -> None:
        label = self.text(self.named(node)[0]) if self.named(node) else None
        dying: list[str] = []
        for c in reversed(self.ctx):
            dying.extend(c.kills)
            if c.cont is not None and (label in c.labels if label else True):
                self.kill(tuple(dying), self.loc(node))
                self.jump(c.cont)
                return
        self.terminate(Jump(self.new_block().id))

    # -- return and defer

    def stmt_return_statement(self, node: Node) -> None:
        self.stmt_temps = []
        values = []
        for c in self.named(node):
            values.extend(self.named(c) if c.type == "expression_list" else [c])
        loc = self.loc(node)
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
                keep, done = self.new_block(), self.new_block()
                self.terminate(Branch(Op("==", (ret, NIL)), keep.id, done.id, loc, "err == nil", "if"))
                self.start(keep)
                self.emit_env_kept(loc)
                self.jump(done)
                self.start(done)
            else:
                self.emit_env_kept(loc)
        self.terminate(Return(ret, loc))

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

    # ------------------------------------------------------------------ closures

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

    # ------------------------------------------------------------------ expressions

    def lower_expr(self, node: Node | None, discard: bool = False, dest: ir.Expr | None = None) -> ir.Expr:
        if node is not None and self.overrides:
            bound = self.overrides.get(node.id)
            if bound is not None:
                return bound
        return super().lower_expr(node, discard, dest)

    def expr_identifier(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        name = self.text(node)
        if name in self.slots:  # the whole slot slice as a value: a collection of its slots
            coll = self.temp()
            self.locals[coll.name] = True
            self.call_counter += 1
            self.emit(ir.Call(self.call_counter, self.loc(node), "$keep", "plain", coll,
                              tuple(Var(f"{name}[{k}]") for k in range(self.slots[name])), None, name))
            return coll
        return Var(self.resolve(name))

    def expr_nil(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return NIL

    def expr_true(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return TRUE

    def expr_false(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return FALSE

    def expr_int_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        text = self.text(node).replace("_", "")
        try:
            return Const(int(text, 0), text)
        except ValueError:
            return Const(None, text)

    def expr_parenthesized_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        inner = self.named(node)
        return self.lower_expr(inner[0], discard, dest) if inner else Opaque("()")

    def expr_selector_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        operand = node.child_by_field_id(F.operand)
        name = self.text(node.child_by_field_id(F.field))
        if operand is not None and self.is_package(operand):
            pkg = self.text(operand)
            return Var(f"{ORT}.{name}" if pkg in self.scan.ort_aliases else f"{pkg}.{name}")
        return Field(Deref(self.lower_expr(operand)), name)

    def expr_index_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        operand = node.child_by_field_id(F.operand)
        index = node.child_by_field_id(F.index)
        if operand is not None and operand.type == "identifier" and self.text(operand) in self.slots \
                and index is not None and index.type == "int_literal":
            return Var(f"{self.text(operand)}[{int(self.text(index), 0)}]")
        base = self.lower_expr(operand)
        return Index(base, self.lower_expr(index))

    def expr_slice_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`s[a:b]` shows the elements of s."""
        for part in ("start", "end", "capacity"):
            child = node.child_by_field_name(part)
            if child is not None:
                self.lower_expr(child)
        return self.lower_expr(node.child_by_field_id(F.operand))

    def expr_call_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_call(node, outs=[], dest=dest)

    def expr_type_assertion_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_expr(node.child_by_field_id(F.operand), discard, dest)

    def expr_type_conversion_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        if self.generic_binding_call(node):
            return self.lower_call(node, outs=[], dest=dest)
        return self.lower_expr(node.child_by_field_id(F.operand), discard, dest)

    def expr_unary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        op = self.operator(node)
        operand = node.child_by_field_id(F.operand)
        if op == "&":
            if operand is not None and operand.type == "composite_literal":
                return self.lower_expr(operand)
            return AddrOf(self.lower_expr(operand))
        if op == "<-":
            self.lower_expr(operand)
            return Opaque("received")
        if op == "*":
            return Deref(self.lower_expr(operand))
        return Op(op, (self.lower_expr(operand),))

    def expr_func_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.closure(node)

    def expr_composite_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        ctype = node.child_by_field_id(F.type)
        body = node.child_by_field_id(F.body)
        ttype = self.scan.norm_type(ctype)
        loc = self.loc(node)
        elements = [e for e in self.named(body) if e.type in ("keyed_element", "literal_element", "element")]
        if ctype is not None and ctype.type in ("slice_type", "array_type", "implicit_length_array_type", "map_type"):
            coll = self.temp()
            self.locals[coll.name] = True
            values = []
            for e in elements:
                parts = self.named(e)
                value = parts[-1] if parts else None
                if e.type == "keyed_element" and len(parts) == 2:
                    self.lower_literal_part(parts[0])
                values.append(self.lower_literal_part(value))
            if values:
                self.call_counter += 1
                self.emit(ir.Call(self.call_counter, loc, "$keep", "plain", coll, tuple(values), None,
                                  self.short_text(node)))
            return coll
        is_pool = ttype == "sync.Pool"
        for e in elements:
            parts = self.named(e)
            if not parts:
                continue
            fname = ""
            if e.type == "keyed_element" and len(parts) == 2:
                fname = self.text(parts[0]).strip()
            value_node = parts[-1]
            inner = self.named(value_node)[0] if value_node.type == "literal_element" and self.named(value_node) else value_node
            if is_pool and fname == "New" and inner.type == "func_literal":
                self.closure(inner, drop_returns=True, handoff=False)
                continue
            value = self.lower_literal_part(value_node)
            if self.scan.non_owning(ttype, fname):
                continue  # a field nobody destroys: not handed to anyone
            self.emit(ir.Assign(loc, Deref(Opaque("struct literal")), value))
        return Opaque(self.short_text(node))

    def lower_literal_part(self, node: Node | None) -> ir.Expr:
        if node is None:
            return Opaque("")
        if node.type == "literal_element":
            inner = self.named(node)
            return self.lower_literal_part(inner[0]) if inner else Opaque("")
        if node.type == "literal_value":
            for e in self.named(node):
                self.lower_literal_part(e)
            return Opaque("{...}")
        if node.type == "keyed_element":
            parts = self.named(node)
            for p in parts[:-1]:
                self.lower_literal_part(p)
            return self.lower_literal_part(parts[-1]) if parts else Opaque("")
        return self.lower_expr(node)

    def expr_binary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return super().expr_binary_expression(node, discard, dest)

    def expr_fallback(self, node: Node) -> ir.Expr:
        if node.type.endswith("_type") or node.type in ("type_identifier", "qualified_type"):
            return Opaque(self.short_text(node))
        return self.expr_generic(node)

    # ------------------------------------------------------------------ calls

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
        for i, a in enumerate(arg_nodes):
            if a.type == "func_literal":
                args.append(self.closure(a))
            elif fill and i == 1:
                value, slots, fill_coll = self.run_outputs(a)
                args.append(value)
            elif a.type.endswith("_type") or a.type in ("type_identifier", "qualified_type"):
                continue  # make([]T, n), new(T)
            else:
                args.append(self.lower_expr(a))
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

    # ------------------------------------------------------------------ types

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
