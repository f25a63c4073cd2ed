"""C expressions and calls -> IR expressions and `Call` events (both JNI call styles, function tables, casts
dropped)."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import AddrOf, Const, Deref, Field, Index, Loc, Opaque, Var
from .syntax import _NULL_WORDS, _OPERATORS, _VOID, _WHITESPACE, MAX_MACRO_DEPTH, parse_int


class CExpressions:
    """C expressions and calls -> IR expressions and `Call` events (both JNI call styles, function tables, casts
dropped)."""

    def pure_expr(self, node: Node) -> ir.Expr:
        """An expression known to have no side effects (case labels)."""
        return self.lower_expr(node)

    def expr_parenthesized_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) == 1:
            return self.lower_expr(inner[0], discard, dest)
        if inner and inner[0].type == "compound_statement":  # GNU statement expression
            self.lower_stmt(inner[0])
            return Opaque("({...})")
        return self.expr_generic(node)

    def expr_identifier(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        # the most frequent node of all: `text` and the cache lookup of `name_value` inlined
        name = self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")
        if self.object_macros and name in self.object_macros:
            expanded = self.object_macro_use(name, node, discard, dest)
            if expanded is not None:
                return expanded
        found = self.name_values.get(name)
        return found if found is not None else self.name_value(name)

    def object_macro_use(self, name: str, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr | None:
        """A use of an object-like macro whose body reads memory, lowered as that body (each use
        reads it again: `while (CUR) { free(CUR); CUR_LV = NULL; pop(); }` frees another block each
        time); a name declared in the function is the name, not the macro."""
        if name in self.locals or self.macro_depth >= MAX_MACRO_DEPTH:
            return None
        return self.expand_macro(self.object_macros[name], node, None, discard, dest)

    def name_value(self, name: str) -> ir.Expr:
        """The value a plain name reads: `Var(name)`, or a constant for `NULL` / `true` / ...
        IR values are immutable, so the file shares one per name (names recur all over it)."""
        found = self.name_values.get(name)
        if found is None:
            found = Const(_NULL_WORDS[name], name) if name in _NULL_WORDS else self.var(name)
            self.name_values[name] = found
        return found

    def var(self, name: str) -> Var:
        """`Var(name)`, one object per name in the file (IR values are never changed)."""
        found = self.unit.vars.get(name)
        if found is None:
            found = self.unit.vars[name] = Var(name)
        return found

    def expr_null(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.literal(self.text(node), 0)
    expr_nullptr = expr_null

    def literal(self, text: str, value: int | None) -> Const:
        """`Const(value, text)`, shared per file (the same literal always has the same value)."""
        found = self.unit.literals.get(text)
        if found is None or found.value != value:
            found = self.unit.literals[text] = Const(value, text)
        return found

    def expr_true(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return Const(1, "true")

    def expr_false(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return Const(0, "false")

    def expr_number_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`Const(parse_int(text), text)`, shared per file and looked up by the literal's bytes
        (`0`, `1`, `nullptr`-like counts recur all over a file: not decoded again)."""
        raw = self.src[node.start_byte:node.end_byte]
        found = self.unit.number_literals.get(raw)
        if found is None:
            text = raw.decode("utf-8", "replace")
            found = self.unit.literals.get(text)
            if found is None:
                found = self.literal(text, parse_int(text))
            self.unit.number_literals[raw] = found
        return found

    def expr_string_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return Const(None, self.short_text(node))
    expr_concatenated_string = expr_char_literal = expr_raw_string_literal = expr_string_literal

    def expr_sizeof_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return Opaque(self.short_text(node))  # the operand is not evaluated
    expr_alignof_expression = expr_offsetof_expression = expr_sizeof_expression

    def expr_field_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        F = self.F
        field_node = node.child_by_field_id(F.field)
        base = self.lower_expr(node.child_by_field_id(F.argument))
        name = self.text(field_node) if field_node is not None else "?"
        if self.is_arrow(node):
            self.emit(ir.Use(self.loc(node), base))
            return Field(Deref(base), name)
        return Field(base, name)

    def expr_subscript_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        F = self.F
        base = self.lower_expr(node.child_by_field_id(F.argument))
        index_node = node.child_by_field_id(F.index)
        if index_node is None:  # tree-sitter-cpp: subscript_argument_list
            indices = node.child_by_field_id(F.indices)
            index_node = indices.named_children[0] if indices is not None and indices.named_children else None
        index = self.lower_expr(index_node) if index_node is not None else Opaque("?")
        self.emit(ir.Use(self.loc(node), base))
        return Index(base, index)

    def expr_pointer_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        op = node.child_by_field_id(self.F.operator)
        address_of = self.src[op.start_byte:op.end_byte] == b"&"
        arg = self.lower_expr(node.child_by_field_id(self.F.argument))
        if address_of:
            # `&*p` is p (C11 6.5.3.2), and so is `&r` of a C++ reference parameter read as `*r`
            return arg.base if type(arg) is Deref else AddrOf(arg)
        self.emit(ir.Use(self.loc(node), arg))
        return Deref(arg)

    def expr_conditional_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_choice(node, dest)

    def expr_comma_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        self.lower_expr(node.child_by_field_id(self.F.left), discard=True)
        return self.lower_expr(node.child_by_field_id(self.F.right), discard, dest)

    def assign_special(self, target: ir.Expr, value: Node, loc: Loc) -> bool:
        if value.type == "initializer_list":
            self.lower_initializer(target, value)
            return True
        if value.type == "compound_literal_expression" and self.unit.language_name == "c":
            init = value.child_by_field_id(self.F.value)
            if init is not None and init.type == "initializer_list":
                self.lower_initializer(target, init)  # `x = (S){.buf = f()}`: x's slots, as for `S x = {...}`
                return True
        return False

    def expr_initializer_list(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`{a, f()}` as a value (`return (S){...}`, an argument): a temporary aggregate built
        from its elements, so what they hold goes where the aggregate goes."""
        aggregate = self.temp()
        self.locals[aggregate.name] = True
        self.lower_initializer(aggregate, node)
        return aggregate

    def expr_compound_literal_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        value = node.child_by_field_id(self.F.value)
        return self.lower_expr(value) if value is not None else Opaque("(T){...}")

    def expr_ERROR(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        self.stmt_ERROR(node)
        return Opaque("?")

    def expr_call_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        F = self.F
        function = node.child_by_field_id(F.function)
        arguments = node.child_by_field_id(F.arguments)
        arg_nodes = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
        fn = self.unparen(function) if function is not None else None
        macros = self.unit.macros
        if macros and fn is not None and fn.type == "identifier":
            macro = macros.get(self.text(fn))
            if macro is not None and self.macro_depth < MAX_MACRO_DEPTH:
                expanded = self.expand_macro(macro, node, arguments, discard, dest)
                if expanded is not None:
                    return expanded
        if function is not None and function.type == "parenthesized_expression" and len(arg_nodes) == 1 \
                and fn is not None and fn.type == "identifier" and self.unit.is_type_name(self.text(fn)):
            # `(jstring)(expr)`: a cast that reads like a call of `(f)(x)`
            return self.lower_expr(arg_nodes[0], discard, dest)
        callee, style, receiver, drop_first = self.normalize_callee(fn, arg_nodes)
        written = len(arg_nodes)
        if drop_first:
            arg_nodes = arg_nodes[1:]
        receiver_expr = self.lower_expr(receiver) if receiver is not None else None
        args = tuple([self.lower_expr(a) for a in arg_nodes])
        return self.emit_call(node, callee, style, receiver_expr, args, discard, dest, written=written)

    def emit_call(self, node: Node, callee: str, style: str, receiver: ir.Expr | None,
                  args: tuple[ir.Expr, ...], discard: bool, dest: ir.Expr | None, may_throw: bool = False,
                  written: int | None = None) -> ir.Expr:
        """`written`: the number of arguments as written when the self argument was dropped
        (`x->F(x, ...)`), the count an API entry's arity is compared with."""
        target = dest if dest is not None else (None if discard else self.temp())
        count = written if written is not None else len(args)
        if style in ("table", "method") and self.not_the_api_entry(callee, style, count):
            # `engine->Run(x, n)`, `tensor.GetTensorDataType()`: not the API entry of that name
            # (its count differs): an unknown method, unless the policy would still match the
            # bare name as a method (an OrtEpApi entry reached through an untyped holder)
            style = "indirect" if self.unit.policy.lookup("method", callee) is not None else "method"
        self.call_counter += 1
        borrows = self.unit.borrowed_args(callee, len(args)) if style == "plain" and self.unit.prototypes else ()
        self.emit(ir.Call(self.call_counter, self.loc(node), callee, style, receiver, args, target,
                          self.short_text(node), may_throw, borrows, self.macro_origin, self.macro_at))
        return target if target is not None else _VOID

    def not_the_api_entry(self, callee: str, style: str, count: int) -> bool:
        """A member call matched to a function-table entry or an implementer field by its name
        alone (`x->F(...)`, `holder.F(...)`, `Derived::F` of a header class) whose argument count
        is not the entry's (`[table_arity]`): a method of the program's own that happens to share
        the name. A method the policy describes under its own qualified name is left alone."""
        policy = self.unit.policy
        if not policy.table_arity:
            return False
        if style == "method" and "::" in callee and (("method", callee) in policy.calls or ("any", callee) in policy.calls):
            return False
        arities = policy.table_arity.get(callee.rsplit("::", 1)[-1] if "::" in callee else callee)
        return arities is not None and count not in arities

    def normalize_callee(self, fn: Node | None, arg_nodes: list[Node]) -> tuple[str, str, Node | None, bool]:
        """Return (name, style, receiver node, drop first argument) for a call's function part.

        `api->F(...)` and `g_ort->F(...)` are table calls of F; `(*env)->F(env, ...)` drops the
        self argument so it reads like the C++ form `env->F(...)`.
        """
        if fn is None:
            return "<indirect>", "indirect", None, False
        fn = self.unparen(fn)
        kind = fn.type
        if kind == "identifier":
            return self.text(fn), "plain", None, False
        if kind == "field_expression":
            F = self.F
            field_node = fn.child_by_field_id(F.field)
            base = fn.child_by_field_id(F.argument)
            name = self.text(field_node) if field_node is not None else "?"
            if base is not None and self.is_arrow(fn):
                table = self.strip_casts(base)
                self_arg = table
                if table.type == "pointer_expression":
                    op = table.child_by_field_id(F.operator)
                    if self.src[op.start_byte:op.end_byte] == b"*":
                        self_arg = self.strip_casts(table.child_by_field_id(F.argument))
                drop = bool(arg_nodes) and self.same_text(self.strip_casts(arg_nodes[0]), self_arg)
                return name, "table", self_arg if drop else base, drop
            return name, "method", base, False
        if kind in ("qualified_identifier", "template_function", "scoped_identifier"):
            return _WHITESPACE.sub("", self.text(fn)), "plain", None, False
        return "<indirect>", "indirect", None, False

    def operator(self, node: Node) -> str:
        """The operator of a unary/binary/assignment expression (`and` read as `&&`). The same
        few tokens recur all over a file: they are looked up by their bytes, not decoded again."""
        op_node = node.child_by_field_id(self.F.operator)
        if op_node is None:
            return "?"
        raw = self.src[op_node.start_byte:op_node.end_byte]
        found = _OPERATORS.get(raw)
        if found is None:
            op = raw.decode("utf-8", "replace").strip()
            found = _OPERATORS[raw] = self.OPERATOR_ALIASES.get(op, op)
        return found

    def is_arrow(self, field_expression: Node) -> bool:
        """Is this `p->f` (not `s.f`)? The operator token's bytes, without decoding them."""
        op = field_expression.child_by_field_id(self.F.operator)
        return op is not None and self.src[op.start_byte:op.end_byte] == b"->"

    def same_text(self, a: Node, b: Node) -> bool:
        """`self.text(a) == self.text(b)`, comparing bytes (decoded only when not ASCII)."""
        src = self.src
        x, y = src[a.start_byte:a.end_byte], src[b.start_byte:b.end_byte]
        if x == y:
            return True
        if x.isascii() and y.isascii():
            return False
        return x.decode("utf-8", "replace") == y.decode("utf-8", "replace")
