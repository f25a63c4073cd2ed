"""Which declared types are unsigned integers (`size_t`, `unsigned int`, `uint32_t`).

An unsigned integer is never below 0, so `n > 0` failing leaves only `n == 0`: a size a
callee stored on success (a summary's "stores a value other than 0") then decides a caller's
`if (ok && size > 0)`. C and C++ spell these types the same way; a front end asks here with
the declared type's text and records the local (ir.Function.unsigned)."""
from __future__ import annotations

import re

# The C and C++ standard library's unsigned integer typedefs (<stddef.h>, <stdint.h>)
_UNSIGNED_TYPEDEFS = frozenset(
    ["size_t", "uintptr_t", "uintmax_t"]
    + [f"uint{n}_t" for n in (8, 16, 32, 64)]
    + [f"uint_least{n}_t" for n in (8, 16, 32, 64)]
    + [f"uint_fast{n}_t" for n in (8, 16, 32, 64)]
)
_QUALIFIERS = frozenset({"const", "volatile", "static", "register", "constexpr", "inline", "thread_local", "extern"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9:]*")


def is_unsigned_integer(type_text: str) -> bool:
    """Whether `type_text` (a declaration's type, without its declarator) is an unsigned
    integer type: one with the `unsigned` keyword, or a standard unsigned typedef, possibly
    `std::`-qualified and cv-qualified. Pointers, references, arrays and templates are not
    (their spelling holds `*`, `&`, `[` or `<`)."""
    if any(mark in type_text for mark in "*&[<("):
        return False
    words = [w for w in _WORD.findall(type_text) if w not in _QUALIFIERS]
    if "unsigned" in words:
        return True
    if len(words) != 1:
        return False
    name = words[0]
    for prefix in ("::std::", "std::", "::"):
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    return name in _UNSIGNED_TYPEDEFS
