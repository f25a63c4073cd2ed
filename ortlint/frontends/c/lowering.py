"""One C function body -> IR blocks (`FunctionLowering`); the constructs it understands live in the mixins
it is assembled from."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tree_sitter import Node

from ... import ir
from ...ir import Block, Loc, Return
from ..common.cfg import CfgBuilder, TooDeep, handler_table
from .expressions import CExpressions
from .preprocessor import CPreprocessor
from .statements import CStatements
from .syntax import MAX_NESTING, declarator_name, find_function_declarator

if TYPE_CHECKING:
    from .frontend import CFrontEnd


class FunctionLowering(CStatements, CPreprocessor, CExpressions, CfgBuilder):
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
        self.macro_at = ""  # where that macro is defined (Macro.defined_at)
        self.dangling_else: tuple[Node, Node] | None = None  # (if, its statement): CStatements.lower_statements
        self.pp_required_last: Node | None = None  # CPreprocessor._one_alternative_required
        self.F = unit.F
        self.name_values = unit.name_values
        self.object_macros = unit.object_macros

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
            is_static=self.function_is_static(), notes=self.notes, unsigned=self.unsigned_locals(),
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

    # -- preprocessor inside a function body: alternatives are branches of their own

    # -- what tree-sitter could not parse

    # ------------------------------------------------------------------ conditions

    # ------------------------------------------------------------------ expressions

    # ------------------------------------------------------------------ calls

    # ------------------------------------------------------------------ macros defined in the file

