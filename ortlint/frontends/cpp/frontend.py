"""C++ front end: tree-sitter-cpp syntax trees -> the same IR as C.

`CppLowering` extends the C lowering with what decides findings in C++:

* methods, constructors, destructors, operators, lambdas and functions in namespaces are each
  analyzed as a function with a qualified name (`ns::Model::fail`); calls to same-class
  methods (`fail(st)`, `this->fail(st)`) name the method the same way so summaries apply;
* destructors run at every scope exit. A `std::unique_ptr` / `shared_ptr` releases its pointer
  with its deleter (a `Release` call, `delete`, a deleter struct's `operator()`, a lambda); an
  object of a class of this file with a destructor has the destructor's body lowered in place
  with the members bound to the object; `Ort::` objects are RAII and are not tracked at all;
* exceptions: `throw` leaves through the enclosing `catch` or out of the function, running the
  destructors of the scopes it leaves; calls that may throw (summaries with a throwing case,
  `Ort::ThrowOnError`) reach the same places through `Block.handler` landing pads;
* `new`/`new[]`/`delete`/`delete[]`, range-for, `std::move`, casts, `x.get()` / `x.release()` /
  `x.reset()` on smart pointers, `vec.data()` / `push_back` on vectors of handles.

Member calls are classified by the receiver's declared type: through an `OrtApi` / `JNIEnv`
(a `table` call, as in C), on an `Ort::X` object (`method` call `Ort::X::f`), on a class of this
file (`plain` call `Class::f`), or unknown (C rules). In precise mode the types and macros come
from libclang (`oracle`); the lowering is the same, so both front ends produce the same IR.
"""
from __future__ import annotations

import collections
import re
from typing import Iterator

import tree_sitter_cpp
from tree_sitter import Language, Node, Parser, Range

from ... import ir
from ...fileio import read_prefix
from ...ir import Loc
from ...policy import Policy
from ..c.frontend import CFrontEnd, lower_c
from ..c.syntax import declarator_name, find_function_declarator
from ..common.source import ParseTimeout, SourceText, blank_array_delete_parens, blank_pointer_new_arrays, read_source
from .lowering import CppLowering
from .null_members import null_member_constants
from .model import TABLE_TYPES, ClassInfo, FileModel, clean_name, node_text, operator_name
from .own_allocators import mark_own_allocator_calls
from .scopes import Oracle

CPP_LANGUAGE = Language(tree_sitter_cpp.language())


# ----------------------------------------------------------------------------- per-function state


# ----------------------------------------------------------------------------- helpers


# ----------------------------------------------------------------------------- the unit


