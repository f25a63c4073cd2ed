"""Small facts about C syntax shared by the C lowering, the C++ front end and the header index: declarators,
integer literals, operator and type-name tables."""
from __future__ import annotations

import re

from tree_sitter import Node

from ...ir import Opaque
from ..common.cfg import short

MAX_MACRO_DEPTH = 8


MAX_NESTING = 400  # deeper statement/expression nesting is analyzed as opaque code


_COMPARISONS = {"==", "!=", "<", ">", "<=", ">="}


_NULL_WORDS = {"NULL": 0, "nullptr": 0, "false": 0, "true": 1, "FALSE": 0, "TRUE": 1}


_short = short


_OPERATORS: dict[bytes, str] = {}  # operator token -> its text (FunctionLowering.operator)


_WHITESPACE = re.compile(r"\s+")


_VOID = Opaque("void")  # IR values are never changed: one object for every call whose result is not used


_UNINITIALIZED = Opaque("uninitialized")  # (the same for declarations without a value)


# Type names a C file uses without declaring them (jni.h is a system header, not indexed).
C_TYPE_NAMES = frozenset({
    "jobject", "jclass", "jstring", "jthrowable", "jweak", "jarray", "jobjectArray", "jbooleanArray",
    "jbyteArray", "jcharArray", "jshortArray", "jintArray", "jlongArray", "jfloatArray", "jdoubleArray",
    "jboolean", "jbyte", "jchar", "jshort", "jint", "jlong", "jfloat", "jdouble", "jsize",
})


def parse_int(text: str) -> int | None:
    t = text.rstrip("uUlL")
    try:
        return int(t, 0)
    except ValueError:
        try:
            return int(t, 8) if t.startswith("0") and len(t) > 1 else None
        except ValueError:
            return None


_CAST_PREFIX = re.compile(r"\(\s*([A-Za-z_]\w*(?:\s*::\s*\w+)*(?:\s+[A-Za-z_]\w*)*)\s*\)\s*(\S.*)", re.S)
_CXX_CAST = re.compile(r"(?:static_cast|reinterpret_cast)\s*<[^<>]*>\s*(\(.*\))", re.S)
_SIGNED = re.compile(r"([-+])\s*(\S.*)", re.S)


def strip_outer_parens(text: str) -> str:
    """`((x))` -> `x`; `(a) - (b)` is left whole (its first `(` closes before the end)."""
    t = text.strip()
    while t.startswith("(") and t.endswith(")"):
        depth = 0
        for i, ch in enumerate(t):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                break
        if i != len(t) - 1:
            break
        t = t[1:-1].strip()
    return t


def macro_int(body: str, is_constant=lambda name: False, depth: int = 0) -> int | None:
    """The integer an object-like macro's body stands for: `0`, `(-1)`, and the cast forms
    status codes are written in, `((rac_result_t)0)`, `((status_t) - 259)`, `(int)-1`,
    `static_cast<int>(3)`; so `return OK;` and `!= OK` compare as numbers when OK is defined
    with a cast. Pointer casts (`((void *)0)`) are not integers and give None. `(NAME) - 1` where NAME is itself a numeric constant (`is_constant`) is a
    subtraction, not a cast, and gives None (as any other expression does)."""
    t = strip_outer_parens(body)
    number = parse_int(t)
    if number is not None or depth > 4 or not t:
        return number
    signed = _SIGNED.fullmatch(t)
    if signed:
        inner = macro_int(signed[2], is_constant, depth + 1)
        return None if inner is None else (-inner if signed[1] == "-" else inner)
    cast = _CAST_PREFIX.fullmatch(t) or _CXX_CAST.fullmatch(t)
    if cast is None or (cast.re is _CAST_PREFIX and is_constant(cast[1].strip())):
        return None
    return macro_int(cast[cast.re.groups], is_constant, depth + 1)


def inner_declarator(node: Node, names: tuple[str, ...] = ()) -> Node | None:
    """One step into a nested declarator (`*p` -> `p`): its `declarator` field, else the first
    named child that is a declarator or one of the name node types in `names` (error recovery
    and some declarator kinds leave the field unset)."""
    inner = node.child_by_field_name("declarator")
    if inner is None:
        inner = next((c for c in node.named_children if c.type.endswith("declarator") or c.type in names), None)
    return inner


def find_function_declarator(node: Node | None) -> Node | None:
    """The function declarator inside pointer/reference/parenthesized declarators, if any."""
    depth = 0
    while node is not None and depth < 50:
        depth += 1
        kind = node.type
        if kind == "function_declarator":
            return node
        if kind in ("pointer_declarator", "parenthesized_declarator", "attributed_declarator",
                    "reference_declarator", "abstract_pointer_declarator"):
            node = inner_declarator(node)
            continue
        return None
    return None


def declarator_name(node: Node | None, src: bytes) -> str | None:
    depth = 0
    while node is not None and depth < 50:
        depth += 1
        kind = node.type
        if kind in ("identifier", "field_identifier", "operator_name", "destructor_name"):
            return src[node.start_byte:node.end_byte].decode("utf-8", "replace")
        if kind == "qualified_identifier":
            return _WHITESPACE.sub("", src[node.start_byte:node.end_byte].decode("utf-8", "replace"))
        if not node.child_count:  # a leaf: nothing declared below
            return None
        node = inner_declarator(node, ("identifier",))
    return None


def is_array_declarator(node: Node | None) -> bool:
    depth = 0
    while node is not None and depth < 50:
        depth += 1
        if node.type == "array_declarator":
            return True
        if not node.child_count:  # a leaf (the declared name)
            return False
        node = node.child_by_field_name("declarator")
    return False


_NOT_CODE = frozenset({"preproc_include", "preproc_def", "preproc_function_def", "preproc_call", "comment"})


def _uncovered(first: int, last: int, covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The line ranges of [first, last] outside every (start, end) of `covered` (sorted)."""
    out, cur = [], first
    for a, b in covered:
        if b < cur or a > last:
            continue
        if a > cur:
            out.append((cur, a - 1))
        cur = max(cur, b + 1)
    if cur <= last:
        out.append((cur, last))
    return out


def _descendants_with_errors(node: Node) -> list[Node]:
    """Function definitions that error recovery placed inside another function's body."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        for child in n.named_children:
            if child.type == "function_definition":
                out.append(child)
            elif child.has_error or child.type == "ERROR":
                stack.append(child)
    return out


def _declared_identifier(node: Node | None) -> Node | None:
    """The identifier node a declarator declares (`*st = f()` -> `st`), in a loop."""
    steps = 0
    while node is not None and steps < 64:
        steps += 1
        if node.type == "identifier":
            return node
        node = node.child_by_field_name("declarator") or next(
            (c for c in node.named_children if c.type == "identifier" or c.type.endswith("declarator")), None)
    return None


def _first_function_body(root: Node) -> Node | None:
    for child in root.named_children:
        if child.type == "function_definition":
            return child.child_by_field_name("body")
    return None
