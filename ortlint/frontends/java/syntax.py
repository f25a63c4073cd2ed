"""Java syntax: the tree-sitter-java grammar and its field ids, parsing within a step limit,
and the walks over a file's tree that must stay linear (comments and type parameters found
with one cursor walk, the locals each closure takes over computed once per file).
"""
from __future__ import annotations

import bisect
import re
from typing import Callable

import tree_sitter_java
from tree_sitter import Language, Node, Parser, Tree

from ..common.source import StepCounter, chunked_input, memory_cap_reached, parse_steps
from ..managed.syntax import field_id

_SKIP = frozenset({"line_comment", "block_comment", ";"})

JAVA_LANGUAGE = Language(tree_sitter_java.language())


def _field_id(name: str) -> int:
    return field_id(JAVA_LANGUAGE, "tree-sitter-java", name)


F_ALTERNATIVE = _field_id("alternative")
F_ARGUMENTS = _field_id("arguments")
F_ARRAY = _field_id("array")
F_BODY = _field_id("body")
F_CONDITION = _field_id("condition")
F_CONSEQUENCE = _field_id("consequence")
F_CONSTRUCTOR = _field_id("constructor")
F_DECLARATOR = _field_id("declarator")
F_DIMENSIONS = _field_id("dimensions")
F_ELEMENT = _field_id("element")
F_FIELD = _field_id("field")
F_INDEX = _field_id("index")
F_INIT = _field_id("init")
F_LEFT = _field_id("left")
F_NAME = _field_id("name")
F_OBJECT = _field_id("object")
F_OPERATOR = _field_id("operator")
F_PARAMETERS = _field_id("parameters")
F_RESOURCES = _field_id("resources")
F_RIGHT = _field_id("right")
F_TYPE = _field_id("type")
F_UPDATE = _field_id("update")
F_VALUE = _field_id("value")


class CommentedNodes:
    """Which nodes of one file have comments among their children.

    Comments may appear anywhere in Java syntax trees, so named children must be filtered;
    filtering every child list in Python cost a tenth of the front end, while `_scan` finds
    the few nodes that have comment children at all once per file."""

    def __init__(self) -> None:
        self.ids: set[int] = set()

    def named(self, node: Node | None) -> list[Node]:
        """Named children without comments."""
        if node is None:
            return []
        if node.id in self.ids:
            return [c for c in node.named_children if c.type not in _SKIP]
        return node.named_children


def lambda_param_names(fn: Node, src: bytes, named: Callable[[Node | None], list[Node]]) -> list[str]:
    """`x ->`, `(x, y) ->` and `(T x) ->` all give their parameter names."""
    params = fn.child_by_field_id(F_PARAMETERS)
    if params is None:
        return []
    if params.type == "identifier":
        return [src[params.start_byte:params.end_byte].decode()]
    out = []
    for p in named(params):
        if p.type == "identifier":
            out.append(src[p.start_byte:p.end_byte].decode())
        else:
            name = p.child_by_field_id(F_NAME)
            if name is not None:
                out.append(src[name.start_byte:name.end_byte].decode())
    return out


_COMMENTS = ("line_comment", "block_comment")
_SCAN_START = re.compile(rb"//|/\*|<")  # where a comment or a type parameter list can start


def _scan(root: Node, src: bytes) -> tuple[list[Node], set[int]]:
    """Every `type_parameter` node, and the ids of the nodes that have comment children.

    A walk over every node from Python took a tenth of the Java front end's time. Every comment
    starts with `//` or `/*` and every type parameter list with `<`, so one walk with a tree
    cursor enters only the subtrees that contain such a spot of the source, and steps over the
    rest. Looking each spot up from the root instead (`descendant_for_byte_range`, `parent`)
    costs a pass over the siblings every time: 64 000 comments in one block took 16 s. The
    cursor moves to a child, sibling or parent in constant time, so this is linear, and it
    holds for trees with errors too (wherever recovery puts a comment, it starts there)."""
    spots = [m.start() for m in _SCAN_START.finditer(src)]
    params: list[Node] = []
    ids: set[int] = set()
    if not spots:
        return params, ids
    cursor = root.walk()
    parents = [root.id]
    if not cursor.goto_first_child():
        return params, ids
    while True:
        node = cursor.node
        kind = node.type
        if kind in _COMMENTS:
            ids.add(parents[-1])
        elif kind == "type_parameters":
            params.extend(c for c in node.named_children if c.type == "type_parameter")
        i = bisect.bisect_left(spots, node.start_byte)
        if (i < len(spots) and spots[i] < node.end_byte and kind not in _COMMENTS
                and node.child_count and cursor.goto_first_child()):
            parents.append(node.id)
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent() or len(parents) == 1:
                return params, ids
            parents.pop()


_CLOSURE_NODES = ("lambda_expression", "class_body")  # bodies `capture` asks about


