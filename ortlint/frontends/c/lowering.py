"""One C function body -> IR blocks (`FunctionLowering`); the constructs it understands live in the mixins
it is assembled from."""
from __future__ import annotations

import re
from collections.abc import Callable
from tree_sitter import Node
from ... import ir
from ...ir import AddrOf, Block, Branch, Const, Deref, Field, Index, Jump, Loc, Op, Opaque, Return, Var
from ..common.cfg import CfgBuilder, TooDeep, handler_table
from ..common.declaration_macros import expand_text, with_declared_name
from .syntax import MAX_MACRO_DEPTH, MAX_NESTING, _NULL_WORDS, _OPERATORS, _UNINITIALIZED, _VOID, _WHITESPACE, _declared_identifier, _first_function_body, _short, declarator_name, find_function_declarator, is_array_declarator, parse_int
from ..common.macro_args import Macro, macro_label, split_macro_args, substitute_macro
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .frontend import CFrontEnd


class FunctionLowering(CfgBuilder):
    """Builds the control-flow graph of one function definition."""

    language = "c"

    CALL_NODE_TYPES = ("call_expression", "conditional_expression", "new_expression",
                       "object_creation_expression", "method_invocation")

    def __init__(self, unit: "CFrontEnd", node: Node, name: str):
        self.init_graph()
        self._stmt_handlers = handler_table(type(self), "stmt_")
        self.unit = unit
        self.src = unit.src
        self.ascii = unit.ascii
        self.node = node
        self.name = name
        self.labels: dict[str, int] = {}
        self.loop_stack: list[tuple[int, int]] = []  # (break target, continue target)
        self.switch_breaks: list[int] = []
        self.break_stack: list[int] = []
        self.loc_override: Loc | None = None
        self.macro_depth = 0
        self.macro_origin = ""  # the outermost macro being expanded, for trace steps
        self.F = unit.F
        self.name_values = unit.name_values

    # ------------------------------------------------------------------ graph plumbing

    def label_block(self, name: str) -> Block:
        if name not in self.labels:
            self.labels[name] = self.new_block().id
        return self.blocks[self.labels[name]]

    # ------------------------------------------------------------------ small helpers

    def note(self, node: Node, message: str) -> None:
        self.notes.append((self.loc(node), message))

    # ------------------------------------------------------------------ entry point

    def lower(self) -> ir.Function:
        declarator = self.node.child_by_field_id(self.F.declarator)
        self.params = self.collect_params(declarator)
        entry = self.new_block()
        self.start(entry)
        body = self.node.child_by_field_id(self.F.body)
        if body is not None:
            self.lower_function_body(body)
        end_loc = self.loc(self.node)
        if self.cur is not None:
            self.terminate(Return(None, Loc(end_loc.end_line, end_loc.end_col, end_loc.end_line, end_loc.end_col)))
        for block in self.blocks:  # labels that were jumped to but never defined
            if block.term is None:
                block.term = Return(None, end_loc)
        return ir.Function(
            name=self.name, path=self.unit.path, loc=end_loc, language=self.language,
            params=self.params, locals=self.locals, blocks=self.blocks, entry=0,
            is_static=self.function_is_static(), notes=self.notes,
        )

    def function_is_static(self) -> bool:
        """Internal linkage: only this file can call the function."""
        return self.unit.is_static(self.node)

    def lower_function_body(self, body: Node) -> None:
        self.lower_stmt(body)

    def collect_params(self, declarator: Node | None) -> list[str]:
        func = find_function_declarator(declarator)
        if func is None:
            return []
        params = func.child_by_field_id(self.F.parameters)
        names: list[str] = []
        if params is None:
            return names
        for p in params.named_children:
            if p.type in ("parameter_declaration", "optional_parameter_declaration"):
                name = declarator_name(p.child_by_field_id(self.F.declarator), self.src)
                names.append(name or f"$arg{len(names)}")
        return names

    # ------------------------------------------------------------------ statements

    def lower_stmt(self, node: Node) -> None:
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            kind = node.type
            try:
                handler = self._stmt_handlers[kind]
            except KeyError:
                handler = self._stmt_handlers[kind] = self._stmt_handler(kind)
            handler(self, node)
        finally:
            self.depth -= 1

    @classmethod
    def _stmt_handler(cls, kind: str) -> Callable[[FunctionLowering, Node], None]:
        """What `lower_stmt` calls for a node type (resolved once per class and type)."""
        handler = getattr(cls, "stmt_" + kind, None)
        if handler is not None:
            return handler
        if kind.startswith("preproc_") or kind in ("comment", ";", "{", "}"):
            return cls.stmt_preproc_other
        return cls.lower_other_stmt

    def lower_other_stmt(self, node: Node) -> None:
        """A node with no statement handler: an expression used as a statement."""
        if node.is_error or node.has_error and node.type == "ERROR":
            self.stmt_ERROR(node)
        elif node.is_named:
            self.lower_expr_stmt(node)

    def stmt_compound_statement(self, node: Node) -> None:
        for child in node.named_children:
            self.lower_stmt(child)

    stmt_translation_unit = stmt_compound_statement

    def stmt_expression_statement(self, node: Node) -> None:
        for child in node.named_children:
            if child.type != "comment":
                self.lower_expr_stmt(child)

    def lower_expr_stmt(self, node: Node) -> None:
        self.stmt_temps = []
        self.lower_expr(node, discard=True)
        self.finish_statement(node)

    def stmt_declaration(self, node: Node) -> None:
        self.stmt_temps = []
        for child in node.children_by_field_id(self.F.declarator):
            self.lower_declarator(child, node)
        self.finish_statement(node)

    def lower_declarator(self, decl: Node, whole: Node) -> None:
        if decl.type == "init_declarator":
            target = decl.child_by_field_id(self.F.declarator)
            value = decl.child_by_field_id(self.F.value)
        else:
            target, value = decl, None
        name = declarator_name(target, self.src)
        if not name or find_function_declarator(target) is not None and value is None:
            return  # a local prototype
        self.locals[name] = is_array_declarator(target)
        if value is None:
            if not self.locals[name]:
                self.emit(ir.Assign(self.loc(decl), self.var(name), _UNINITIALIZED))
            return
        if value.type == "initializer_list":
            self.lower_initializer(self.var(name), value)
            return
        self.assign_from(self.var(name), value, self.loc(decl))

    def lower_initializer(self, target: ir.Expr, init: Node) -> None:
        """`T a[2] = {NULL, f()}`: calls inside are evaluated, elements stay untracked."""
        for child in init.named_children:
            if child.type == "initializer_list":
                self.lower_initializer(target, child)
            elif child.type == "initializer_pair":
                value = child.child_by_field_id(self.F.value)
                if value is not None:
                    self.lower_expr(value)
            else:
                self.lower_expr(child)

    def stmt_return_statement(self, node: Node) -> None:
        self.stmt_temps = []
        kids = node.named_children
        value = kids[0] if kids else None
        expr = self.lower_expr(value) if value is not None and value.type != "comment" else None
        self.terminate(Return(expr, self.loc(node)))
        self.stmt_temps = []

    def stmt_if_statement(self, node: Node) -> None:
        F = self.F
        cond = node.child_by_field_id(F.condition)
        then = node.child_by_field_id(F.consequence)
        alt = node.child_by_field_id(F.alternative)
        then_b, join = self.new_block(), self.new_block()
        else_b = self.new_block() if alt is not None else join
        self.stmt_temps = []
        self.lower_cond(cond, then_b, else_b)
        temps = tuple(self.stmt_temps)
        self.stmt_temps = []
        self.start(then_b)
        self.kill_at_start(temps, cond)
        if then is not None:
            self.lower_stmt(then)
        self.jump(join)
        if alt is not None:
            self.start(else_b)
            self.kill_at_start(temps, cond)
            for child in alt.named_children:  # else_clause wraps the statement
                self.lower_stmt(child)
            self.jump(join)
        elif temps:
            self.start(join)
            self.kill_at_start(temps, cond)
            return
        self.start(join)

    def kill_at_start(self, temps: tuple[str, ...], node: Node | None) -> None:
        if node is not None and temps:  # most conditions leave no temporaries: no location to build
            self.kill(temps, self.loc(node))

    def stmt_while_statement(self, node: Node) -> None:
        header, body_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        self.stmt_temps = []
        cond = node.child_by_field_id(self.F.condition)
        self.lower_cond(cond, body_b, exit_b, kind="loop")
        temps = tuple(self.stmt_temps)
        self.stmt_temps = []
        first = len(self.blocks)
        self.start(body_b)
        self.kill_at_start(temps, cond)
        self.lower_loop_body(node.child_by_field_id(self.F.body), exit_b, header)
        self.jump(header)
        self.close_loop(exit_b, {body_b.id, header.id} | set(range(first, len(self.blocks))), temps, cond, node)

    def lower_loop_body(self, body: Node | None, break_to: Block, continue_to: Block) -> None:
        self.loop_stack.append((break_to.id, continue_to.id))
        self.break_stack.append(break_to.id)
        try:
            if body is not None:
                self.lower_stmt(body)
        finally:
            self.loop_stack.pop()
            self.break_stack.pop()

    def close_loop(self, exit_b: Block, body_ids: set[int], temps: tuple[str, ...], cond: Node | None, node: Node) -> None:
        self.start(exit_b)
        self.kill_at_start(temps, cond)
        end = self.loc(node)
        self.emit(ir.ScopeExit(Loc(end.end_line, end.end_col, end.end_line, end.end_col), frozenset(body_ids)))

    def stmt_do_statement(self, node: Node) -> None:
        body_b, cond_b, exit_b = self.new_block(), self.new_block(), self.new_block()
        self.jump(body_b)
        first = len(self.blocks)
        self.start(body_b)
        self.lower_loop_body(node.child_by_field_id(self.F.body), exit_b, cond_b)
        self.jump(cond_b)
        self.start(cond_b)
        self.stmt_temps = []
        cond = node.child_by_field_id(self.F.condition)
        loop_again = self.new_block()
        self.lower_cond(cond, loop_again, exit_b, kind="loop")
        temps = tuple(self.stmt_temps)
        self.stmt_temps = []
        self.start(loop_again)
        self.kill_at_start(temps, cond)
        self.jump(body_b)
        self.close_loop(exit_b, {body_b.id, cond_b.id} | set(range(first, len(self.blocks))), temps, cond, node)

    def stmt_for_statement(self, node: Node) -> None:
        init = node.child_by_field_id(self.F.initializer)
        if init is not None:
            self.lower_stmt(init) if init.type == "declaration" else self.lower_expr_stmt(init)
        header, body_b, update_b, exit_b = self.new_block(), self.new_block(), self.new_block(), self.new_block()
        self.jump(header)
        self.start(header)
        cond = node.child_by_field_id(self.F.condition)
        self.stmt_temps = []
        if cond is not None:
            self.lower_cond(cond, body_b, exit_b, kind="loop")
        else:
            self.jump(body_b)
        temps = tuple(self.stmt_temps)
        self.stmt_temps = []
        first = len(self.blocks)
        self.start(body_b)
        self.kill_at_start(temps, cond)
        self.lower_loop_body(node.child_by_field_id(self.F.body), exit_b, update_b)
        self.jump(update_b)
        self.start(update_b)
        for update in node.children_by_field_id(self.F.update):
            self.lower_expr_stmt(update)
        self.jump(header)
        self.close_loop(exit_b, {body_b.id, header.id, update_b.id} | set(range(first, len(self.blocks))), temps, cond, node)

    def stmt_switch_statement(self, node: Node) -> None:
        self.stmt_temps = []
        cond = node.child_by_field_id(self.F.condition)
        value = self.lower_expr(cond) if cond is not None else Opaque("?")
        exit_b = self.new_block()
        body = node.child_by_field_id(self.F.body)
        cases = [c for c in (body.named_children if body is not None else []) if c.type == "case_statement"]
        case_blocks = [self.new_block() for _ in cases]
        default_target = exit_b
        for case, block in zip(cases, case_blocks):
            case_value = case.child_by_field_id(self.F.value)
            if case_value is None:
                default_target = block
                continue
            test_b = self.new_block()
            self.jump(test_b)
            self.start(test_b)
            next_b = self.new_block()
            expr = Op("==", (value, self.pure_expr(case_value)))
            self.terminate(Branch(expr, block.id, next_b.id, self.loc(case), _short(f"case {self.text(case_value)}"), "case"))
            self.start(next_b)
        self.jump(default_target)
        self.break_stack.append(exit_b.id)
        try:
            for case, block in zip(cases, case_blocks):
                self.jump(block)  # fall-through from the previous case
                self.start(block)
                value_node = case.child_by_field_id(self.F.value)
                for child in case.named_children:
                    if child != value_node and child.type != "comment":
                        self.lower_stmt(child)
            # statements in the switch body before any case label are unreachable; skip them
        finally:
            self.break_stack.pop()
        self.jump(exit_b)
        self.start(exit_b)

    def stmt_case_statement(self, node: Node) -> None:  # a case label outside a switch body
        for child in node.named_children:
            if child != node.child_by_field_id(self.F.value):
                self.lower_stmt(child)

    def stmt_break_statement(self, node: Node) -> None:
        if self.break_stack:
            self.terminate(Jump(self.break_stack[-1]))

    def stmt_continue_statement(self, node: Node) -> None:
        if self.loop_stack:
            self.terminate(Jump(self.loop_stack[-1][1]))

    def stmt_goto_statement(self, node: Node) -> None:
        label = node.child_by_field_id(self.F.label)
        if label is not None:
            self.terminate(Jump(self.label_block(self.text(label)).id))

    def stmt_labeled_statement(self, node: Node) -> None:
        label = node.child_by_field_id(self.F.label)
        block = self.label_block(self.text(label)) if label is not None else self.new_block()
        self.jump(block)
        self.start(block)
        for child in node.named_children:
            if child != label:
                self.lower_stmt(child)

    def stmt_attributed_statement(self, node: Node) -> None:
        for child in node.named_children:
            if child.type != "attribute_declaration":
                self.lower_stmt(child)

    def stmt_type_definition(self, node: Node) -> None:
        pass

    stmt_struct_specifier = stmt_enum_specifier = stmt_union_specifier = stmt_type_definition
    stmt_function_definition = stmt_type_definition  # nested function (GNU C): not part of this one

    # -- preprocessor inside a function body: alternatives are branches of their own

    def stmt_preproc_if(self, node: Node) -> None:
        cond_node = node.child_by_field_id(self.F.condition)
        cond_text = "#if " + (self.text(cond_node).strip() if cond_node is not None else "")
        self.lower_pp_alternatives(node, cond_text, self.pp_constant(cond_node))

    def stmt_preproc_ifdef(self, node: Node) -> None:
        name = node.child_by_field_id(self.F.name)
        directive = self.text(node.children[0]) if node.children else "#ifdef"
        self.lower_pp_alternatives(node, f"{directive.strip()} {self.text(name) if name else ''}", None)

    def stmt_preproc_elif(self, node: Node) -> None:
        self.stmt_preproc_if(node)

    def stmt_preproc_elifdef(self, node: Node) -> None:
        self.stmt_preproc_ifdef(node)

    def stmt_preproc_else(self, node: Node) -> None:
        for child in node.named_children:
            self.lower_stmt(child)

    def stmt_preproc_other(self, node: Node) -> None:
        """#define, #include, #pragma, #line inside a body: nothing to execute."""

    def pp_constant(self, cond: Node | None) -> bool | None:
        if cond is None:
            return None
        text = self.text(cond).strip()
        if text in ("0", "(0)", "false"):
            return False
        if text in ("1", "(1)", "true"):
            return True
        return None

    def lower_pp_alternatives(self, node: Node, cond_text: str, constant: bool | None) -> None:
        alt = node.child_by_field_id(self.F.alternative)
        skip = [c for c in (node.child_by_field_id(self.F.condition), node.child_by_field_id(self.F.name), alt) if c is not None]
        body = [c for c in node.named_children if c not in skip]
        then_b, join = self.new_block(), self.new_block()
        else_b = self.new_block() if alt is not None else join
        if constant is True:
            self.jump(then_b)
        elif constant is False:
            self.jump(else_b)
        else:
            self.terminate(Branch(Opaque(cond_text), then_b.id, else_b.id, self.loc(node), _short(cond_text), "pp"))
        self.start(then_b)
        for child in body:
            self.lower_stmt(child)
        self.jump(join)
        if alt is not None:
            self.start(else_b)
            self.lower_stmt(alt)
            self.jump(join)
        self.start(join)

    # -- what tree-sitter could not parse

    def stmt_ERROR(self, node: Node) -> None:
        names = sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", self.text(node))))
        loc = self.loc(node)
        self.notes.append((loc, f"could not parse code at line {loc.line} in {self.name}(); resources it names are not checked"))
        self.emit(ir.Havoc(loc, tuple(names), "unparsed code"))

    def havoc_node(self, node: Node, reason: str) -> None:
        names = sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", self.text(node))))
        self.emit(ir.Havoc(self.loc(node), tuple(names), reason))

    # ------------------------------------------------------------------ conditions

    def lower_cond_special(self, node: Node, t: Block, f: Block, kind: str) -> bool:
        node_type = node.type
        if node_type == "condition_clause":  # C++ `if (init; cond)` / `if (T x = f())`
            self.lower_condition_clause(node, t, f, kind)
            return True
        if node_type == "comma_expression":
            self.lower_expr(node.child_by_field_id(self.F.left), discard=True)
            self.lower_cond(node.child_by_field_id(self.F.right), t, f, kind)
            return True
        return False

    def lower_condition_clause(self, node: Node, t: Block, f: Block, kind: str) -> None:
        value = node.child_by_field_id(self.F.value)
        for child in node.named_children:
            if child == value:
                continue
            if child.type == "declaration":
                self.stmt_declaration(child)
            elif child.type != "comment":
                self.lower_expr(child, discard=True)
        if value is None:
            self.jump(t)
        elif value.type == "declaration":
            self.stmt_declaration(value)
            # the declared variable as the lowering names it (C++ renames a name declared twice)
            decls = value.children_by_field_id(self.F.declarator)
            ident = _declared_identifier(decls[-1]) if decls else None
            cond = self.lower_expr(ident) if ident is not None else Opaque("?")
            init = value.child_by_field_id(self.F.value)  # C++ `if (T *x = f())`: the value is the declaration's own field
            if init is not None and ident is not None:
                if init.type == "initializer_list" and len(self.named(init)) == 1:
                    init = self.named(init)[0]
                self.assign_from(cond, init, self.loc(value))
                self.finish_statement(value)
            self.terminate(Branch(cond, t.id, f.id, self.loc(value), self.short_text(value), kind))
        else:
            self.lower_cond(value, t, f, kind)

    # ------------------------------------------------------------------ expressions

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
        found = self.name_values.get(name)
        return found if found is not None else self.name_value(name)

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

    def literal(self, text: str, value: int | None) -> Const:
        """`Const(value, text)`, shared per file (the same literal always has the same value)."""
        found = self.unit.literals.get(text)
        if found is None or found.value != value:
            found = self.unit.literals[text] = Const(value, text)
        return found

    expr_nullptr = expr_null

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
            return AddrOf(arg)
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
        return False

    def expr_initializer_list(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        parts = tuple([self.lower_expr(c) for c in node.named_children if c.type != "comment"])
        return Opaque("{...}", parts)

    def expr_compound_literal_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        value = node.child_by_field_id(self.F.value)
        return self.lower_expr(value) if value is not None else Opaque("(T){...}")

    def expr_ERROR(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        self.stmt_ERROR(node)
        return Opaque("?")

    # ------------------------------------------------------------------ calls

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
        if drop_first:
            arg_nodes = arg_nodes[1:]
        receiver_expr = self.lower_expr(receiver) if receiver is not None else None
        args = tuple([self.lower_expr(a) for a in arg_nodes])
        return self.emit_call(node, callee, style, receiver_expr, args, discard, dest)

    def emit_call(self, node: Node, callee: str, style: str, receiver: ir.Expr | None,
                  args: tuple[ir.Expr, ...], discard: bool, dest: ir.Expr | None, may_throw: bool = False) -> ir.Expr:
        target = dest if dest is not None else (None if discard else self.temp())
        if style == "table" and self.unit.policy.table_arity.get(callee, len(args)) != len(args):
            style = "method"  # `engine->Run(x, n)`: not the OrtApi entry of that name (its count differs)
        self.call_counter += 1
        borrows = self.unit.borrowed_args(callee, len(args)) if style == "plain" and self.unit.prototypes else ()
        self.emit(ir.Call(self.call_counter, self.loc(node), callee, style, receiver, args, target,
                          self.short_text(node), may_throw, borrows, self.macro_origin))
        return target if target is not None else _VOID

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

    # ------------------------------------------------------------------ macros defined in the file

    def expand_macro(self, macro: Macro, node: Node, arguments: Node | None, discard: bool, dest: ir.Expr | None) -> ir.Expr | None:
        masked = self.unit.masked_args.get(arguments.start_byte) if arguments is not None and not self.macro_depth else None
        args = split_macro_args(masked or self.text(arguments)) if arguments is not None else []
        if macro.declares is not None:
            args = with_declared_name(args, macro.declares) or []
        text = substitute_macro(macro, args)
        if text is None:
            return self.unexpanded(macro, node, masked)
        wrapper = f"void __ortlint_macro(void) {{ {text} ; }}" if discard else f"void __ortlint_macro(void) {{ __ortlint_value = ({text}); }}"
        tree = self.unit.parse_snippet(wrapper)
        body = _first_function_body(tree.root_node)
        if body is None or body.has_error:
            # a nested macro where no call can stand (`auto CONCAT(tmp, __LINE__) = ...`): expand them all first
            text = expand_text(text, self.unit.macros, self.loc(node).line)
            wrapper = f"void __ortlint_macro(void) {{ {text} ; }}" if discard else f"void __ortlint_macro(void) {{ __ortlint_value = ({text}); }}"
            tree = self.unit.parse_snippet(wrapper)
            body = _first_function_body(tree.root_node)
            if body is None or body.has_error:
                return self.unexpanded(macro, node, masked)
        saved = (self.src, self.loc_override, self.macro_origin)
        self.loc_override = self.loc(node)
        if not self.macro_origin:
            self.macro_origin = macro_label(macro)
        self.src = wrapper.encode()
        self.macro_depth += 1
        try:
            if discard:
                for child in body.named_children:
                    self.lower_stmt(child)
                return Opaque("void")
            stmt = body.named_children[0] if body.named_children else None
            assign = stmt.named_children[0] if stmt is not None and stmt.named_children else None
            value = assign.child_by_field_id(self.F.right) if assign is not None else None
            return self.lower_expr(value, dest=dest) if value is not None else None
        finally:
            self.src, self.loc_override, self.macro_origin = saved
            self.macro_depth -= 1


    def unexpanded(self, macro: Macro, node: Node, masked: str | None) -> ir.Expr | None:
        """A macro whose expansion cannot be read: lowered as a call (None), unless its arguments
        were blanked before parsing (a declaration argument): then, as unparsed code, a note and
        what they name is no longer checked."""
        if masked is None:
            return None
        loc = self.loc(node)
        names = tuple(sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", masked))))
        self.notes.append((loc, f"could not expand {macro.name}(...) at line {loc.line} in {self.name}(); resources it names are not checked"))
        self.emit(ir.Havoc(loc, names, "unexpanded macro"))
        return Opaque("?")
