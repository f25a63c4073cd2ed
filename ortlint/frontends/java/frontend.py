"""Java front end: tree-sitter-java syntax trees -> IR control-flow graphs.

The engine knows nothing about Java; everything Java-specific about *control flow* happens
here, so that the engine only ever sees calls, assignments and jumps:

* every method, constructor, initializer, lambda body and anonymous-class method becomes an
  `ir.Function` named after its class (`Outer.Inner.run`, `Outer.run$lambda@12`);
* calls are qualified with the static type of their receiver where the file declares it
  (locals, parameters, fields, `var` with an initializer whose type is known), with simple
  names resolved against the imports, so the policy can say `OrtSession.run` or
  `new OrtSession.SessionOptions`;
* try-with-resources, `finally`, `catch`, `throw`, `break`/`continue`/`return` through a
  `finally` are lowered by emitting the cleanup code on every exit path (normal, return,
  break/continue, exception), the way javac itself duplicates `finally` blocks;
* which calls may throw (`Call.may_throw`): those that declare a checked exception, in the
  binding (the `[[java_api]]` tables generated from its sources: `session.run` does,
  `result.get` does not) or in the analyzed code (`throws` clauses, also of other files and
  of `import static` helpers); the exceptions are followed to the `catch` clauses that cover
  them (union types too); other library calls are assumed not to throw, unless a catch of a
  checked exception that no known call declares says they do (unchecked exceptions from the
  JDK are not modelled, like `std::bad_alloc` on the C++ side);
* a call of a method that may be overridden and whose body only throws is left unresolved
  (the override runs), and the trailing arguments of a varargs method of the analyzed code
  are packed into one array (`$varargs`);
* receivers are typed from the file and from the project index of `java_types.py` (fields
  inherited across files, other objects' fields, getters' return types).

Types are only used to name callees; the policy decides what a name means. The policy is read
for the `type` a known call returns (so that `var s = env.createSession(p)` gives `s` the type
`OrtSession`) and for the exceptions the API declares.
"""
from __future__ import annotations

import os
from typing import Iterator

from tree_sitter import Node

from ... import ir
from ...findings import LIMIT
from ...ir import Const, Field, Loc, Var
from ...policy import Policy
from ..common.source import ParseTimeout, read_source
from ..managed.limits import frames_for_nesting
from ..managed.units import lower_or_note, note_syntax_error
from .lowering import JavaLowering
from .names import _JDK_INHERITED, _PRIMITIVES, ORT_PACKAGE, TypeNames, base_type
from .scopes import PendingFunction
from .syntax import F_BODY, F_DECLARATOR, F_NAME, F_PARAMETERS, F_TYPE, F_VALUE, INDEX_PARSE_SHARE, MAX_INDEXED_BYTES, CommentedNodes, TakeOvers, _scan, is_placeholder, lambda_param_names, modifier_words, parse_budget, parse_tree
from .tables import _CLASS_DECLS, _SEALED_DECLS, _THIS, FRAMES_PER_LEVEL, api_roots
from .type_index import MAX_CLASS_NESTING, ClassInfo, ProjectTypes, project_types

# ----------------------------------------------------------------------------- classes and types


# ----------------------------------------------------------------------------- exit contexts


# ----------------------------------------------------------------------------- one function


# ----------------------------------------------------------------------------- syntax helpers


# ----------------------------------------------------------------------------- the unit


