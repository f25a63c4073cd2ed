"""What a call's arguments (and a returned value) hand on: a block of code given to a macro
(`EXPECT_NO_THROW({ ... })`, run in place), a list building an object a container keeps
(`allocated_.insert({p, block})`), a pointer into a block (`return block + sizeof(Header);`)."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Field, Opaque
from .model import parse_type
from .syntax import _SCALARS

# Member calls that keep what they are given (sequence containers, maps, sets, queues).
_STORING_METHODS = frozenset({"insert", "emplace", "try_emplace", "insert_or_assign", "emplace_hint", "push_back",
                              "emplace_back", "push_front", "emplace_front", "push"})


class CppArguments:
    """What a call's arguments (and a returned value) hand on: blocks of code given to macros, lists building
stored objects, pointers into a block."""

    def expr_binary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`return block + sizeof(Header);`, `free((char *)p - sizeof(Header))`: a pointer moved
        within a block and handed on (returned, or given to a call) hands on the block: the value
        is the pointer's. Elsewhere (`auto *q = buffer + i; ReleaseValue(*q)`) the offset stays an
        operation, so elements at different offsets stay apart."""
        moved = self.offset_pointer_handed_on(node)
        if moved is None:
            return super().expr_binary_expression(node, discard, dest)
        pointer, offset = moved
        self.lower_expr(offset, discard=True)
        return self.lower_expr(pointer, discard, dest)

    def assignment_value(self, node: Node, op: str) -> ir.Expr:
        """`mem += 512;` of a local pointer to bytes or numbers moves it within its block: it
        still points into what it pointed into (an aligning allocator returns it), so its
        value stays the block, as `return mem + 512;` hands on the block."""
        if op in ("+=", "-=") and self.moves_within_block(node):
            self.lower_expr(node.child_by_field_id(self.F.right), discard=True)
            return self.lower_expr(node.child_by_field_id(self.F.left))
        return super().assignment_value(node, op)

    def moves_within_block(self, node: Node) -> bool:
        """`p += n` / `p -= n` of a local `T*` whose elements are numbers (char, float, void):
        no handle lives at another offset of such a block, so the offset cannot name another
        object (a `OrtValue** q` moved along an array keeps its offset: its elements differ)."""
        left = node.child_by_field_id(self.F.left)
        left = self.unparen(left) if left is not None else None
        right = node.child_by_field_id(self.F.right)
        if left is None or right is None or left.type != "identifier":
            return False
        name = self.text(left)
        if name not in self.locals and name not in self.rename:
            return False
        left_type = self.expr_type(left)
        if left_type is None:
            return False
        ref = self.model.resolve_alias(parse_type(left_type))
        if ref.pointers != 1 or ref.array or ref.name not in _SCALARS or ref.name == "auto":
            return False
        right_type = self.expr_type(right)
        return right_type is None or not self.model.resolve_alias(parse_type(right_type)).pointers

    def offset_pointer_handed_on(self, node: Node) -> tuple[Node, Node] | None:
        """(pointer, offset) of `pointer + offset` / `pointer - offset` whose value is returned or
        passed to a call; None for anything else (integer arithmetic, a difference of pointers)."""
        if self.operator(node) not in ("+", "-"):
            return None
        parent = node.parent
        while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
            parent = parent.parent
        if parent is None or parent.type not in ("argument_list", "return_statement"):
            return None
        left, right = node.child_by_field_id(self.F.left), node.child_by_field_id(self.F.right)
        if left is None or right is None:
            return None
        left_type, right_type = self.expr_type(left), self.expr_type(right)
        if left_type is None or not self.model.resolve_alias(parse_type(left_type)).pointers:
            return None
        if right_type is not None and self.model.resolve_alias(parse_type(right_type)).pointers:
            return None  # `end - begin`
        return left, right

    def expr_initializer_list(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`m.insert({key, tensor})`: the argument is an object built from the list (a pair, a
        struct) that the container keeps, holding what it is built from. Lowered as an aggregate
        temporary whose members are the elements, so the container takes them too (an
        allocator's `allocated_.insert({tensor->data(), tensor})` hands the tensor to its map).
        Elsewhere (declarations, stores the C++ model reads itself, views such as `f({p, p + n})`)
        the C lowering's reading stands."""
        if dest is not None or self.plain_initializers or not self.stored_initializer(node):
            return super().expr_initializer_list(node, discard, dest)
        temp = self.temp()
        self.locals[temp.name] = True  # an aggregate: its members go with it (and die with it)
        loc = self.loc(node)
        for i, child in enumerate(c for c in node.named_children if c.type != "comment"):
            value = self.lower_expr(child)
            self.emit(ir.Assign(loc, Field(temp, str(i)), value))
        return temp

    def stored_initializer(self, node: Node) -> bool:
        """Is this list an argument of a member call that stores what it builds
        (`allocated_.insert({p, block})`, `emplace`, `push_back`)? Elsewhere a list may build a
        view of the caller's memory (`f({out, out + n})`, a span the callee writes through)."""
        parent = node.parent
        call = parent.parent if parent is not None and parent.type == "argument_list" else None
        fn = call.child_by_field_id(self.F.function) if call is not None and call.type == "call_expression" else None
        if fn is None or fn.type != "field_expression":
            return False
        field = fn.child_by_field_id(self.F.field)
        return field is not None and self.text(field) in _STORING_METHODS

    def expr_compound_statement(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """A block where an expression stands: a statement given to a macro
        (`EXPECT_NO_THROW({ auto c = Config::Create(p); ... });`) or a GNU statement expression.
        It is code, run here: lowered as a block of statements (its declarations are locals,
        destroyed at its end), not as expressions."""
        outer = self.stmt_temps
        self.stmt_compound_statement(node)
        self.stmt_temps = outer
        return Opaque(self.short_text(node))
