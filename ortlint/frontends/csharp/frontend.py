"""C# front end: tree-sitter-c-sharp syntax trees -> IR control-flow graphs.

The engine knows nothing about C#; what is C#-specific about control flow happens here, so the
engine only sees calls, assignments and jumps:

* every method, constructor, accessor, operator, finalizer, lambda and local function becomes an
  `ir.Function` named after its class (`Outer.Inner.Run`, `Owner.Owner` for a constructor,
  `Owner.get_Session`, `Outer.Run$lambda@12`, `Outer.Run$Local`); field and property initializers
  of a class are one function `Class.<init>`; top-level statements are `Program.<Main>$`;
* `using` statements and declarations, `try`/`catch`/`finally`, `return`/`break`/`continue`/
  `goto case`/`yield break` through them are lowered by emitting the disposal or the finally on
  every way out; exceptions are routed to the catches that can take them (exceptions.py);
* calls are named by the static type of their receiver (calls.py), API overloads resolved
  against the `[[csharp_api]]` tables, calls of the analyzed code named after their function so
  their summaries apply; only API calls (and `throw`) fork exceptional edges, helpers throw
  through their summaries;
* storing into a member of this class hands an object on only when the class disposes that
  member somewhere (project.py); otherwise the member is a place of the function, and what is
  left there leaks when the function returns.
"""
from __future__ import annotations

import os

from tree_sitter import Node, Query, QueryCursor

from ... import ir
from ...ir import Field, Loc, Var
from ...policy import Policy
from ..common.source import ParseTimeout, read_source
from ..managed.limits import frames_for_nesting
from ..managed.syntax import walk
from ..managed.units import lower_or_note, note_syntax_error
from .api import ApiIndex
from .calls import lambda_params
from .lowering import CSharpLowering
from .project import ClassDecl, MethodDecl, ProjectIndex, declarations, read_params
from .project_view import ProjectView
from .scopes import PendingFunction
from .syntax import (CSHARP_LANGUAGE, F_ACCESSORS, F_BODY, F_NAME, F_PARAMETERS, F_RETURNS, F_TYPE, TYPE_DECLS,
                     declarator_value, modifiers, named, parse_budget, parse_tree, prepare, text_of)
from .types import canon

MAX_NAME = 160
FRAMES_PER_LEVEL = 10  # Python frames one counted nesting level may take
_FUNCTION_NODES = frozenset({"method_declaration", "constructor_declaration", "destructor_declaration", "operator_declaration",
                             "conversion_operator_declaration", "local_function_statement", "lambda_expression",
                             "anonymous_method_expression"})
_LOCAL_FUNCTIONS = Query(CSHARP_LANGUAGE, "(local_function_statement) @f")
_NESTED_FUNCTIONS = ("lambda_expression", "anonymous_method_expression", "local_function_statement")


def api_index(policy: Policy) -> ApiIndex:
    """The policy's API tables, parsed once per policy object."""
    found = policy.__dict__.get("_csharp_api_index")
    if found is None or found[0] != len(policy.csharp_api):
        found = policy.__dict__["_csharp_api_index"] = (len(policy.csharp_api), ApiIndex(policy))
    return found[1]


