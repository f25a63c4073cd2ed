"""C# type names as the front end compares them: written types reduced to a canonical text
(`System.Collections.Generic.List<Microsoft.ML.OnnxRuntime.OrtValue>?` -> `List<OrtValue>`), their
base names, type arguments, element types, and which of them are collections.

Only names matter to the front end: a type is used to name a call (`InferenceSession.Run`), to
pick an overload and to find the elements a `foreach` visits. Namespaces are dropped, so two
classes of one simple name in different namespaces look alike (the project index prefers the
file's own namespace and its `using`s).
"""
from __future__ import annotations

import functools

PRIMITIVES = frozenset({"bool", "byte", "sbyte", "char", "decimal", "double", "float", "int", "uint", "nint", "nuint",
                        "long", "ulong", "short", "ushort", "string", "object", "void", "dynamic", "Half",
                        "String", "Int32", "Int64", "Single", "Double", "Boolean", "Byte", "Object", "IntPtr", "UIntPtr",
                        "Guid", "DateTime", "TimeSpan"})
NUMERIC = frozenset({"byte", "sbyte", "char", "decimal", "double", "float", "int", "uint", "long", "ulong", "short",
                     "ushort", "nint", "nuint"})

# Collections whose elements `foreach` visits (and that `new` creates locally, keeping what is
# added without owning it); maps visit KeyValuePair<K, V>.
SEQUENCES = frozenset({"List", "IList", "ICollection", "IEnumerable", "IReadOnlyList", "IReadOnlyCollection",
                       "Collection", "ReadOnlyCollection", "HashSet", "ISet", "SortedSet", "LinkedList", "Queue",
                       "Stack", "ConcurrentBag", "ConcurrentQueue", "ConcurrentStack", "BlockingCollection",
                       "ImmutableArray", "ImmutableList", "IAsyncEnumerable", "IEnumerator", "Span", "ReadOnlySpan",
                       "Memory", "ReadOnlyMemory", "ArraySegment", "ObservableCollection",
                       "IDisposableReadOnlyCollection"})
MAPS = frozenset({"Dictionary", "IDictionary", "IReadOnlyDictionary", "SortedDictionary", "SortedList",
                  "ConcurrentDictionary", "ImmutableDictionary"})
TASKS = frozenset({"Task", "ValueTask", "ConfiguredTaskAwaitable", "ConfiguredValueTaskAwaitable"})


def split_args(text: str) -> list[str]:
    """`A, B<C, D>, E[]` -> ["A", "B<C, D>", "E[]"] (commas at depth 0 only)."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    last = text[start:].strip()
    if last or out:
        out.append(last)
    return out


@functools.lru_cache(maxsize=8192)
def canon(text: str) -> str:
    """The canonical text of a written type: no spaces, no namespaces, no `?`, `global::` dropped."""
    t = "".join(text.split()).replace("global::", "")
    if not t:
        return ""
    t = t.replace("?", "")
    suffix = ""
    while t.endswith("]"):  # array ranks: `T[]`, `T[,]`
        open_at = t.rfind("[")
        if open_at <= 0:
            break
        suffix = "[]" + suffix
        t = t[:open_at]
    if t.startswith("(") and t.endswith(")"):  # a tuple type
        return "(" + ",".join(canon(a.rsplit(" ", 1)[0]) for a in split_args(t[1:-1])) + ")" + suffix
    lt = t.find("<")
    if lt > 0 and t.endswith(">"):
        head = t[:lt].rsplit(".", 1)[-1]
        args = ",".join(canon(a) for a in split_args(t[lt + 1:-1]))
        return f"{head}<{args}>{suffix}"
    return t.rsplit(".", 1)[-1].rsplit("::", 1)[-1] + suffix


def base_name(t: str) -> str:
    """`List<OrtValue>` -> `List`; `OrtValue[]` -> `OrtValue[]` (arrays keep their brackets)."""
    lt = t.find("<")
    if lt > 0:
        head = t[:lt]
        return head + ("[]" if t.endswith("[]") else "")
    return t


def type_args(t: str) -> list[str]:
    lt = t.find("<")
    if lt <= 0 or not t.endswith(">"):
        return []
    return split_args(t[lt + 1:-1])


def is_array(t: str) -> bool:
    return t.endswith("[]")


def element_type(t: str) -> str:
    """What `foreach` over a value of type `t` visits ("" when unknown)."""
    if not t:
        return ""
    if is_array(t):
        return t[:-2]
    head, args = base_name(t), type_args(t)
    if head in MAPS and len(args) == 2:
        return f"KeyValuePair<{args[0]},{args[1]}>"
    if args and (head in SEQUENCES or head.startswith("I")):
        return args[-1]
    return ""


def unwrap_task(t: str) -> str:
    """`await` of a `Task<T>` gives a T (of a plain Task, nothing)."""
    head, args = base_name(t), type_args(t)
    if head in TASKS:
        return args[0] if args else "void"
    return t


def is_collection(t: str) -> bool:
    head = base_name(t)
    return is_array(t) or head in SEQUENCES or head in MAPS


def family(t: str) -> str:
    """"map", "seq" or "" (not a collection), for overload resolution."""
    head = base_name(t)
    if head in MAPS:
        return "map"
    if is_array(t) or head in SEQUENCES:
        return "seq"
    return ""
