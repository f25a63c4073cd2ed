"""What every tree-sitter front end does the same way: building a control-flow graph block by
block, temporaries for nested calls, locations, and the expressions whose syntax the C, C++
and Java grammars share (assignments, updates, `&&`/`||` used as values, `?:`, casts).

Front ends subclass `CfgBuilder` and add their statements, calls and declarations; class
attributes name the grammar's node types where they differ.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

from tree_sitter import Language, Node

from ... import ir
from ...ir import Block, Const, Halt, Jump, Loc, Op, Opaque, Var

_TEXT_LIMIT = 90
_HEAD_BYTES = 8 * _TEXT_LIMIT  # enough source to fill a message when the node is longer
FLAT_CHAIN = 32  # a longer left-nested chain of one operator is lowered as one n-ary Op (no deep IR)
_TEMP_VARS: list[Var] = []  # index n: `Var("$n")`; IR values are never changed, so one object serves all


_UNSEEN = object()
# `Loc(a, b, c, d)` goes through the named tuple's Python `__new__`; this is the same tuple at
# half the cost (a location is made for almost every node lowered).
_new_tuple = tuple.__new__


def line_continuations(src: bytes, start: int) -> list[int] | bytes | None:
    """Offsets of the UTF-8 continuation bytes of the line starting at `start`: None for an ASCII
    line, the line itself (bytes) when it is not valid UTF-8."""
    end = src.find(b"\n", start)
    line = src[start:] if end < 0 else src[start:end]
    if line.isascii():
        return None
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return line
    return [start + i for i, b in enumerate(line) if 0x80 <= b < 0xC0]


class FieldIds:
    """A grammar's field ids by name, as attributes (`node.child_by_field_id(F.body)`).

    `child_by_field_name` searches the grammar's field names on every call; by id it is about
    3x faster, and the lowering asks for fields of almost every node. A name the grammar does
    not have is id 0, for which tree-sitter finds no child (as `child_by_field_name` does).
    """

    def __init__(self, language: Language):
        for fid in range(1, language.field_count + 1):
            name = language.field_name_for_id(fid)
            if name is not None:
                setattr(self, name, fid)

    def __getattr__(self, name: str) -> int:  # only called for names the grammar lacks
        if name.startswith("__"):
            raise AttributeError(name)  # copy/pickle probes are not field names
        return 0


_FIELD_IDS: dict[Language, FieldIds] = {}


def field_ids(language: Language) -> FieldIds:
    """The (shared) `FieldIds` of a grammar."""
    found = _FIELD_IDS.get(language)
    if found is None:
        found = _FIELD_IDS[language] = FieldIds(language)
    return found


_HANDLER_TABLES: dict[tuple[type, str], dict[str, Callable[..., object] | None]] = {}


def handler_table(cls: type, prefix: str) -> dict[str, Callable[..., object] | None]:
    """Node type -> the class's `<prefix><type>` method (or None), filled as types are met.

    Dispatch by `getattr(self, prefix + type)` built a string and a bound method for every node;
    the table resolves each type once per class (subclasses keep their own overrides)."""
    table = _HANDLER_TABLES.get((cls, prefix))
    if table is None:
        table = _HANDLER_TABLES[(cls, prefix)] = {}
    return table


class TooDeep(Exception):
    """Nesting beyond the front end's MAX_NESTING: the function is skipped with a note."""


MAX_CLEANUP_RUNS = 20_000  # destructors (C++) lowered at the exits of one function


class TooManyCleanups(Exception):
    """A function whose exits would lower more than MAX_CLEANUP_RUNS destructor calls: every
    `return` runs the destructors of every live object, so thousands of both are quadratic
    (a fuzzed method of 2 000 `unique_ptr`s and 4 000 returns: past 1 GB). The function is
    skipped with a note; real functions stay far below the bound."""


def short(text: str) -> str:
    """Source text for messages: whitespace folded, long text cut."""
    text = " ".join(text.split())
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 3] + "..."


