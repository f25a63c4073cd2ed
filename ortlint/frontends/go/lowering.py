"""One Go function body -> IR (`GoLowering`); the constructs it understands live in the mixins it is assembled from."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tree_sitter import Node

from ... import ir
from ...ir import Block, Deref, Var
from ..common.cfg import CfgBuilder
from .calls import GoCalls
from .control import GoControl
from .exits import GoExits
from .expressions import GoExpressions
from .closure_locals import closure_locals
from .scan import ORT, FileScan, walk
from .scopes import Breakable, Deferred
from .statements import GoStatements
from .syntax import NIL, F, walk_with_parents

if TYPE_CHECKING:
    from .frontend import GoFrontEnd


class GoLowering(GoStatements, GoControl, GoExits, GoExpressions, GoCalls, CfgBuilder):
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
        self.value_structs: set[str] = set()  # variables holding a struct value (`var s T`, `s := T{}`): `&s` is s
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
        self.flag_result: int | None = None  # the one bool result beside the error (`func f() (bool, error)`)
        self.returned_flag: str | None = None  # what the `return` being lowered gives it (exits.flag_text)
        self.tracks_env = b"InitializeEnvironment" in self.src[node.start_byte:node.end_byte]
        self.closure_locals: dict[str, str] = {}  # local bound once to a func literal -> that literal's function

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
            self.closure_locals = {name: self.closure_name(lit) for name, lit in
                                   closure_locals(node.child_by_field_id(F.body), self.text, self.named).items()
                                   if name not in params}
            for name in params + self.named_results:
                self.scopes[0][name] = name
            self.block_statements(node.child_by_field_id(F.body))
        if self.cur is not None:
            end = self.end_loc(node)
            self.returned_flag = self.flag_text([])
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
        bools: list[int] = []
        for p in self.named(result):
            if p.type != "parameter_declaration":
                continue
            names = p.children_by_field_id(F.name)
            last = self.text(p.child_by_field_id(F.type))
            for n in names:
                self.named_results.append(self.text(n))
                self.types[self.text(n)] = self.scan.norm_type(p.child_by_field_id(F.type))
            if last == "bool":
                bools.extend(range(self.results, self.results + max(1, len(names))))
            self.results += max(1, len(names))
        self.returns_error = last == "error"
        if self.returns_error and len(bools) == 1:
            self.flag_result = bools[0]

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

    # -- if / for / switch / select

    # -- jumps

    # -- return and defer

    # ------------------------------------------------------------------ closures

    # ------------------------------------------------------------------ expressions

    def lower_expr(self, node: Node | None, discard: bool = False, dest: ir.Expr | None = None) -> ir.Expr:
        if node is not None and self.overrides:
            bound = self.overrides.get(node.id)
            if bound is not None:
                return bound
        return super().lower_expr(node, discard, dest)

    # ------------------------------------------------------------------ calls

    # ------------------------------------------------------------------ types

