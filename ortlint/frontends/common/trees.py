"""Walking tree-sitter syntax trees, shared by the front ends that need every node of a subtree."""
from __future__ import annotations

from typing import Iterator

from tree_sitter import Node


def walk(node: Node) -> Iterator[Node]:
    """Every named node below `node` (itself included), pre-order, without recursion (a deeply
    nested expression must not exhaust the interpreter's stack)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.named_children))
