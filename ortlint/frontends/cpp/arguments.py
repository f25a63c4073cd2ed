"""What a call's arguments build: a block of code given to a macro (`EXPECT_NO_THROW({ ... })`, run
in place) and a list building an object a container keeps (`allocated_.insert({p, block})`)."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Field, Opaque

# Member calls that keep what they are given (sequence containers, maps, sets, queues).
_STORING_METHODS = frozenset({"insert", "emplace", "try_emplace", "insert_or_assign", "emplace_hint", "push_back",
                              "emplace_back", "push_front", "emplace_front", "push"})


class CppArguments:
    """What a call's arguments build: blocks of code given to macros, lists building stored objects."""

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
