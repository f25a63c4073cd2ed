"""C# syntax: the tree-sitter-c-sharp grammar and its field ids, parsing within a CPU and memory
budget, and `#if` regions reduced to one branch before parsing.

tree-sitter-c-sharp keeps `#if` directives in the tree, but a region that opens or closes a brace
in one branch only (`#if DEBUG if (x) { #else if (y) { #endif`) breaks the parse of the whole
method. The compiler sees exactly one branch, so the front end does too: the first branch whose
condition is not the literal `false` (the others are alternatives for other builds), with every
directive line and every other branch blanked to spaces, so offsets and lines stay where they were.
"""
from __future__ import annotations

import re
import time

import tree_sitter_c_sharp
from tree_sitter import Language, Node, Parser, Tree

from ..common.source import chunked_input, memory_cap_reached, over_memory_cap, parse_memory_cap
from ..managed.syntax import field_id

CSHARP_LANGUAGE = Language(tree_sitter_c_sharp.language())


def _field_id(name: str) -> int:
    return field_id(CSHARP_LANGUAGE, "tree-sitter-c-sharp", name)


F_ACCESSORS = _field_id("accessors")
F_ALTERNATIVE = _field_id("alternative")
F_ARGUMENTS = _field_id("arguments")
F_BODY = _field_id("body")
F_CONDITION = _field_id("condition")
F_CONSEQUENCE = _field_id("consequence")
F_EXPRESSION = _field_id("expression")
F_FUNCTION = _field_id("function")
F_INITIALIZER = _field_id("initializer")
F_LEFT = _field_id("left")
F_NAME = _field_id("name")
F_OPERATOR = _field_id("operator")
F_PARAMETERS = _field_id("parameters")
F_PATTERN = _field_id("pattern")
F_RETURNS = _field_id("returns")
F_RIGHT = _field_id("right")
F_SUBSCRIPT = _field_id("subscript")
F_TYPE = _field_id("type")
F_TYPE_PARAMETERS = _field_id("type_parameters")
F_UPDATE = _field_id("update")
F_VALUE = _field_id("value")

COMMENTS = frozenset({"comment"})
SKIP = frozenset({"comment", "empty_statement", "preproc_region", "preproc_endregion", "preproc_pragma",
                  "preproc_nullable", "preproc_line", "preproc_warning", "preproc_error", "preproc_define",
                  "preproc_undef"})
TYPE_DECLS = frozenset({"class_declaration", "struct_declaration", "record_declaration", "interface_declaration",
                        "record_struct_declaration"})
NAMESPACES = frozenset({"namespace_declaration", "file_scoped_namespace_declaration"})


def named(node: Node | None) -> list[Node]:
    """Named children without comments and preprocessor leftovers."""
    if node is None:
        return []
    return [c for c in node.named_children if c.type not in SKIP]


def text_of(src: bytes, node: Node | None) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace") if node is not None else ""


def modifiers(src: bytes, node: Node) -> frozenset[str]:
    return frozenset(text_of(src, c) for c in node.named_children if c.type == "modifier")


def has_token(node: Node, token: str) -> bool:
    """Does `node` have the anonymous token `token` (`using`, `await`, `static`) among its children?"""
    return any(not c.is_named and c.type == token for c in node.children)


# ----------------------------------------------------------------------------- #if regions

_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|elif|else|endif)\b([^\r\n]*)", re.MULTILINE)
_SPACES = bytes(b if b in (ord("\n"), ord("\r")) else ord(" ") for b in range(256))


def _is_false(condition: bytes) -> bool:
    cond = condition.split(b"//")[0].strip()
    while cond.startswith(b"(") and cond.endswith(b")"):
        cond = cond[1:-1].strip()
    return cond in (b"false", b"!true")


def keep_one_branch(data: bytes) -> bytes:
    """`#if`/`#elif`/`#else`/`#endif`: keep the first branch whose condition is not literally
    false, blank the directives and the other branches (same length, same lines)."""
    if b"#" not in data or not _DIRECTIVE.search(data):
        return data
    out = bytearray(data)
    stack: list[list] = []  # per open #if: [taken?, start of the blanked span or -1]

    def blank(start: int, end: int) -> None:
        out[start:end] = out[start:end].translate(_SPACES)

    for m in _DIRECTIVE.finditer(data):
        word, rest = m.group(1), m.group(2)
        skipping_outer = any(frame[1] >= 0 for frame in stack)
        if word == b"if":
            take = not _is_false(rest) and not skipping_outer
            stack.append([take, -1 if take else m.end()])
        elif not stack:
            pass  # a stray directive: blanked below
        elif word in (b"elif", b"else"):
            frame = stack[-1]
            if frame[1] >= 0:  # this branch was skipped: blank it
                blank(frame[1], m.start())
                frame[1] = -1
            if frame[0] or (word == b"elif" and _is_false(rest)):
                frame[1] = m.end()  # an earlier branch was taken: skip this one
            else:
                frame[0] = True
        else:  # endif
            frame = stack.pop()
            if frame[1] >= 0:
                blank(frame[1], m.start())
        blank(m.start(), m.end())
    for frame in stack:  # unterminated: blank to the end
        if frame[1] >= 0:
            blank(frame[1], len(out))
    return bytes(out)


