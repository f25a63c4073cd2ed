"""Function-like macros found in a file, their arguments and their expansion: shared by the C/C++ front ends
and the macro rewriters that run before parsing."""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass


@dataclass
class Macro:
    """A function-like macro defined in the file being analyzed."""

    name: str
    params: list[str]
    body: str
    variadic: bool
    origin: str = ""  # "header:line" of a definition from another file ("policy": a [[macro]] shape)
    declares: int | None = None  # a `declare-or-return` shape: the index of its declaration argument
    defined_at: str = ""  # "path:line" of its `#define` in the analyzed tree ("" for a policy shape)


def macro_label(macro: Macro) -> str:
    """`CHECK_ORT (utils.h:12)`: a macro as a trace step names it."""
    if macro.origin == "policy":
        return f"{macro.name} (its shape in the policy)"
    if macro.origin:
        path, _, line = macro.origin.rpartition(":")
        return f"{macro.name} ({os.path.basename(path)}:{line})"
    return macro.name


def split_macro_args(text: str) -> list[str]:
    """'(a, f(b, c), "x,y")' -> ['a', 'f(b, c)', '"x,y"']. The text between the characters that
    matter (quotes, brackets, commas) is skipped by a regex, not walked one character at a time."""
    text = text.strip()
    if text.startswith("("):
        text = text[1:]
    if text.endswith(")"):
        text = text[:-1]
    args: list[str] = []
    depth = start = i = 0
    n = len(text)
    search = _ARG_SPECIAL.search
    while True:
        m = search(text, i)
        if m is None:
            break
        i = m.start()
        ch = text[i]
        if ch == '"' or ch == "'":  # to the closing quote (a backslash escapes the next character)
            i = _QUOTED[ch].match(text, i + 1).end()
            i = i + 1 if i < n and text[i] == ch else n
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:  # a comma between arguments
            args.append(text[start:i].strip())
            start = i + 1
        i += 1
    if start < n or args:
        args.append(text[start:].strip())
    return args


_ARG_SPECIAL = re.compile(r"[\"'()\[\]{},]")


_QUOTED = {q: re.compile(r"(?:[^%s\\]|\\[\s\S])*" % q) for q in "\"'"}  # up to the quote (or a last lone backslash)


def substitute_macro(macro: Macro, args: list[str]) -> str | None:
    """Expand one function-like macro invocation textually (enough for statement macros)."""
    return _substitute(tuple(macro.params), macro.variadic, macro.body, tuple(args))


# `#` not preceded by `#` (the look-behind after the `#`, not before it: a pattern that begins with
# a look-behind is tried at every position of the body, one that begins with `#` only at each `#`)
_STRINGIFY = re.compile(r"#(?<!##)\s*([A-Za-z_]\w*)")


_PASTE = re.compile(r"\s*##\s*")


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


@functools.lru_cache(maxsize=4096)  # pure; the same invocation recurs (`CHECK(status)` all over a file)
def _substitute(params: tuple[str, ...], variadic: bool, body: str, args: tuple[str, ...]) -> str | None:
    if len(args) < len(params) or (len(args) > len(params) and not variadic):
        if not (len(params) == 0 and args == ("",)):
            return None
    mapping = dict(zip(params, args))
    if variadic:
        mapping["__VA_ARGS__"] = ", ".join(args[len(params):])
    body = body.replace("\\\n", " ")

    def stringify(m: re.Match[str]) -> str:
        # `#e` of an argument written over several lines: white space becomes one blank (C11
        # 6.10.3.2), or the string literal would hold a newline and the expansion not parse
        text = " ".join(mapping.get(m.group(1), m.group(1)).split())
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    if "#" in body:
        body = _STRINGIFY.sub(lambda m: stringify(m) if m.group(1) in mapping else m.group(0), body)
    body = _parameter_pattern(tuple(mapping)).sub(lambda m: mapping[m.group(1)], body)
    if "##" in body:
        body = _paste(body)
    return body


def _paste(body: str) -> str:
    """`_PASTE.sub("", body)`: each `##` with the white space around it removed. The pattern
    begins with `\\s*`, so the regex engine tried it at every position, running through the
    rest of each white-space run each time: quadratic in the runs that align a macro's
    line continuations (a third of a millisecond for a ten-line logging macro)."""
    out: list[str] = []
    i, n = 0, len(body)
    find = body.find
    while True:
        j = find("##", i)
        if j < 0:
            out.append(body[i:])
            return "".join(out)
        k = j
        while k > i and body[k - 1].isspace():
            k -= 1
        m = j + 2
        while m < n and body[m].isspace():
            m += 1
        out.append(body[i:k])
        i = m


@functools.lru_cache(maxsize=1024)
def _parameter_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """The whole identifiers among `names` (a parameter that is no identifier never matches one)."""
    names = tuple(n for n in names if _IDENTIFIER.fullmatch(n))
    if not names:
        return re.compile(r"(?!x)x")
    # `\b(a|b)\b`, with each name's leading `\b` written as a look-behind after it (its first
    # character is a word character, so `\b` before it is "no word character before"): a
    # pattern that begins with `\b` is tried at every position of the body, one that begins
    # with the names only where one of their first characters stands (8x faster on a logging
    # macro's body)
    return re.compile("(" + "|".join(re.escape(n) + r"(?<!\w" + re.escape(n) + ")" for n in names) + r")\b")


_STRING_OR_CHAR = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
_ACCESS = re.compile(r"->|\[|\?|(?<![\d\s.])\.(?=[A-Za-z_])")
_NOT_AN_EXPRESSION = re.compile(r"[;{}#]|(?<![=!<>])=(?!=)")


def reads_memory(name: str, body: str) -> bool:
    """Whether an object-like macro's body is an expression that reads memory (`((stack) ?
    (stack)[(top)] : NULL)`, `(ctx->env)`): each use reads it again, as its expansion would,
    so a use is lowered as that expression, not as a variable that keeps its last value."""
    text = _STRING_OR_CHAR.sub('""', body.replace("\\\n", " ")).strip()
    if not text or re.search(rf"\b{re.escape(name)}\b", text):
        return False
    return _ACCESS.search(text) is not None and _NOT_AN_EXPRESSION.search(text) is None

