"""C# expressions -> IR expressions: names (locals, `ref` parameters, members of this class),
member and element access, `?.`, `??`, `is` patterns, `as`, assignments, tuples, arrays and
collection initializers, `await`, switch expressions, lambdas and literals."""
from __future__ import annotations

import re

from tree_sitter import Node

from ... import ir
from ...ir import AddrOf, Branch, Const, Deref, Field, Index, Op, Opaque, Var
from .containers import value_child
from .scopes import PendingFunction
from .syntax import F_CONDITION, F_EXPRESSION, F_LEFT, F_NAME, F_PATTERN, F_RIGHT, F_SUBSCRIPT, F_TYPE, F_VALUE
from .types import base_name, canon, family

_SOME_INDEX = Opaque("i")
_NULL, _TRUE, _FALSE = Const(0, "null"), Const(1, "true"), Const(0, "false")
_THIS = Var("this")
_TUPLE_ITEM = re.compile(r"Item[1-7]|Rest")
_TYPE_NODES = frozenset({"predefined_type", "array_type", "nullable_type", "pointer_type", "tuple_type",
                         "type_argument_list", "implicit_type", "ref_type", "scoped_type", "function_pointer_type"})


_CALLS = frozenset({"invocation_expression", "object_creation_expression", "implicit_object_creation_expression",
                    "assignment_expression", "await_expression", "throw_expression", "lambda_expression",
                    "array_creation_expression", "implicit_array_creation_expression", "switch_expression"})


def _calls(node: Node) -> bool:
    """Does evaluating `node` call, create or assign anything? (Bounded walk: when in doubt, yes.)"""
    stack, budget = [node], 2000
    while stack and budget:
        n = stack.pop()
        budget -= 1
        if n.type in _CALLS:
            return True
        stack.extend(n.named_children)
    return bool(stack)


