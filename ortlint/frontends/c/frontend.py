"""C front end: tree-sitter-c syntax trees -> IR control-flow graphs.

The lowering is written against tree-sitter node types shared by the C and C++ grammars, so the
C++ front end subclasses `FunctionLowering` and only adds what C++ has on top.
"""
from __future__ import annotations

from collections.abc import Iterable
from collections import OrderedDict

import tree_sitter_c
from tree_sitter import Language, Node, Parser

from ... import ir
from ...ir import Const, Loc, Var
from ...policy import Policy
from ..common import header_index
from ..common.cfg import MAX_CLEANUP_RUNS, TooDeep, TooManyCleanups, field_ids
from ..common.conditionals import lost_tokens, one_alternative
from ..common.member_macros import blank_member_macros
from ..common.decorations import blank_class_decorations, blank_declaration_heads, blank_empty_macros, empty_macro_names
from ..common.declaration_macros import declare_unknown_macro_arguments, mask_declaration_arguments, statement_macros
from ..common.definition_macros import rewrite_definition_macros
from ..common.embedded import blank_embedded_code
from ..common.macro_args import Macro, reads_memory
from ..common.source import (
    ParseTimeout,
    SourceText,
    blank_decorations,
    blank_else_continuations,
    blank_preprocessor_alternatives,
    parse_limited,
    read_source,
    scan_function_macros,
    statement_macro_sets,
    terminate_statement_macros,
)
from ..common.string_macros import rewrite_string_macros
from .lowering import FunctionLowering
from .syntax import (_NOT_CODE, C_TYPE_NAMES, _descendants_with_errors, strip_outer_parens, _uncovered, declarator_name,
                     macro_int, parse_int)

C_LANGUAGE = Language(tree_sitter_c.language())

MAX_SNIPPETS = 256  # macro expansion trees kept by the process, least recently used dropped (CFrontEnd.parse_snippet)
MAX_SNIPPET_CHARS = 1 << 20
_SNIPPETS: OrderedDict[tuple[Language, str], object] = OrderedDict()  # least recently used first
_snippet_chars = 0


# ----------------------------------------------------------------------------- helpers


# ----------------------------------------------------------------------------- the unit


PP_ROUNDS = 3  # retries with conditional groups reduced (see _one_alternative_per_group)


