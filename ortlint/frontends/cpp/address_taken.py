"""Reference parameters whose address the function takes (`void Node::AddChild(Node &child) {
Childs.push_back(&child); }`).

Why: a reference to an object is analyzed like the object itself, which is right while the
callee only reads or changes it. A callee that keeps its address keeps the caller's object:
`owner.AddChild(*node)` hands `node` over as surely as `owner.AddChild(node)` would with a
pointer parameter. Such a parameter is read as the address the caller passes (as references to
pointers are), so the callee's summary says that address escapes, and the caller passes `node`.
"""
from __future__ import annotations

from tree_sitter import Node


def address_taken_names(src: bytes, body: Node | None) -> frozenset[str]:
    """The identifiers `&name` takes the address of in `body` (a unary `&`, not `a & b`)."""
    if body is None or b"&" not in src[body.start_byte:body.end_byte]:
        return frozenset()
    found: set[str] = set()
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type == "pointer_expression":
            op = node.child_by_field_name("operator")
            arg = node.child_by_field_name("argument")
            if op is not None and op.type == "&" and arg is not None and arg.type == "identifier":
                found.add(src[arg.start_byte:arg.end_byte].decode("utf-8", "replace"))
        stack.extend(node.named_children)
    return frozenset(found)
