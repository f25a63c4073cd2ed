"""C++ declarations: locals and their initializers (constructor calls, `auto`, structured bindings), telling a
prototype or a construction from a call."""
from __future__ import annotations

from tree_sitter import Node

from ... import ir
from ...ir import Const, Loc, Opaque, Var
from ..c.syntax import _UNINITIALIZED, declarator_name, find_function_declarator, is_array_declarator
from ..common.integer_types import is_unsigned_integer
from .guards import construction_args, hold_status
from .model import VIEWS, clean_name, parse_type
from .syntax import _AUTO, _CASTS, _MAKERS, _MOVES, _SCALARS, strip_template_args


def declares_reference(target: Node) -> bool:
    """`T& r`, and `T*& r` (a reference to a pointer: the `&` sits under the `*` declarators)."""
    while target.type == "pointer_declarator":
        inner = target.child_by_field_name("declarator")
        if inner is None:
            return False
        target = inner
    return target.type == "reference_declarator"


class CppDeclarations:
    """C++ declarations: locals and their initializers (constructor calls, `auto`, structured bindings), telling a
prototype or a construction from a call."""

    def stmt_declaration(self, node: Node) -> None:
        self.stmt_temps = []
        type_node = node.child_by_field_id(self.F.type)
        static = False
        for c in node.children:  # a plain loop: `any(<genexpr>)` cost a generator frame per child
            if c.type == "storage_class_specifier" and self.text(c) in ("static", "thread_local"):
                static = True
                break
        for child in node.children_by_field_id(self.F.declarator):
            self.lower_cpp_declarator(child, type_node, static)
        self.finish_statement(node)

    def lower_cpp_declarator(self, decl: Node, type_node: Node | None, static: bool) -> None:
        """One declarator of a declaration: name, type (from libclang when known), construction.

        Most declarators are a bare name (`T x = v;`): that is no function declarator, no
        structured binding, and its name is its text, so the walks for those are skipped."""
        target, value = (decl.child_by_field_id(self.F.declarator), decl.child_by_field_id(self.F.value)) \
            if decl.type == "init_declarator" else (decl, None)
        args: list[Node] | None = None
        bare = target is not None and target.type == "identifier"
        if not bare and find_function_declarator(target) is not None:
            decl = self.reparse_as_construction(decl, target)
            if decl is None:
                return  # a local function prototype
            target, value = decl.child_by_field_id(self.F.declarator), decl.child_by_field_id(self.F.value)
        if value is not None and value.type in ("argument_list", "initializer_list"):
            args = [a for a in value.named_children if a.type != "comment"]
        if not bare and target is not None and target.type == "structured_binding_declarator":
            self.declare_structured_binding(target, value)
            return
        # (`declarator_name` of an identifier is its text)
        name = self.src[target.start_byte:target.end_byte].decode("utf-8", "replace") if bare \
            else declarator_name(target, self.src)
        if not name:
            return
        type_text = self.declared_type(type_node, target)
        if value is not None and args is None and "auto" in type_text and _AUTO.search(type_text):
            type_text = self.infer_auto(type_text, value)
        var = self.declare_local(name, type_text, target, static or self.refers_elsewhere(target, value))
        if args is not None and not bare and value.type == "initializer_list" and self.plain_array(type_text, target):
            args = None  # `char* argv[] = {strdup(a)}`: each element into its slot, as in C
        self.initialize(decl, var, name, type_text, args, None if args is not None else value, self.loc(decl),
                        reference=target is not None and not bare and declares_reference(target))

    def plain_array(self, type_text: str, target: Node | None) -> bool:
        """An array of pointers or numbers (`char* argv[]`): its brace list lists elements, each
        stored into its slot (`argv[0]`), which is not a constructor call of the element type
        (`char(a, b)`) nor, with one element, a copy into the array itself."""
        if not is_array_declarator(target):
            return False
        ref = self.model.resolve_alias(parse_type(type_text))
        return ref.pointers > 0 or ref.name in _SCALARS

    def refers_elsewhere(self, target: Node | None, value: Node | None) -> bool:
        """`T& ep = info->ep;`, `auto& cache = Cache();`: a reference to an object this function
        does not hold (reached through a pointer, a member, a call's result). What is stored
        into it is stored there, not in a local (like a static local)."""
        if target is None or not declares_reference(target) or value is None:
            return False
        inner = self.strip_casts(value)
        if inner.type == "identifier":
            name = self.text(inner)
            return name not in self.locals and name not in self.rename
        return inner.type in ("field_expression", "call_expression", "pointer_expression", "subscript_expression")

    def reparse_as_construction(self, decl: Node, target: Node) -> Node | None:
        """`OptionsPtr opts(raw);` and `Ptr p(static_cast<T *>(malloc(n)));` parse as function
        declarations. Inside a body they construct an object, unless every parameter looks like
        one (`int count`, a type): the declaration is parsed again with braces for parentheses
        (same offsets, so locations stay right) and the init-declarator is returned."""
        func = find_function_declarator(target)
        params = func.child_by_field_id(self.F.parameters) if func is not None else None
        stmt = decl.parent
        if params is None or stmt is None or not params.named_children or self.looks_like_prototype(params):
            return None
        data = bytearray(self.src)
        data[params.start_byte] = ord("{")
        data[params.end_byte - 1] = ord("}")
        tree = self.unit.parse_range(bytes(data), stmt)
        for node in tree.root_node.named_children:
            for child in node.children_by_field_id(self.F.declarator):
                if child.start_byte == decl.start_byte and child.type == "init_declarator":
                    return child
        return None

    def looks_like_prototype(self, params: Node) -> bool:
        """True when every parameter of `T x(...)` reads as a parameter (`int n`, a type) rather than a value."""
        for p in params.named_children:
            if p.type not in ("parameter_declaration", "optional_parameter_declaration", "variadic_parameter_declaration"):
                return False
            decl = p.child_by_field_id(self.F.declarator)
            if decl is not None and declarator_name(decl, self.src):
                continue
            if decl is not None and decl.type == "abstract_function_declarator":
                return False  # `g(x)`: a call
            type_node = p.child_by_field_id(self.F.type)
            name = clean_name(self.text(type_node)) if type_node is not None else ""
            base = strip_template_args(name)
            if base in _CASTS or base in _MOVES or base in _MAKERS:
                return False
            if type_node is not None and type_node.type in ("type_identifier", "qualified_identifier") and \
                    (name in self.locals or name in self.params or name in self.rename or self.type_of_name(name)):
                return False
        return True

    def declare_structured_binding(self, target: Node, value: Node | None) -> None:
        if value is not None:
            self.lower_expr(value)
        for ident in target.named_children:
            name = self.text(ident)
            var = self.bind_local(name, False)
            self.emit(ir.Assign(self.loc(ident), var, Opaque("structured binding")))

    def pp_names(self) -> object:
        """The innermost block's declared names and the renames in force (`bind_local`)."""
        scope = self.scopes[-1] if self.scopes else None
        return (set(scope.names) if scope is not None else None, dict(self.rename))

    def pp_restore_names(self, saved: object) -> None:
        """`#if A R *r = f(); #else R *r = g(); #endif`: the `#else` alternative is another
        path, on which `r` is declared for the first time (the same variable, not a second one)."""
        names, rename = saved  # type: ignore[misc]
        scope = self.scopes[-1] if self.scopes else None
        if scope is not None and names is not None:
            scope.names = set(names)
        self.rename = dict(rename)

    def pp_merge_names(self, other: object) -> None:
        names, _rename = other  # type: ignore[misc]
        scope = self.scopes[-1] if self.scopes else None
        if scope is not None and names is not None:
            scope.names |= names

    def fresh_name(self, base: str) -> str:
        self.fresh += 1
        return f"{base}@{self.fresh}"

    def bind_local(self, name: str, aggregate: bool, static: bool = False) -> Var:
        """Declare a local; inside a body lowered in place it gets a fresh name when it would
        clash with a name of the function, and so does one that hides a local of an enclosing
        block (`auto p = make(); { std::unique_ptr<T> p{other()}; }`: two objects, each with
        its own destructor) or one of its own block declared again in another `#ifdef`
        alternative, until its block ends. Messages show the name as written."""
        scope = self.scopes[-1] if self.scopes else None
        if self.inline_depth > 0 and (name in self.locals or name in self.params):
            new = self.fresh_name(name)
            self.rename[name] = Var(new)
            name = new
        elif scope is not None and (name in scope.names or any(name in s.names for s in self.scopes[:-1])):
            # (declared in this block already: a `#ifdef` alternative declaring it again; every
            # alternative is read, each object its own)
            scope.shadowing.append((name, self.rename.get(name)))
            scope.names.add(name)
            new = self.fresh_name(name)
            self.rename[name] = Var(new)
            name = new
        else:
            if name in self.rename:
                del self.rename[name]
            if scope is not None:
                scope.names.add(name)
        if not static:
            self.locals[name] = aggregate
        return self.var(name)

    def declare_local(self, name: str, type_text: str, target: Node | None, static: bool) -> Var:
        """Declare a local with its type; objects with destructors and containers are aggregates."""
        own = self.model.ownership(type_text)
        view = own.what == "container" and self.model.resolve_alias(parse_type(type_text)).name in VIEWS
        # an identifier (most declarators) is no array: no walk for that
        aggregate = target is not None and target.type != "identifier" and is_array_declarator(target) \
            or (own.what in ("container", "class") and not view)
        var = self.bind_local(name, aggregate, static)
        self.note_local_type(var.name, target is not None and target.type == "identifier" and not static
                             and is_unsigned_integer(type_text))
        frame = self.frames[-1]
        frame.types[name] = type_text
        frame.lambdas.pop(name, None)
        frame.owners.pop(name, None)
        return var

    def infer_auto(self, declared: str, value: Node) -> str:
        """`auto x = init`: the type of the initializer, so that RAII objects declared with auto are recognized."""
        inner = self.strip_casts(value)
        if inner.type == "lambda_expression":
            return "<lambda>"
        found = self.expr_type(inner)
        if found is None:
            return declared
        pointers = declared.count("*")
        return found + ("*" * pointers if pointers and "*" not in found else "")

    def initialize(self, decl: Node, var: Var, name: str, type_text: str, args: list[Node] | None,
                   value: Node | None, loc: Loc, reference: bool = False) -> None:
        """Construct a declared object; register its destructor when it has one. A reference
        (`const Rec& r = recs[i];`) constructs nothing: it names the value, whatever its type."""
        own = self.model.ownership(type_text)
        inner = self.strip_casts(value) if value is not None else None
        if inner is not None and inner.type == "lambda_expression":
            self.frames[-1].lambdas[name] = self.keep(inner)
            self.register_lambda(inner)
            self.emit(ir.Assign(loc, var, Opaque("lambda")))
            return
        ref = self.model.resolve_alias(parse_type(type_text))
        is_object = not ref.pointers and not ref.array and ref.name not in _SCALARS and own.what != "smart"
        guards = self.scope_guard_args(args, value) if is_object else []
        if guards:
            self.guard_lambdas.update(g.start_byte for g in guards)
        if args is None and own.what == "ort":
            args = construction_args(self, type_text, value)  # cpp_guards: `Ort::Status st = Ort::Status{call};`
        if own.what == "smart":
            self.init_smart_pointer(var, name, own, args, value, loc)
        elif own.what == "class" and own.cls is not None:
            self.init_class_object(var, name, own.cls, args, value, loc)
        elif own.what == "ort" and args:
            lowered = tuple([self.lower_expr(a) for a in args])
            hold_status(self, var, type_text, lowered, loc)  # cpp_guards: `Ort::Status st{call}`
            self.emit_call_node(decl, strip_template_args(self.model.qualify_ort(parse_type(type_text).name)),
                                "plain", None, lowered, True, None, loc)
        elif own.what == "container" and args and ref.name in VIEWS:
            # a view aliases the array it is built from: `result[i] = x` stores into `out[i]`
            self.emit(ir.Assign(loc, var, self.lower_expr(args[0])))
            for a in args[1:]:
                self.lower_expr(a, discard=True)
        elif own.what == "container" and args is not None:
            for a in args:
                self.lower_expr(a, discard=True)
        elif args is not None:
            self.init_from_args(decl, var, type_text, args, loc)
        elif value is not None and value.type == "initializer_list" and self.unknown_destructor(ref):
            self.init_from_args(decl, var, type_text, self.named(value), loc)  # `Guard g{arr, n, ReleaseX};`
        elif value is not None and not reference and self.converts_on_copy(type_text, value):
            self.init_from_args(decl, var, type_text, [value], loc)
        elif value is not None:
            if value.type == "initializer_list":
                self.lower_initializer(var, value)
            else:
                self.assign_from(var, value, loc)
        elif not self.locals.get(var.name, True) or own.what == "container":
            # (a container starts empty: declared again on the next iteration of a loop, or in a
            # body lowered in place again, it no longer holds what the last one did; `tmp.swap(v)`
            # then gives v nothing)
            self.emit(ir.Assign(loc, var, _UNINITIALIZED))
        if guards:
            self.scope_guard_lambdas(name, guards, loc)
        if is_object and own.what in ("none", "ort") and self.model.derives_from(ref.name, "OrtAllocator", self.ns):
            self.own_allocations(var, loc)

    def own_allocations(self, var: Var, loc: Loc) -> None:
        """A local object of the program's own OrtAllocator class (`StringAllocator sa;
        api->SessionGetInputName(s, i, &sa, &sa.out)`): what ORT allocates through it is the
        allocator's (kept in the object, `string_.data()`): when the object is destroyed, what it
        holds is no longer this function's to release."""
        self.register_cleanup(var.name, lambda at: self.emit(ir.Havoc(at, (var.name,), "owned by an allocator object destroyed here")), loc)

    def converts_on_copy(self, type_text: str, value: Node) -> bool:
        """`std::string msg = api->GetErrorMessage(st);` copies the characters: the object does
        not hold the pointer. True for object types initialized from a value of another type."""
        ref = self.model.resolve_alias(parse_type(type_text))
        if ref.pointers or ref.array or not ref.name or ref.name in _SCALARS or _AUTO.search(type_text):
            return False
        if not ref.name.startswith("std::") and self.model.find_class(ref.name, self.ns) is None:
            return False  # an unknown type may be a typedef of a pointer or a number
        if value.type == "initializer_list":
            return False
        source = self.expr_type(value)
        return source is None or self.model.resolve_alias(parse_type(source)).name != ref.name

    def init_from_args(self, decl: Node, var: Var, type_text: str, args: list[Node], loc: Loc) -> None:
        """`T x(a, b)` of a type with no known destructor: a pointer or number copies its single
        argument; an object of an unknown class is an unknown constructor call."""
        ref = self.model.resolve_alias(parse_type(type_text))
        scalar = ref.pointers > 0 or ref.name in _SCALARS or ref.name.startswith(("Ort", "j")) and not ref.args
        if scalar and len(args) == 1:
            self.assign_from(var, args[0], loc)
            return
        if scalar and not args:
            self.emit(ir.Assign(loc, var, Const(0, "{}")))
            return
        lowered = tuple([self.lower_expr(a) for a in args])
        # a new object (again on each iteration of a loop): what the last one's fields held is
        # not this one's (`E aux = pq.top(); delete aux.t;` deletes a new pointer each time)
        self.emit(ir.Assign(loc, var, _UNINITIALIZED))
        self.emit_call_node(decl, clean_name(ref.name) or "<constructor>", "plain", None, lowered, True, None, loc)
        cls = self.unknown_destructor(ref) if lowered else None
        if cls is not None:
            self.destroy_unknown(var.name, cls, decl, lowered, loc)