class JavaFrontEnd:
    """Parses one Java file and lowers every method, constructor, initializer and lambda."""

    def __init__(self, path: str, src: bytes, policy: Policy, lines: int, index: bool = True):
        self.path = path
        self.index = index  # look classes up in the project's other files too
        self.project: ProjectTypes | None = None
        self.project_cache: dict[str, ClassInfo | None] = {}
        self.used_files: set[str] = set()  # other files whose declarations the result depends on
        self.src = src
        self.ascii = self.src.isascii()
        self.policy = policy
        self.lines = lines
        self.syntax = CommentedNodes()
        self.named = self.syntax.named
        self.types = TypeNames(src, self.syntax, api_roots(policy))
        self.classes: dict[str, ClassInfo] = {}  # canonical path -> info (named classes only)
        self.notes: list[tuple[Loc, str]] = []
        self.pending: list[PendingFunction] = []
        self.functions: list[ir.Function] = []
        self.param_lists: dict[int, tuple[int, list[tuple[str, str]]]] = {}  # node id -> (types.version, params)
        # immutable IR values shared by all functions of the file (see JavaLowering.var)
        self.vars: dict[str, Var] = {}
        self.this_fields: dict[str, Field] = {}
        self.int_consts: dict[str, Const] = {}  # integer literal text -> its Const
        self.text_consts: dict[str, Const] = {}  # other literal text (shortened) -> its Const
        self.initializers: dict[int, list[Node]] = {}  # class body -> its initializer members
        self.take_overs = TakeOvers(src, self.named)

    def text(self, node: Node) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def method_callee(self, type_: str, method: str) -> str:
        """`Type.method` when the receiver's type is known, else the bare method name. A type
        that says nothing about the object (`Object`, a type variable `T extends AutoCloseable`)
        counts as unknown; a concrete class the policy does not describe stays qualified, so
        `myModel.close()` is not taken for closing an ONNX Runtime object."""
        if not type_ or type_ in _PRIMITIVES:
            return method
        base = base_type(type_)
        if base in ("Object", "var") or base in self.types.type_params:
            return method
        return f"{base}.{method}"

    def is_view(self, callee: str) -> bool:
        spec = self.policy.lookup("method", callee)
        return bool(spec is not None and getattr(spec, "view", False))

    def is_indexed_element(self, callee: str, arity: int) -> bool:
        """Whether `recv.callee(i)` reads the element at index `i` (`list.get(i)`: the policy's
        `element` calls taking one argument), to be lowered as `recv[i]` like an array's."""
        spec = self.policy.lookup("method", callee)
        return bool(arity == 1 and spec is not None and getattr(spec, "element", False))

    def returned_type(self, style: str, callee: str) -> str:
        """The type the policy says a call returns (`type = "OrtSession"`), if any."""
        spec = self.policy.lookup(style, callee)
        return getattr(spec, "type", "") or "" if spec is not None else ""

    # -- driving

    def run(self) -> ir.SourceUnit:
        """Header and class signatures first, then every function body (queued closures last)."""
        with frames_for_nesting(FRAMES_PER_LEVEL):
            return self._run()

    def _run(self) -> ir.SourceUnit:
        try:
            tree = parse_tree(self.src)
        except ParseTimeout as exc:  # the parse memory cap
            self.notes.append((Loc(1, 1, 1, 1), str(exc)))
            return ir.SourceUnit(self.path, "java", [], self.notes, self.lines)
        if tree is None:
            limit = parse_budget(len(self.src))
            self.notes.append((Loc(1, 1, 1, 1), f"{LIMIT}tree-sitter stopped parsing this file after {limit * 100:,} "
                                                 "parse steps (error recovery on malformed code); could not parse "
                                                 "this file, it is not analyzed"))
            return ir.SourceUnit(self.path, "java", [], self.notes, self.lines)
        root = tree.root_node
        type_parameters, self.syntax.ids = _scan(root, self.src)
        self.types.read_header(root, type_parameters)
        top = list(self.class_nodes(root))
        for node in top:
            self.collect_class(node, None)
        if self.index and os.path.isfile(self.path):  # a file on disk has a project around it
            self.project = project_types(self.path, self.types.package, self.declarations)
        self.link_superclasses()
        for node in top:
            info = self.classes.get(self.class_path(node, None))
            if info is not None:
                self.queue_class_body(node.child_by_field_id(F_BODY), info, {}, header=node)
        self.drain()
        note_syntax_error(root, self.functions, self.notes)
        unit = ir.SourceUnit(self.path, "java", self.functions, self.notes, self.lines)
        unit.dependencies = sorted(self.used_files)
        return unit

    def class_nodes(self, root: Node) -> Iterator[Node]:
        """Top-level type declarations, including ones error recovery put inside ERROR nodes."""
        stack = list(reversed(root.named_children))
        while stack:
            node = stack.pop()
            if node.type in _CLASS_DECLS:
                yield node
            elif node.type == "ERROR":
                stack.extend(reversed(node.named_children))

    def class_path(self, node: Node, outer: ClassInfo | None) -> str:
        name = node.child_by_field_id(F_NAME)
        simple = self.text(name) if name is not None else "?"
        return f"{outer.path}.{simple}" if outer is not None else simple

    def collect_class(self, node: Node, outer: ClassInfo | None) -> None:
        """First pass: names, fields and method signatures of every named class in the file."""
        if outer is not None and outer.depth + 1 >= MAX_CLASS_NESTING:
            self.too_deep_class(node)
            return
        path = self.class_path(node, outer)
        info = ClassInfo(path, outer=outer, package=self.types.package, file=self.path)
        self.read_superclass(node, info)
        self.classes[path] = info
        simple = path.rsplit(".", 1)[-1]
        self.types.add_local_class(simple, path)
        body = node.child_by_field_id(F_BODY)
        for member in self.members(body):
            if member.type in _CLASS_DECLS:
                self.collect_class(member, info)
        self.collect_members(body, info, node)

    def read_superclass(self, node: Node, info: ClassInfo) -> None:
        """`extends S`: S's canonical name, and its package when this file tells it."""
        clause = next((c for c in node.named_children if c.type == "superclass"), None)
        kids = self.named(clause)
        if not kids:
            return
        info.super_name = base_type(self.types.canon(kids[0]))
        root = info.super_name.split(".")[0]
        info.super_package = self.types.origin.get(root, self.types.package)

    def class_info(self, canonical: str) -> ClassInfo | None:
        """A class of this file, else one declared elsewhere under the project's source root
        (found by the package this file imports it from, its own package, or its wildcard
        imports). Classes of the ORT API the policy describes always come from the policy."""
        found = self.classes.get(canonical)
        if found is not None or not canonical or self.project is None:
            return found
        cached = self.project_cache.get(canonical, False)
        if cached is not False:
            return cached  # type: ignore[return-value]
        root = canonical.split(".")[0]
        packages = [self.types.origin.get(root, self.types.package), self.types.package, *self.types.wildcards]
        found = self.project.find(canonical, packages, unique=root not in self.types.origin)
        if found is not None and found.package.startswith(ORT_PACKAGE) and root in self.types.api_classes:
            found = None
        if found is not None and found.file != self.path:
            self.used_files.add(found.file)
        self.project_cache[canonical] = found
        return found

    def static_import(self, member: str) -> ClassInfo | None:
        """The class of the analyzed code that `import static a.b.C.member;` (or `a.b.C.*`)
        brings `member` from, when the project index has it."""
        if self.project is None:
            return None
        named = self.types.static_members.get(member)
        for pkg, path in [named] if named is not None else self.types.static_wildcards:
            found = self.project.find(path, [pkg])
            if found is not None and found.own_method(member) is not None:
                if found.file != self.path:
                    self.used_files.add(found.file)
                return found
        return None

    def declarations(self, path: str, data: bytes) -> list[ClassInfo]:
        """The classes one file of the project declares (for the project index): its header
        and class signatures, no bodies; nothing when it cannot be read within budget."""
        if path == self.path or b"\0" in data[:8192] or len(data) > MAX_INDEXED_BYTES:
            data = self.src if path == self.path else b""
        if not data:
            return []
        other = JavaFrontEnd(path, data, self.policy, 0, index=False)
        try:
            tree = parse_tree(data, int(parse_budget(len(data)) * INDEX_PARSE_SHARE))
        except ParseTimeout:
            return []
        if tree is None:
            return []
        root = tree.root_node
        type_parameters, other.syntax.ids = _scan(root, data)
        other.types.read_header(root, type_parameters)
        for node in other.class_nodes(root):
            other.collect_class(node, None)
        return list(other.classes.values())

    def link_superclasses(self) -> None:
        for info in self.classes.values():
            if info.super_name and info.superclass is None:
                info.superclass = self.class_info(info.super_name)

    def too_deep_class(self, node: Node) -> None:
        """A class nested beyond MAX_CLASS_NESTING: skipped (with what it contains), with a note."""
        line = node.start_point[0] + 1
        self.notes.append((Loc(line, 1, line, 1), f"classes nested more than {MAX_CLASS_NESTING} deep at line "
                                                  f"{line}; the inner ones are not checked"))

    def members(self, body: Node | None) -> list[Node]:
        out = []
        for member in self.named(body):
            if member.type == "enum_body_declarations":
                out.extend(self.named(member))
            else:
                out.append(member)
        return out

    def collect_members(self, body: Node | None, info: ClassInfo, header: Node | None = None) -> None:
        """Fields (with types), methods (arities, return types, throws clauses), enum constants."""
        if header is not None and header.type == "record_declaration":
            for p in self.named(header.child_by_field_id(F_PARAMETERS)):
                name = p.child_by_field_id(F_NAME)
                if name is not None:
                    info.fields[self.text(name)] = self.types.canon(p.child_by_field_id(F_TYPE))
        sealed = header is None or header.type in _SEALED_DECLS or "final" in modifier_words(header)
        for member in self.members(body):
            if member.type in ("field_declaration", "constant_declaration"):
                ftype = self.types.canon(member.child_by_field_id(F_TYPE))
                for decl in member.children_by_field_id(F_DECLARATOR):
                    name = decl.child_by_field_id(F_NAME)
                    if name is not None:
                        info.fields[self.text(name)] = ftype
            elif member.type == "method_declaration":
                name = self.text(member.child_by_field_id(F_NAME))
                info.methods.setdefault(name, []).append(len(self.param_list(member)))  # canon() notes packages
                info.returns.setdefault(name, self.types.canon(member.child_by_field_id(F_TYPE)))
                self.note_throws(info, name, member)
                self.note_varargs(info, name, member)
                if not sealed and is_placeholder(member, self.named):
                    info.placeholders.add(f"{name}/{self.arity(member)}")
            elif member.type == "constructor_declaration":
                self.note_throws(info, "<init>", member)
                self.note_varargs(info, "<init>", member)
                info.constructors.append(self.arity(member))
            elif member.type == "enum_constant":
                info.fields[self.text(member.child_by_field_id(F_NAME))] = info.path

    def note_throws(self, info: ClassInfo, name: str, member: Node) -> None:
        """The checked exceptions a method declares (`throws A, B`), merged over its overloads."""
        clause = next((c for c in member.named_children if c.type == "throws"), None)
        if clause is not None:
            types = {base_type(self.types.canon(t)).split(".")[-1] for t in self.named(clause)}
            info.throwing[name] = tuple(sorted(set(info.throwing.get(name, ())) | types))

    def note_varargs(self, info: ClassInfo, name: str, member: Node) -> None:
        """`m(String tag, AutoCloseable... all)`: the index of the `...` parameter."""
        params = [p for p in self.named(member.child_by_field_id(F_PARAMETERS))
                  if p.type in ("formal_parameter", "spread_parameter")]
        if params and params[-1].type == "spread_parameter":
            info.varargs[name] = len(params) - 1

    def ort_throws(self, type_: str, member: str, arity: int) -> tuple[str, ...] | None:
        """What a call into the ONNX Runtime API may throw, as the binding declares it (the
        [[java_api]] tables generated from its sources): `()` for the getters that declare
        nothing. A member the tables do not list (a newer API) is assumed to throw OrtException,
        as most of them do; `close()` is taken as not throwing (see docs/java.md). None for a
        call of another library (or an unknown receiver): what it declares is not known."""
        if member == "close":
            return ()
        if not type_ or not self.types.is_ort(type_):
            return None
        declared = self.policy.java_throws(base_type(type_), member, arity)
        if declared is None and member in _JDK_INHERITED and base_type(type_) in self.policy.java_api:
            return ()  # `e.getMessage()`, `v.toString()`: from java.lang, which declares nothing
        return ("OrtException",) if declared is None else declared

    def arity(self, node: Node) -> int:
        """`len(self.param_list(node))` without resolving the parameter types."""
        return sum(1 for p in self.named(node.child_by_field_id(F_PARAMETERS))
                   if p.type in ("formal_parameter", "spread_parameter"))

    def param_list(self, node: Node) -> list[tuple[str, str]]:
        """(name, canonical type) of each parameter. Collecting the signatures and lowering
        the body both need it: memoized per node while the file's local classes (the only
        state `canon` depends on) stay the same."""
        found = self.param_lists.get(node.id)
        if found is not None and found[0] == self.types.version:
            return found[1]
        out = self.read_params(node)
        self.param_lists[node.id] = (self.types.version, out)
        return out

    def read_params(self, node: Node) -> list[tuple[str, str]]:
        params = node.child_by_field_id(F_PARAMETERS)
        out = []
        for p in self.named(params):
            if p.type in ("formal_parameter", "spread_parameter"):
                name = p.child_by_field_id(F_NAME)
                if name is None:
                    decl = next((c for c in self.named(p) if c.type == "variable_declarator"), None)
                    name = decl.child_by_field_id(F_NAME) if decl is not None else None
                type_node = p.child_by_field_id(F_TYPE) or next((c for c in self.named(p) if c.type.endswith("type")), None)
                ptype = self.types.canon(type_node) + ("[]" if p.type == "spread_parameter" else "")
                out.append((self.text(name) if name is not None else f"$arg{len(out)}", ptype))
        return out

    # -- queueing functions

    def queue(self, item: PendingFunction) -> None:
        self.pending.append(item)

    def queue_class(self, node: Node, outer: ClassInfo, captured: dict[str, str], prefix: str) -> None:
        """A class declared inside a method: analyzed like an anonymous class."""
        name = node.child_by_field_id(F_NAME)
        info = ClassInfo(f"{prefix}{self.text(name) if name is not None else '?'}", outer=outer)
        self.queue_class_body(node.child_by_field_id(F_BODY), info, captured, header=node)

    def queue_class_body(self, body: Node | None, info: ClassInfo, captured: dict[str, str],
                         header: Node | None = None) -> None:
        """Queue every method, constructor and initializer of a class body (nested classes too)."""
        if not info.methods and not info.fields:
            self.collect_members(body, info, header)
        inits = []
        for member in self.members(body):
            t = member.type
            if t in ("method_declaration", "constructor_declaration", "compact_constructor_declaration"):
                self.queue(PendingFunction(member, self.member_name(member, info), info, captured, "method"))
            elif t in ("static_initializer", "block", "field_declaration"):
                inits.append(member)
            elif t in _CLASS_DECLS and info.path + "." + self.text(member.child_by_field_id(F_NAME)) in self.classes:
                inner = self.classes[info.path + "." + self.text(member.child_by_field_id(F_NAME))]
                self.queue_class_body(member.child_by_field_id(F_BODY), inner, captured, header=member)
            elif t in _CLASS_DECLS and info.depth + 1 < MAX_CLASS_NESTING:
                self.queue_class(member, info, captured, prefix=info.path + ".")
        if inits:
            self.queue(PendingFunction(body, f"{info.path}.<init>", info, captured, "initializers"))  # type: ignore[arg-type]
            self.initializers[id(body)] = inits

    def member_name(self, member: Node, info: ClassInfo) -> str:
        if member.type == "method_declaration":
            name = self.text(member.child_by_field_id(F_NAME))
            return info.function_name(name, self.arity(member))
        simple = info.path.rsplit(".", 1)[-1]
        return f"{info.path}.{simple}"

    def drain(self) -> None:
        while self.pending:
            item = self.pending.pop(0)
            fn = self.lower_pending(item)
            if fn is not None:
                self.functions.append(fn)

    def lower_pending(self, item: PendingFunction) -> ir.Function | None:
        """Lower one queued function; too deep a nesting skips it with a note instead of crashing."""
        lowering = JavaLowering(self, item.node, item.name, item.cls, item.captured)

        def lower() -> ir.Function | None:
            if item.kind == "lambda":
                body = item.node.child_by_field_id(F_BODY)
                params = [(n, "") for n in lambda_param_names(item.node, self.src, self.named)]
                return lowering.lower(params, body, "lambda-expr" if body is not None and body.type != "block" else "method")
            if item.kind == "initializers":
                return self.lower_initializers(lowering, self.initializers.pop(id(item.node), []))
            if item.node.child_by_field_id(F_BODY) is None:
                return None  # abstract or interface method
            return lowering.lower(self.param_list(item.node) if item.node.type != "compact_constructor_declaration" else [],
                                  item.node.child_by_field_id(F_BODY))
        return lower_or_note(lower, item.node, item.name, self.notes)

    def lower_initializers(self, lowering: JavaLowering, members: list[Node]) -> ir.Function | None:
        """Field initializers and initializer blocks, in order, as one function: what they
        acquire goes into fields (an escape), but lambdas inside them are found this way."""
        def body() -> None:
            for member in members:
                if member.type == "field_declaration":
                    for decl in member.children_by_field_id(F_DECLARATOR):
                        name, value = decl.child_by_field_id(F_NAME), decl.child_by_field_id(F_VALUE)
                        if name is not None and value is not None:
                            lowering.stmt_temps = []
                            lowering.assign_from(Field(_THIS, self.text(name)), value, lowering.loc(decl))
                            lowering.finish_statement(decl)
                else:
                    block = member if member.type == "block" else next((c for c in self.named(member) if c.type == "block"), None)
                    if block is not None:
                        lowering.stmt_block(block)
        return lowering.lower([], body)


def parse_java(path: str, policy: Policy, data: bytes | None = None) -> ir.SourceUnit:
    """Front-end entry point for Java files; never raises on bad input."""
    source = read_source(path, policy, data, blank=False)  # C decoration macros mean nothing in Java
    if source.problem:
        return ir.SourceUnit(path, "java", [], [(Loc(1, 1, 1, 1), source.problem)], 0)
    return JavaFrontEnd(path, source.original, policy, source.lines).run()
