"""Small facts about Go syntax shared by the Go lowering and the Go front end: field ids, builtins, error values."""
from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from ...ir import Const, Opaque
from ..common.cfg import field_ids
from .scan import GO_LANGUAGE

F = field_ids(GO_LANGUAGE)


ERROR_VALUE = Const(1, "error")  # a new non-nil error


SOME = Opaque("i")


_NEW_ERRORS = frozenset({"fmt.Errorf", "errors.New"})


_BUILTINS = frozenset({"len", "cap", "make", "new", "copy", "delete", "close", "print", "println", "min", "max",
                       "clear", "recover", "complex", "real", "imag"})


_MAX_UNROLL = 8  # a range over a slot slice is unrolled up to this many slots


_SIMPLE = frozenset({"expression_statement", "short_var_declaration", "assignment_statement", "inc_statement",
                     "dec_statement", "send_statement", "var_declaration"})


MAX_DEFERRED_RUNS = 20_000  # deferred calls lowered at the exits of one function


class TooManyDeferred(Exception):
    """A function whose exits would lower more than MAX_DEFERRED_RUNS deferred calls."""


def first_error(root: Node) -> Node | None:
    """The first ERROR or missing node, found by going down the children that have an error
    (a walk of the whole tree kept a Python object per pending node: more than 1 GB for a
    fuzzed 4 MB line of 700 000 chained calls)."""
    node = root
    while node.type != "ERROR" and not node.is_missing:
        node = next((c for c in node.children if c.has_error or c.is_missing), None)
        if node is None:
            return None
    return node


def walk_with_parents(node: Node) -> Iterator[tuple[Node, Node | None, Node | None]]:
    """Every named node under `node` (itself included) with its parent and grandparent."""
    stack: list[tuple[Node, Node | None, Node | None]] = [(node, None, None)]
    while stack:
        n, parent, grand = stack.pop()
        yield n, parent, grand
        stack.extend((c, n, parent) for c in reversed(n.named_children))


def comment_parents(root: Node, src: bytes) -> set[int]:
    """Ids of the nodes that have a comment among their children, in one walk of the tree
    (`Node.parent` searches down from the root: asking it per comment was quadratic on a file
    of many comments, 27 s for a fuzzed 360 KB file)."""
    ids: set[int] = set()
    if b"//" not in src and b"/*" not in src:
        return ids
    stack = [root]
    while stack:
        n = stack.pop()
        children = n.named_children
        if any(c.type == "comment" for c in children):
            ids.add(n.id)
        stack.extend(reversed(children))
    return ids

NIL, TRUE, FALSE = Const(0, "nil"), Const(1, "true"), Const(0, "false")
