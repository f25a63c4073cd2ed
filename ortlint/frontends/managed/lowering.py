"""`ManagedLowering`: what the Java and C# lowerings of one body share over `CfgBuilder`.

Locals live in nested scopes (`visible` always holds the innermost declaration of each name, so a
lookup is one dict access); statements and expressions dispatch through per-class tables of the
`stmt_<type>` / `expr_<type>` methods; nesting is counted against `MAX_NESTING`; code with a
syntax error is havocked whole; each exit through a `finally` lowers a copy of it, within
`MAX_FINALLY_BYTES` per function. A language gives its tables as class attributes
(`COMMENT_TYPES`, `SIMPLE_STATEMENTS`, `IDENTIFIER`, `EXPR_BODY_KIND`) and its statements as mixins."""
from __future__ import annotations

import re
from typing import Callable, Pattern

from tree_sitter import Node

from ... import ir
from ...ir import Block, Field, Opaque, Return, Var
from ..common.cfg import CfgBuilder, TooDeep, TooManyCleanups
from .limits import MAX_FINALLY_BYTES, MAX_NESTING
from .statements import ManagedStatements

THIS = Var("this")


class ManagedLowering(ManagedStatements, CfgBuilder):
    """The shared part of the Java and C# lowerings of one function body."""

    MAX_NESTING = MAX_NESTING

    SIMPLE_STATEMENTS: frozenset[str] = frozenset()  # statements havocked whole when they contain an error
    IDENTIFIER: Pattern[str] = re.compile(r"[A-Za-z_]\w*")  # the names unparsed code may mention
    EXPR_BODY_KIND = "expr"  # the `kind` of `lower` whose body is an expression (its value is returned)
    STMT_HANDLERS: dict[str, Callable] = {}
    EXPR_HANDLERS: dict[str, Callable] = {}

    vars: dict[str, Var]  # the file's shared `Var`s (see `var`)
    this_fields: dict[str, Field]

    def __init_subclass__(cls, **kwargs: object) -> None:
        """node type -> unbound `stmt_<type>` / `expr_<type>` method: the `getattr(self, prefix +
        type)` lookup of every statement and expression, done once per lowering class."""
        super().__init_subclass__(**kwargs)
        cls.STMT_HANDLERS = _handlers(cls, "stmt_")
        cls.EXPR_HANDLERS = _handlers(cls, "expr_")

    def init_lowering(self) -> None:
        """The state of one lowering over `CfgBuilder.init_graph`'s. The class's tables are bound
        to the instance: Python 3.11 looks an instance's own attribute up faster than its class's,
        and `lower_stmt`/`lower_expr` read them for every node."""
        self.stmt_handlers, self.expr_handlers = self.STMT_HANDLERS, self.EXPR_HANDLERS
        self.skip_types, self.simple_statements = self.COMMENT_TYPES, self.SIMPLE_STATEMENTS
        self.scopes: list[dict[str, str]] = [{}]
        self.visible: dict[str, str] = {}  # the innermost declaration of every local in scope
        self.shadowed: list[dict[str, str | None]] = [{}]  # per scope: what its names hid (None: nothing)
        self.finally_bytes = 0  # source lowered again as copies of `finally` blocks (run_finally)

    # ------------------------------------------------------------------ graph plumbing

    def fresh_region(self) -> None:
        """Continue in a new block, so a handler change applies to what follows."""
        block = self.new_block()
        self.jump(block)
        self.start(block)

    # ------------------------------------------------------------------ shared IR values

    def var(self, name: str) -> Var:
        """`Var(name)`, one instance per name and file. IR expressions are immutable, and the
        IR of a large tree is mostly small objects: fewer of them are fewer to build and fewer
        for the garbage collector to walk again and again while the run goes on."""
        found = self.vars.get(name)
        if found is None:
            found = self.vars[name] = Var(name)
        return found

    def this_field(self, name: str) -> Field:
        """`Field(this, name)`, one instance per name and file (see `var`)."""
        found = self.this_fields.get(name)
        if found is None:
            found = self.this_fields[name] = Field(THIS, name)
        return found

    # ------------------------------------------------------------------ scopes

    def declare(self, name: str, type_: str) -> None:
        """Declare a local in the innermost scope. `visible` is kept up to date, so looking a
        name up (several times per identifier) is one dict access, not a walk over scopes."""
        scope = self.scopes[-1]
        if name not in scope:
            self.shadowed[-1][name] = self.visible.get(name)
        scope[name] = type_
        self.visible[name] = type_
        self.locals[name] = False

    def is_local(self, name: str) -> bool:
        return name in self.visible

    def visible_types(self) -> dict[str, str]:
        """Everything a lambda (or a local function, an anonymous class) declared here can
        capture, with its type."""
        out = dict(self.captured)
        out.update(self.visible)
        return out

    def kill_at(self, names: tuple[str, ...], node: Node) -> None:
        """`kill(names, self.loc(node))`, building the location only when something dies."""
        if names and self.cur is not None:
            self.emit(ir.Kill(self.loc(node), names))

    def push_scope(self) -> None:
        self.scopes.append({})
        self.shadowed.append({})

    def pop_scope(self, node: Node | None) -> None:
        """Leaving a block: its locals are gone, so a resource only they held is lost here."""
        scope = self.scopes.pop()
        visible = self.visible
        for name, hidden in self.shadowed.pop().items():
            if hidden is None:
                visible.pop(name, None)
            else:
                visible[name] = hidden
        if node is not None and scope and self.cur is not None:
            self.kill(tuple(sorted(scope)), self.end_loc(node))

    # ------------------------------------------------------------------ entry point

    def lower_function(self, body: Node | Callable[[], None] | None, kind: str) -> ir.Function:
        """The body after the parameters: an implicit `return` closes every open block."""
        entry = self.new_block()
        self.start(entry)
        if callable(body):
            body()
        elif body is not None:
            if kind == self.EXPR_BODY_KIND:
                self.lower_expr_body(body)
            else:
                self.lower_body(body)
        end = self.end_loc(self.node)
        if self.cur is not None:
            self.terminate(Return(None, end))
        for block in self.blocks:
            if block.term is None:
                block.term = Return(None, end)
        return ir.Function(name=self.name, path=self.unit.path, loc=self.loc(self.node), language=self.language,
                           params=self.params, locals=self.locals, blocks=self.blocks, entry=0,
                           is_static=False, notes=self.notes)

    def lower_expr_body(self, body: Node) -> None:
        """An expression body (`x -> v`, `=> v`): its value is returned."""
        self.lower_return_value(body, body)

    # ------------------------------------------------------------------ dispatch

    def lower_stmt(self, node: Node) -> None:
        """Dispatch on the statement type; a statement with a syntax error is havocked whole."""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            t = node.type
            if t in self.skip_types:
                return
            handler = self.stmt_handlers.get(t)
            if t in self.simple_statements and node.has_error:
                self.unparsed(node)  # the whole statement: its names are what the error hides
            elif handler is not None:
                handler(self, node)
            elif t == "ERROR" or node.is_missing:
                self.unparsed(node)
            elif node.is_named:
                self.lower_expr_stmt(node)
        finally:
            self.depth -= 1

    def lower_expr(self, node: Node | None, discard: bool = False, dest: ir.Expr | None = None) -> ir.Expr:
        """`CfgBuilder.lower_expr`, dispatching through a table instead of `getattr`."""
        if node is None:
            return Opaque("")
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            handler = self.expr_handlers.get(node.type)
            if handler is not None:
                return handler(self, node, discard, dest)
            return self.expr_fallback(node)
        finally:
            self.depth -= 1

    def lower_cond(self, node: Node | None, t: Block, f: Block, kind: str = "if") -> None:
        """`CfgBuilder.lower_cond`, counted in `depth`: a chain of `&&` recurses once per term."""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise TooDeep()
            super().lower_cond(node, t, f, kind)
        finally:
            self.depth -= 1

    def unparsed(self, node: Node) -> None:
        """Code the parser could not read: every name it mentions stops being checked."""
        names = sorted(set(self.IDENTIFIER.findall(self.text(node))))
        loc = self.loc(node)
        self.notes.append((loc, f"could not parse code at line {loc.line} in {self.name}(); "
                                "resources it names are not checked"))
        self.emit(ir.Havoc(loc, tuple(names), "unparsed code"))

    # ------------------------------------------------------------------ finally

    def run_finally(self, body: Node) -> None:
        """One copy of a `finally` block (each exit through it runs its own copy, as the
        compilers do). A `finally` holding a `try` with a `return` copies the inner one at each
        of the outer one's exits: the copies grow with the nesting exponentially (a fuzzed
        method of twelve: minutes). Past MAX_FINALLY_BYTES of copied source the function is
        skipped with a note (TooManyCleanups); real methods copy a few kilobytes."""
        self.finally_bytes += body.end_byte - body.start_byte
        if self.finally_bytes > MAX_FINALLY_BYTES:
            raise TooManyCleanups()
        self.stmt_block(body)


def _handlers(cls: type, prefix: str) -> dict[str, Callable]:
    return {name[len(prefix):]: getattr(cls, name) for name in dir(cls)
            if name.startswith(prefix) and callable(getattr(cls, name))}