class CppFrontEnd(CFrontEnd):
    """Parses one C++ file and lowers every function, method and lambda in it."""

    language_name = "cpp"
    ts_language = CPP_LANGUAGE
    lowering_class = CppLowering

    def __init__(self, source: SourceText, policy: Policy, oracle: Oracle | None = None):
        super().__init__(source, policy)
        self.oracle = oracle
        self.model = FileModel(self.src, policy, self.F)
        self._lambdas: collections.deque[tuple[Node, str, ClassInfo | None, tuple[str, ...]]] = collections.deque()
        self._lambda_seen: set[int] = set()
        self._range_parser: Parser | None = None
        self.unqualified: dict[str, str] = {}  # see CppLowering.unqualify_library_name

    def add_lambda(self, node: Node, outer: str, cls: ClassInfo | None, ns: tuple[str, ...]) -> None:
        """A lambda body is also analyzed on its own, as `outer::<lambda@LINE>`."""
        if node.start_byte in self._lambda_seen:
            return
        self._lambda_seen.add(node.start_byte)
        self._lambdas.append((node, f"{outer}::<lambda@{node.start_point[0] + 1}>", cls, ns))

    def run(self) -> ir.SourceUnit:
        """Collect macros and the file model, then lower every function and every lambda met on the way."""
        self.load_headers()
        self.src = blank_array_delete_parens(blank_pointer_new_arrays(self.src))
        tree = self.parse_source()
        self.model.src = self.src
        root = tree.root_node
        self.collect_macros(root)
        if self.oracle is not None:
            self.macros.update(self.oracle.macros)
        self.add_visible_declarations(root)
        self.model.collect(root)
        self.model.add_visible(self.visible, self.own_facts, self.macros)
        functions: list[ir.Function] = []
        for node, name, cls, ns in self.cpp_function_nodes(root):
            functions.extend(self.lower_cpp(node, name, cls, ns))
        while self._lambdas:
            node, name, cls, ns = self._lambdas.popleft()
            functions.extend(self.lower_cpp(node, name, cls, ns))
        self.note_unparsed(root, functions)
        mark_own_allocator_calls(functions, self.model.globals)
        # `#define IDLE 0` ... `if (state == IDLE)`, `enum { OFFLINE, ONLINE }`: compared as the
        # integers they stand for, as in C
        constants = self.header_constants() | self.collect_constants(root, cpp=True)
        constants |= null_member_constants(self.src, root, functions)  # members never given a value
        return ir.SourceUnit(self.path, self.language_name, functions, self.notes, self.source.lines,
                             constants, dependencies=list(self.visible.headers))

    def lower_cpp(self, node: Node, name: str, cls: ClassInfo | None, ns: tuple[str, ...]) -> list[ir.Function]:
        return self.lower_with(CppLowering(self, node, name, cls, ns), node, name)

    def cpp_function_nodes(self, root: Node) -> Iterator[tuple[Node, str, ClassInfo | None, tuple[str, ...]]]:
        """Every function definition with a body, named with its namespaces and class."""
        for node, ns, cls_name, _internal in self.model.declarations:
            if node.type != "function_definition" or node.child_by_field_id(self.F.body) is None:
                continue
            name = declarator_name(node.child_by_field_id(self.F.declarator), self.src)
            if not name:
                continue
            name = operator_name(clean_name(name))
            cls = self.model.classes.get(cls_name) if cls_name else None
            if cls is not None and cls.name in TABLE_TYPES:
                continue  # jni.h's JNIEnv_ wrappers: the policy describes the API they define
            if cls is not None:
                qualified = f"{cls.qualname}::{name}"
            else:
                qualified = "::".join(ns + (name,))
                if "::" in name:
                    cls = self.model.find_class(name.rsplit("::", 1)[0], ns)
                else:
                    cls = self.fixture_class(node, ns)
            yield node, qualified, cls, ns

    def fixture_class(self, node: Node, ns: tuple[str, ...]) -> ClassInfo | None:
        """`TEST_F(Fixture, Name) { ... }` (gtest's TEST_F/TEST_P, benchmark's BENCHMARK_F,
        ...): a definition made by a macro whose arguments are bare names, the first a class
        of the file. The body is a member of a class derived from it, so a bare call reaches
        the fixture's methods (`CreateSession(path)` is `Fixture::CreateSession`, not a free
        function of that name elsewhere in the tree)."""
        if node.child_by_field_id(self.F.type) is not None:
            return None  # a real function: it has a return type
        func = find_function_declarator(node.child_by_field_id(self.F.declarator))
        params = func.child_by_field_id(self.F.parameters) if func is not None else None
        args = [p for p in params.named_children if p.type != "comment"] if params is not None else []
        if len(args) < 2 or any(p.type != "parameter_declaration" or p.child_by_field_id(self.F.declarator) is not None
                                for p in args):
            return None
        first = args[0].child_by_field_id(self.F.type)
        return self.model.find_class(clean_name(node_text(self.src, first)), ns) if first is not None else None

    def parse_range(self, data: bytes, node: Node):
        """Parse only `node`'s bytes of `data` (positions as in the whole file)."""
        if self._range_parser is None:
            self._range_parser = Parser(self.ts_language)
        self._range_parser.included_ranges = [Range(node.start_point, node.end_point, node.start_byte, node.end_byte)]
        return self._range_parser.parse(data)


