"""Types of C++ expressions as the lowering needs them: declared types of names, members and elements, return
types of calls, receivers of member calls (from the file model, the header index, or libclang)."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Field, Var
from .guards import guard_spec
from .model import Ownership, clean_name, declared_type_text, parse_type
from .syntax import (
    _API_GETTERS,
    _CASTS,
    _MAKERS,
    _MOVES,
    _ORT_CREATE,
    _ORT_RETURNS,
    _deref_text,
    _unknown_type,
    declarator_name_node,
    strip_template_args,
)


class CppTypes:
    """Types of C++ expressions as the lowering needs them: declared types of names, members and elements, return
types of calls, receivers of member calls (from the file model, the header index, or libclang)."""

    def lookup(self, table: str, name: str):
        for frame in reversed(self.frames):
            found = getattr(frame, table).get(name)
            if found is not None:
                return found
        return None

    def type_of_name(self, name: str) -> str | None:
        found = None
        for frame in reversed(self.frames):  # `lookup("types", name)`, without its `getattr` (every identifier's type)
            found = frame.types.get(name)
            if found is not None:
                break
        if found is not None:
            return None if _unknown_type(found) else found
        if self.cls is not None and name in self.cls.fields:
            return self.cls.fields[name]
        return self.model.globals.get(name)

    def owner_of(self, name: str) -> Ownership | None:
        return self.lookup("owners", name)

    def member_expr(self, member: str) -> ir.Expr:
        if self.this_obj is not None:
            return Field(self.this_obj, member)
        return Var(member)

    def declared_type(self, type_node: Node | None, declarator: Node | None) -> str:
        """The declared type, from libclang when it knows (aliases from headers, `auto`)."""
        oracle = self.unit.oracle
        if oracle is not None and declarator is not None and self.macro_depth == 0:
            found = declarator_name_node(declarator)
            if found is not None:
                t = oracle.decl_type(found.start_point[0] + 1, found.start_point[1] + 1)
                if t:
                    return t
        return declared_type_text(self.src, type_node, declarator)

    def expr_type(self, node: Node | None, depth: int = 0) -> str | None:
        """The static type of an expression, as far as declarations in the file tell."""
        if node is None:
            return None
        if depth > 12:
            self.type_depth_cut = True  # (see receiver_type)
            return None
        node = self.strip_casts(node)
        t = node.type
        if t == "identifier":
            return self._identifier_type(node)
        if t == "qualified_identifier":
            return self.model.globals.get(clean_name(self.text(node)))
        if t == "this":
            return f"{self.cls.qualname}*" if self.cls is not None else None
        if t == "field_expression":
            return self._field_type(node, depth)
        if t == "call_expression":
            return self.call_type(node, depth)
        if t == "subscript_expression":
            return self._element_type(self.expr_type(node.child_by_field_id(self.F.argument), depth + 1))
        if t == "pointer_expression":
            inner = self.expr_type(node.child_by_field_id(self.F.argument), depth + 1)
            op = self.text(node.child_by_field_id(self.F.operator)).strip()
            if inner is None:
                return None
            return inner + "*" if op == "&" else _deref_text(inner)
        if t == "new_expression":
            return self.text(node.child_by_field_id(self.F.type)) + "*"
        if t == "compound_literal_expression":
            return self.text(node.child_by_field_id(self.F.type))
        if t == "conditional_expression":  # `reuse ? shared.get() : fresh.get()`: either branch's
            for branch in (self.F.consequence, self.F.alternative):
                found = self.expr_type(node.child_by_field_id(branch), depth + 1)
                if found is not None:
                    return found
        return None

    def _identifier_type(self, node: Node) -> str | None:
        name = self.text(node)
        oracle = self.unit.oracle
        if oracle is not None and self.macro_depth == 0:
            found = oracle.ref_type(node.start_point[0] + 1, node.start_point[1] + 1)
            if found:
                return found
        return self.type_of_name(name)

    def _field_type(self, node: Node, depth: int) -> str | None:
        """`a.m` / `p->m` / `this->m`: the member's declared type, when the class is in this file."""
        base = self.strip_casts(node.child_by_field_id(self.F.argument))
        member = clean_name(self.text(node.child_by_field_id(self.F.field)))
        if base.type == "this":
            return self.cls.fields.get(member) if self.cls is not None else None
        base_type = self.expr_type(base, depth + 1)
        if base_type is None:
            return None
        ref = self.model.resolve_alias(parse_type(base_type))
        cls = self.model.find_class(ref.name)
        return cls.fields.get(member) if cls is not None else None

    def _element_type(self, text: str | None) -> str | None:
        """What `x[i]` (or a range-for over x) yields: the pointee or the container's element type."""
        if text is None:
            return None
        ref = self.model.resolve_alias(parse_type(text))
        if ref.pointers or ref.array:
            return _deref_text(text)
        if ref.args and self.model.ownership(text).what == "container":
            return ref.args[0]
        return None

    def call_type(self, node: Node, depth: int = 0) -> str | None:
        """The type a call returns: file functions, API getters, factories, smart pointer ops."""
        fn = self.unparen(node.child_by_field_id(self.F.function))
        if fn is None:
            return None
        if fn.type == "field_expression":
            return self._member_call_type(fn, depth)
        name = strip_template_args(clean_name(self.text(fn)))
        if name in _API_GETTERS:
            return _API_GETTERS[name]
        if name in _CASTS:  # `auto *ep = static_cast<MyEp *>(this_ptr);`
            return self.template_arg_text(fn) or None
        if name in _MAKERS:
            return f"{_MAKERS[name]}<{self.template_arg_text(fn)}>"
        if name in _MOVES:
            args = self.call_args(node)
            return self.expr_type(args[0], depth + 1) if args else None
        if self.cls is not None and name in self.cls.methods:
            return self.model.returns.get(f"{self.cls.qualname}::{name}")
        found = self.declared_return(name)
        if found is not None:
            return found
        m = _ORT_CREATE.match(self.model.qualify_ort(name))
        if m:
            return m.group(1)
        if self.is_type_name(name) or guard_spec(self, name) is not None:
            return self.constructed_type(fn, name)
        return None

    def constructed_type(self, fn: Node, name: str) -> str:
        """`T(...)`: the type built, with the template arguments written
        (`std::unique_ptr<char[]>(new char[n])` is an array owner: `delete[]`)."""
        text = clean_name(self.text(fn))
        return text if "<" in text and strip_template_args(text) == name else name

    def _member_call_type(self, fn: Node, depth: int) -> str | None:
        """`x.f()`: smart-pointer get/release give the pointee; known Ort:: methods and this file's methods their declared return type."""
        name = strip_template_args(clean_name(self.text(fn.child_by_field_id(self.F.field))))
        if name in _API_GETTERS and name != "Ort::GetApi":
            return _API_GETTERS[name]
        base_type = self.receiver_type(fn, depth)
        if base_type is None:
            return None
        ref = self.model.resolve_alias(parse_type(base_type))
        own = self.model.ownership(base_type)
        if own.what == "smart" and name in ("get", "release") and own.pointee is not None:
            return own.pointee.text + "*"
        qualified = f"{self.model.qualify_ort(ref.name)}::{name}"
        if qualified in _ORT_RETURNS:
            return _ORT_RETURNS[qualified]
        found = self.model.returns.get(qualified)
        if found is None:
            cls = self.model.find_class(strip_template_args(ref.name), self.ns)
            if cls is not None and cls.qualname != ref.name:
                found = self.model.returns.get(f"{cls.qualname}::{name}")
        return found

    def declared_return(self, name: str) -> str | None:
        """The declared return type of the function a call by `name` reaches, looked up as C++
        does: the name as written, then inside each enclosing namespace, innermost first
        (`EinsumOp::Transpose(...)` called from `onnxruntime::EinsumOp::DeviceHelpers` is
        `onnxruntime::EinsumOp::Transpose`, declared in a header as returning a
        `std::unique_ptr<Tensor>`)."""
        returns = self.model.returns
        found = returns.get(name)
        if found is not None or not self.ns or name.startswith("::"):
            return found
        for i in range(len(self.ns), 0, -1):
            found = returns.get("::".join(self.ns[:i] + (name,)))
            if found is not None:
                return found
        return None

    def receiver_type(self, fn: Node, depth: int = 0) -> str | None:
        """The type of the object a member call is made on (pointer stripped for `->`).

        At depth 0 the type of the object expression itself is kept in `base_type_seen` as
        (its node, its type): `lower_member_call` asks for it next, and a type worked out one
        level deeper is the same unless the depth bound cut the walk short (`type_depth_cut`)."""
        base = fn.child_by_field_id(self.F.argument)
        oracle = self.unit.oracle
        if oracle is not None and self.macro_depth == 0:
            field_node = fn.child_by_field_id(self.F.field)
            if field_node is not None:
                found = oracle.member_call(field_node.start_point[0] + 1, field_node.start_point[1] + 1)
                if found is not None and found[0] == "method" and found[1]:
                    return found[1]
        if depth == 0:
            self.type_depth_cut = False
            text = self.expr_type(base, 1)
            self.base_type_seen = (base, text) if base is not None and not self.type_depth_cut else None
        else:
            text = self.expr_type(base, depth + 1)
        if text is None or not self.is_arrow(fn):
            return text
        own = self.model.ownership(text)
        if own.what == "smart" and own.pointee is not None:
            return own.pointee.text
        return _deref_text(text)

    def template_arg_text(self, fn: Node) -> str:
        text = self.text(fn)
        start = text.find("<")
        return text[start + 1:text.rfind(">")].strip() if start >= 0 else ""

    def is_type_name(self, name: str) -> bool:
        """A name used as `T(args)` / `T{args}` that denotes a type, not a function."""
        if name in self.model.aliases or self.model.find_class(name, self.ns) is not None:
            return True
        ref = parse_type(name)
        return ref.name in ("std::unique_ptr", "std::shared_ptr", "unique_ptr", "shared_ptr")
