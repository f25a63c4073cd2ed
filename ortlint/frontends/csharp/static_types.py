"""The static types of C# expressions, where the code or the API tables tell them: locals and
parameters, members of the analyzed code's classes, API properties and return types (with their
type argument substituted), `await` of a `Task<T>`, element reads, LINQ's `First`/`ToList`/
`ToArray`; and the type a receiver names (`OrtValue` in `OrtValue.CreateTensorValueFromMemory`).
Both are remembered per node: the receivers of a chain are asked again at every link."""
from __future__ import annotations

from tree_sitter import Node

from .api import substitute
from .syntax import F_ARGUMENTS, F_EXPRESSION, F_FUNCTION, F_LEFT, F_NAME, F_RETURNS, F_TYPE
from .types import base_name, canon, element_type, family, is_collection, type_args, unwrap_task

_UNSEEN = object()
_FIRST = frozenset({"First", "FirstOrDefault", "Last", "LastOrDefault", "Single", "SingleOrDefault", "ElementAt",
                    "ElementAtOrDefault", "Min", "Max", "MinBy", "MaxBy", "Find", "Peek", "Dequeue", "Pop"})
_SAME_SEQ = frozenset({"Where", "OrderBy", "OrderByDescending", "ThenBy", "Skip", "Take", "Reverse", "Distinct",
                       "AsEnumerable", "Concat", "SkipWhile", "TakeWhile", "DefaultIfEmpty"})
_FUNCTIONS = frozenset({"method_declaration", "local_function_statement", "operator_declaration",
                        "conversion_operator_declaration"})
_NOT_TYPED_HERE = frozenset({"lambda_expression", "anonymous_method_expression", "accessor_declaration",
                             "constructor_declaration", "destructor_declaration", "class_declaration",
                             "struct_declaration", "record_declaration", "interface_declaration"})
_STRING_TYPES = frozenset({"string_literal", "verbatim_string_literal", "raw_string_literal",
                           "interpolated_string_expression"})