class TakeOvers:
    """Which names each closure body of one file closes (`v.close()`, `try (v)`), returns or
    stores: a lambda or anonymous class that does so takes a captured local over.

    Asking the question by walking each closure's body made nested closures quadratic (4 000
    curried lambdas: 19 s), as every closure's walk covers all the closures inside it. One
    iterative walk answers for the asked body and every closure nested in it, and remembers
    the answers, so each node is visited once per file."""

    def __init__(self, src: bytes, named: Callable[[Node | None], list[Node]]):
        self.src = src
        self.named = named
        self.memo: dict[int, frozenset[str]] = {}

    def names(self, body: Node, candidates: set[str]) -> set[str]:
        found = self.memo.get(body.id)
        if found is None:
            found = self._collect(body)
        return set(found) & candidates

    def _collect(self, root: Node) -> frozenset[str]:
        """Post-order over `root`: a nested closure's set is finished (and remembered) when
        its subtree is, then merged into the enclosing one."""
        acc: list[set[str]] = [set()]
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                done = frozenset(acc.pop())
                self.memo[node.id] = done
                acc[-1].update(done)
                continue
            if node.type in _CLOSURE_NODES:
                known = self.memo.get(node.id)
                if known is not None:
                    acc[-1].update(known)
                    continue
                acc.append(set())
                stack.append((node, True))
            hit = self._hit(node)
            if hit:
                acc[-1].add(hit)
            stack.extend((c, False) for c in reversed(node.named_children))
        return self.memo[root.id] if root.type in _CLOSURE_NODES else frozenset(acc[0])

    def _hit(self, n: Node) -> str | None:
        t = n.type
        if t == "method_invocation":
            name = n.child_by_field_id(F_NAME)
            if name is not None and self.src[name.start_byte:name.end_byte] == b"close":
                return self._name_of(n.child_by_field_id(F_OBJECT))
            return None
        if t == "resource" and n.child_by_field_id(F_NAME) is None:
            return self._name_of(next(iter(self.named(n)), None))
        if t == "return_statement":
            return self._name_of(next(iter(self.named(n)), None))
        if t == "assignment_expression":
            return self._name_of(n.child_by_field_id(F_RIGHT))
        if t == "lambda_expression":
            body = n.child_by_field_id(F_BODY)
            if body is not None and body.type != "block":  # `() -> t`: returns t
                return self._name_of(body)
        return None

    def _name_of(self, n: Node | None) -> str | None:
        if n is not None and n.type == "identifier":
            return self.src[n.start_byte:n.end_byte].decode("utf-8", "replace")
        return None




MAX_INDEXED_BYTES = 2 * 1024 * 1024  # larger files of the project (generated code) are not indexed
INDEX_PARSE_SHARE = 0.25  # of a file's parse steps, when it is only read for its declarations


def modifier_words(decl: Node) -> set[str]:
    """The keyword modifiers of a declaration (`public`, `static`, `final`, `default`, ...)."""
    mods = next((c for c in decl.children if c.type == "modifiers"), None)
    return {c.type for c in mods.children if not c.is_named} if mods is not None else set()


_NOT_OVERRIDDEN = frozenset({"static", "private", "final"})
_OWN_BODIES = frozenset({"lambda_expression", "class_body"})  # a `return` there is not the method's


def is_placeholder(method: Node, named: Callable[[Node | None], list[Node]]) -> bool:
    """A method that may be overridden and whose body can only end by throwing
    (`default Class<T> witness() { throw new UnsupportedOperationException(); }`): it stands
    for the overriding code that actually runs. Its last statement is a `throw` and it has no
    `return` of its own."""
    body = method.child_by_field_id(F_BODY)
    stmts = named(body)
    if not stmts or stmts[-1].type != "throw_statement" or modifier_words(method) & _NOT_OVERRIDDEN:
        return False
    stack = list(stmts[:-1])
    while stack:
        node = stack.pop()
        if node.type == "return_statement":
            return False
        if node.type not in _OWN_BODIES:
            stack.extend(node.named_children)
    return True


def parse_budget(size: int) -> int:
    """The parse steps tree-sitter may take on a file of `size` bytes (`source.parse_steps`)."""
    return parse_steps(size)


def parse_tree(src: bytes, steps: int | None = None) -> Tree | None:
    """The syntax tree, or None when tree-sitter needs more than its step limit
    (`source.parse_steps`: counted in parse work, so a file stops at the same point on a busy
    machine as on an idle one). Its error recovery is superlinear on some malformed input
    (8 000 stray `case` labels: 21 s), and tree-sitter has no limit of its own in this binding;
    its progress callback, which only the read-callback form of `parse` calls, can cancel it.
    The same callback keeps the parse under the workers' parse memory cap
    (`source.parse_memory_cap`; a 4 MB file of 60 KB lines took tree-sitter-java to 1 GB): past
    it, ParseTimeout says so."""
    counter = StepCounter(parse_steps(len(src)) if steps is None else steps)
    source = chunked_input(src)  # (py-tree-sitter keeps what `read` returns: a memoryview kept the whole file)
    try:
        return Parser(JAVA_LANGUAGE).parse(source.read, progress_callback=counter)
    except ValueError as exc:  # "Parsing failed": cancelled
        if counter.over_memory:
            raise memory_cap_reached() from exc
        return None
    finally:
        source.release()