class CSharpFrontEnd(ProjectView):
    """Parses one C# file and lowers every function of it."""

    def __init__(self, path: str, src: bytes, policy: Policy, lines: int):
        self.path = path
        self.src = prepare(src)
        self.ascii = self.src.isascii()
        self.policy = policy
        self.lines = lines
        self.api = api_index(policy)
        self.notes: list[tuple[Loc, str]] = []
        self.functions: list[ir.Function] = []
        self.pending: list[PendingFunction] = []
        self.used_files: set[str] = set()
        self.vars: dict[str, Var] = {}
        self.this_fields: dict[str, Field] = {}
        self.namespaces: tuple[str, ...] = ()
        self.local = ProjectIndex("")
        self.local_function_nodes: list[Node] = []
        self._classes: dict[str, object] = {}
        self._chains: dict[int, tuple[ClassDecl, list[ClassDecl]]] = {}
        self._members: dict[tuple[int, str], object] = {}
        self._exception_bases: dict[str, str] | None = None

    def text(self, node: Node | None) -> str:
        return text_of(self.src, node)

    # ------------------------------------------------------------------ the project

    def build_index(self, root: Node) -> None:
        """This file's own declarations now; the project's when a question needs them."""
        self.local = ProjectIndex(os.path.dirname(self.path), *self.api_sets())
        for decl in declarations(self.path, self.src, root):
            self.local.add(decl)
        self.local.link()
        self.local.trees[self.path] = (self.src, root)
        self.local.note_external(self.src)
        spaces, stack = [], [root]
        while stack:  # namespaces are at the top or inside other namespaces' bodies
            for c in stack.pop().named_children:
                if c.type in ("namespace_declaration", "file_scoped_namespace_declaration"):
                    spaces.append(self.text(c.child_by_field_id(F_NAME)))
                    body = c.child_by_field_id(F_BODY)
                    if body is not None:
                        stack.append(body)
        self.local_function_nodes = QueryCursor(_LOCAL_FUNCTIONS).captures(root).get("f", []) \
            if b"(" in self.src else []
        usings = [self.text(k) for c in root.named_children if c.type == "using_directive"
                  for k in c.named_children if k.type in ("identifier", "qualified_name")]
        self.namespaces = tuple(dict.fromkeys(spaces + usings))

    # ------------------------------------------------------------------ functions

    def nested_name(self, outer: str, label: str, node: Node) -> str:
        name = f"{outer}${label}"
        if len(name) <= MAX_NAME:
            return name
        return f"{outer.split('$', 1)[0]}$...${label}:{node.start_point[1] + 1}"

    def queue(self, item: PendingFunction) -> None:
        self.pending.append(item)

    def enclosing_local(self, lowering: CSharpLowering, name: str) -> tuple[str, tuple[str, ...]] | None:
        outer = getattr(lowering, "outer_locals", {})
        return outer.get(name)

    def local_return_type(self, lowering: CSharpLowering, name: str) -> str:
        return getattr(lowering, "local_returns", {}).get(name, "")

    # ------------------------------------------------------------------ driving

    def run(self) -> ir.SourceUnit:
        """Every function of the file, with room for MAX_NESTING levels of Python frames below
        the caller's (the depth counters stop deeper code with a note, never a RecursionError)."""
        with frames_for_nesting(FRAMES_PER_LEVEL):
            return self._run()

    def _run(self) -> ir.SourceUnit:
        try:
            tree = parse_tree(self.src)
        except ParseTimeout as exc:
            self.notes.append((Loc(1, 1, 1, 1), str(exc)))
            return ir.SourceUnit(self.path, "csharp", [], self.notes, self.lines)
        if tree is None:
            limit = parse_budget(len(self.src))
            self.notes.append((Loc(1, 1, 1, 1), f"tree-sitter could not parse the file within {limit:.1f} s of CPU "
                                                 "time (error recovery on malformed code); not checked"))
            return ir.SourceUnit(self.path, "csharp", [], self.notes, self.lines)
        root = tree.root_node
        self.build_index(root)
        self.scope(root, "", None)
        globals_ = [c for c in root.named_children if c.type == "global_statement"]
        if globals_:
            self.lower_top_level(root, globals_)
        self.drain()
        note_syntax_error(root, self.functions, self.notes)
        unit = ir.SourceUnit(self.path, "csharp", self.functions, self.notes, self.lines)
        unit.dependencies = sorted(self.used_files)
        return unit

    def scope(self, node: Node, namespace: str, outer: ClassDecl | None) -> None:
        ns = namespace
        for child in node.named_children:
            t = child.type
            if t == "file_scoped_namespace_declaration":
                ns = self.text(child.child_by_field_id(F_NAME))
            elif t == "namespace_declaration":
                inner = self.text(child.child_by_field_id(F_NAME))
                self.scope(child.child_by_field_id(F_BODY), f"{ns}.{inner}" if ns else inner, None)
            elif t in TYPE_DECLS:
                self.type_decl(child, ns, outer)
            elif t == "declaration_list":
                self.scope(child, ns, outer)
            elif t == "ERROR":
                self.scope(child, ns, outer)

    def class_for(self, node: Node, ns: str, outer: ClassDecl | None) -> ClassDecl:
        name = self.text(node.child_by_field_id(F_NAME))
        path = f"{outer.path}.{name}" if outer is not None else name
        for d in self.local.by_name.get(name, []):
            if d.path == path and d.namespace == ns:
                return d
        return ClassDecl(path, ns, node.type.split("_")[0], files=[self.path])

    def type_decl(self, node: Node, ns: str, outer: ClassDecl | None) -> None:
        decl = self.class_for(node, ns, outer)
        body = node.child_by_field_id(F_BODY)
        inits: list[Node] = []
        for member in named(body):
            t = member.type
            if t in TYPE_DECLS:
                self.type_decl(member, ns, decl)
            elif t == "method_declaration":
                self.lower_method(member, decl)
            elif t == "constructor_declaration":
                self.lower_constructor(member, decl)
            elif t == "destructor_declaration":
                self.lower_plain(member, decl, f"{decl.path}.~{decl.name}", [], member.child_by_field_id(F_BODY))
            elif t in ("property_declaration", "indexer_declaration", "event_declaration"):
                self.lower_property(member, decl)
                if any(c.type == "equals_value_clause" for c in member.named_children) or \
                        self.property_initializer(member) is not None:
                    inits.append(member)
            elif t in ("operator_declaration", "conversion_operator_declaration"):
                params = self.params_of(member)
                body_node = member.child_by_field_id(F_BODY) or self.arrow(member)
                self.lower_plain(member, decl, f"{decl.path}.operator@{member.start_point[0] + 1}", params, body_node)
            elif t in ("field_declaration", "event_field_declaration"):
                inits.append(member)
        if inits:
            self.lower_initializers(node, decl, inits)

    def params_of(self, node: Node) -> list[tuple[str, str, str]]:
        return [(p.name, p.type, p.mode) for p in read_params(self.src, node.child_by_field_id(F_PARAMETERS))]

    def arrow(self, node: Node) -> Node | None:
        return next((c for c in node.named_children if c.type == "arrow_expression_clause"), None)

    def lower_method(self, node: Node, decl: ClassDecl) -> None:
        name = self.text(node.child_by_field_id(F_NAME))
        line = node.start_point[0] + 1
        m = next((x for x in decl.methods.get(name, []) if x.line == line and x.file == self.path), None)
        if m is None:
            m = MethodDecl(name, read_params(self.src, node.child_by_field_id(F_PARAMETERS)), "", line=line)
        fname = decl.function_name(name, m)
        body = node.child_by_field_id(F_BODY) or self.arrow(node)
        returns = canon(self.text(node.child_by_field_id(F_RETURNS)))
        static = "static" in modifiers(self.src, node)
        self.lower_plain(node, decl, fname, [(p.name, p.type, p.mode) for p in m.params], body,
                         returns_void=returns == "void", static=static)

    def lower_constructor(self, node: Node, decl: ClassDecl) -> None:
        static = "static" in modifiers(self.src, node)
        params = read_params(self.src, node.child_by_field_id(F_PARAMETERS))
        line = node.start_point[0] + 1
        if static:
            fname = f"{decl.path}.<cinit>"
        else:
            m = next((x for x in decl.ctors if x.line == line and x.file == self.path),
                     MethodDecl(".ctor", params, "", line=line))
            fname = decl.function_name(".ctor", m)
        body = node.child_by_field_id(F_BODY) or self.arrow(node)
        init = next((c for c in node.named_children if c.type == "constructor_initializer"), None)
        lowering = self.new_lowering(node, fname, decl, static=static)
        if body is not None and body.type == "block":
            self.register_locals(lowering, node, named(body))

        def lower_body() -> None:
            if init is not None:
                lowering.lower_constructor_initializer(init)
            if body is not None:
                if body.type == "arrow_expression_clause":
                    lowering.lower_expr_stmt(named(body)[0]) if named(body) else None
                else:
                    lowering.lower_body(body)
        self.finish(lowering, node, fname, [(p.name, p.type, p.mode) for p in params], lower_body)

    def lower_property(self, node: Node, decl: ClassDecl) -> None:
        name = self.text(node.child_by_field_id(F_NAME)) if node.type != "indexer_declaration" else "Item"
        params = self.params_of(node) if node.type == "indexer_declaration" else []
        ptype = canon(self.text(node.child_by_field_id(F_TYPE)))
        static = "static" in modifiers(self.src, node)
        arrow = self.arrow(node)
        if arrow is not None:
            self.lower_plain(node, decl, f"{decl.path}.get_{name}", params, arrow, static=static)
            return
        accessors = node.child_by_field_id(F_ACCESSORS)
        for acc in named(accessors):
            if acc.type != "accessor_declaration":
                continue
            kind = next((c.type for c in acc.children if not c.is_named and c.type in ("get", "set", "init", "add", "remove")),
                        "get")
            body = acc.child_by_field_id(F_BODY) or self.arrow(acc)
            if body is None:
                continue
            extra = [("value", ptype, "")] if kind in ("set", "init", "add", "remove") else []
            self.lower_plain(acc, decl, f"{decl.path}.{kind}_{name}", params + extra, body,
                             returns_void=kind != "get", static=static)

    def property_initializer(self, node: Node) -> Node | None:
        """`P { get; } = value;`: the value (after the accessor list)."""
        seen_eq = False
        for c in node.children:
            if not c.is_named and c.type == "=":
                seen_eq = True
            elif seen_eq and c.is_named and c.type != "comment":
                return c
        return None

    def lower_initializers(self, node: Node, decl: ClassDecl, members: list[Node]) -> None:
        """Field and property initializers of one class, in order, as `Class.<init>`: what they
        create goes into members (static: kept for the process; instance: see `member_ref`)."""
        lowering = self.new_lowering(node, f"{decl.path}.<init>", decl)

        def body() -> None:
            for member in members:
                if member.type in ("property_declaration",):
                    value = self.property_initializer(member)
                    name = self.text(member.child_by_field_id(F_NAME))
                    if value is not None:
                        lowering.stmt_temps = []
                        lowering.assign_from(lowering.member_ref(name), value, lowering.loc(member))
                        lowering.finish_statement(member)
                    continue
                vd = next((c for c in member.named_children if c.type == "variable_declaration"), None)
                for d in named(vd):
                    if d.type != "variable_declarator":
                        continue
                    value = declarator_value(d)
                    if value is None:
                        continue
                    lowering.stmt_temps = []
                    lowering.assign_from(lowering.member_ref(self.text(d.child_by_field_id(F_NAME))), value,
                                         lowering.loc(d))
                    lowering.finish_statement(d)
        self.finish(lowering, node, f"{decl.path}.<init>", [], body)

    def lower_top_level(self, root: Node, stmts: list[Node]) -> None:
        """C# 9 top-level statements: the program's `Main`."""
        decl = ClassDecl("Program", "", "class", files=[self.path])
        lowering = self.new_lowering(stmts[0], "Program.<Main>$", decl, static=True)
        lowering.node = root
        inner = [k for s in stmts for k in named(s)]
        self.register_locals(lowering, root, inner)
        self.finish(lowering, root, "Program.<Main>$", [("args", "string[]", "")],
                    lambda: lowering.lower_statements(inner, root))

    def new_lowering(self, node: Node, name: str, decl: ClassDecl | None, captured: dict[str, str] | None = None,
                     static: bool = False) -> CSharpLowering:
        return CSharpLowering(self, node, name, decl, captured, static)

    def lower_plain(self, node: Node, decl: ClassDecl | None, fname: str, params: list[tuple[str, str, str]],
                    body: Node | None, returns_void: bool = False, static: bool = False,
                    captured: dict[str, str] | None = None) -> None:
        if body is None:
            return  # abstract, extern or interface member
        lowering = self.new_lowering(node, fname, decl, captured, static)
        lowering.returns_void = returns_void
        if body.type == "arrow_expression_clause":
            kids = named(body)
            expr = kids[0] if kids else None
            self.register_locals(lowering, node, [])
            self.finish(lowering, node, fname, params, expr, kind="expr")
            return
        self.register_locals(lowering, node, named(body))
        self.finish(lowering, node, fname, params, body)

    def finish(self, lowering: CSharpLowering, node: Node, fname: str, params: list[tuple[str, str, str]],
               body: object, kind: str = "method") -> None:
        fn = lower_or_note(lambda: lowering.lower(params, body, kind), node, fname, self.notes)  # type: ignore[arg-type]
        if fn is not None:
            self.functions.append(fn)

    # ------------------------------------------------------------------ local functions and lambdas

    def register_locals(self, lowering: CSharpLowering, owner: Node, stmts: list[Node]) -> None:
        """Local functions declared in a body: named `Outer$Name`, queued, callable before their
        text; the enclosing locals each one uses are passed to it as extra arguments."""
        if not self.local_function_nodes or not stmts:
            return
        start, end = stmts[0].start_byte, stmts[-1].end_byte
        want = 0 if owner.type == "compilation_unit" else owner.id
        found = [n for n in self.local_function_nodes if start <= n.start_byte < end and self.owner_of(n) == want]
        if not found:
            return
        declared = self.declared_names(owner)
        returns: dict[str, str] = {}
        for fn in found:
            name = self.text(fn.child_by_field_id(F_NAME))
            own = self.declared_names(fn)
            used = {self.text(i) for i in walk(fn) if i.type == "identifier"}
            extra = tuple(sorted((used & declared) - own))
            fname = self.nested_name(lowering.name, name, fn)
            lowering.local_functions[name] = (fname, extra)
            returns[name] = canon(self.text(fn.child_by_field_id(F_TYPE)))
            self.queue(PendingFunction(fn, fname, lowering, "local", {}, extra))
        lowering.local_returns = returns  # type: ignore[attr-defined]

    def owner_of(self, node: Node) -> int:
        """The id of the function a local function is declared in (0: top-level statements)."""
        cur = node.parent
        while cur is not None:
            if cur.type in _FUNCTION_NODES:
                return cur.id
            if cur.type == "accessor_declaration" or cur.type == "arrow_expression_clause" and cur.parent is not None \
                    and cur.parent.type in ("property_declaration", "indexer_declaration"):
                return cur.id if cur.type == "accessor_declaration" else cur.parent.id
            if cur.type == "global_statement":
                return 0
            cur = cur.parent
        return 0

    def declared_names(self, node: Node) -> set[str]:
        out = set()
        for n in walk(node):
            t = n.type
            if t in ("variable_declarator", "parameter", "declaration_expression", "declaration_pattern",
                     "catch_declaration", "foreach_statement"):
                name = n.child_by_field_id(F_NAME) if t != "foreach_statement" else n.child_by_field_name("left")
                if name is not None and name.type == "identifier":
                    out.add(self.text(name))
        return out

    def drain(self) -> None:
        while self.pending:
            item = self.pending.pop(0)
            outer: CSharpLowering = item.outer  # type: ignore[assignment]
            node = item.node
            params = self.params_of(node) if node.child_by_field_id(F_PARAMETERS) is not None and \
                node.child_by_field_id(F_PARAMETERS).type == "parameter_list" else \
                [(p, "", "") for p in lambda_params(self.src, node)]
            body = node.child_by_field_id(F_BODY) or next((c for c in named(node) if c.type == "block"), None) \
                or self.arrow(node)
            if item.kind == "local":
                params = params + [(x, outer.visible.get(x, ""), "") for x in item.extra_params]
            lowering = self.new_lowering(node, item.name, outer.cls, item.captured, outer.static)
            lowering.outer_locals = {**getattr(outer, "outer_locals", {}), **outer.local_functions}  # type: ignore[attr-defined]
            lowering.local_returns = dict(getattr(outer, "local_returns", {}))  # type: ignore[attr-defined]
            if body is None:
                continue
            if body.type == "block":
                self.register_locals(lowering, node, named(body))
                self.finish(lowering, node, item.name, params, body)
            else:
                expr = named(body)[0] if body.type == "arrow_expression_clause" and named(body) else body
                lowering.returns_void = item.kind == "local" and canon(self.text(node.child_by_field_id(F_TYPE))) == "void"
                self.finish(lowering, node, item.name, params, expr, kind="expr")


def parse_csharp(path: str, policy: Policy, data: bytes | None = None) -> ir.SourceUnit:
    """Front-end entry point for C# files; never raises on bad input."""
    source = read_source(path, policy, data, blank=False)
    if source.problem:
        return ir.SourceUnit(path, "csharp", [], [(Loc(1, 1, 1, 1), source.problem)], 0)
    return CSharpFrontEnd(path, source.original, policy, source.lines).run()