# ----------------------------------------------------------------------------- pointer casts

# tree-sitter-c-sharp 0.23 misreads a pointer cast after `=` (`q = (float*)p;` as a lambda's
# parameter list) and a dereferenced cast (`v = *(long*)p;`), which breaks the parse of the
# whole method. Unsafe code never holds what ORT030 tracks, so the stars are blanked: `(float )p`
# is a plain cast and `(long )p` a plain value, and every offset stays where it was.
_POINTER_CAST = re.compile(rb"\(\s*[A-Za-z_][\w.]*(?:\s*\*)+\s*\)")
_DEREF_CAST = re.compile(rb"(?:(?<=[=(,?:])|(?<=return))(\s*)\*(?=\s*[A-Za-z_(])")


_DEREF_STEP = re.compile(rb"(?<=[;{}])(\s*)\*(\s*[A-Za-z_]\w*)(\+\+|--)")  # `*p++ = v;`


def blank_pointer_casts(data: bytes) -> bytes:
    if b"*" not in data or b"unsafe" not in data:
        return data
    data = _DEREF_STEP.sub(lambda m: m.group(1) + b" " + m.group(2) + b"  ", data)
    data = _POINTER_CAST.sub(lambda m: m.group(0).replace(b"*", b" "), data)
    return _DEREF_CAST.sub(lambda m: m.group(1) + b" ", data)


# ----------------------------------------------------------------------------- what the grammar misreads

# tree-sitter-c-sharp 0.23 also rejects valid code in these shapes (each breaks the parse of the
# whole method): interpolated strings with escaped braces or `""` (`$"{{{x}}}"`, `$@"""{a}"""`),
# lambdas whose parameters have modifiers (`(in T src, ref T dst) => ...`), and an assignment to
# the reference a method returns (`AsVector(ref d, i) = v;`). Interpolated strings are blanked
# inside their quotes (ownership never hides in one), the modifiers are blanked, and the `=` of
# a ref-return assignment is read as an element assignment (`F[ref d, i] = v;`, same length);
# `ref partial struct` loses its `ref`.
_LAMBDA_HEAD = re.compile(rb"\((?:[^()]|\([^()]*\))*\)\s*=>")
_PARAM_MODIFIER = re.compile(rb"(?<=[(,])(\s*)(in|ref|out|scoped)(?=\s)")
_REF_ASSIGN = re.compile(rb"^([ \t]*[A-Za-z_][\w.]*\((?:[^()\n]|\([^()\n]*\))*\)[ \t]*)=(?![=>])", re.MULTILINE)


def blank_lambda_modifiers(data: bytes) -> bytes:
    if b"=>" not in data:
        return data

    def fix(m: re.Match[bytes]) -> bytes:
        return _PARAM_MODIFIER.sub(lambda k: k.group(1) + b" " * len(k.group(2)), m.group(0))
    return _LAMBDA_HEAD.sub(fix, data)


_DEREF_ASSIGN = re.compile(rb"^([ \t]*)\*(\((?:[^()\n]|\([^()\n]*\))*\)[ \t]*)=(?![=>])", re.MULTILINE)
_REF_STRUCT = re.compile(rb"\bref(?=\s+(?:partial\s+)?struct\b)")


def _as_element_access(head: bytes) -> bytes:
    """`F(ref x, i) ` -> `F[ref x, i] `: an assignment to an element is a statement the grammar reads."""
    open_at, close_at = head.index(b"("), head.rindex(b")")
    return head[:open_at] + b"[" + head[open_at + 1:close_at] + b"]" + head[close_at + 1:]