class CSharpTypes:
    """Part of `CSharpLowering`: static types of expressions."""

    def static_type_of(self, node: Node) -> str | None:
        """The type a receiver names when it names a type (`OrtValue` in
        `OrtValue.CreateTensorValueFromMemory(...)`), else None (remembered per node: the
        receivers of a chain are asked again at every link)."""
        key = ("s", node.id)
        hit = self.type_memo.get(key, _UNSEEN)
        if hit is _UNSEEN:
            hit = self.type_memo[key] = self._static_type_of(node)
        return hit  # type: ignore[return-value]

    def _static_type_of(self, node: Node) -> str | None:
        t = node.type
        if t in ("identifier", "generic_name"):
            name = self.text(node).split("<")[0]
            if name in self.visible or name in self.captured or (self.cls is not None and self.member_type(name) is not None):
                return None
            if self.unit.api.is_api(name) or self.unit.find_class(name) is not None or name[:1].isupper():
                return name
            return None
        if t in ("member_access_expression", "qualified_name", "alias_qualified_name"):
            text = "".join(self.text(node).split())
            head = text.split(".")[0]
            if head in self.visible or head in self.captured or (self.cls is not None and self.member_type(head) is not None):
                return None
            parts = text.split(".")
            if all(p[:1].isupper() or p in ("global::System",) for p in parts[-1:]) and all(p.isidentifier() for p in parts):
                last = parts[-1]
                if self.unit.api.is_api(last) or self.unit.find_class(last) is not None:
                    return last
                if self.unit.is_namespace_path(".".join(parts[:-1])) and last[:1].isupper():
                    return last
        if t == "predefined_type":
            return self.text(node)
        return None

    def target_type(self, node: Node) -> str:
        """The type a target-typed `new()` creates: the one its context declares (`T x = new()`,
        a field or property `T P = new()`, `x = new()` of a typed `x`, `return new()` in a method
        returning T, or `Task<T>` when it is async); "" where the context does not say (an
        argument, a lambda's body)."""
        parent = node.parent
        while parent is not None and parent.type == "parenthesized_expression":
            node, parent = parent, parent.parent
        if parent is None:
            return ""
        t = parent.type
        if t == "variable_declarator" and parent.parent is not None and parent.parent.type == "variable_declaration":
            declared = canon(self.text(parent.parent.child_by_field_id(F_TYPE)))
            return "" if declared == "var" else declared
        if t == "property_declaration":
            return canon(self.text(parent.child_by_field_id(F_TYPE)))
        if t == "assignment_expression" and parent.child_by_field_id(F_LEFT) is not None \
                and parent.child_by_field_id(F_LEFT).id != node.id and self.operator(parent) == "=" \
                and (parent.parent is None or parent.parent.type != "initializer_expression"):
            # (`new Holder { Options = new() }`: a member of the object made, not of this class)
            return self.expr_type(parent.child_by_field_id(F_LEFT))
        if t in ("return_statement", "arrow_expression_clause"):
            return self.returned_type(parent)
        return ""

    def returned_type(self, node: Node) -> str:
        """The declared type of what the function around `node` returns (unwrapped from the
        `Task<T>` of an async one); "" inside a lambda, a constructor or an accessor."""
        fn = node.parent
        while fn is not None and fn.type not in _FUNCTIONS:
            if fn.type in _NOT_TYPED_HERE:
                return ""
            fn = fn.parent
        if fn is None:
            return ""
        returns = fn.child_by_field_id(F_RETURNS) or fn.child_by_field_id(F_TYPE)
        declared = canon(self.text(returns))
        is_async = any(not c.is_named and c.type == "async" or c.type == "modifier" and self.text(c) == "async"
                       for c in fn.children)
        return unwrap_task(declared) if is_async else declared

    def expr_type(self, node: Node | None) -> str:
        """The static type of an expression where the code (or the API tables) tell it; ""."""
        if node is None:
            return ""
        key = ("t", node.id)
        hit = self.type_memo.get(key)
        if hit is not None:
            return hit
        self.depth += 1
        try:
            if self.depth > self.MAX_NESTING:
                return ""
            hit = self.type_memo[key] = self._expr_type(node)
            return hit
        finally:
            self.depth -= 1

    def _expr_type(self, node: Node) -> str:
        t = node.type
        if t == "identifier":
            name = self.text(node)
            if name in self.visible:
                return self.visible[name]
            if name in self.captured:
                return self.captured[name]
            return self.member_type(name) or ""
        if t in ("this", "base"):
            return self.cls.path if self.cls is not None else ""
        if t in ("parenthesized_expression", "checked_expression", "await_expression"):
            kids = self.named(node)
            inner = self.expr_type(kids[0]) if kids else ""
            return unwrap_task(inner) if t == "await_expression" else inner
        if t == "postfix_unary_expression":
            kids = self.named(node)
            return self.expr_type(kids[0]) if kids and self.text(node).endswith("!") else ""
        if t in ("object_creation_expression", "cast_expression", "array_creation_expression", "default_expression"):
            typ = canon(self.text(node.child_by_field_id(F_TYPE)))
            return typ
        if t == "as_expression":
            return canon(self.text(node.child_by_field_id(self.F.right)))
        if t == "implicit_array_creation_expression":
            init = next((c for c in self.named(node) if c.type == "initializer_expression"), None)
            first = next(iter(self.named(init)), None)
            elem = self.expr_type(first) if first is not None else ""
            return f"{elem}[]" if elem else ""
        if t in _STRING_TYPES:
            return "string"
        if t == "integer_literal":
            return "int"
        if t == "real_literal":
            return "float" if self.text(node).lower().endswith("f") else "double"
        if t == "boolean_literal":
            return "bool"
        if t == "null_literal":
            return "null"
        if t == "conditional_expression":
            return self.expr_type(node.child_by_field_id(self.F.consequence)) or \
                self.expr_type(node.child_by_field_id(self.F.alternative))
        if t == "binary_expression" and self.operator(node) == "??":
            return self.expr_type(node.child_by_field_id(self.F.left)) or self.expr_type(node.child_by_field_id(self.F.right))
        if t == "element_access_expression":
            base = self.expr_type(node.child_by_field_id(F_EXPRESSION))
            if family(base) == "map":
                args = type_args(base)
                return args[1] if len(args) == 2 else ""
            return element_type(base)
        if t == "member_access_expression":
            return self.member_access_type(node.child_by_field_id(F_EXPRESSION), self.text(node.child_by_field_id(F_NAME)))
        if t == "conditional_access_expression":
            cond = node.child_by_field_id(self.F.condition)
            binding = next((c for c in self.named(node) if c.type == "member_binding_expression"), None)
            if binding is not None:
                return self.member_access_type(cond, self.text(binding.child_by_field_id(F_NAME)))
            return ""
        if t == "invocation_expression":
            return self.call_type(node)
        return ""

    def member_access_type(self, obj: Node | None, name: str) -> str:
        if obj is None:
            return ""
        if obj.type in ("this", "base"):
            return self.member_type(name) or ""
        static = self.static_type_of(obj)
        owner_type = static if static is not None else self.expr_type(obj)
        if not owner_type:
            return ""
        head = base_name(owner_type)
        if name == "Value" and head == "KeyValuePair":
            args = type_args(owner_type)
            return args[1] if len(args) == 2 else ""
        if name in ("Values", "Keys") and family(owner_type) == "map":
            args = type_args(owner_type)
            return f"IEnumerable<{args[1 if name == 'Values' else 0]}>" if len(args) == 2 else ""
        if name in ("Count", "Length"):
            return "int"
        if self.unit.api.is_api(head):
            return self.unit.api.property_type(owner_type, name)
        decl = self.unit.find_class(head)
        if decl is not None:
            found = self.unit.member(decl, name)
            return found[0] if found is not None else ""
        return ""

    def call_type(self, node: Node) -> str:
        """The type a call returns: the analyzed code's declaration, the API's, or LINQ's."""
        fn = node.child_by_field_id(F_FUNCTION)
        method, recv = method_of(self.src, fn)
        if not method:
            return ""
        arg_types = [self.expr_type(argument_expr(a)) for a in self.arg_nodes(node.child_by_field_id(F_ARGUMENTS))]
        if recv is None or recv.type in ("this", "base"):
            if self.cls is not None:
                found = self.unit.find_method(self.cls, method, arg_types)
                if found is not None:
                    return found[1].returns
            local = self.unit.local_return_type(self, method)
            return local or ""
        static = self.static_type_of(recv)
        api = self.unit.api
        if static is not None:
            if api.is_api(static):
                m = api.resolve(static, method, arg_types, True)
                return m.returns if m is not None else ""
            decl = self.unit.find_class(static)
            found = self.unit.find_method(decl, method, arg_types) if decl is not None else None
            return found[1].returns if found is not None else ""
        recv_type = self.expr_type(recv)
        head = base_name(recv_type)
        if api.is_api(head):
            m = api.resolve(recv_type, method, arg_types, True)
            if m is not None:
                return substitute(m.returns, recv_type)
        decl = self.unit.find_class(head) if head else None
        if decl is not None:
            found = self.unit.find_method(decl, method, arg_types)
            if found is not None:
                return found[1].returns
        ext = self.unit.find_extension(method, recv_type, arg_types)
        if ext is not None:
            return ext[1].returns
        elem = element_type(recv_type) if is_collection(recv_type) else ""
        if method in _FIRST and elem:
            return elem
        if method in ("ToArray",) and elem:
            return f"{elem}[]"
        if method in ("ToList",) and elem:
            return f"List<{elem}>"
        if method in _SAME_SEQ and elem:
            return f"IEnumerable<{elem}>"
        if method in ("GetAwaiter", "ConfigureAwait"):
            return recv_type
        return ""