_CPP_MARKERS = re.compile(
    rb"^[ \t]*(?:namespace[ \t]+\w+|template[ \t]*<|using[ \t]+namespace\b|(?:class|struct)[ \t]+\w+(?:[^\w;(][^;(]*)?:\s*(?:public|private|protected)\b"
    rb"|class[ \t]+\w+[ \t]*(?:final[ \t]*)?\{|(?:public|private|protected)[ \t]*:)"
    rb"|^[ \t]*using[ \t]+\w+(?:(?:::\w+)+[ \t]*;|[ \t]*=)"  # `using ns::Logger;`, `using Id = int;`
    rb"|\b(?:static|reinterpret|const|dynamic)_cast[ \t]*<"
    rb"|(?:[>&*][ \t]*|\w[ \t]+|::)operator[ \t]*(?:\(\)|\[\]|[=!<>+\-*/%^&|~]{1,3})[ \t]*\("  # `T& operator=(`
    rb"|\bstd::\w|\btry[ \t]*\{|#[ \t]*include[ \t]*<(?:vector|string|memory|map|iostream|functional|mutex|cstdint|cstdio|cstring|cstdlib)>",
    re.M)


# An unterminated `/*` takes the rest of the text at once (`.*?\*/` alone rescanned it per `/*`).
_COMMENTS = re.compile(rb"/\*.*?(?:\*/|\Z)|//[^\n]*", re.S)


def is_cpp_header(path: str, data: bytes | None = None) -> bool:
    """A `.h` file written in C++ (namespaces, classes, templates, std::): C++ projects use
    `.h` for their headers; parsing those as C loses try/catch, classes and destructors."""
    if data is None:
        try:
            data = read_prefix(path, 256 * 1024)  # a regular file: a FIFO must not block
        except OSError:
            return False
    text = _COMMENTS.sub(b" ", data[:256 * 1024])
    return _CPP_MARKERS.search(text) is not None


def parse_cpp(path: str, policy: Policy, data: bytes | None = None, oracle: Oracle | None = None,
              source: SourceText | None = None) -> ir.SourceUnit:
    """Front-end entry point for C++ files."""
    if source is None:
        source = read_source(path, policy, data)
    if source.problem:
        return ir.SourceUnit(path, "cpp", [], [(Loc(1, 1, 1, 1), source.problem)], 0)
    try:
        return CppFrontEnd(source, policy, oracle).run()
    except ParseTimeout as exc:
        return ir.SourceUnit(path, "cpp", [], [(Loc(1, 1, 1, 1), str(exc))], source.lines)


_OBJC = re.compile(rb"^[ \t]*@(?:interface|protocol|implementation)\b", re.M)
_CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*(ifndef|if|ifdef|elif|else|endif)\b", re.M)


def is_objc_header(data: bytes) -> bool:
    """An Objective-C header: an `@interface`/`@protocol`/`@implementation` outside comments and
    outside every `#if` but an include guard. A C header with an Objective-C part for one
    platform (`#if defined(APPLE) @interface ... #endif`, as miniaudio.h has) is C."""
    text = _COMMENTS.sub(b" ", data)
    if b"@end" not in text:
        return False
    marks = sorted([(m.start(), b"@") for m in _OBJC.finditer(text)] +
                   [(m.start(), m.group(1)) for m in _CONDITIONAL.finditer(text)])
    stack: list[bool] = []  # per open group: whether code in it is conditional (not a guard's)
    for _at, what in marks:
        if what == b"@":
            if not any(stack):
                return True
        elif what in (b"if", b"ifdef", b"ifndef"):
            stack.append(what != b"ifndef")
        elif what == b"endif":
            if stack:
                stack.pop()
        elif stack:
            stack[-1] = True  # `#else`/`#elif`: that part is conditional, a guard's too
    return False


def parse_c_family(path: str, policy: Policy, data: bytes | None = None) -> ir.SourceUnit:
    """Front-end entry point for `.c` and `.h` files: C, unless the file is written in C++
    (namespaces, classes, try, std::), as C++ projects' `.h` headers and some `.c` files are.
    An Objective-C header (`@interface ... @end`) is no C: it is skipped like a `.m` file,
    rather than reported as unparsed code."""
    if path.endswith(".h") and is_cpp_header(path, data):
        return parse_cpp(path, policy, data)
    source = read_source(path, policy, data)
    if source.problem:
        return ir.SourceUnit(path, "c", [], [(Loc(1, 1, 1, 1), source.problem)], 0)
    if path.endswith(".h") and b"@" in source.data and is_objc_header(source.data):
        return ir.SourceUnit(path, "c", [], [], source.lines)
    if is_cpp_header(path, source.data):
        return parse_cpp(path, policy, data, source=source)
    return lower_c(source, policy)
