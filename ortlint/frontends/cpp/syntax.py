"""Small facts about C++ syntax used across the C++ lowering: name tables, template stripping, declarators."""
from __future__ import annotations

import functools
import re

from tree_sitter import Node

from ... import ir
from ...ir import AddrOf, Const, Deref, Field, Index, Loc, Opaque, Var
from ..c.syntax import find_function_declarator, inner_declarator
from .model import node_text

MAX_INLINE_DEPTH = 4


# Source bytes of method, constructor, destructor and lambda bodies one function may lower in
# place: methods that call methods that call methods, each inlined at every call, grow
# exponentially (a fuzzed 120 KB file needed more than 1 GB). Real functions stay far below.
MAX_INLINED_BYTES = 128 * 1024


_CASTS = {"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "std::static_pointer_cast",
          "std::dynamic_pointer_cast", "std::const_pointer_cast", "std::reinterpret_pointer_cast",
          "gsl::narrow_cast", "gsl::narrow", "narrow_cast", "std::launder", "std::as_const"}


_MOVES = {"std::move", "move", "std::forward", "forward", "std::exchange"}
_MOVE_TEXT = 1024  # bytes a callee spelling one of _MOVES may take (template arguments included)


_MAKERS = {"std::make_unique": "std::unique_ptr", "make_unique": "std::unique_ptr",
           "std::make_shared": "std::shared_ptr", "make_shared": "std::shared_ptr"}


_API_GETTERS = {"Ort::GetApi": "const OrtApi&", "GetApi": "const OrtApi*", "OrtGetApiBase": "const OrtApiBase*",
                "GetTrainingApi": "const OrtTrainingApi*", "GetModelEditorApi": "const OrtModelEditorApi*",
                "GetCompileApi": "const OrtCompileApi*", "GetEpApi": "const OrtEpApi*",
                "Ort::GetTrainingApi": "const OrtTrainingApi&", "Ort::GetModelEditorApi": "const OrtModelEditorApi&",
                "Ort::GetCompileApi": "const OrtCompileApi&", "Ort::GetEpApi": "const OrtEpApi&"}


_ORT_RETURNS = {"Ort::Session::Run": "std::vector<Ort::Value>", "Ort::Value::GetTensorTypeAndShapeInfo":
                "Ort::TensorTypeAndShapeInfo", "Ort::Session::GetInputTypeInfo": "Ort::TypeInfo",
                "Ort::Session::GetOutputTypeInfo": "Ort::TypeInfo"}


_MACRO_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


_DEFER_WORDS = re.compile(r"DEFER|SCOPE_?EXIT|ON_?EXIT|FINALLY|CLEANUP|SCOPE_?GUARD|AT_?SCOPE_?END")


_CASTS = frozenset({"static_cast", "reinterpret_cast", "dynamic_cast", "const_cast"})


_UNKNOWN_TYPE = re.compile(r"\bauto\b|\bdecltype\b|^<lambda>$")


_AUTO = re.compile(r"\bauto\b")


_ORT_CREATE = re.compile(r"^(Ort::\w+)::Create\w*$")


_STD_PREFIX = re.compile(r"^(?:std::|::)")


_CONTAINER_STORE = {"push_back", "emplace_back", "push_front", "emplace_front", "insert", "emplace"}


_CONTAINER_SELF = {"data", "begin", "end", "cbegin", "cend", "rbegin", "rend"}


_UNKNOWN = object()  # "not computed yet" (None is a computed answer: no type known)


_SCALARS = {"int", "long", "short", "char", "bool", "float", "double", "size_t", "int64_t", "int32_t",
            "uint64_t", "uint32_t", "uint8_t", "int8_t", "int16_t", "uint16_t", "unsigned", "signed",
            "jint", "jlong", "jsize", "jboolean", "jfloat", "jdouble", "auto", "void", "std::size_t",
            "ptrdiff_t", "intptr_t", "uintptr_t"}


