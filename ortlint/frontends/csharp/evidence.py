"""Disposal evidence: which members the bodies of one class dispose (see project.py).

Evidence is syntactic and generous, so that doubt means ownership (nothing reported): member M
is disposed when a method other than a finalizer calls `Dispose()`/`DisposeAsync()`/`Close()` on
it or on an element of it (`M?.Dispose()`, `((IDisposable)M).Dispose()`, `M[i].Dispose()`,
`M.Dequeue().Dispose()`), loops over it disposing (`foreach (var v in M.Values) v.Dispose()`,
`M.ForEach(v => v.Dispose())`), passes it to any call that is not the ONNX Runtime API (a helper
may dispose it), uses it in `using`, copies it to a local, or takes an element of it out into a
local (`var s = M.Dequeue();`, `M.TryTake(out var s)`: the local may be disposed).
"""
from __future__ import annotations

from tree_sitter import Node

from .syntax import (F_ARGUMENTS, F_BODY, F_EXPRESSION, F_FUNCTION, F_NAME, F_RIGHT, F_TYPE, F_VALUE, TYPE_DECLS,
                     declarator_value, named, text_of)
from .types import canon

DISPOSERS = frozenset({"Dispose", "DisposeAsync", "Close"})


class Evidence:
    """Which members the bodies of one class dispose (see the module doc)."""

    def __init__(self, src: bytes, api_classes: frozenset[str], api_members: frozenset[str]):
        self.src = src
        self.api_classes, self.api_members = api_classes, api_members

    def text(self, node: Node | None) -> str:
        return text_of(self.src, node)

    def collect(self, class_node: Node, out: set[str]) -> None:
        """Walk the members of one class declaration (not its nested classes)."""
        body = class_node.child_by_field_id(F_BODY)
        for member in named(body):
            if member.type not in TYPE_DECLS:
                self.evidence(member, out)

    def evidence(self, node: Node, decl: set[str]) -> None:
        """Members that the code under `node` disposes."""
        stack = [node]
        while stack:
            n = stack.pop()
            t = n.type
            if t in TYPE_DECLS or t == "destructor_declaration":
                continue
            if t == "invocation_expression":
                self.invocation_evidence(n, decl)
            elif t == "foreach_statement":
                body = n.child_by_field_id(F_BODY)
                if body is not None and _calls_disposer(self.src, body):
                    self.note(n.child_by_field_id(F_RIGHT), decl)
            elif t == "object_creation_expression":
                created = canon(self.text(n.child_by_field_id(F_TYPE))).split("<")[0]
                if created not in self.api_classes:
                    args = next((c for c in n.named_children if c.type == "argument_list"), None)
                    for a in named(args):
                        self.note(_argument_value(a), decl)
            elif t == "using_statement":
                for c in named(n):
                    if c.type != "block" and c.type != "variable_declaration":
                        self.note(c, decl)
                        break
            elif t == "variable_declarator":  # `var s = _session;` (a local copy may be disposed)
                value = declarator_value(n)
                if value is not None and value.type in ("identifier", "member_access_expression") \
                        and n.parent is not None and n.parent.parent is not None \
                        and n.parent.parent.type != "field_declaration":
                    root, via = _root_member(self.src, value)
                    if root and not via:  # `var n = _session.OutputNames;` copies no member
                        decl.add(root)
                elif value is not None and value.type == "invocation_expression" \
                        and n.parent is not None and n.parent.parent is not None \
                        and n.parent.parent.type != "field_declaration":
                    method, receiver = _method_and_receiver(self.src, value.child_by_field_id(F_FUNCTION))
                    if receiver is not None and method not in self.api_members:
                        self.note(receiver, decl)  # `var s = _pool.Dequeue();`: an element into a local
            stack.extend(n.named_children)

    def invocation_evidence(self, n: Node, decl: set[str]) -> None:
        fn = n.child_by_field_id(F_FUNCTION)
        method, receiver = _method_and_receiver(self.src, fn)
        args = n.child_by_field_id(F_ARGUMENTS)
        if method in DISPOSERS:
            self.note(receiver, decl)
        elif receiver is not None and args is not None and any(w in self.text(args) for w in DISPOSERS):
            self.note(receiver, decl)  # `list.ForEach(v => v.Dispose())`
        if receiver is not None and any(_is_out(a) for a in named(args)):
            self.note(receiver, decl)  # `_pool.TryTake(out var s)`: an element taken out into a local
        if method in self.api_members or method == "nameof":
            return
        for a in named(args):
            self.note(_argument_value(a), decl)

    def note(self, node: Node | None, decl: set[str]) -> None:
        """Record the member at the root of `node` (`_x`, `this._x`, `_x[i]`, `(T)_x`)."""
        root, _via = _root_member(self.src, node)
        if root:
            decl.add(root)


def _calls_disposer(src: bytes, body: Node) -> bool:
    for w in DISPOSERS:
        if (w + "(").encode() in src[body.start_byte:body.end_byte]:
            return True
    return False


def _is_out(arg: Node) -> bool:
    return arg.type == "argument" and any(not c.is_named and c.type == "out" for c in arg.children)


def _argument_value(arg: Node) -> Node | None:
    """The expression of an argument (`out var x`, `ref y`, `name: v`, `this`)."""
    kids = [c for c in arg.children if (c.is_named and c.type != "comment") or c.type in ("this", "base")]
    return kids[-1] if kids else None


def _method_and_receiver(src: bytes, fn: Node | None) -> tuple[str, Node | None]:
    """`recv.M` / `recv?.M` / `M`: the method name and the receiver expression."""
    if fn is None:
        return "", None
    if fn.type == "member_access_expression":
        name = fn.child_by_field_id(F_NAME)
        return text_of(src, name).split("<")[0], fn.child_by_field_id(F_EXPRESSION)
    if fn.type == "conditional_access_expression":
        binding = next((c for c in fn.named_children if c.type == "member_binding_expression"), None)
        if binding is not None:
            return text_of(src, binding.child_by_field_id(F_NAME)).split("<")[0], fn.named_children[0]
    if fn.type in ("identifier", "generic_name"):
        return text_of(src, fn).split("<")[0], None
    return "", None


_WRAPPERS = frozenset({"parenthesized_expression", "cast_expression", "as_expression", "postfix_unary_expression",
                       "element_access_expression", "conditional_access_expression", "element_binding_expression"})


def _root_member(src: bytes, node: Node | None) -> tuple[str, str]:
    """(the identifier at the root of a member chain when it is a simple name or `this.X`, the
    last member name reached through another object)."""
    via = ""
    for _ in range(64):
        if node is None:
            return "", via
        t = node.type
        if t == "identifier":
            return text_of(src, node), via
        if t == "member_access_expression":
            obj = node.child_by_field_id(F_EXPRESSION)
            name = text_of(src, node.child_by_field_id(F_NAME))
            if obj is not None and obj.type in ("this_expression", "this"):
                return name, via
            via = via or name
            node = obj
            continue
        if t == "invocation_expression":  # `_pool.Dequeue().Dispose()`: the collection's element
            fn = node.child_by_field_id(F_FUNCTION)
            node = fn.child_by_field_id(F_EXPRESSION) if fn is not None and fn.type == "member_access_expression" else None
            continue
        if t in _WRAPPERS:
            kids = named(node)
            node = node.child_by_field_id(F_VALUE) if t == "cast_expression" else (kids[0] if kids else None)
            continue
        if t == "argument":
            node = _argument_value(node)
            continue
        return "", via
    return "", via
