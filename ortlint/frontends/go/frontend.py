"""Go front end: tree-sitter-go syntax trees -> IR control-flow graphs.

Everything Go-specific happens here, so the engine only sees calls, assignments and jumps:

* results: a function with several results gets one out-parameter per result but the last
  (`ret%0`, ...); `return a, b, err` stores a and b through them and returns err. A call
  `x, err := f(a)` passes `&x` (after the arguments for functions of the package, before them
  for the onnxruntime_go binding, whose policy names out-parameter 0) and stores err. A binding
  call's error is a status code: nil (0) means it succeeded, and a failed call created nothing.
* a method call on a receiver of unknown type is the binding's method (`x.Clone()` as
  Tensor.Clone) only where the file or another file of its package imports the binding; in a
  package that never imports it, `path.Clone()` is the package's own method.
* `defer`: the deferred call runs at every exit after the `defer` statement, last first. Its
  receiver and arguments are bound when the `defer` runs (`defer x.Destroy()` destroys what x
  held then); a deferred closure is inlined at each exit, so it reads variables when it runs.
  A `defer` inside a branch is guarded by a flag; one inside a loop keeps every value it bound.
* `panic`, `log.Fatal*`, `log.Panic*`, `os.Exit` end the process (policy `noreturn`): nothing
  leaks there. `t.Fatal*` of a test ends the test the same way.
* closures are functions of their own (`Outer$func12`); a captured variable that the closure
  destroys, returns, stores or sends is handed over where the closure is created (`$handoff`),
  unless the closure is a finalizer (runtime.SetFinalizer) or a sync.Pool's New function
  (whose returned object the pool drops without destroying it).
* collections: a slice or map made here is a local aggregate; `append` and literals keep their
  elements in it (`$keep`), which does not own them. A slice of constant length indexed only by
  constants (`outputs := []ort.Value{nil, nil}`) has one variable per slot (`outputs[1]`), so
  `Run` can fill each nil slot with its own value (the `new` call `Run` after a successful run).
* stores into struct fields, globals and channels are escapes; a field of a struct whose only
  cleanup is a finalizer is not (the value is dropped there).
* the environment: a `return` of a nil error (or from a function without an error result) hands
  the environment over to the caller (`ort.$environment_kept`), and so does a non-nil error
  returned with a true bool result (the caller is told to destroy it).
* `f(g())` passes every result of g (`must.M1(ort.NewTensor(...))`); `&s` of a struct variable
  is `s`, whose fields are lowered as `(*s).f`.
* a file whose syntax tree would not fit the parse memory cap (a generated 5 MB file of small
  functions needs 365 MB of tree) is parsed a piece at a time: the package clause and imports,
  plus a run of top-level declarations (tree-sitter's included ranges: same offsets, same
  lines, the rest of the file never read). The file's
  facts (types, signatures) are read from every piece before any function is lowered, so the IR
  is that of a whole parse; only the memory held at once differs.
"""
from __future__ import annotations

import os
import re

from tree_sitter import Node, Parser, Range

from ... import ir
from ...ir import Loc
from ...policy import Policy
from ..common.cfg import TooDeep
from ..common.source import ParseTimeout, parse_limited, read_source
from .lowering import GoLowering
from .scan import GO_LANGUAGE, FileScan, package_imports_binding, package_variadics
from .scopes import PendingClosure
from .syntax import MAX_DEFERRED_RUNS, F, TooManyDeferred, comment_parents, first_error


PIECE_BYTES = 256 * 1024  # top-level declarations per piece when a file is parsed a piece at a time
PIECES_MIN_BYTES = 1024 * 1024  # smaller files are never split (a parse over the cap is not about size)
PIECES_ALWAYS_BYTES = 4 * 1024 * 1024  # larger files are split from the start (a whole parse would not fit)
_TOP_LEVEL = re.compile(rb"^(?:func|type|var|const)\b", re.M)  # a declaration at column 0 starts a piece


