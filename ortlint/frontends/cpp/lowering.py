"""One C++ function body -> IR (`CppLowering`, on top of the C lowering); the constructs it understands live in
the mixins it is assembled from."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tree_sitter import Node

from ... import ir
from ...ir import Var
from ..c.lowering import FunctionLowering
from ..c.syntax import declarator_name, find_function_declarator
from .arguments import CppArguments
from .base_destructors import CppBaseDestructors
from .container_moves import CppContainerMoves, CppMapKeyStores
from .declarations import CppDeclarations
from .exceptions import CppExceptions
from .expressions import CppExpressions
from .inlining import CppInlining
from .model import SHARED_OWNER, ClassInfo, Ownership, clean_name, is_reference_param, parse_type
from .ownership import CppOwnership
from .packs import CppPacks, is_pack_param
from .pp_alternatives import CppAlternativeDeclarations
from .scopes import Frame, InlineTarget, Scope, TryContext
from .statements import CppStatements
from .struct_arguments import CppStructArguments
from .types import CppTypes

if TYPE_CHECKING:
    from .frontend import CppFrontEnd


class CppLowering(CppStructArguments, CppBaseDestructors, CppContainerMoves, CppMapKeyStores, CppAlternativeDeclarations,
                  CppTypes, CppStatements, CppExceptions, CppDeclarations, CppOwnership, CppInlining, CppArguments,
                  CppPacks, CppExpressions, FunctionLowering):
    """Builds the control-flow graph of one C++ function, method or lambda."""

    language = "cpp"
    unit: "CppFrontEnd"

    def __init__(self, unit: "CppFrontEnd", node: Node, name: str, cls: ClassInfo | None = None,
                 ns: tuple[str, ...] = ()):
        super().__init__(unit, node, name)
        self.model = unit.model
        self.cls = cls
        self.ns = ns
        self.this_obj: ir.Expr | None = None  # the object whose members are in scope (inlined methods)
        self.rename: dict[str, ir.Expr] = {}
        self.frames: list[Frame] = [Frame()]
        self.scopes: list[Scope] = []
        self.cleanup_runs = 0  # destructor calls lowered at exits so far (MAX_CLEANUP_RUNS)
        self.cleanup_outer: dict[int, int | None] = {}  # id(destructor) -> the handler in force before it (statements.py)
        self.running_cleanups: set[int] = set()  # destructors being lowered or already run at this exit
        self.try_stack: list[TryContext] = []
        self.break_depths: list[int] = []
        self.type_depth_cut = False  # expr_type stopped at its depth bound (see receiver_type)
        self.base_type_seen: tuple[Node, str | None] | None = None  # see receiver_type
        self.continue_depths: list[int] = []
        self.inline_target: InlineTarget | None = None
        self.inline_depth = 0
        self.inlined_bytes = 0  # see MAX_INLINED_BYTES
        self.fresh = 0
        self.guard_lambdas: set[int] = set()  # lambdas that are scope guards (run at scope exit)
        self.guard_init: ir.Expr | None = None  # the smart pointer being initialized
        self.ref_params: set[str] = set()  # `T &p` parameters: `p` is `*p` of the caller's address
        self._address_taken: frozenset[str] | None = None  # see address_taken_params
        self.borrowed_params: set[str] = set()  # reference parameters of any type (no destructor at exit)
        self.packs: dict[str, list[str]] = {}  # parameter pack -> the parameters it is lowered as (packs.py)
        self.pack_depth = 0  # pack expansions being lowered (packs.py: a nested one is not expanded again)
        self.node_src: dict[int, bytes] = {}  # lambdas kept for later -> the text their tree belongs to
        self.noexcept = False  # an exception leaving the function ends the process (is_noexcept)
        # smart-pointer temporaries alive until their full expression ends (`destroy_temporary`)
        self.smart_temps: dict[str, tuple[Ownership, Scope, tuple]] = {}
        self.plain_initializers = False  # `{...}` arguments of a container store (see expr_initializer_list)

    # ================================================================== entry

    def function_is_static(self) -> bool:
        return self.node.start_byte in self.model.internal or self.node.type == "lambda_expression"

    def collect_params(self, declarator: Node | None) -> list[str]:
        """Parameter names, with their declared types (which decide how calls on them are lowered)."""
        params_node = self._params_node(self.node)
        names: list[str] = []
        for p in params_node.named_children if params_node is not None else []:
            if p.type not in ("parameter_declaration", "optional_parameter_declaration", "variadic_parameter_declaration"):
                continue
            decl = p.child_by_field_id(self.F.declarator)
            name = declarator_name(decl, self.src) or f"$arg{len(names)}"
            names.append(name)
            self.frames[-1].types[name] = self.declared_type(p.child_by_field_id(self.F.type), decl)
            if is_pack_param(p) and self.node.type != "lambda_expression":
                self.add_pack_slots(name, names, self.frames[-1].types[name])
                continue  # each slot is an argument's value (forwarded, never written back)
            if is_reference_param(p) and not self.model.is_sink_param(p, self.frames[-1].types[name]):
                self.borrowed_params.add(name)  # the caller's object: not destroyed when we return
                if self.node.type != "lambda_expression" and (self.model.is_value_reference(self.frames[-1].types[name])
                                                              or self.param_address_taken(name)):
                    self.ref_params.add(name)
        return names

    def param_address_taken(self, name: str) -> bool:
        """Whether the body takes `&name`: the body's nodes are walked (address_taken_params) only
        when the name occurs in its text at all (a reference parameter of most definitions)."""
        body = self.node.child_by_field_id(self.F.body)
        if body is None:
            return False
        if "\ufffd" not in name and name.encode("utf-8") not in self.src[body.start_byte:body.end_byte]:
            return False
        return name in self.address_taken_params()

    def address_taken_params(self) -> frozenset[str]:
        """Names whose address the body takes (`Childs.push_back(&child)`): a reference
        parameter among them is the caller's object's address (address_taken.py)."""
        if self._address_taken is None:
            self._address_taken = self.model.address_taken(self.src, self.node.child_by_field_id(self.F.body))
        return self._address_taken

    def _params_node(self, fn_node: Node) -> Node | None:
        declarator = fn_node.child_by_field_id(self.F.declarator)
        if fn_node.type == "lambda_expression":
            return declarator.child_by_field_id(self.F.parameters) if declarator is not None else None
        func = find_function_declarator(declarator)
        return func.child_by_field_id(self.F.parameters) if func is not None else None

    def lower_function_body(self, body: Node) -> None:
        if self.is_noexcept():
            self.end_exceptions_here()
        self.push_scope()
        for name in self.params:  # a guard passed by value is destroyed when the function ends
            if name not in self.borrowed_params:  # `std::unique_ptr<T> &p` is the caller's
                self.own_parameter(name)
            self.share_parameter(name)
        with self.base_destructors_on_throw():
            self.lower_member_initializers(self.node)
            self.lower_stmt(body)
        self.pop_scope(self.node)

    def is_noexcept(self) -> bool:
        """Destructors and `operator delete` are noexcept unless they say otherwise, as is a
        function declared `noexcept`: an exception that would leave one ends the process."""
        if self.node.type == "lambda_expression":
            return False
        short = self.name.rsplit("::", 1)[-1]
        if short.startswith("~") or short.startswith("operator delete"):
            return True
        declarator = self.node.child_by_field_id(self.F.declarator)
        func = find_function_declarator(declarator) if declarator is not None else None
        spec = next((c for c in func.children if c.type == "noexcept"), None) if func is not None else None
        return spec is not None and "false" not in self.text(spec)

    def end_exceptions_here(self) -> None:
        """An exception leaving this function calls std::terminate: the function's outermost
        handler is a block that ends the process (nothing leaks, no caller sees a throw)."""
        self.noexcept = True
        pad = self.new_block()
        saved = self.cur
        self.start(pad)
        self.terminate(ir.Halt(self.loc(self.node), "abort"))
        self.cur = saved
        self.handler = pad.id
        self.split()

    def own_parameter(self, name: str) -> None:
        """A `std::unique_ptr` taken by value is this function's: its destructor releases at
        the exits. A `std::shared_ptr` taken by value is a copy: the caller still holds its own
        reference, so the copy's destruction releases nothing."""
        own = self.model.ownership(self.frames[-1].types.get(name, ""))
        if own.what == "smart" and own.release is not None and not own.shared:
            self.frames[-1].owners[name] = own
            self.register_cleanup(name, lambda loc, v=Var(name), r=own.release: self.emit_release(v, r, loc), self.loc(self.node))

    def share_parameter(self, name: str) -> None:
        """A `std::shared_ptr<T>` parameter (by value or by reference) co-owns the object it
        points to from the call on: a caller that moves a `std::unique_ptr` (or passes a `new`
        object) into it converts it into a temporary shared_ptr, which owns it whatever the
        callee does (keeps a copy, or fails and lets it go). Said at the entry as a hand-over to
        `std::shared_ptr` (rules/cpp.toml), so the summary tells every caller."""
        own = self.model.ownership(self.frames[-1].types.get(name, ""))
        if own.what != "smart" or not own.shared or self.node.type == "lambda_expression":
            return
        value: ir.Expr = Var(name)  # (a reference: the caller's shared_ptr's address, which its value goes with)
        self.call_counter += 1
        self.emit(ir.Call(self.call_counter, self.loc(self.node), SHARED_OWNER, "plain", None, (value,), None,
                          f"{SHARED_OWNER}({name})"))

    def lower_member_initializers(self, fn_node: Node) -> None:
        """`Model(...) : api_(api), session_(nullptr)`: stores to members (escapes when the
        method is analyzed alone, fields of the object when it is lowered in place)."""
        init_list = next((c for c in fn_node.named_children if c.type == "field_initializer_list"), None)
        if init_list is None:
            return
        for init in init_list.named_children:
            if init.type != "field_initializer" or not init.named_children:
                continue
            member = clean_name(self.text(init.named_children[0]))
            args = [a for a in init.named_children[1].named_children if a.type != "comment"] if len(init.named_children) > 1 else []
            self.stmt_temps = []
            target = self.member_expr(member)
            if len(args) == 1:
                self.assign_from(target, args[0], self.loc(init))
            elif self.member_keeps_arguments(member):
                for i, a in enumerate(args):
                    self.assign_from(ir.Field(target, f"<arg{i}>"), a, self.loc(init))
            else:
                for a in args:
                    self.lower_expr(a)
            self.finish_statement(init)

    def member_keeps_arguments(self, member: str) -> bool:
        """`handle_(Create(), ReleaseFn)`: a member object of a class (or a smart pointer with
        its deleter) built from several arguments keeps them, as a member built from one does
        (`api_(api)`): what it is given outlives the constructor with the object. Not a standard
        container or string, which copy what they are built from."""
        type_text = self.cls.fields.get(member) if self.cls is not None else None
        if not type_text:
            # a member of a class declared elsewhere (unknown type), not a base class
            if self.model.find_class(member, self.ns) is not None:
                return False  # `Base(a, b)`: a base class's constructor
            return self.cls is None or not any(clean_name(b).split("<")[0].rsplit("::", 1)[-1] == member
                                               for b in self.model.base_names(self.cls.qualname))
        own = self.model.ownership(type_text)
        if own.what in ("smart", "class", "ort"):
            return True
        ref = self.model.resolve_alias(parse_type(type_text))
        return (own.what == "none" and not ref.pointers and not ref.array and bool(ref.name)
                and not ref.name.startswith("std::") and self.model.find_class(ref.name, self.ns) is not None)

    # ================================================================== names, types

    # ================================================================== scopes and destructors

    # ================================================================== statements

    # ================================================================== declarations

    # ================================================================== lowering bodies in place

    # ================================================================== expressions

    # ================================================================== calls

