"""One destructor for an object that each `#if` alternative declares:
`#if _WIN32  auto s = Ptr(_strdup(x));  #else  auto s = Ptr(strdup(x));  #endif`. Only one
alternative is compiled, and both bind the same local (each path through the `#if` holds one
object there), so the block's end destroys it once, not once per alternative (which read as a
double release on every path)."""
from __future__ import annotations

from typing import Callable

from ...ir import Loc
from .scopes import Scope


class CppAlternativeDeclarations:
    """A destructor an earlier alternative of the same `#if` registered in the same block is not
    registered again by a later one."""

    def pp_names(self) -> object:
        """At the start of an `#if` (and after its first alternative): where the block's
        destructors stand, with the declarations' own state."""
        scope = self.scopes[-1] if self.scopes else None
        return scope, len(scope.cleanups) if scope is not None else 0, super().pp_names()  # type: ignore[misc]

    def pp_restore_names(self, saved: object) -> None:
        """Before another alternative: the names the earlier ones gave destructors in this block."""
        scope, count, inner = saved  # type: ignore[misc]
        registered = {name for name, _ in scope.cleanups[count:]} if scope is not None else set()
        self.alternative_cleanups.append((scope, registered))
        super().pp_restore_names(inner)  # type: ignore[misc]

    def pp_merge_names(self, other: object) -> None:
        if self.alternative_cleanups:
            self.alternative_cleanups.pop()
        super().pp_merge_names(other[2])  # type: ignore[index, misc]

    @property
    def alternative_cleanups(self) -> list[tuple[Scope | None, set[str]]]:
        found = self.__dict__.get("_alternative_cleanups")
        if found is None:
            found = self.__dict__["_alternative_cleanups"] = []
        return found

    def register_cleanup(self, name: str, emit: Callable[[Loc], None], loc: Loc) -> None:
        if self.destroyed_by_other_alternative(name):
            return
        super().register_cleanup(name, emit, loc)  # type: ignore[misc]

    def destroyed_by_other_alternative(self, name: str) -> bool:
        scope = self.scopes[-1] if self.scopes else None
        stack = self.__dict__.get("_alternative_cleanups")
        return bool(stack) and scope is not None and any(s is scope and name in names for s, names in stack)