class GoFrontEnd:
    """Parses one Go file and lowers every function, method and closure."""

    def __init__(self, path: str, src: bytes, policy: Policy, lines: int):
        self.path = path
        self.src = src
        self.ascii = src.isascii()
        self.policy = policy
        self.lines = lines
        self.scan = FileScan(src)
        self.pending: list[PendingClosure] = []
        self.queued: set[tuple[int, bool]] = set()
        self.notes: list[tuple[Loc, str]] = []
        self.commented: set[int] = set()

    def queue(self, item: PendingClosure) -> None:
        key = (item.node.id, item.drop_returns)
        if key not in self.queued:
            self.queued.add(key)
            self.pending.append(item)

    def run(self) -> ir.SourceUnit:
        if len(self.src) >= PIECES_ALWAYS_BYTES:
            pieces = self.pieces()
            if pieces is not None and len(pieces) > 1:
                return self.run_in_pieces(pieces)
        try:
            tree = parse_limited(Parser(GO_LANGUAGE), self.src)
        except ParseTimeout as exc:
            pieces = self.pieces() if exc.memory else None
            if pieces is None:
                raise
            return self.run_in_pieces(pieces)
        root = tree.root_node
        decls = self.scan.read(root)
        foreign = self.read_package()
        functions = self.lower_tree(root, decls)
        if root.has_error:
            self.note_syntax_error(root)
        return self.unit(functions, foreign)

    def read_package(self) -> set[str]:
        """Variadic functions declared in the other files of the package (their calls pack
        arguments), and whether one of them imports the binding; returns the names that came
        from there."""
        foreign: set[str] = set()
        if os.path.isfile(self.path):
            for name, index in package_variadics(self.path).items():
                if name not in self.scan.variadic:
                    self.scan.variadic[name] = index
                    foreign.add(name)
            if not self.scan.imports_binding:
                self.scan.package_binding = package_imports_binding(self.path, self.scan.package)
        return foreign

    def pieces(self) -> list[list[Range]] | None:
        """The file as pieces (see the module docstring): the ranges tree-sitter parses for each;
        None when the file is too small to split or has no declarations to split at."""
        if len(self.src) < PIECES_MIN_BYTES:
            return None
        starts = [m.start() for m in _TOP_LEVEL.finditer(self.src)]
        if len(starts) < 2:
            return None
        bounds = [starts[0]]  # before it: the package clause, the imports, comments
        for start in starts[1:]:
            if start - bounds[-1] >= PIECE_BYTES:
                bounds.append(start)
        bounds.append(len(self.src))
        head = self._range(0, starts[0])
        return [[head, self._range(a, b)] if a > 0 else [self._range(a, b)] for a, b in zip(bounds, bounds[1:])]

    def _range(self, start: int, end: int) -> Range:
        return Range(self._point(start), self._point(end), start, end)

    def _point(self, offset: int) -> tuple[int, int]:
        row = self.src.count(b"\n", 0, offset)
        return row, offset - (self.src.rfind(b"\n", 0, offset) + 1)

    def _parse_piece(self, ranges: list[Range]) -> Node:
        parser = Parser(GO_LANGUAGE)
        parser.included_ranges = ranges
        return parse_limited(parser, self.src).root_node

    def run_in_pieces(self, pieces: list[list[Range]]) -> ir.SourceUnit:
        """Read the file's facts from every piece, then lower each piece's declarations; at
        most one piece's syntax tree is held at a time."""
        for piece in pieces:
            self.scan.read(self._parse_piece(piece))
        foreign = self.read_package()
        functions: list[ir.Function] = []
        errors = False
        for piece in pieces:
            root = self._parse_piece(piece)
            decls = [n for n in root.named_children
                     if n.type in ("var_declaration", "function_declaration", "method_declaration")]
            self.queued = set()  # node ids of another tree
            functions.extend(self.lower_tree(root, decls))
            if root.has_error and not errors:
                errors = True
                self.note_syntax_error(root)
        return self.unit(functions, foreign)

    def note_syntax_error(self, root: Node) -> None:
        first = first_error(root)
        line = first.start_point[0] + 1 if first is not None else 1
        self.notes.append((Loc(line, 1, line, 1),
                           f"syntax error near line {line}; code tree-sitter could not parse is not checked"))

    def lower_tree(self, root: Node, decls: list[Node]) -> list[ir.Function]:
        """Every function, method, package-level closure and nested closure of `decls`."""
        self.commented = comment_parents(root, self.src)
        functions: list[ir.Function] = []
        for node in decls:
            if node.type == "var_declaration":
                fn = self.lower_package_vars(node)
            elif node.child_by_field_id(F.body) is None:
                continue
            else:
                fn = self.lower(node, self.scan.function_name(node))
            if fn is not None:
                functions.append(fn)
            while self.pending:
                item = self.pending.pop(0)
                fn = self.lower(item.node, item.name, item.drop_returns)
                if fn is not None:
                    functions.append(fn)
        return functions

    def unit(self, functions: list[ir.Function], foreign: set[str]) -> ir.SourceUnit:
        for fn in functions:
            if fn.name in ("main", "init"):
                fn.is_static = True
        unit = ir.SourceUnit(self.path, "go", functions, self.notes, self.lines)
        if self.scan.package_consulted or \
                foreign & {c.callee for fn in functions for b in fn.blocks for c in b.events if isinstance(c, ir.Call)}:
            # the IR depends on signatures or imports in the other files of the package (for the cache)
            folder = os.path.dirname(os.path.abspath(self.path))
            unit.dependencies = sorted(os.path.join(folder, n) for n in os.listdir(folder)
                                       if n.endswith(".go") and os.path.join(folder, n) != os.path.abspath(self.path))
        return unit

    def lower_package_vars(self, node: Node) -> ir.Function | None:
        """Package-level `var x = ...`: only the function literals in the initializers matter
        (a sync.Pool's New function); they are lowered as closures of `var@LINE`."""
        if b"func" not in self.src[node.start_byte:node.end_byte]:
            return None
        return self.lower(node, f"var@{node.start_point[0] + 1}")

    def lower(self, node: Node, name: str, drop_returns: bool = False) -> ir.Function | None:
        try:
            return GoLowering(self, node, name, drop_returns).lower()
        except TooManyDeferred:
            loc = Loc(node.start_point[0] + 1, 1, node.end_point[0] + 1, 1)
            self.notes.append((loc, f"{name}() has too many deferred calls times exits to analyze (more than "
                                    f"{MAX_DEFERRED_RUNS} deferred calls to run at its returns); skipped"))
            return None
        except (TooDeep, RecursionError):
            loc = Loc(node.start_point[0] + 1, 1, node.end_point[0] + 1, 1)
            self.notes.append((loc, f"{name}() is nested too deeply to analyze; skipped"))
            return None


def parse_go(path: str, policy: Policy, data: bytes | None = None) -> ir.SourceUnit:
    """Front-end entry point for Go files; never raises on bad input."""
    source = read_source(path, policy, data, blank=False)
    if source.problem:
        return ir.SourceUnit(path, "go", [], [(Loc(1, 1, 1, 1), source.problem)], 0)
    try:
        unit = GoFrontEnd(path, source.original, policy, source.lines).run()
    except ParseTimeout as exc:
        return ir.SourceUnit(path, "go", [], [(Loc(1, 1, 1, 1), str(exc))], source.lines)
    from .cgo import add_cgo_preamble
    return add_cgo_preamble(unit, source.original, policy)