def split_ref_assignments(data: bytes) -> bytes:
    """`F(ref x) = v;` -> `F[ref x] = v;` and `*(p + i) = v;` (unsafe) -> `_[p + i] = v;`."""
    if b"ref " in data:
        data = _REF_ASSIGN.sub(lambda m: _as_element_access(m.group(1)) + b"=", data)
        data = _REF_STRUCT.sub(b"   ", data)  # `ref partial struct S`: the grammar knows `ref struct` only
    if b"unsafe" in data:
        data = _DEREF_ASSIGN.sub(lambda m: m.group(1) + b"_" + _as_element_access(m.group(2)) + b"=", data)
    return data


# Contextual keywords the grammar does not take as names where C# does: a local named
# `with` where it is declared (`var with = ...;`, `foreach (var with in ...)`, `out var with`),
# and an alias named like a native integer (`using nuint = System.UInt64;`). Every `with` that
# does not open a `with { ... }` expression is renamed `w_th` (uses too, so the name stays one
# variable), and the alias `nuin_` (its uses read as the predefined type; same length).
_WITH_DECLARED = re.compile(rb"[\w>\]?]\s+@?with\s*(?:=(?!=)|;|,|\)|\bin\b)")
_WITH_NAME = re.compile(rb"(?<![\w])with\b(?!\s*\{)")
_NATIVE_INT_ALIAS = re.compile(rb"^([ \t]*(?:global[ \t]+)?using[ \t]+)(nuint|nint)(?=\s*=)", re.MULTILINE)
# A parameter or local named `async` (`Stream s, bool async)`): the grammar reads the name where it
# is declared and as a plain argument, but not as an operand (`if (async)`, `!async`, `x = async;`),
# and such an error made the whole file unparsed. Where the file declares it, every `async` that the
# modifier cannot be (the modifier is followed by a type, a name, `(` or `delegate`, never by
# `)`, `,`, `;`, an operator or `:`) is renamed `asyn_` (same length; uses too, so it stays one name).
_ASYNC_DECLARED = re.compile(rb"[\w>\]?]\s+async\s*(?:=(?![=>])|;|,|\))")
_ASYNC_NAME = re.compile(rb"(?<![\w@.])async\b(?=\s*(?:[),;?&|:\]}.]|[!=]=|=(?!>)))")


def rename_contextual_names(data: bytes) -> bytes:
    if b"with" in data and _WITH_DECLARED.search(data):
        data = _WITH_NAME.sub(b"w_th", data)
    if b"nint" in data or b"nuint" in data:
        data = _NATIVE_INT_ALIAS.sub(lambda m: m.group(1) + m.group(2)[:-1] + b"_", data)
    if b"async" in data and _ASYNC_DECLARED.search(data):
        data = _ASYNC_NAME.sub(b"asyn_", data)
    return data