def method_of(src: bytes, fn: Node) -> tuple[str, Node | None]:
    """(method name, receiver node) of an invocation's function part; ("", None) for a delegate."""
    t = fn.type
    if t in ("identifier", "generic_name"):
        return src[fn.start_byte:fn.end_byte].decode("utf-8", "replace").split("<")[0].strip(), None
    if t == "member_access_expression":
        name = fn.child_by_field_id(F_NAME)
        obj = fn.child_by_field_id(F_EXPRESSION)
        text = src[name.start_byte:name.end_byte].decode("utf-8", "replace") if name is not None else ""
        return text.split("<")[0].strip(), obj
    if t == "conditional_access_expression":
        binding = next((c for c in fn.named_children if c.type == "member_binding_expression"), None)
        if binding is not None:
            name = binding.child_by_field_id(F_NAME)
            text = src[name.start_byte:name.end_byte].decode("utf-8", "replace") if name is not None else ""
            return text.split("<")[0].strip(), fn.child_by_field_name("condition")
    return "", None


def argument_expr(arg: Node) -> Node | None:
    kids = [c for c in arg.children if (c.is_named and c.type != "comment") or c.type in ("this", "base")]
    if len(kids) >= 2 and kids[0].type == "identifier" and arg.children and any(c.type == ":" for c in arg.children):
        return kids[-1]
    return kids[-1] if kids else None
