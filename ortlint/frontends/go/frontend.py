"""Go front end: tree-sitter-go syntax trees -> IR control-flow graphs.

Everything Go-specific happens here, so the engine only sees calls, assignments and jumps:

* results: a function with several results gets one out-parameter per result but the last
  (`ret%0`, ...); `return a, b, err` stores a and b through them and returns err. A call
  `x, err := f(a)` passes `&x` (after the arguments for functions of the package, before them
  for the onnxruntime_go binding, whose policy names out-parameter 0) and stores err. A binding
  call's error is a status code: nil (0) means it succeeded, and a failed call created nothing.
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
"""
from __future__ import annotations

import os

from tree_sitter import Node, Parser

from ... import ir
from ...ir import Loc
from ...policy import Policy
from ..common.cfg import TooDeep
from ..common.source import ParseTimeout, parse_limited, read_source
from .lowering import GoLowering
from .scan import GO_LANGUAGE, FileScan, package_variadics
from .scopes import PendingClosure
from .syntax import MAX_DEFERRED_RUNS, F, TooManyDeferred, comment_parents, first_error


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
        tree = parse_limited(Parser(GO_LANGUAGE), self.src)
        root = tree.root_node
        self.commented = comment_parents(root, self.src)
        decls = self.scan.read(root)
        foreign: set[str] = set()
        if os.path.isfile(self.path):  # calls of variadic functions declared in other files of the package
            for name, index in package_variadics(self.path).items():
                if name not in self.scan.variadic:
                    self.scan.variadic[name] = index
                    foreign.add(name)
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
        for fn in functions:
            if fn.name in ("main", "init"):
                fn.is_static = True
        if root.has_error:
            first = first_error(root)
            line = first.start_point[0] + 1 if first is not None else 1
            self.notes.append((Loc(line, 1, line, 1),
                               f"syntax error near line {line}; code tree-sitter could not parse is not checked"))
        unit = ir.SourceUnit(self.path, "go", functions, self.notes, self.lines)
        if foreign & {c.callee for fn in functions for b in fn.blocks for c in b.events if isinstance(c, ir.Call)}:
            # the IR depends on signatures in the other files of the package (for the cache)
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
