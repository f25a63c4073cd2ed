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
    """The identifiers `&name` takes the address of in `body` (a unary `&`, not `a & b`).

    Found from the `&` bytes of the body's text, each looked up as a token of the tree (in C),
    not by visiting every node of the body in Python: the model asks this of every function
    body with an `&` in it (`a && b` is one), and the walk was 2 % of the C++ front end's time."""
    if body is None:
        return frozenset()
    start, end = body.start_byte, body.end_byte
    at = src.find(b"&", start, end)
    found: set[str] = set()
    while at != -1:
        token = body.descendant_for_byte_range(at, at + 1)
        parent = token.parent if token is not None and token.type == "&" else None
        if parent is not None and parent.type == "pointer_expression":
            op = parent.child_by_field_name("operator")
            arg = parent.child_by_field_name("argument")
            if op is not None and op.start_byte == at and op.type == "&" and arg is not None and arg.type == "identifier":
                found.add(src[arg.start_byte:arg.end_byte].decode("utf-8", "replace"))
        at = src.find(b"&", at + 1, end)
    return frozenset(found)
