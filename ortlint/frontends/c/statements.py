"""C statements and control flow -> blocks: declarations, `if`/loops/`switch` with fall-through, `goto` and labels,
conditions with `&&`/`||`/`!`/`?:`."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Block, Branch, Jump, Loc, Op, Opaque, Return
from ..common.integer_types import is_unsigned_integer
from ..common.source import is_statement_body
from .syntax import (
    _UNINITIALIZED,
    _declared_identifier,
    _short,
    declarator_name,
    find_function_declarator,
    is_array_declarator,
)

# Initializer elements that hold no resource: nothing to store
_LITERALS = frozenset({"number_literal", "string_literal", "char_literal", "true", "false", "null", "nullptr",
                       "concatenated_string"})


_STATIC_STORAGE = ("static", "_Thread_local", "thread_local", "__thread")

class CStatements:
    """C statements and control flow -> blocks: declarations, `if`/loops/`switch` with fall-through, `goto` and labels,
conditions with `&&`/`||`/`!`/`?:`."""

    def stmt_compound_statement(self, node: Node) -> None:
        self.lower_statements(node.named_children)
    stmt_translation_unit = stmt_compound_statement

    def lower_statements(self, children: list[Node]) -> None:
        """A block's statements in order. `#if A  if (x) {..} else  #endif  #if B  s1  #else  s2
        #endif`: the `else` of an `if` is the last token of one conditional group and its body is
        the next group, so tree-sitter reads the `if` without it, the `else` as an error and the
        group as the next statement; but the compiled arm of the group is the `else`'s statement,
        run only when the condition fails, never after the `then` branch. The `if` is lowered
        with that statement as its `else`."""
        index, count = 0, len(children)
        while index < count:
            child = children[index]
            body = _dangling_else_body(children, index, self.src) if child.type == "if_statement" else None
            if body is None:
                self.lower_stmt(child)
                index += 1
                continue
            saved, self.dangling_else = self.dangling_else, (_innermost_open_if(child, self.F), children[body])
            self.lower_stmt(child)
            self.dangling_else = saved
            index = body + 1

    def stmt_expression_statement(self, node: Node) -> None:
        for child in node.named_children:
            if child.type != "comment":
                self.lower_expr_stmt(child)

    def lower_expr_stmt(self, node: Node) -> None:
        self.stmt_temps = []
        self.lower_expr(self.streamed_statement_macro(node) or node, discard=True)
        self.finish_statement(node)

    def streamed_statement_macro(self, node: Node) -> Node | None:
        """`ASSERT_EQ(a, b) << "message" << detail;`: a statement macro (its body a `do {...}
        while (0)`, an `if`, ...) followed by a message streamed into the failure report it makes
        (gtest's assertions, glog's CHECK). The message is built only when the check fails, so
        the statement is the macro's; lowered as an operand of `<<`, the expansion of a statement
        could not be read and the macro would be a call."""
        left = node
        while left.type == "binary_expression" and left.child_by_field_id(self.F.operator) is not None \
                and self.text(left.child_by_field_id(self.F.operator)) == "<<":
            left = left.child_by_field_id(self.F.left)
            if left is None:
                return None
        if left is node or left.type != "call_expression":
            return None
        fn = left.child_by_field_id(self.F.function)
        macro = self.unit.macros.get(self.text(fn)) if fn is not None and fn.type == "identifier" else None
        return left if macro is not None and is_statement_body(macro.body) else None

    def stmt_declaration(self, node: Node) -> None:
        self.stmt_temps = []
        if any(c.type == "storage_class_specifier" and self.text(c) in _STATIC_STORAGE for c in node.children):
            # a function-static (`static char *cached;`) is memory every call shares, as a global
            # is: what the function stores there is kept, not lost, and its initializer ran once
            # before (its value on entry is unknown)
            self.finish_statement(node)
            return
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
        type_node = whole.child_by_field_id(self.F.type)
        self.note_local_type(name, target.type == "identifier" and type_node is not None
                             and is_unsigned_integer(self.text(type_node)))
        if value is None:
            if not self.locals[name]:
                self.emit(ir.Assign(self.loc(decl), self.var(name), _UNINITIALIZED))
            return
        if value.type == "initializer_list":
            self.lower_initializer(self.var(name), value)
            return
        self.assign_from(self.var(name), value, self.loc(decl))

    def lower_initializer(self, target: ir.Expr, init: Node) -> None:
        """`T a[2] = {NULL, f()}`, `S s = {.buf = f(), n}`: each element is stored into its
        slot (`a[1]`, `s.buf`; a struct's positional element as an element of the aggregate),
        so what an aggregate is built from goes wherever the aggregate goes (returned by
        value, copied through an out-parameter). Constants stay unstored: a slot that was
        never written is as unknown as one holding a literal."""
        if type(target) is ir.Var and target.name in self.locals:
            self.locals[target.name] = True  # an aggregate (its slots go with it)
        position = 0
        for child in init.named_children:
            if child.type == "comment":
                continue
            slot: ir.Expr = ir.Index(target, ir.Const(position, str(position)))
            value: Node | None = child
            if child.type == "initializer_pair":
                slot, position = self.designated_slot(target, child, position)
                value = child.child_by_field_id(self.F.value)
            position += 1
            if value is None:
                continue
            if value.type == "initializer_list":
                self.lower_initializer(slot, value)
            elif value.type in _LITERALS:
                continue
            else:
                self.assign_from(slot, value, self.loc(child))

    def designated_slot(self, target: ir.Expr, pair: Node, position: int) -> tuple[ir.Expr, int]:
        """The slot `.a.b = x` or `[2] = x` names inside `target`, and the position the
        elements after it continue from."""
        slot = target
        for designator in pair.children_by_field_id(self.F.designator):
            named = designator.named_children
            if designator.type == "field_designator" and named:
                slot = ir.Field(slot, self.text(named[-1]))
            elif designator.type == "subscript_designator" and named:
                index = self.lower_expr(named[0])
                slot = ir.Index(slot, index)
                if slot is not target and type(index) is ir.Const and isinstance(index.value, int):
                    position = index.value
        return slot, position

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
        alt_stmts = alt.named_children if alt is not None else None  # else_clause wraps the statement
        pending = self.dangling_else
        if alt is None and pending is not None and pending[0] == node:
            alt_stmts = [pending[1]]  # see lower_statements
        then_b, join = self.new_block(), self.new_block()
        else_b = self.new_block() if alt_stmts is not None else join
        self.stmt_temps = []
        self.lower_cond(cond, then_b, else_b)
        temps = tuple(self.stmt_temps)
        self.stmt_temps = []
        self.start(then_b)
        self.kill_at_start(temps, cond)
        if then is not None:
            self.lower_stmt(then)
        self.jump(join)
        if alt_stmts is not None:
            self.start(else_b)
            self.kill_at_start(temps, cond)
            for child in alt_stmts:
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


def _dangling_else_body(children: list[Node], index: int, src: bytes) -> int | None:
    """The index of the statement an `else` left alone by a conditional group governs
    (`if (..) {..}` at `index`, then an error node that is only `else`, then that statement;
    comments between), or None."""
    j = _after_comments(children, index + 1)
    if j >= len(children) or children[j].type != "ERROR" or src[children[j].start_byte:children[j].end_byte].strip() != b"else":
        return None
    k = _after_comments(children, j + 1)
    return k if k < len(children) else None


def _after_comments(children: list[Node], index: int) -> int:
    while index < len(children) and children[index].type == "comment":
        index += 1
    return index


def _innermost_open_if(node: Node, fields) -> Node:
    """`if (a) .. else if (b) ..`: a further `else` belongs to the last `if` of the chain."""
    while True:
        alt = node.child_by_field_id(fields.alternative)
        if alt is None:
            return node
        inner = next((c for c in alt.named_children if c.type != "comment"), None)
        if inner is None or inner.type != "if_statement":
            return node
        node = inner