class CfgBuilder:
    """Graph plumbing and shared expression lowering for one function."""

    COMMENT_TYPES: frozenset[str] = frozenset({"comment"})
    CALL_NODE_TYPES: tuple[str, ...] = ()  # node types whose value can be stored straight into a target
    UNARY_OPERAND = "argument"
    TERNARY_TYPE = "conditional_expression"
    MAX_NESTING = 400  # deeper expressions are skipped with a note, never a RecursionError
    OPERATOR_ALIASES = {"and": "&&", "or": "||", "not": "!", "not_eq": "!="}

    src: bytes
    ascii: bool
    loc_override: Loc | None = None
    F: FieldIds  # the grammar's field ids: fields are found by id (`child_by_field_name` looks the name up each time)

    def init_graph(self) -> None:
        self._expr_handlers = handler_table(type(self), "expr_")
        self.blocks: list[Block] = []
        self.cur: Block | None = None
        self.handler: int | None = None
        self.stmt_temps: list[str] = []
        self.temp_counter = 0
        self.call_counter = 0
        self.depth = 0
        self.params: list[str] = []
        self.locals: dict[str, bool] = {}
        self.unsigned: dict[str, bool] = {}  # local -> every declaration of it is an unsigned integer
        self.notes: list[tuple[Loc, str]] = []

    def note_local_type(self, name: str, unsigned: bool) -> None:
        """Record whether a declaration of local `name` gives it an unsigned integer type; a name
        declared again with another type (another block, an `#ifdef` alternative) is not one."""
        self.unsigned[name] = unsigned and self.unsigned.get(name, True)

    def unsigned_locals(self) -> frozenset[str]:
        """The locals every declaration of which is an unsigned integer (ir.Function.unsigned)."""
        return frozenset(name for name, unsigned in self.unsigned.items() if unsigned and name in self.locals)

    # ------------------------------------------------------------------ blocks

    def new_block(self, handler: int | None | str = "current") -> Block:
        block = Block(id=len(self.blocks), handler=self.handler if handler == "current" else handler)
        self.blocks.append(block)
        return block

    def start(self, block: Block) -> None:
        self.cur = block

    def emit(self, event: ir.Event) -> None:
        if self.cur is None:  # code after return/goto/throw: unreachable, but kept well-formed
            self.start(self.new_block())
        assert self.cur is not None
        self.cur.events.append(event)

    def terminate(self, term: ir.Terminator) -> None:
        if self.cur is None:
            self.start(self.new_block())
        assert self.cur is not None
        if self.cur.term is None:
            self.cur.term = term
        self.cur = None

    def jump(self, target: Block | int) -> None:
        if self.cur is not None:
            self.terminate(Jump(target if isinstance(target, int) else target.id))

    def raise_here(self, loc: Loc) -> None:
        """An exception leaves the current point: to the innermost handler, or out."""
        if self.handler is not None:
            self.terminate(Jump(self.handler))
        else:
            self.terminate(Halt(loc, "throw"))

    # ------------------------------------------------------------------ temporaries

    def temp(self) -> Var:
        self.temp_counter += 1
        number = self.temp_counter
        while len(_TEMP_VARS) <= number:  # `$1`, `$2`, ... are the same values in every function
            _TEMP_VARS.append(Var(f"${len(_TEMP_VARS)}"))
        var = _TEMP_VARS[number]
        self.stmt_temps.append(var.name)
        return var

    def take_temps(self) -> tuple[str, ...]:
        temps = tuple(self.stmt_temps)
        self.stmt_temps = []
        return temps

    def finish_statement(self, node: Node) -> None:
        """The statement is over: its temporaries die (a resource only they hold is lost)."""
        if self.stmt_temps:
            self.emit(ir.Kill(self.loc(node), tuple(self.stmt_temps)))
            self.stmt_temps = []

    def kill(self, names: tuple[str, ...], loc: Loc) -> None:
        if names and self.cur is not None:
            self.emit(ir.Kill(loc, names))

    # ------------------------------------------------------------------ source

    def text(self, node: Node) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def short_text(self, node: Node) -> str:
        """`short(self.text(node))`, decoding and folding only the head of a long node. A call's
        text contains its arguments' (nested calls), so folding all of it at every level made
        deep nesting quadratic. Folding a prefix gives a prefix of the folded text: when the
        folded head is already cut, so is the whole, the same way."""
        start, end = node.start_byte, node.end_byte
        if end - start > _HEAD_BYTES:
            head = " ".join(self.src[start:start + _HEAD_BYTES].decode("utf-8", "replace").split())
            if len(head) > _TEXT_LIMIT:
                return head[: _TEXT_LIMIT - 3] + "..."
        text = " ".join(self.src[start:end].decode("utf-8", "replace").split())  # `short`, inlined (every call's text)
        return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 3] + "..."

    def loc(self, node: Node) -> Loc:
        if self.loc_override is not None:
            return self.loc_override
        sp, ep = node.start_point, node.end_point
        if self.ascii:  # the common case, without the two `col` calls
            return _new_tuple(Loc, (sp[0] + 1, sp[1] + 1, ep[0] + 1, ep[1] + 1))
        return Loc(sp[0] + 1, self.col(node.start_byte, sp[1]), ep[0] + 1, self.col(node.end_byte, ep[1]))

    def end_loc(self, node: Node) -> Loc:
        ep = node.end_point
        col = self.col(node.end_byte, ep[1])
        return Loc(ep[0] + 1, col, ep[0] + 1, col)

    def col(self, byte_offset: int, byte_col: int) -> int:
        """1-based column in characters (tree-sitter counts bytes; SARIF and users count characters).

        Decoding the line's prefix for every node made one long non-ASCII line quadratic: each
        line is looked at once (`line_columns`), and a column is the byte column minus the UTF-8
        continuation bytes before it."""
        if self.ascii:
            return byte_col + 1
        start = byte_offset - byte_col
        cache = self._line_cache()
        conts = cache.get(start, _UNSEEN)
        if conts is _UNSEEN:
            conts = cache[start] = line_continuations(self.src, start)
        if conts is None:  # an ASCII line
            return byte_col + 1
        if isinstance(conts, bytes):  # not valid UTF-8: decode as before (rare)
            return len(self.src[start:byte_offset].decode("utf-8", "replace")) + 1
        return byte_col - bisect_left(conts, byte_offset) + 1

    def _line_cache(self) -> dict[int, object]:
        """Per-line column data of the bytes being lowered (a macro expansion has its own)."""
        src = self.src
        if getattr(self, "_cols_src", None) is not src:
            self._cols_src = src
            self._cols: dict[int, object] = {}
        return self._cols

    def named(self, node: Node | None) -> list[Node]:
        """Named children without comments (comments may appear anywhere)."""
        return [c for c in node.named_children if c.type not in self.COMMENT_TYPES] if node is not None else []

    def unparen(self, node: Node) -> Node:
        while node.type == "parenthesized_expression":  # every C `if (...)` condition is one
            kids = node.named_children
            if len(kids) != 1 or kids[0].type in self.COMMENT_TYPES:  # filter comments only when needed
                kids = self.named(node)
                if len(kids) != 1:
                    break
            node = kids[0]
        return node

    def strip_casts(self, node: Node) -> Node:
        """The operand under parentheses and casts (`(T *)(p)` -> `p`), in one loop."""
        while True:
            kind = node.type
            if kind == "parenthesized_expression":
                kids = node.named_children
                if len(kids) != 1 or kids[0].type in self.COMMENT_TYPES:  # as in `unparen`
                    kids = self.named(node)
                    if len(kids) != 1:
                        return node
                node = kids[0]
            elif kind == "cast_expression":
                value = node.child_by_field_id(self.F.value)
                if value is None:
                    return node
                node = value
            else:
                return node

    # ------------------------------------------------------------------ shared expressions

    def lower_expr(self, node: Node | None, discard: bool = False, dest: ir.Expr | None = None) -> ir.Expr:
        """Lower `node`, emitting events for its calls and assignments; return its value.

        `dest`, when given, receives the value of a call directly (so `x = f()` is one event).
        Each node type has its `expr_<type>` method; others go to `expr_fallback`.
        """
        if node is None:
            return Opaque("")
        self.depth += 1
        try:
            if self.depth > self.MAX_NESTING:
                raise TooDeep()
            kind = node.type
            try:
                handler = self._expr_handlers[kind]
            except KeyError:
                handler = self._expr_handlers[kind] = getattr(type(self), "expr_" + kind, None)
            if handler is not None:
                return handler(self, node, discard, dest)
            return self.expr_fallback(node)
        finally:
            self.depth -= 1

    def expr_fallback(self, node: Node) -> ir.Expr:
        return self.expr_generic(node)

    def lower_cond(self, node: Node | None, t: Block, f: Block, kind: str = "if") -> None:
        """Lower a condition with short-circuit evaluation into branches to `t` / `f`.

        A chain `a && b && ... && z` is a left-nested tree as deep as it is long: its operands
        are walked in a loop, so a 30 000-term chain costs no recursion; other nesting (`!`, `?:`,
        mixed `&&`/`||`) counts against MAX_NESTING like expressions do."""
        if node is None:
            self.jump(t)
            return
        self.depth += 1
        try:
            if self.depth > self.MAX_NESTING:
                raise TooDeep()
            self._lower_cond(self.unparen(node), t, f, kind)
        finally:
            self.depth -= 1

    def _lower_cond(self, node: Node, t: Block, f: Block, kind: str) -> None:
        if self.lower_cond_special(node, t, f, kind):
            return
        node_type = node.type
        if node_type == "unary_expression" and self.operator(node) == "!":
            self.lower_cond(node.child_by_field_name(self.UNARY_OPERAND), f, t, kind)
            return
        op = self.operator(node) if node_type == "binary_expression" else None
        if op == "&&" or op == "||":
            operands = self.chain_operands(node, op)
            for operand in operands[:-1]:
                mid = self.new_block()
                if op == "&&":
                    self.lower_cond(operand, mid, f, kind)
                else:
                    self.lower_cond(operand, t, mid, kind)
                self.start(mid)
            self.lower_cond(operands[-1], t, f, kind)
            return
        if node_type == self.TERNARY_TYPE:
            F = self.F
            a, b = self.new_block(), self.new_block()
            self.lower_cond(node.child_by_field_id(F.condition), a, b, kind)
            self.start(a)
            self.lower_cond(node.child_by_field_id(F.consequence), t, f, kind)
            self.start(b)
            self.lower_cond(node.child_by_field_id(F.alternative), t, f, kind)
            return
        if op is not None:
            # `lower_expr(node)` without reading the operator a second time: the same depth
            # bound, then `binary_value` (what `expr_binary_expression` does with the operator)
            self.depth += 1
            try:
                if self.depth > self.MAX_NESTING:
                    raise TooDeep()
                expr = self.binary_value(node, op)
            finally:
                self.depth -= 1
        else:
            expr = self.lower_expr(node)
        self.terminate(ir.Branch(expr, t.id, f.id, self.loc(node), self.short_text(node), kind))

    def chain_operands(self, node: Node, op: str) -> list[Node | None]:
        """The operands of a left-nested chain of one binary operator (`a op b op c` ->
        [a, b, c]), found in a loop down the left spine; parentheses end the chain."""
        rights: list[Node | None] = []
        F = self.F
        while node.type == "binary_expression" and self.operator(node) == op:
            rights.append(node.child_by_field_id(F.right))
            left = node.child_by_field_id(F.left)
            if left is None:
                break
            node = left
        rights.append(node)
        rights.reverse()
        return rights

    def lower_cond_special(self, node: Node, t: Block, f: Block, kind: str) -> bool:
        """A language's own condition forms (C's comma, C++'s `if (init; cond)`); True if handled."""
        return False

    def expr_generic(self, node: Node) -> ir.Expr:
        parts = tuple(self.lower_expr(c) for c in self.named(node))
        return Opaque(self.short_text(node), parts)

    def expr_cast_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.lower_expr(node.child_by_field_id(self.F.value), discard, dest)

    def operator(self, node: Node) -> str:
        op_node = node.child_by_field_name("operator")
        op = self.text(op_node).strip() if op_node is not None else "?"
        return self.OPERATOR_ALIASES.get(op, op)

    def expr_unary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return Op(self.operator(node), (self.lower_expr(node.child_by_field_name(self.UNARY_OPERAND)),))

    def update_target(self, node: Node) -> Node | None:
        """The operand of `x++` / `--x`."""
        return node.child_by_field_name("argument") or next(iter(self.named(node)), None)

    def expr_update_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        target = self.lower_expr(self.update_target(node))
        self.emit(ir.Assign(self.loc(node), target, Opaque(self.short_text(node), (target,))))
        return target

    def expr_binary_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.binary_value(node, self.operator(node))

    def binary_value(self, node: Node, op: str) -> ir.Expr:
        """The value of binary expression `node` whose operator `op` the caller has read (a
        condition reads it to tell `&&`/`||` apart, and passes it on rather than reading it twice)."""
        F = self.F
        right = node.child_by_field_id(F.right)
        if op in ("&&", "||") and right is not None and has_side_effects(right):
            return self.value_via_branches(node)
        left = node.child_by_field_id(F.left)
        if left is not None and left.type == "binary_expression" and self.operator(left) == op \
                and self.chain_reaches(left.child_by_field_id(F.left), op, FLAT_CHAIN - 2):
            # `out << a << b << ...`: one n-ary Op, built in a loop. `left` is the chain's
            # first node (just tested); the spine is counted on from below it.
            return Op(op, tuple([self.lower_expr(o) for o in self.chain_operands(node, op)]))
        return Op(op, (self.lower_expr(left), self.lower_expr(right)))

    def chain_reaches(self, node: Node | None, op: str, count: int) -> bool:
        """Does the left spine from `node` hold at least `count` nodes of operator `op`, as
        `chain_operands` walks it (len(chain_operands(node, op)) > count)? The walk stops there:
        every level of a short chain asked for its whole spine (quadratic up to FLAT_CHAIN)."""
        found = 0
        while node is not None and node.type == "binary_expression" and self.operator(node) == op:
            found += 1
            if found >= count:
                return True
            left = node.child_by_field_id(self.F.left)
            if left is None:
                break
            node = left
        return False

    def value_via_branches(self, node: Node) -> ir.Expr:
        """`a && f(x)` used as a value: short-circuit into a temporary holding 1 or 0."""
        result = self.temp()
        t, f, join = self.new_block(), self.new_block(), self.new_block()
        self.lower_cond(node, t, f)
        for block, value in ((t, 1), (f, 0)):
            self.start(block)
            self.emit(ir.Assign(self.loc(node), result, Const(value, str(value))))
            self.jump(join)
        self.start(join)
        return result

    def lower_choice(self, node: Node, dest: ir.Expr | None) -> ir.Expr:
        """`c ? a : b`: pure arms stay an expression; arms with calls become branches that store
        into `dest` (or a temporary), so each call happens only on its own path."""
        F = self.F
        cond = node.child_by_field_id(F.condition)
        cons, alt = node.child_by_field_id(F.consequence), node.child_by_field_id(F.alternative)
        if not any(has_side_effects(n) for n in (cons, alt) if n is not None):
            value = self.lower_expr(cond)
            a = self.lower_expr(cons) if cons is not None else value  # GNU `c ?: b`
            return Op("?:", (value, a, self.lower_expr(alt)))
        result = dest if dest is not None else self.temp()
        t, f, join = self.new_block(), self.new_block(), self.new_block()
        self.lower_cond(cond, t, f)
        for block, arm in ((t, cons), (f, alt)):
            self.start(block)
            if arm is not None:
                self.assign_from(result, arm, self.loc(arm))
            self.jump(join)
        self.start(join)
        return result

    def expr_assignment_expression(self, node: Node, discard: bool, dest: ir.Expr | None) -> ir.Expr:
        return self.assignment_value(node, self.operator(node))

    def assignment_value(self, node: Node, op: str) -> ir.Expr:
        """Assignment `node` whose operator `op` the caller has read (C++ reads it to find
        `smart = ...`, and passes it on rather than reading it twice)."""
        left = self.lower_expr(node.child_by_field_id(self.F.left))
        right = node.child_by_field_id(self.F.right)
        if op != "=":
            value = self.lower_expr(right)
            self.emit(ir.Assign(self.loc(node), left, Opaque(self.short_text(node), (left, value))))
            return left
        self.assign_from(left, right, self.loc(node))
        return left

    def assign_from(self, target: ir.Expr, value_node: Node | None, loc: Loc) -> None:
        """`target = value`: a call stores its result straight into `target` (one event)."""
        if value_node is None:
            return
        inner = self.strip_casts(value_node)
        if inner.type in self.CALL_NODE_TYPES:
            value = self.lower_expr(inner, dest=target)
            if value != target:
                self.emit(ir.Assign(loc, target, value))
            return
        if not self.assign_special(target, inner, loc):
            self.emit(ir.Assign(loc, target, self.lower_expr(value_node)))

    def assign_special(self, target: ir.Expr, value: Node, loc: Loc) -> bool:
        """A language's own right-hand sides (C initializer lists); True when handled."""
        return False


_SIDE_EFFECT_TYPES = {"call_expression", "assignment_expression", "update_expression", "new_expression",
                      "delete_expression", "throw_expression", "method_invocation", "object_creation_expression",
                      "lambda_expression", "switch_expression"}


def has_side_effects(node: Node) -> bool:
    """Does evaluating `node` call anything or assign anything? (Bounded walk: when in doubt, yes.)"""
    stack = [node]
    budget = 2000
    while stack and budget:
        n = stack.pop()
        budget -= 1
        if n.type in _SIDE_EFFECT_TYPES:
            return True
        stack.extend(n.named_children)
    return bool(stack)
