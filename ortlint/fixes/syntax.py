"""Questions fixes ask of a C or C++ syntax tree: the function around a line, its statements,
labels and gotos, the release calls it already makes."""
from __future__ import annotations

import re
from typing import Iterator

from tree_sitter import Node

from .source import FixSource

FUNCTION_TYPES = ("function_definition",)
STATEMENT_TYPES = ("expression_statement", "return_statement", "goto_statement", "if_statement",
                   "compound_statement", "labeled_statement", "declaration", "for_statement",
                   "while_statement", "do_statement", "switch_statement", "break_statement", "continue_statement")
_WRAPPERS = ("parenthesized_expression", "cast_expression")


def walk(node: Node) -> Iterator[Node]:
    """Every node below `node` in source order (iteratively: deep trees are common)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def enclosing(node: Node | None, types: tuple[str, ...]) -> Node | None:
    while node is not None and node.type not in types:
        node = node.parent
    return node


def function_at(src: FixSource, offset: int) -> Node | None:
    node = src.root.descendant_for_byte_range(offset, offset)
    return enclosing(node, FUNCTION_TYPES)


def node_at(src: FixSource, offset: int, types: tuple[str, ...]) -> Node | None:
    """The outermost node of one of `types` that starts at `offset` (a finding's position)."""
    node = src.root.descendant_for_byte_range(offset, offset)
    found = None
    while node is not None and node.start_byte == offset:
        if node.type in types:
            found = node
        node = node.parent
    return found


def unwrap_up(node: Node) -> Node:
    """The expression `node` stands for once parentheses and casts around it are counted: `(void)f()`."""
    while node.parent is not None and node.parent.type in _WRAPPERS:
        node = node.parent
    return node


def call_parts(src: FixSource, call: Node) -> tuple[str, str, list[str]] | None:
    """A call as (prefix, name, arguments): `api->CreateSession(a, &b)` is ("api->", "CreateSession",
    ["a", "&b"]); `(*env)->F(env, x)` keeps `env` as an argument; `f(x)` has prefix ""."""
    function = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    if function is None or args is None:
        return None
    arguments = [src.text(a) for a in args.named_children if a.type != "comment"]
    if function.type == "identifier":
        return "", src.text(function), arguments
    if function.type == "field_expression":
        name = function.child_by_field_name("field")
        if name is None:
            return None
        return src.data[function.start_byte:name.start_byte].decode("utf-8", "replace"), src.text(name), arguments
    return None


def receiver_is_self_arg(prefix: str) -> bool:
    """`(*env)->F(env, ...)`: the C style of JNI passes the table again as the first argument."""
    return re.fullmatch(r"\(\s*\*\s*\w+\s*\)\s*->", prefix.strip()) is not None


def calls_named(src: FixSource, scope: Node, name: str) -> Iterator[tuple[Node, str, list[str]]]:
    """Calls of `name` (any prefix) in `scope`, with their prefix and arguments."""
    for node in walk(scope):
        if node.type == "call_expression":
            parts = call_parts(src, node)
            if parts is not None and parts[1] == name:
                yield node, parts[0], parts[2]


def same_expr(a: str, b: str) -> bool:
    """Two expressions written alike, but for white space, casts and parentheses around the whole."""
    def norm(text: str) -> str:
        text = re.sub(r"\s+", "", text)
        while True:
            stripped = re.sub(r"^\((?:const)?[A-Za-z_][\w:<>]*\**\)", "", text)
            if stripped.startswith("(") and stripped.endswith(")") and _balanced(stripped[1:-1]):
                stripped = stripped[1:-1]
            if stripped == text:
                return text
            text = stripped
    return norm(a) == norm(b)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def statement_of(node: Node) -> Node | None:
    """The statement holding `node`."""
    return enclosing(node, STATEMENT_TYPES)


def labels(src: FixSource, function: Node) -> dict[str, Node]:
    """Label name -> its labeled_statement."""
    out = {}
    for node in walk(function):
        if node.type == "labeled_statement":
            label = node.child_by_field_name("label")
            if label is not None:
                out[src.text(label)] = node
    return out


def gotos(src: FixSource, function: Node) -> list[tuple[Node, str]]:
    out = []
    for node in walk(function):
        if node.type == "goto_statement":
            label = node.child_by_field_name("label")
            if label is not None:
                out.append((node, src.text(label)))
    return out


def declared_type(src: FixSource, function: Node) -> str:
    """The function's return type as written: `OrtStatus *` for `OrtStatus *f(...)`."""
    type_node = function.child_by_field_name("type")
    declarator = function.child_by_field_name("declarator")
    stars = 0
    while declarator is not None and declarator.type == "pointer_declarator":
        stars += 1
        declarator = declarator.child_by_field_name("declarator")
    return (src.text(type_node) if type_node is not None else "") + (" " + "*" * stars if stars else "")


def identifiers(src: FixSource, scope: Node) -> set[str]:
    return {src.text(n) for n in walk(scope) if n.type == "identifier"}


def fresh_name(taken: set[str], base: str) -> str:
    name = base
    n = 2
    while name in taken:
        name = f"{base}{n}"
        n += 1
    return name