def blank_interpolated_strings(data: bytes) -> bytes:
    """Every interpolated string literal with its inside blanked: `$"a{x}b"` -> `$"      "`."""
    if b'$"' not in data and b'$@"' not in data and b'@$"' not in data:
        return data
    out = bytearray(data)
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        if c == 0x2F and i + 1 < n and data[i + 1] == 0x2F:  # // comment
            j = data.find(b"\n", i)
            i = n if j < 0 else j
            continue
        if c == 0x2F and i + 1 < n and data[i + 1] == 0x2A:  # /* comment */
            j = data.find(b"*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == 0x27:  # 'c'
            j = i + 1
            while j < n and data[j] != 0x27 and data[j] != 0x0A:
                j += 2 if data[j] == 0x5C else 1
            i = j + 1
            continue
        if c in (0x24, 0x40, 0x22):
            start, j = i, i
            while j < n and data[j] in (0x24, 0x40):
                j += 1
            if j < n and data[j] == 0x22:
                prefix = data[start:j]
                end = _string_end(data, j, b"@" in prefix, b"$" in prefix)
                if b"$" in prefix and end > j + 1:
                    run = 1  # the opening run of quotes (3 or more: a raw string, closed by as many)
                    while j + run < end and data[j + run] == 0x22 and b"@" not in prefix:
                        run += 1
                    run = run if run >= 3 else 1
                    for k in range(j + run, end - run):
                        if out[k] not in (0x0A, 0x0D):
                            out[k] = 0x20
                    if run == 1 and b"@" not in prefix and b"\n" in data[j:end]:
                        out[j - 1] = 0x40  # a hole spanning lines: `@"` keeps the blanked newlines legal
                i = end
                continue
        i += 1
    return bytes(out)


def _string_end(data: bytes, q: int, verbatim: bool, interpolated: bool) -> int:
    """The index after the string literal whose first quote is at `q`."""
    n = len(data)
    quotes = 1
    while q + quotes < n and data[q + quotes] == 0x22:
        quotes += 1
    if quotes >= 3 and not verbatim:  # a raw string: ends at the same run of quotes
        close = data.find(b'"' * quotes, q + quotes)
        return n if close < 0 else close + quotes
    if quotes == 2 and not verbatim:
        return q + 2  # ""
    j, depth = q + 1, 0
    while j < n:
        c = data[j]
        if interpolated and c == 0x7B:
            if j + 1 < n and data[j + 1] == 0x7B and depth == 0:
                j += 2
                continue
            depth += 1
        elif interpolated and c == 0x7D and depth > 0:
            depth -= 1
        elif depth > 0 and c == 0x2F and j + 1 < n and data[j + 1] in (0x2A, 0x2F):  # a comment inside a hole
            close = data.find(b"*/" if data[j + 1] == 0x2A else b"\n", j + 2)
            j = n if close < 0 else close + (2 if data[j + 1] == 0x2A else 0)
            continue
        elif depth > 0 and c == 0x22:  # a string inside a hole
            j = _string_end(data, j, False, False)
            continue
        elif depth == 0 and c == 0x5C and not verbatim:
            j += 2
            continue
        elif depth == 0 and c == 0x22:
            if verbatim and j + 1 < n and data[j + 1] == 0x22:
                j += 2
                continue
            return j + 1
        elif depth == 0 and c == 0x0A and not verbatim:
            return j
        j += 1
    return n


# ----------------------------------------------------------------------------- file-based apps

_APP_DIRECTIVE = re.compile(rb"^#[:!][^\r\n]*", re.MULTILINE)


def blank_app_directives(data: bytes) -> bytes:
    """A .NET 10 file-based app (`dotnet run app.cs`) starts with a `#!` line and `#:package`,
    `#:property`, `#:sdk` directives that the grammar does not know: the error at line 1 stopped
    the parse of the whole file. No other C# line starts with `#:` or `#!`; blanked."""
    if b"#:" not in data and not data.startswith(b"#!"):
        return data
    return _APP_DIRECTIVE.sub(lambda m: m.group(0).translate(_SPACES), data)


def prepare(data: bytes) -> bytes:
    """What tree-sitter parses: a byte-order mark and file-based app directives blanked, one branch of every `#if`, pointer
    casts without their stars, and the shapes the grammar misreads rewritten (above); the same
    offsets and lines as the file (a missing last line end is added)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = b"   " + data[3:]
    data = blank_pointer_casts(keep_one_branch(blank_app_directives(data)))
    data = split_ref_assignments(blank_lambda_modifiers(blank_interpolated_strings(data)))
    data = rename_contextual_names(data)
    return data if data.endswith(b"\n") or not data else data + b"\n"  # a last `#pragma` needs its line end


# ----------------------------------------------------------------------------- parsing

PARSE_SECONDS = 1.0  # CPU time tree-sitter may spend on a file, plus PARSE_SECONDS_PER_MB per megabyte
PARSE_SECONDS_PER_MB = 1.0


def parse_budget(size: int) -> float:
    return PARSE_SECONDS + PARSE_SECONDS_PER_MB * size / 1e6


def parse_tree(src: bytes, budget: float | None = None) -> Tree | None:
    """The syntax tree, or None when tree-sitter needs more than its CPU budget (its error
    recovery is superlinear on some malformed input); past the workers' parse memory cap,
    ParseTimeout says so (as for Java)."""
    limit = budget if budget is not None else parse_budget(len(src))
    deadline = time.process_time() + limit
    memory_cap = parse_memory_cap()
    source = chunked_input(src)  # (py-tree-sitter keeps what `read` returns: a memoryview kept the whole file)
    calls = [0]
    over = [False]

    def cancel(state: object, has_error: bool) -> bool:
        calls[0] += 1
        if calls[0] % 64 == 0 and over_memory_cap(memory_cap):
            over[0] = True
            return True
        return time.process_time() > deadline

    try:
        return Parser(CSHARP_LANGUAGE).parse(source.read, progress_callback=cancel)
    except ValueError as exc:  # "Parsing failed": cancelled
        if over[0]:
            raise memory_cap_reached() from exc
        return None
    finally:
        source.release()


def declarator_value(decl: Node) -> Node | None:
    """The initializer of `x = v` in a variable declarator (the grammar gives it no field; it
    may be the anonymous `this`)."""
    children = decl.children
    for i, c in enumerate(children):
        if not c.is_named and c.type == "=":
            rest = [k for k in children[i + 1:] if k.is_named and k.type != "comment" or k.type in ("this", "base")]
            return rest[0] if rest else None
    return None