class CFrontEnd:
    """Parses one C file and lowers every function definition in it."""

    language_name = "c"
    ts_language = C_LANGUAGE
    lowering_class: type[FunctionLowering] = FunctionLowering

    def __init__(self, source: SourceText, policy: Policy):
        self.source = source
        self.path = source.path
        self.src = source.data
        self.policy = policy
        self.parser = Parser(self.ts_language)
        self.macros: dict[str, Macro] = {}
        self.object_macros: dict[str, Macro] = {}  # object-like macros whose use reads memory (reads_memory)
        self.masked_args: dict[int, str] = {}  # see declaration_macros.mask_declaration_arguments
        self.visible_macros: dict = {}  # the headers' (or libclang's) macros, by name
        self.visible = header_index.EMPTY
        self.prototypes: dict[str, tuple[bool, ...]] = {}
        self.index_facts: header_index.HeaderFacts | None = None  # of the tree parse_source took from the index
        self.notes: list[tuple[Loc, str]] = []
        self.ascii = self.src.isascii()
        self.name_values: dict[str, ir.Expr] = {}  # see FunctionLowering.name_value
        self.vars: dict[str, Var] = {}  # see FunctionLowering.var
        self.literals: dict[str, Const] = {}  # see FunctionLowering.literal
        self.number_literals: dict[bytes, Const] = {}  # see FunctionLowering.expr_number_literal
        self.F = field_ids(self.ts_language)

    def parse_snippet(self, text: str):
        """The syntax tree of a macro expansion. The same expansions recur in the files of a
        project (a worker parses many), so trees are kept for the process (they are never
        changed), up to MAX_SNIPPETS of them and MAX_SNIPPET_CHARS of text."""
        global _snippet_chars
        key = (self.ts_language, text)
        tree = _SNIPPETS.get(key)
        if tree is not None:
            _SNIPPETS.move_to_end(key)
            return tree
        while _SNIPPETS and (len(_SNIPPETS) >= MAX_SNIPPETS or _snippet_chars > MAX_SNIPPET_CHARS):
            _snippet_chars -= len(_SNIPPETS.popitem(last=False)[0][1])
        tree = _SNIPPETS[key] = self.parser.parse(text.encode())
        _snippet_chars += len(text)
        return tree

    def is_static(self, node: Node) -> bool:
        for child in node.children:
            if child.type == "storage_class_specifier" and self.src[child.start_byte:child.end_byte] == b"static":
                return True
        return False

    def run(self) -> ir.SourceUnit:
        self.load_headers()
        tree = self.parse_source()
        root = tree.root_node
        self.collect_macros(root)
        self.add_visible_declarations(root)
        functions: list[ir.Function] = []
        for node, name in self.function_nodes(root):
            functions.extend(self.lower_function(node, name))
        self.note_unparsed(root, functions)
        return ir.SourceUnit(self.path, self.language_name, functions, self.notes, self.source.lines,
                             self.header_constants() | self.collect_constants(root), list(self.visible.headers))

    def header_constants(self) -> dict[str, int]:
        """`#define NAME <integer>` of the tree's headers this file includes: `!= REDISMODULE_OK`
        compares with 0 whether or not the run also analyzes redismodule.h (a file analyzed
        alone, as a hook or an editor does, gets the constants a run over its tree gets)."""
        bodies = {name: macro.body for name, macro in self.visible.macros.items() if macro.params is None}
        oracle = getattr(self, "oracle", None)  # precise mode: the object-like macros libclang saw used
        bodies.update(getattr(oracle, "objects", None) or {})
        out: dict[str, int] = {}
        plain = {name: parse_int(strip_outer_parens(body)) for name, body in bodies.items() if body}
        for name, body in bodies.items():
            number = macro_int(body, lambda n: plain.get(n) is not None) if body else None
            if number is not None:
                out[name] = number
        return out

    # ------------------------------------------------------------------ the tree's own headers

    def load_headers(self) -> None:
        """What the file's `#include "..."` headers declare (see header_index); with libclang
        (an oracle) the compiler's view is used instead. Before parsing, macros that write a
        function's head or braces are rewritten (see definition_macros), statement macros
        invoked without `;` are terminated and `#if` blocks inside parentheses keep one branch
        (see source.terminate_statement_macros, source.blank_conditionals_in_parens); unknown
        decorations in declarations, uses of empty object-like macros (`#define __fd_take`) and
        embedded JavaScript or assembly are blanked first (see decorations, embedded)."""
        oracle = getattr(self, "oracle", None) is not None
        self.visible = header_index.EMPTY if oracle else header_index.current().visible(self.path, self.source.original)
        visible_macros = self._oracle_macros() if oracle else self.visible.macros
        self.src = blank_empty_macros(self.src, empty_macro_names(self.src, visible_macros))
        self.src = blank_embedded_code(blank_class_decorations(self.src))
        self.src = rewrite_definition_macros(self.src, visible_macros, self.policy)
        names, complete = statement_macro_sets(self.src, self.visible, self.policy)
        if names:
            self.src = terminate_statement_macros(self.src, names, complete)
        self.statement_macro_names = statement_macros(self.expandable_macro_names())
        self.src, self.masked_args = mask_declaration_arguments(self.src, self.statement_macro_names)
        self.src = blank_preprocessor_alternatives(self.src)  # blank_conditionals_in_parens, blank_unbalanced_alternatives
        self.src = blank_else_continuations(self.src)
        self.visible_macros = visible_macros
        self.ascii = self.src.isascii()

    def parse_source(self):
        """The syntax tree of `self.src`. When tree-sitter rejected something, string literals
        glued to macros that it rejects (`LIBRARY_PREFIX ORT_TSTR("x") LIBRARY_EXTENSION`) are
        rewritten into plain concatenations, same length, and the text is parsed again (see
        string_macros; a file that parses is never scanned for them, and few files need it).
        Declaration heads with an unknown macro (`DECO TYPE *f(`) are blanked the same way
        (see decorations), and unknown macros given a declaration and its value
        (`OUTCOME_TRY(auto x, f());`) become that declaration (see declaration_macros). A header the header index parsed as it is, unchanged here, is not
        parsed again."""
        taken = header_index.current().take_tree(self.path, self.src, self.ts_language)
        if taken is not None:
            tree, self.index_facts = taken
        else:
            tree = parse_limited(self.parser, self.src)
        if not tree.root_node.has_error:
            return tree
        fixed = blank_declaration_heads(self.src)  # `DECO TYPE *f(`: see decorations
        # (a macro expanded as a statement had its declaration argument masked already; one that
        # is not, like outcome's OUTCOME_TRY overload dispatch, is read as its users read it)
        fixed = declare_unknown_macro_arguments(fixed, self.statement_macro_names)
        fixed = rewrite_string_macros(fixed, self.visible_macros, self._blank_text, self.language_name == "cpp")
        if fixed != self.src:
            self._use_text(fixed)
            tree = parse_limited(self.parser, self.src)
            if not tree.root_node.has_error:
                return tree
        return self._one_alternative_per_group(tree)

    def _one_alternative_per_group(self, tree):
        """The tree of the text where each conditional group that broke the parse keeps one
        alternative (see conditionals) and bare member macros on error lines are blanked (see
        member_macros), when that loses less of the file; else `tree`. A group
        reduced can uncover the next one (an enclosing group's error recovery hid it), so up to
        PP_ROUNDS retries are made and the best parse is kept. Each retry edits the previous
        tree (blanking keeps every offset) and parses incrementally, reusing what did not change."""
        lines, lost = lost_tokens(tree.root_node)
        best, best_text, text, previous = tree, self.src, self.src, tree
        for _round in range(PP_ROUNDS):
            fixed, blanked = one_alternative(text, lines)
            fixed, bare = blank_member_macros(fixed, lines)
            blanked += bare
            if not blanked:
                break
            previous = previous.copy()
            for begin, end, start_point, end_point in blanked:
                previous.edit(begin, end, end, start_point, end_point, end_point)
            text = fixed
            previous = parse_limited(self.parser, text, old_tree=previous)
            lines, size = lost_tokens(previous.root_node)
            if size < lost:
                best, best_text, lost = previous, text, size
            if not size:
                break
        if best is not tree:
            self._use_text(best_text)
        return best

    def _use_text(self, text: bytes) -> None:
        self.src = text
        self.ascii = self.src.isascii()
        self.index_facts = None  # (of the text before)

    def _blank_text(self, text: str) -> str:
        """`text` with the policy's decorations blanked (a macro body, for string_macros)."""
        return blank_decorations(text.encode(), self.policy).decode("utf-8", "replace")

    def _oracle_macros(self) -> dict[str, header_index.MacroDef]:
        """The macros libclang saw the file use, as the header index describes them."""
        oracle = self.oracle  # type: ignore[attr-defined]
        out = {name: header_index.MacroDef(name, list(m.params), m.body, m.variadic, "", 0)
               for name, m in oracle.macros.items()}
        out.update((name, header_index.MacroDef(name, None, body, False, "", 0)) for name, body in oracle.objects.items())
        return out

    def add_visible_declarations(self, root: Node) -> None:
        """Function-like macros of the headers (the file's own win; names the policy describes
        precisely are never expanded), `[[macro]]` shapes of the policy for macros whose
        definition is not visible, and prototypes (the file's own and the headers')."""
        index = header_index.current()
        for name, found in self.visible.macros.items():
            if found.params is None or name in self.macros or self._policy_describes(name):
                continue
            site = index.macro_site(found.path, self.path)  # None: an SDK header's macro is not the tree's to fix
            self.macros[name] = Macro(name, list(found.params), found.body, found.variadic, f"{found.path}:{found.line}",
                                      defined_at=f"{site}:{found.line}" if site is not None else "")
        for name, shape in self.policy.macro_shapes.items():
            if name not in self.macros and name not in self.visible.macros:
                self.macros[name] = Macro(name, list(shape.params), shape.body, shape.variadic, "policy", shape.declares)
        if self.index_facts is not None:  # the header index read this very tree
            self.own_facts = header_index.own_facts(self.index_facts, self.path)
        else:
            self.own_facts = header_index.collect_facts(self.src, root, self.path, own=True)
        own = self.own_facts.prototypes
        self.prototypes = {**self.visible.prototypes, **own} if self.visible.prototypes else own

    def expandable_macro_names(self) -> dict[str, str]:
        """The function-like macros the lowering will expand, known before parsing (the same
        choice as collect_macros and add_visible_declarations make from the tree), with their
        bodies ("" for a `[[macro]]` shape: a statement)."""
        bodies: dict[str, str] = {}
        for name, found in self.visible.macros.items():
            if found.params is not None:
                bodies[name] = found.body
        oracle = getattr(self, "oracle", None)
        if oracle is not None:
            bodies.update((name, macro.body) for name, macro in oracle.macros.items())
        if b"#" in self.src:
            bodies.update((name, body) for name, _params, body, _variadic in scan_function_macros(self.src))
        bodies = {name: body for name, body in bodies.items() if not self._policy_describes(name)}
        for name in self.policy.macro_shapes:
            bodies.setdefault(name, "")
        return bodies

    def is_type_name(self, name: str) -> bool:
        """A name that denotes a type: a typedef of the file or its headers, a JNI type, or a
        `*_t` name (the C library's convention)."""
        return name in C_TYPE_NAMES or name.endswith("_t") or name in self.visible.aliases \
            or name in getattr(self, "own_facts", header_index.EMPTY).aliases

    def _policy_describes(self, name: str) -> bool:
        spec = self.policy.lookup("plain", name)
        return spec is not None and spec.status_check is None

    def borrowed_args(self, callee: str, count: int) -> tuple[int, ...]:
        """Indexes of the arguments a visible prototype of `callee` declares `const T *`."""
        flags = self.prototypes.get(callee)
        if not flags:
            return ()
        return tuple(i for i in range(min(count, len(flags))) if flags[i])

    def note_unparsed(self, root: Node, functions: list[ir.Function]) -> None:
        """Code with statements that tree-sitter could not turn into any function is reported,
        so a user knows it was not checked (instead of silently seeing no findings). Parts of an
        unparsed region that an analyzed function covers are not (a header split by `#ifdef`)."""
        if not root.has_error:
            return
        covered = sorted((f.loc.line, f.loc.end_line) for f in functions)
        lines = self.src.split(b"\n")
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type == "ERROR":
                # `#include` / `#define` lines and comments that error recovery swallowed are not
                # code: a range is reported from its first to its last piece of code
                code = [(c.start_point[0] + 1, c.end_point[0] + 1) for c in node.children
                        if c.type not in _NOT_CODE and c.end_byte > c.start_byte]
                for first, last in _uncovered(node.start_point[0] + 1, node.end_point[0] + 1, covered):
                    inside = [(a, b) for a, b in code if b >= first and a <= last]
                    if not inside:
                        continue
                    first, last = max(first, min(a for a, _ in inside)), min(last, max(b for _, b in inside))
                    text = b"\n".join(lines[first - 1:last])
                    if b"{" in text and b";" in text:
                        self.notes.append((Loc(first, 1, last, 1), f"could not parse lines {first}-{last}; code there is not analyzed"))
                continue
            if node.type in self.CONTAINERS:
                stack.extend(reversed(node.named_children))

    def collect_constants(self, root: Node, cpp: bool = False) -> dict[str, int]:
        """Enumerators and `#define NAME <integer>`: so `return OK;` and `!= OK` can be compared.
        `cpp`: the enumerators of a scoped enumeration (`enum class`) are left out (named only as
        `E::X`), and an enumerator name the file gives two values (two classes or namespaces
        each with their own `enum { OK }`) is dropped, as a clash between files is."""
        out: dict[str, int] = {}
        clashes: set[str] = set()
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "enumerator_list":
                if cpp and self._scoped_enumeration(node):
                    continue
                found: dict[str, int] = {}
                self._enumerators(node, found)
                clashes.update(name for name, value in found.items() if cpp and out.get(name, value) != value)
                out.update(found)
                self._enumeration_name(node, out)
            elif kind == "preproc_def":
                name, value = node.child_by_field_id(self.F.name), node.child_by_field_id(self.F.value)
                if name is not None and value is not None:
                    number = macro_int(self.src[value.start_byte:value.end_byte].decode("utf-8", "replace"),
                                       lambda n: n in out or self._numeric_macro(n))
                    if number is not None:
                        out[self.src[name.start_byte:name.end_byte].decode()] = number
            elif kind not in ("function_definition", "compound_statement") and node.child_count:
                stack.extend(node.named_children)
        for name in clashes:
            del out[name]
        return out

    def _numeric_macro(self, name: str) -> bool:
        """`name` is an object-like macro of the visible headers whose body is a number: then
        `(name) - 1` in another macro is a subtraction, not a cast to a type called `name`."""
        macro = self.visible.macros.get(name)
        return macro is not None and macro.params is None and bool(macro.body) \
            and parse_int(strip_outer_parens(macro.body)) is not None

    @staticmethod
    def _scoped_enumeration(body: Node) -> bool:
        """`enum class E {...}` / `enum struct E {...}` (C++): its enumerators are `E::X`."""
        spec = body.parent
        return spec is not None and spec.type == "enum_specifier" and \
            any(child.type in ("class", "struct") for child in spec.children)

    def _enumeration_name(self, body: Node, out: dict[str, int]) -> None:
        """`enum E {...}`, `enum class E {...}`, `typedef enum {...} E;`: `E()` (and `E{}`) is
        the enumeration's zero, listed as the constant `E()` (no identifier looks so), so that
        `return E();` as a success return compares equal to an enumerator valued 0."""
        spec = body.parent
        if spec is None or spec.type != "enum_specifier":
            return
        names = [spec.child_by_field_id(self.F.name)]
        typedef = spec.parent
        if typedef is not None and typedef.type == "type_definition":
            names.extend(typedef.children_by_field_name("declarator"))
        for name in names:
            if name is not None and name.type == "type_identifier":
                out[self.src[name.start_byte:name.end_byte].decode() + "()"] = 0

    def _enumerators(self, node: Node, out: dict[str, int]) -> None:
        nxt: int | None = 0
        for e in node.named_children:
            if e.type != "enumerator":
                continue
            name, value = e.child_by_field_id(self.F.name), e.child_by_field_id(self.F.value)
            if value is not None:
                text = self.src[value.start_byte:value.end_byte].decode("utf-8", "replace").strip()
                nxt = parse_int(text) if parse_int(text) is not None else out.get(text)
            if name is not None and nxt is not None:
                out[self.src[name.start_byte:name.end_byte].decode()] = nxt
            nxt = nxt + 1 if nxt is not None else None

    def lower_function(self, node: Node, name: str) -> list[ir.Function]:
        return self.lower_with(self.lowering_class(self, node, name), node, name)

    def lower_with(self, lowering: FunctionLowering, node: Node, name: str) -> list[ir.Function]:
        """One function's graph; nesting too deep for the lowering skips it with a note."""
        try:
            return [lowering.lower()]
        except (TooDeep, RecursionError):
            loc = Loc(node.start_point[0] + 1, 1, node.end_point[0] + 1, 1)
            self.notes.append((loc, f"{name}() is nested too deeply to analyze; skipped"))
            return []
        except TooManyCleanups:
            loc = Loc(node.start_point[0] + 1, 1, node.end_point[0] + 1, 1)
            self.notes.append((loc, f"{name}() has too many destructors times exits to analyze (more than "
                                    f"{MAX_CLEANUP_RUNS} destructor calls to run at its exits); skipped"))
            return []

    def collect_macros(self, root: Node) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "preproc_function_def":
                name = node.child_by_field_id(self.F.name)
                params = node.child_by_field_id(self.F.parameters)
                value = node.child_by_field_id(self.F.value)
                if name is None or value is None:
                    continue
                ptext = self.src[params.start_byte:params.end_byte].decode("utf-8", "replace") if params else "()"
                plist = [p.strip() for p in ptext.strip("()").split(",") if p.strip()]
                variadic = bool(plist) and plist[-1] == "..."
                if variadic:
                    plist = plist[:-1]
                macro_name = self.src[name.start_byte:name.end_byte].decode()
                if self.policy.lookup("plain", macro_name) is not None and self.policy.lookup("plain", macro_name).status_check is None:
                    continue  # the policy describes this name precisely; trust it over the text
                self.macros[macro_name] = Macro(macro_name, plist, self.src[value.start_byte:value.end_byte].decode("utf-8", "replace"),
                                                variadic, defined_at=f"{self.path}:{node.start_point[0] + 1}")
            elif kind == "preproc_def":
                self._collect_object_macro(node)
            elif kind in ("translation_unit", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                          "linkage_specification", "declaration_list", "namespace_definition"):
                stack.extend(reversed(node.named_children))
        if b"#" in self.src:  # `#define`s inside function bodies (the walk above stays at file level)
            for name, params, body, variadic, line in scan_function_macros(self.src, lines=True):
                if name not in self.macros and not self._policy_describes(name):
                    self.macros[name] = Macro(name, params, body, variadic, defined_at=f"{self.path}:{line}")

    def _collect_object_macro(self, node: Node) -> None:
        """`#define CUR ((stack) ? (stack)[(top)] : NULL)`: a use of CUR is lowered as its body."""
        name, value = node.child_by_field_id(self.F.name), node.child_by_field_id(self.F.value)
        if name is None or value is None:
            return
        macro_name = self.src[name.start_byte:name.end_byte].decode("utf-8", "replace")
        body = self.src[value.start_byte:value.end_byte].decode("utf-8", "replace")
        if macro_name not in self.macros and reads_memory(macro_name, body) and not self._policy_describes(macro_name):
            self.object_macros[macro_name] = Macro(macro_name, [], body, False,
                                                   defined_at=f"{self.path}:{node.start_point[0] + 1}")

    CONTAINERS = ("translation_unit", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                  "preproc_elifdef", "linkage_specification", "declaration_list", "ERROR")

    def function_nodes(self, root: Node) -> Iterable[tuple[Node, str]]:
        """Every function definition, including ones that error recovery buried inside another
        function's body, but none inside `#if 0`."""
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "function_definition":
                name = declarator_name(node.child_by_field_id(self.F.declarator), self.src)
                if name:
                    yield node, name
                body = node.child_by_field_id(self.F.body)
                if body is not None and body.has_error:
                    stack.extend(reversed([c for c in _descendants_with_errors(body)]))
            elif kind in self.CONTAINERS:
                children = node.named_children
                if kind == "preproc_if" and self._is_if0(node):
                    alt = node.child_by_field_id(self.F.alternative)
                    children = [alt] if alt is not None else []
                stack.extend(reversed(children))

    def _is_if0(self, node: Node) -> bool:
        cond = node.child_by_field_id(self.F.condition)
        return cond is not None and self.src[cond.start_byte:cond.end_byte].strip() in (b"0", b"(0)")


def parse_c(path: str, policy: Policy, data: bytes | None = None) -> ir.SourceUnit:
    """Front-end entry point for C source known to be C (a cgo preamble); files whose suffix only
    says "C or C++" go through `cpp.frontend.parse_c_family`."""
    source = read_source(path, policy, data)
    if source.problem:
        return ir.SourceUnit(path, "c", [], [(Loc(1, 1, 1, 1), source.problem)], 0)
    return lower_c(source, policy)


def lower_c(source: SourceText, policy: Policy) -> ir.SourceUnit:
    """The C front end on a file already read."""
    try:
        return CFrontEnd(source, policy).run()
    except ParseTimeout as exc:
        return ir.SourceUnit(source.path, "c", [], [(Loc(1, 1, 1, 1), str(exc))], source.lines)
