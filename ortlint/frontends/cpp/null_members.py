"""Class members that start out empty and that no code of the tree ever gives a value.

`Ort::MemoryInfo memory_info_{nullptr};` declares a wrapper that holds no handle; when nothing
in the tree assigns, constructs, moves, swaps or passes the member anywhere,
`memory_info_.release()` hands back NULL, and a caller dropping it loses nothing. Whether
nothing does is a fact about the whole tree, so each file states its part as constants that the
program merges (a name given two values by two files is dropped, `Program.constants`):

* the file that declares a private or protected member with an empty initializer
  (`{nullptr}`, `= nullptr`, `{}`, `= NULL`; a class type written without `*` or `&`) says
  `NAME{null}` = 0 (a public member may be assigned by code outside the analyzed tree);
* every file whose functions mention NAME as a member or global anywhere but as the receiver
  of a `release()` call (an assignment, a call's destination or argument, any other method
  call, a condition, an initializer) says `NAME{null}` = 1.

Only a member declared so in one file and mentioned by nobody (any class: names are not
qualified, so a same-named member written in another class also keeps it unknown) is read as
NULL by the engine (engine/null_members.py). Files are C++ only; a member written from C code
through a pointer is no C++ class member.
"""
from __future__ import annotations

import re

from tree_sitter import Node

from ... import ir
from ...ir import AddrOf, Assign, Branch, Call, Const, Deref, Field, Havoc, Index, Kill, Op, Opaque, Return, Use, Var

NULL_MEMBER = "{null}"
_EMPTY = frozenset({"nullptr", "NULL", "0", "{}", "{nullptr}", "{NULL}", "{ nullptr }", "{ }", "{0}"})
_WORD = re.compile(r"[A-Za-z_]\w*")


def null_member_constants(src: bytes, root: Node, functions: list[ir.Function]) -> dict[str, int]:
    """This file's part: 0 for a member it declares empty and never mentions, 1 for every
    member or global name its functions mention (other than as a `release()` receiver)."""
    declared = set(_declared_empty(src, root))
    if not declared and not functions:
        return {}
    mentioned = _mentioned(functions)
    out = {name + NULL_MEMBER: 1 for name in mentioned}
    for name in declared - mentioned:
        out[name + NULL_MEMBER] = 0
    return out


def _declared_empty(src: bytes, root: Node):
    """Private or protected members declared empty: only the class's own methods (and friends)
    can give them a value, and those are in the tree that defines the class; a public member
    may be assigned by code outside the analyzed tree."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "field_declaration_list":
            private = node.parent is not None and node.parent.type == "class_specifier"
            for child in node.named_children:
                if child.type == "access_specifier":
                    private = src[child.start_byte:child.end_byte].decode("utf-8", "replace").strip() != "public"
                elif child.type == "field_declaration" and private:
                    name = _empty_member(src, child)
                    if name is not None:
                        yield name
                stack.append(child)
            continue
        if node.type in ("function_definition", "compound_statement"):
            continue
        stack.extend(node.named_children)


def _empty_member(src: bytes, node: Node) -> str | None:
    declarator = node.child_by_field_name("declarator")
    value = node.child_by_field_name("default_value")
    type_node = node.child_by_field_name("type")
    if declarator is None or value is None or type_node is None or declarator.type != "field_identifier":
        return None
    if type_node.type == "primitive_type":
        return None
    text = " ".join(src[value.start_byte:value.end_byte].decode("utf-8", "replace").split())
    if text not in _EMPTY:
        return None
    return src[declarator.start_byte:declarator.end_byte].decode("utf-8", "replace")


def _mentioned(functions: list[ir.Function]) -> set[str]:
    out: set[str] = set()
    for fn in functions:
        local = fn.locals.keys() | set(fn.params)
        names: set[str] = set()
        for block in fn.blocks:
            for ev in block.events:
                _event_names(ev, names)
            term = block.term
            cls = type(term)
            if cls is Branch:
                _expr_names(term.cond, names)
            elif cls is Return and term.value is not None:
                _expr_names(term.value, names)
        out |= {n for n in names if n not in local and n[:1] != "$" and n != "this"}
    return out


def _event_names(ev, names: set[str]) -> None:
    """The names an event mentions. Dispatched on the event's class: asking `isinstance(e,
    ir.Expr)` of each field went through `typing.Union`'s slow instance check (this pass looks
    at every event of every C++ function)."""
    cls = type(ev)
    if cls is Call:
        if ev.receiver is not None and not (ev.style == "method" and ev.callee.rpartition("::")[2] == "release"):
            _expr_names(ev.receiver, names)
        for arg in ev.args:
            if type(arg) is Var:
                names.add(arg.name)
            else:
                _expr_names(arg, names)
        if ev.dest is not None:
            _expr_names(ev.dest, names)
    elif cls is Assign:
        _expr_names(ev.dest, names)
        _expr_names(ev.value, names)
    elif cls is Use:
        _expr_names(ev.pointer, names)
    elif cls is Kill or cls is Havoc:
        names.update(ev.names)


def _expr_names(e, names: set[str]) -> None:
    cls = type(e)
    if cls is Var:
        names.add(e.name)
        return
    if cls is Const:
        return
    stack = [e]
    while stack:
        e = stack.pop()
        cls = type(e)
        if cls is Var:
            names.add(e.name)
        elif cls is Field:
            names.add(e.name)
            stack.append(e.base)
        elif cls is Deref or cls is AddrOf or cls is Index:
            stack.append(e.base)
            if cls is Index:
                stack.append(e.index)
        elif cls is Op:
            stack.extend(e.operands)
        elif cls is Opaque:
            names.update(_WORD.findall(e.text))
            stack.extend(getattr(e, "parts", ()) or ())
