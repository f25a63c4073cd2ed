"""Methods that return their own object: `OrtNode* ToExternal() { return static_cast<OrtNode*>(this); }`.

A C++ method call of a known class carries no receiver in the IR (its function is called like a
free one), so what the method returns is not known to be the object it was called on:
`*node = n.release()->ToExternal();` looked like a released object whose last reference is lost.
The methods found here take no argument and whose whole body is `return this;` (through a cast),
written in a class body or in the body of a macro a class body invokes (ONNX Runtime defines
`ToExternal()` so); a call of one is the receiver's pointer, with no effect of its own.
"""
from __future__ import annotations

import functools
import re

# `name() [const] [noexcept] [override] { return <this, or a cast of it>; }`
_RETURNS_THIS = re.compile(
    r"\b([A-Za-z_]\w*)\s*\(\s*(?:void\s*)?\)\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?(?:final\s*)?"
    r"\{\s*return\s+(?:(?:static|reinterpret|const|dynamic)_cast\s*<[^;{}()]*>\s*\(\s*this\s*\)"
    r"|\(\s*[\w:\s\*]+\*\s*\)\s*this|\(\s*this\s*\)|this)\s*;\s*\}")

# a member that is a macro invocation: `DEFINE_TO_EXTERNAL(OrtNode, Node)` (with or without `;`)
_MACRO_USE = re.compile(r"\s*([A-Z_][A-Z0-9_]*)\s*\(")


@functools.lru_cache(maxsize=4096)
def methods_returning_this(text: str) -> frozenset[str]:
    """Names of the argument-less methods defined in `text` whose body only returns `this`
    (cached: every file including a header resolves the same macro bodies)."""
    if "this" not in text:
        return frozenset()
    return frozenset({m.group(1) for m in _RETURNS_THIS.finditer(text) if m.group(1) not in ("return", "if", "while")})


def macro_use(text: str) -> str | None:
    """The macro a class member invokes (an all-caps name followed by `(`), if it is one."""
    found = _MACRO_USE.match(text)
    return found.group(1) if found is not None else None