class CSharpExpressions:
    """C# expressions -> IR expressions."""

    def expr_fallback(self, node: Node) -> ir.Expr:
        if node.type == "ERROR" or node.is_missing:
            self.unparsed(node)
            return Opaque("?")
        if node.type in ("this", "base"):
            return _THIS
        return self.expr_generic(node)

    def expr_generic(self, node: Node) -> ir.Expr:
        parts = tuple(self.lower_expr(c) for c in self.named(node) if c.type not in _TYPE_NODES)
        return Opaque(self.short_text(node), parts)

    # -- names

    def expr_identifier(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        name = self.text(node)
        if name in self.visible:
            return self.param_ref(name) if name in self.ref_params else self.var(name)
        if name in self.captured:
            return self.var(name)
        if name == "_" and discard is False:
            return self.var("$discard")
        if self.cls is not None and self.member_type(name) is not None:
            return self.member_ref(name)
        return self.var(name)

    def expr_member_access_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`this.f` is a member of this object, `Type.F` a static (a global), `o.P` memory we do
        not own (storing into it hands the value on); `pair.Value` of a KeyValuePair is the
        element itself, `dict.Values` the dictionary (views of what a loop disposes)."""
        obj = node.child_by_field_id(F_EXPRESSION)
        name = self.text(node.child_by_field_id(F_NAME))
        if obj is None:
            return Opaque(self.short_text(node))
        if obj.type in ("this", "base"):
            return self.member_ref(name) if self.cls is not None else Field(_THIS, name)
        static = self.static_type_of(obj)
        if static is not None:
            return self.var(f"{static}.{name}")
        base_type = self.expr_type(obj) if name in ("Value", "Values") else ""
        base = self.lower_expr(obj)
        if name == "Value" and base_name(base_type) == "KeyValuePair" or name == "Values" and family(base_type) == "map":
            return base  # the element a loop reads, the dictionary a loop over its values walks
        if name in ("Length", "Count", "LongLength", "Rank"):
            return Opaque(f"{ir.expr_text(base)}.{name}", (base,))
        if _TUPLE_ITEM.fullmatch(name):
            return self.take_from_tuple(node, base)
        return Field(Deref(base), name)

    def take_from_tuple(self, node: Node, source: ir.Expr) -> ir.Expr:
        """`t.Item1`, `var (a, b) = t`: whoever reads the parts of a tuple takes over what it
        holds (a helper returning `(session, options)`): the parts are handed on, not tracked."""
        return self.emit_call(node, "$tuple.Item", "plain", None, (source,), False, None, None)

    def expr_conditional_access_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`a?.B` / `a?[i]`: the access (a NULL `a` makes it NULL; calls through `?.` are
        lowered by `invocation_expression`, where a NULL receiver does nothing)."""
        cond = node.child_by_field_id(F_CONDITION)
        binding = next((c for c in self.named(node) if c.id != (cond.id if cond is not None else -1)), None)
        base = self.lower_expr(cond)
        if binding is None:
            return base
        if binding.type == "member_binding_expression":
            name = self.text(binding.child_by_field_id(F_NAME))
            if name in ("Length", "Count"):
                return Opaque(f"{ir.expr_text(base)}?.{name}", (base,))
            return Field(Deref(base), name)
        if binding.type == "element_binding_expression":
            args = [value_child(a) for a in self.named(binding) if a.type == "argument"]
            idx = self.lower_expr(args[0]) if args and args[0] is not None else _SOME_INDEX
            return Index(base, idx)
        return Opaque(self.short_text(node), (base,))

    def expr_element_access_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        base = self.lower_expr(node.child_by_field_id(F_EXPRESSION))
        sub = node.child_by_field_id(F_SUBSCRIPT)
        args = [value_child(a) for a in self.named(sub) if a.type == "argument"]
        idx = self.lower_expr(args[0]) if len(args) == 1 and args[0] is not None else _SOME_INDEX
        for extra in args[1:]:
            self.lower_expr(extra)
        return Index(base, idx if isinstance(idx, (Const, Var)) else _SOME_INDEX)

    def expr_parenthesized_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        kids = self.named(node)
        return self.lower_expr(kids[0], discard, dest) if kids else Opaque("()")

    def expr_cast_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_expr(node.child_by_field_id(F_VALUE), discard, dest)

    def expr_as_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_expr(node.child_by_field_id(F_LEFT), discard, dest)

    def expr_checked_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        kids = self.named(node)
        return self.lower_expr(kids[0], discard, dest) if kids else Opaque("checked")

    def expr_postfix_unary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        kids = self.named(node)
        operand = kids[0] if kids else None
        if self.text(node).endswith("!"):  # `x!`: the null-forgiving operator
            return self.lower_expr(operand, discard, dest)
        target = self.lower_expr(operand)
        self.emit(ir.Assign(self.loc(node), target, Opaque(self.short_text(node), (target,))))
        return target

    def expr_prefix_unary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        op = self.prefix_op(node)
        kids = self.named(node)
        operand = self.lower_expr(kids[0]) if kids else Opaque("?")
        if op in ("++", "--"):
            self.emit(ir.Assign(self.loc(node), operand, Opaque(self.short_text(node), (operand,))))
            return operand
        return Op(op, (operand,))

    def prefix_op(self, node: Node) -> str:
        first = node.children[0] if node.children else None
        return first.type if first is not None and not first.is_named else "?"

    def lower_cond_special(self, node: Node, t: ir.Block, f: ir.Block, kind: str) -> bool:
        """`!c`, `x is null`, `x is not null`, `x is T v` (binds v), `x is {}` as branches."""
        if node.type == "prefix_unary_expression" and self.prefix_op(node) == "!":
            kids = self.named(node)
            self.lower_cond(kids[0] if kids else None, f, t, kind)
            return True
        if node.type == "identifier" and self.text(node) in self.null_tests:
            # `bool owned = given == null; ... if (owned)`: the same test of `given`, which no
            # assignment changed in between, so the engine pairs it with the first one
            subject, op = self.null_tests[self.text(node)]
            test = Op(op, (self.lower_expr(subject), _NULL))
            self.terminate(Branch(test, t.id, f.id, self.loc(node), self.short_text(node), kind))
            return True
        if node.type == "is_pattern_expression":
            value = self.lower_expr(node.child_by_field_id(F_EXPRESSION))
            test = self.pattern_test(value, node.child_by_field_id(F_PATTERN), node)
            self.terminate(Branch(test, t.id, f.id, self.loc(node), self.short_text(node), kind))
            return True
        return False

    def pattern_test(self, value: ir.Expr, pattern: Node | None, node: Node) -> ir.Expr:
        if pattern is None:
            return Opaque(self.short_text(node), (value,))
        t = pattern.type
        if t == "constant_pattern" and self.text(pattern).strip() == "null":
            return Op("==", (value, _NULL))
        if t == "negated_pattern":
            inner = next(iter(self.named(pattern)), None)
            return Op("!", (self.pattern_test(value, inner, node),))
        if t in ("declaration_pattern", "recursive_pattern", "var_pattern"):
            name = pattern.child_by_field_id(F_NAME)
            if name is not None and name.type == "identifier":
                self.declare(self.text(name), canon(self.text(pattern.child_by_field_id(F_TYPE))))
                self.emit(ir.Assign(self.loc(pattern), self.var(self.text(name)), value))
                return Op("!=", (self.var(self.text(name)), _NULL)) if t != "var_pattern" else _TRUE
            if t == "recursive_pattern" and self.text(pattern).replace(" ", "") == "{}":
                return Op("!=", (value, _NULL))
        if t == "type_pattern" or (t == "constant_pattern" and self.static_type_of(next(iter(self.named(pattern)), pattern))):
            return Opaque(self.short_text(node), (value,))
        return Opaque(self.short_text(node), (value,))

    def expr_is_pattern_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        value = self.lower_expr(node.child_by_field_id(F_EXPRESSION))
        return self.pattern_test(value, node.child_by_field_id(F_PATTERN), node)

    def expr_is_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        left = self.lower_expr(node.child_by_field_id(F_LEFT))
        return Opaque(self.short_text(node), (left,))

    # -- literals

    def expr_null_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return _NULL

    def expr_boolean_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return _TRUE if self.text(node) == "true" else _FALSE

    def expr_integer_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        text = self.text(node)
        digits = text.rstrip("uUlL").replace("_", "")
        try:
            value = int(digits, 0) if not (len(digits) > 1 and digits[0] == "0" and digits[1].isdigit()) else int(digits)
        except ValueError:
            value = None
        return Const(value, text)

    def expr_string_literal(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return Const(None, self.short_text(node))
    expr_character_literal = expr_real_literal = expr_verbatim_string_literal = expr_raw_string_literal = expr_string_literal

    def expr_interpolated_string_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        parts = []
        for interp in self.named(node):
            if interp.type == "interpolation":
                for k in self.named(interp):
                    if k.type not in ("interpolation_brace", "interpolation_alignment_clause", "interpolation_format_clause"):
                        parts.append(self.lower_expr(k))
        return Opaque(self.short_text(node), tuple(parts))

    def expr_default_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return Const(0, "default")

    def expr_typeof_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return Opaque(self.short_text(node))
    expr_sizeof_expression = expr_typeof_expression

    # -- assignment

    def expr_assignment_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        left_node = node.child_by_field_id(F_LEFT)
        right = node.child_by_field_id(F_RIGHT)
        op = self.assign_op(node)
        if left_node is not None and left_node.type == "tuple_expression":  # `(a, b) = (x, y)`
            source = self.lower_expr(right)
            parts = self.take_from_tuple(node, source)
            for arg in (a for a in self.named(left_node) if a.type == "argument"):
                target = self.lower_place(value_child(arg))
                self.emit(ir.Assign(self.loc(node), target, Opaque(f"part of {ir.expr_text(parts)}")))
            return source
        if left_node is not None and left_node.type == "element_access_expression" and op == "=":
            return self.store_element(left_node, right, node)
        self.forget_null_tests(left_node)
        left = self.lower_place(left_node)
        if op == "??=":  # `x ??= v`: v only when x is null
            then_b, join = self.new_block(), self.new_block()
            self.terminate(Branch(Op("==", (left, _NULL)), then_b.id, join.id, self.loc(node), self.short_text(node), "if"))
            self.start(then_b)
            self.assign_from(left, right, self.loc(node))
            self.jump(join)
            self.start(join)
            return left
        if op != "=":
            value = self.lower_expr(right)
            if op in ("+=", "-=") and isinstance(value, Opaque) and value.text.startswith("lambda@"):
                return left  # `event += handler`
            self.emit(ir.Assign(self.loc(node), left, Opaque(self.short_text(node), (left, value))))
            return left
        self.assign_from(left, right, self.loc(node))
        return left

    def note_null_test(self, name: str, value: Node | None) -> None:
        """`bool b = x == null;` (x a local or parameter): remembered, so `if (b)` tests x again."""
        self.null_tests.pop(name, None)
        value = self.unparen(value) if value is not None else None
        if value is None or value.type not in ("binary_expression", "is_pattern_expression"):
            return
        if value.type == "binary_expression":
            op = self.operator(value)
            left, right = value.child_by_field_id(F_LEFT), value.child_by_field_id(F_RIGHT)
            if op not in ("==", "!=") or right is None or right.type != "null_literal":
                return
        else:
            pattern = value.child_by_field_id(F_PATTERN)
            text = "".join(self.text(pattern).split())
            if text not in ("null", "notnull"):
                return
            op, left = ("==" if text == "null" else "!="), value.child_by_field_id(F_EXPRESSION)
        if left is not None and left.type == "identifier" and self.text(left) in self.visible:
            self.null_tests[name] = (left, op)

    def forget_null_tests(self, target: Node | None) -> None:
        """An assignment to `b` or to the `x` it tests ends the pairing."""
        if target is None or not self.null_tests:
            return
        name = self.text(target)
        for b, (subject, _op) in list(self.null_tests.items()):
            if b == name or self.text(subject) == name:
                del self.null_tests[b]

    def assign_op(self, node: Node) -> str:
        for c in node.children:
            if not c.is_named and c.type.endswith("="):
                return c.type
        return "="

    def lower_place(self, node: Node | None) -> ir.Expr:
        """The place an assignment writes (`out` arguments too): a declaration (`var x`) declares."""
        if node is None:
            return Opaque("?")
        if node.type == "declaration_expression":
            name = node.child_by_field_id(F_NAME)
            if name is not None:
                self.declare(self.text(name), canon(self.text(node.child_by_field_id(F_TYPE))))
                return self.var(self.text(name))
        if node.type == "identifier" and self.text(node) == "_":
            self.locals["$discard"] = False
            return self.var("$discard")
        return self.lower_expr(node)

    # -- choices

    def expr_conditional_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`c ? a : b`: arms with calls become branches storing into `dest`, so each call happens on
        its own path and what it creates lands where the expression's value goes."""
        cond = node.child_by_field_id(F_CONDITION)
        arms = [node.child_by_field_id(self.F.consequence), node.child_by_field_id(self.F.alternative)]
        if not any(a is not None and _calls(a) for a in arms):
            return self.lower_choice(node, dest)
        result = dest if dest is not None else self.temp()
        t, f, join = self.new_block(), self.new_block(), self.new_block()
        self.lower_cond(cond, t, f)
        for block, arm in zip((t, f), arms):
            self.start(block)
            if arm is not None:
                self.assign_from(result, arm, self.loc(arm))
            self.jump(join)
        self.start(join)
        return result

    def expr_binary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        op = self.operator(node)
        if op == "??":
            return self.lower_coalesce(node, dest)
        if op in ("&&", "||"):
            return self.value_via_branches(node)
        return self.binary_value(node, op)

    def lower_coalesce(self, node: Node, dest: ir.Expr | None) -> ir.Expr:
        """`a ?? b`: a, or b when a is null (`?? throw ...` leaves instead)."""
        result = dest if dest is not None else self.temp()
        self.assign_from(result, node.child_by_field_id(F_LEFT), self.loc(node))
        then_b, join = self.new_block(), self.new_block()
        self.terminate(Branch(Op("==", (result, _NULL)), then_b.id, join.id, self.loc(node), self.short_text(node), "if"))
        self.start(then_b)
        self.assign_from(result, node.child_by_field_id(F_RIGHT), self.loc(node))
        self.jump(join)
        self.start(join)
        return result

    def expr_switch_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """`v switch { p => e, ... }`: one arm's expression, tested in order."""
        kids = self.named(node)
        if not kids:
            return Opaque("switch")
        value = self.lower_expr(kids[0])
        result = dest if dest is not None else self.temp()
        join = self.new_block()
        self.push_scope()
        for arm in kids[1:]:
            if arm.type != "switch_expression_arm":
                continue
            parts = self.named(arm)
            if not parts:
                continue
            body = parts[-1]
            pattern = parts[0] if len(parts) > 1 else None
            arm_b, nxt = self.new_block(), self.new_block()
            test = self.pattern_test(value, pattern, arm) if pattern is not None and pattern.type != "discard" else None
            if test is None:
                self.jump(arm_b)
            else:
                self.terminate(Branch(test, arm_b.id, nxt.id, self.loc(arm), self.short_text(arm), "case"))
            self.start(arm_b)
            self.assign_from(result, body, self.loc(body))
            self.jump(join)
            self.start(nxt)
        self.jump(join)
        self.pop_scope(None)
        self.start(join)
        return result

    # -- await, lambdas

    def expr_await_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        kids = self.named(node)
        return self.lower_expr(kids[0], discard, dest) if kids else Opaque("await")

    def expr_lambda_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """A lambda is a function of its own (README item 13: a Dispose() inside it does not
        dispose an object of the enclosing method, and capturing one does not take it over)."""
        label = f"lambda@{node.start_point[0] + 1}"
        self.unit.queue(PendingFunction(node, self.unit.nested_name(self.name, label, node), self, "lambda",
                                        self.visible_types()))
        return Opaque(label)
    expr_anonymous_method_expression = expr_lambda_expression

    def expr_declaration_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_place(node)

    def expr_range_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.expr_generic(node)

    def expr_query_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        """LINQ query syntax: its clauses are lambdas; it reads its sources and keeps nothing."""
        return Opaque(self.short_text(node))

    def expr_ref_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        kids = self.named(node)
        return AddrOf(self.lower_expr(kids[0])) if kids else Opaque("ref")

    def expr_with_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        kids = self.named(node)
        return Opaque(self.short_text(node), (self.lower_expr(kids[0]),) if kids else ())

    def expr_this(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return _THIS

