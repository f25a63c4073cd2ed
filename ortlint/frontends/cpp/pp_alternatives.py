"""One destructor for an object that each `#if` alternative declares:
`#if _WIN32  auto s = Ptr(_strdup(x));  #else  auto s = Ptr(strdup(x));  #endif`. Only one
alternative is compiled, and both bind the same local (each path through the `#if` holds one
object there), so the block's end destroys it once, not once per alternative (which read as a
double release on every path)."""
from __future__ import annotations

from typing import Callable

from ...ir import Loc


class CppAlternativeDeclarations:
    """A cleanup registered again for a name the block already destroys is the same object."""

    def register_cleanup(self, name: str, emit: Callable[[Loc], None], loc: Loc) -> None:
        if self.destroyed_in_block(name):
            return
        super().register_cleanup(name, emit, loc)  # type: ignore[misc]

    def destroyed_in_block(self, name: str) -> bool:
        """Does the current block already run a destructor for `name`? (C++ declares a name once
        per block: a second one comes from another preprocessor alternative.)"""
        scope = self.scopes[-1] if self.scopes else None
        return scope is not None and any(registered == name for registered, _ in scope.cleanups)
