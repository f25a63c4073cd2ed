"""Constants and small helpers shared by the Java lowering and the Java front end: nesting limits, literal and
statement tables, names of nested functions."""
from __future__ import annotations

import functools

from tree_sitter import Node

from ...ir import Const, Opaque, Var
from ...policy import Policy
from ..common.cfg import short
from ..managed.limits import MAX_NESTING  # noqa: F401  (the Java modules import it from here)

CATCH_ALL = frozenset({"Exception", "Throwable", "OrtException"})  # catch clauses that catch an OrtException


CATCH_ANYTHING = frozenset({"Exception", "Throwable"})  # javac accepts these around any code


# java.lang.RuntimeException and its JDK subclasses that code catches (Errors end in "Error")
UNCHECKED_EXCEPTIONS = frozenset({
    "RuntimeException", "IllegalArgumentException", "IllegalStateException", "NullPointerException",
    "UnsupportedOperationException", "IndexOutOfBoundsException", "ArrayIndexOutOfBoundsException",
    "StringIndexOutOfBoundsException", "ArithmeticException", "ClassCastException", "NumberFormatException",
    "UncheckedIOException", "ConcurrentModificationException", "NoSuchElementException",
    "NegativeArraySizeException", "ArrayStoreException", "SecurityException", "DateTimeException",
    "DateTimeParseException", "IllegalMonitorStateException", "EmptyStackException", "MissingResourceException",
    "InputMismatchException", "PatternSyntaxException", "BufferOverflowException", "BufferUnderflowException",
    "ReadOnlyBufferException", "RejectedExecutionException", "CompletionException", "CancellationException",
    "UndeclaredThrowableException", "WrongMethodTypeException", "IllformedLocaleException",
    "InvalidPathException", "FileSystemNotFoundException", "ProviderNotFoundException",
    "ClosedWatchServiceException", "DuplicateFormatFlagsException", "IllegalFormatException",
    "UnknownFormatConversionException", "MissingFormatArgumentException",
})


_SKIP = frozenset({"line_comment", "block_comment", ";"})


_INT_LITERALS = ("decimal_integer_literal", "hex_integer_literal", "octal_integer_literal", "binary_integer_literal")


_CLASS_DECLS = ("class_declaration", "enum_declaration", "record_declaration", "interface_declaration")


_SEALED_DECLS = ("record_declaration",)  # records are final; an enum's constants may override its methods


_HEAD_BYTES = 256  # source bytes that `short` texts are read from first (far more than it keeps)


_OPERATORS: dict[bytes, str] = {}  # operator token bytes -> `CfgBuilder.operator` of it


# IR expressions are immutable, so one instance serves every occurrence of these
_THIS = Var("this")


_VOID = Opaque("void")


_SIMPLE_STATEMENTS = frozenset({"expression_statement", "local_variable_declaration", "return_statement",
                                "throw_statement", "yield_statement", "explicit_constructor_invocation"})


_short = short


@functools.lru_cache(maxsize=4096)  # pure; the same literals (0, 1, ...) recur everywhere
def parse_int(text: str) -> int | None:
    t = text.replace("_", "").rstrip("lL")
    try:
        if t.lower().startswith("0b"):
            return int(t[2:], 2)
        if len(t) > 1 and t.startswith("0") and t[1:].isdigit():
            return int(t, 8)
        return int(t, 0)
    except ValueError:
        return None


def api_roots(policy: Policy) -> frozenset[str]:
    """Outermost class names of the [[java_api]] tables (`OrtSession` for `OrtSession.Result`)."""
    found = policy.__dict__.get("_java_api_roots")
    if found is None or found[0] != len(policy.java_api):
        found = policy.__dict__["_java_api_roots"] = (len(policy.java_api),
                                                      frozenset(c.split(".")[0] for c in policy.java_api))
    return found[1]


MAX_NAME = 160  # characters of a closure's function name before its chain of outer closures is cut


def nested_name(outer: str, label: str, node: Node) -> str:
    """`Outer.run$lambda@12`: a closure is named after the function it is written in. Deeply
    nested closures would repeat every outer label (4 000 curried lambdas: names of 40 KB each,
    1 GB in all), so beyond MAX_NAME the chain is replaced by the closure's line and column,
    which still tell it apart."""
    name = f"{outer}${label}"
    if len(name) <= MAX_NAME:
        return name
    head = outer.split("$", 1)[0]
    return f"{head}$...${label}:{node.start_point[1] + 1}"


FRAMES_PER_LEVEL = 8  # Python frames one counted nesting level may take (statement -> block -> scope -> ...)

_NULL, _TRUE, _FALSE = Const(0, "null"), Const(1, "true"), Const(0, "false")
