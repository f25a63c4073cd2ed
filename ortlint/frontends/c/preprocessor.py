"""What the preprocessor leaves in a C function: `#if`/`#ifdef` alternatives as separate paths, function-like
macros defined in the file expanded where they hide control flow, code tree-sitter could not parse."""
from __future__ import annotations

import re

from tree_sitter import Node

from ... import ir
from ...ir import Branch, Opaque
from ..common.declaration_macros import expand_text, with_declared_name
from ..common.macro_args import Macro, macro_label, split_macro_args, substitute_macro
from .syntax import _UNINITIALIZED, _first_function_body, _short


class CPreprocessor:
    """What the preprocessor leaves in a C function: `#if`/`#ifdef` alternatives as separate paths, function-like
macros defined in the file expanded where they hide control flow, code tree-sitter could not parse."""

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
        if node.type in ("preproc_if", "preproc_ifdef") and alt is not None and self._one_alternative_required(node):
            self.pp_required_last = _last_alternative(node, self.F)
        then_b, join = self.new_block(), self.new_block()
        else_b = self.new_block() if alt is not None else join
        if alt is None and node == self.pp_required_last:
            constant = True  # see _one_alternative_required
        if constant is True:
            self.jump(then_b)
        elif constant is False:
            self.jump(else_b)
        else:
            self.terminate(Branch(Opaque(cond_text), then_b.id, else_b.id, self.loc(node), _short(cond_text), "pp"))
        before = self.pp_names()
        self.start(then_b)
        for child in body:
            self.lower_stmt(child)
        self.jump(join)
        if alt is not None:
            after_then = self.pp_names()
            self.pp_restore_names(before)  # the other alternative has not seen the first one's declarations
            self.start(else_b)
            self.lower_stmt(alt)
            self.jump(join)
            self.pp_merge_names(after_then)
        self.start(join)

    def _one_alternative_required(self, node: Node) -> bool:
        """`int r;  #if defined(A) r = f_a(p); #elif defined(B) r = f_b(p); #endif  if (r) ..`:
        an `#if`/`#elif` chain without `#else` whose every alternative gives a value to a local
        declared without one and not assigned before. Were none compiled, the read after it
        would read an indeterminate value: the code supports only configurations that compile
        one of them (a header defines A whenever it does not define B). The way through none is
        not taken: the last `#elif` stands for the configurations the others leave."""
        arms = _alternative_bodies(node, self.F)
        if arms is None or len(arms) < 2:
            return False
        common: set[str] | None = None
        for arm in arms:
            names = {name for child in arm for name in _assigned_names(child, self.src)}
            common = names if common is None else common & names
            if not common:
                return False
        return any(self.locals.get(name) is False and not self._assigned_so_far(name) for name in common)

    def _assigned_so_far(self, name: str) -> bool:
        """Has any event lowered so far given `name` a value (other than its declaration's
        "uninitialized"), or handed its address to a call?"""
        var = ir.Var(name)
        for block in self.blocks:
            for ev in block.events:
                if type(ev) is ir.Assign and ev.dest == var and ev.value != _UNINITIALIZED:
                    return True
                if type(ev) is ir.Call and (ev.dest == var or any(type(a) is ir.AddrOf and a.base == var for a in ev.args)):
                    return True
        return False

    def pp_names(self) -> object:
        """What the declarations of an `#if` alternative change (C: nothing; C++ scopes)."""
        return None

    def pp_restore_names(self, saved: object) -> None:
        """Before an `#else` alternative: the names declared as they were before the `#if`."""

    def pp_merge_names(self, other: object) -> None:
        """After the alternatives: the names either of them declared."""

    def stmt_ERROR(self, node: Node) -> None:
        names = sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", self.text(node))))
        loc = self.loc(node)
        self.notes.append((loc, f"could not parse code at line {loc.line} in {self.name}(); resources it names are not checked"))
        self.emit(ir.Havoc(loc, tuple(names), "unparsed code"))

    def havoc_node(self, node: Node, reason: str) -> None:
        names = sorted(set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", self.text(node))))
        self.emit(ir.Havoc(self.loc(node), tuple(names), reason))

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
        saved = (self.src, self.loc_override, self.macro_origin, self.macro_at)
        self.loc_override = self.loc(node)
        if not self.macro_origin:
            self.macro_origin = macro_label(macro)
            self.macro_at = macro.defined_at
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
            self.src, self.loc_override, self.macro_origin, self.macro_at = saved
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


def _alternative_bodies(node: Node, fields) -> list[list[Node]] | None:
    """The statements of each alternative of an `#if`/`#elif` chain; None when the chain has
    an `#else` (or an `#elifdef`-like alternative this does not read)."""
    arms: list[list[Node]] = []
    while node is not None:
        if node.type not in ("preproc_if", "preproc_ifdef", "preproc_elif"):
            return None
        alt = node.child_by_field_id(fields.alternative)
        skip = [c for c in (node.child_by_field_id(fields.condition), node.child_by_field_id(fields.name), alt) if c is not None]
        arms.append([c for c in node.named_children if c not in skip])
        node = alt
    return arms


def _last_alternative(node: Node, fields) -> Node:
    while (alt := node.child_by_field_id(fields.alternative)) is not None:
        node = alt
    return node


def _assigned_names(stmt: Node, src: bytes) -> list[str]:
    """Locals a statement of an alternative assigns at its top level (`r = f(..);`)."""
    if stmt.type != "expression_statement":
        return []
    out = []
    for expr in stmt.named_children:
        if expr.type == "assignment_expression":
            left = expr.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                out.append(src[left.start_byte:left.end_byte].decode("utf-8", "replace"))
    return out