class _WithoutInit:
    """A condition_clause seen without its init statement (already lowered)."""

    def __init__(self, node: Node):
        self._node = node
        self.named_children = [c for c in node.named_children if c.type != "init_statement"]

    def child_by_field_name(self, name: str) -> Node | None:
        return self._node.child_by_field_name(name)

    def child_by_field_id(self, fid: int) -> Node | None:
        return self._node.child_by_field_id(fid)


def _expr_vars(e: ir.Expr) -> set[str]:
    """Names of the variables an expression reads."""
    if isinstance(e, Var):
        return {e.name}
    if isinstance(e, (Field, Deref, AddrOf)):
        return _expr_vars(e.base)
    if isinstance(e, Index):
        return _expr_vars(e.base) | _expr_vars(e.index)
    if isinstance(e, (ir.Op, Opaque)):
        parts = e.operands if isinstance(e, ir.Op) else e.parts
        return set().union(*(_expr_vars(p) for p in parts)) if parts else set()
    return set()


@functools.lru_cache(maxsize=8192)  # pure, asked for every use of a typed name
def _unknown_type(text: str) -> bool:
    """A declared type that says nothing (`auto`, `decltype(...)`, a lambda)."""
    return _UNKNOWN_TYPE.search(text) is not None


@functools.lru_cache(maxsize=8192)  # pure, called for every call's name
def strip_template_args(name: str) -> str:
    """`Ort::Value::CreateTensor<float>` -> `Ort::Value::CreateTensor`."""
    if "<" not in name:  # nothing is dropped but spaces (a lone `>` is kept)
        return name.replace(" ", "")
    # The text between the brackets is kept or dropped in slices, not looked at character by
    # character: a callee can be long (`[&] {...}()`'s function is the lambda's whole text).
    out, depth, last = [], 0, 0
    for m in _ANGLE.finditer(name):
        at = m.start()
        if depth == 0:
            out.append(name[last:at])
        if name[at] == "<":
            depth += 1
        elif depth:
            depth -= 1
        else:
            out.append(">")  # a lone `>` outside brackets is kept
        last = at + 1
    if depth == 0:
        out.append(name[last:])
    return "".join(out).replace(" ", "")


_ANGLE = re.compile(r"[<>]")


def _deref_text(text: str) -> str:
    """The type text with one pointer level removed (`OrtApi *` -> `OrtApi`)."""
    idx = text.rfind("*")
    return text[:idx] + text[idx + 1:] if idx >= 0 else text


def end_loc(loc: Loc) -> Loc:
    return Loc(loc.end_line, max(1, loc.end_col - 1), loc.end_line, loc.end_col)


def declarator_name_node(node: Node | None) -> Node | None:
    """The identifier node a declarator declares (its position keys libclang's facts)."""
    depth = 0
    while node is not None and depth < 50:
        depth += 1
        if node.type in ("identifier", "field_identifier"):
            return node
        node = inner_declarator(node, ("identifier",))
    return None


def pick_overload(defs: list[Node], arity: int, src: bytes, args: list | None = None) -> Node | None:
    """The definition whose parameter count fits the call (default arguments allowed). With the
    lowered `args`, a `std::nullptr_t` parameter takes only a null constant: `Value{out}` is not
    `explicit Value(std::nullptr_t)` (it is a constructor inherited with `using Base::Base;`)."""
    for d in defs:
        func = find_function_declarator(d.child_by_field_name("declarator"))
        params = func.child_by_field_name("parameters") if func is not None else None
        plist = [p for p in (params.named_children if params is not None else [])
                 if p.type in ("parameter_declaration", "optional_parameter_declaration")]
        required = sum(1 for p in plist if p.type == "parameter_declaration")
        if required <= arity <= len(plist) or (len(plist) == 1 and arity == 0 and node_text(src, plist[0]) == "void"):
            if args is None or _null_params_fit(plist, args, src):
                return d
    return None


def _null_params_fit(plist: list[Node], args: list, src: bytes) -> bool:
    for param, arg in zip(plist, args):
        if "nullptr_t" in node_text(src, param) and not (isinstance(arg, Const) and arg.value == 0):
            return False
    return True
