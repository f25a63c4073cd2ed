"""`[[guard]]` policy tables: classes that hold an `OrtStatus*` (or a similar status handle) and
answer "did the call succeed?" without the analyzer seeing their bodies.

Why: `Ort::Status st{api->SessionGetInputTypeInfo(s, 0, &ti)}; if (!st.IsOK()) return;` is the
most frequent C++ idiom around the C API. The `Ort::Status` constructor adopts the status (RAII),
so the status itself never leaks; but unless the analyzer knows that `IsOK()` is "the held status
is NULL", the failure branch (where `ti` was never written) looks like a path that leaks `ti`.
A guard table ties the test to the call's success. Classes whose bodies are visible need no
table: the C++ front end lowers their constructor, destructor and `operator bool` in place.

Schema (all keys but `type` optional):

    [[guard]]
    type = "Ort::Status"          # the class (as written after namespace resolution)
    ok_when_null = ["IsOK"]       # methods true exactly when the held status is NULL
    failed_when_nonnull = []      # methods true exactly when it is not NULL
    bool_is_ok = false            # `if (g)` means success (true) or failure (false)
    note = "..."
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

GUARD_KEYS = {"type", "types", "ok_when_null", "failed_when_nonnull", "bool_is_ok", "note"}
# The pseudo-member of a guard object that holds the adopted status (never a C++ identifier).
HELD_FIELD = "$held"


@dataclass(frozen=True)
class GuardSpec:
    """One status-holding class: which of its tests mean success."""

    type: str
    ok_when_null: frozenset[str] = frozenset()
    failed_when_nonnull: frozenset[str] = frozenset()
    bool_is_ok: bool | None = None

    def test_of(self, method: str) -> str | None:
        """"==" when `method()` is true on a NULL (successful) status, "!=" when on a failure, None otherwise."""
        if method in self.ok_when_null:
            return "=="
        if method in self.failed_when_nonnull:
            return "!="
        return None


def load_guards(tables: dict[str, GuardSpec], raw_tables: Any, fail: Callable[[str, str, str | None, int | None], None]) -> None:
    """Validate the `[[guard]]` tables of one file and add them to `tables` (the policy's guards, by class name)."""
    if raw_tables is None:
        return
    if not isinstance(raw_tables, list):
        fail("guard", "must be an array of tables: [[guard]]", None, None)
    for i, raw in enumerate(raw_tables):
        key = f"guard[{i}]"
        if not isinstance(raw, dict):
            fail(key, "must be a table", "guard", i)
        unknown = set(raw) - GUARD_KEYS
        if unknown:
            fail(f"{key}.{sorted(unknown)[0]}", f"unknown key (expected one of: {', '.join(sorted(GUARD_KEYS))})", "guard", i)
        names = raw.get("types", [raw["type"]] if "type" in raw else [])
        if not names or not all(isinstance(n, str) and n for n in names):
            fail(f"{key}.type", "a non-empty class name (or `types`, a list of them) is required", "guard", i)
        lists = {}
        for name in ("ok_when_null", "failed_when_nonnull"):
            value = raw.get(name, [])
            if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
                fail(f"{key}.{name}", "must be a list of method names", "guard", i)
            lists[name] = frozenset(value)
        bool_is_ok = raw.get("bool_is_ok")
        if bool_is_ok is not None and not isinstance(bool_is_ok, bool):
            fail(f"{key}.bool_is_ok", "must be true or false", "guard", i)
        for name in names:
            tables[name] = GuardSpec(name, lists["ok_when_null"], lists["failed_when_nonnull"], bool_is_ok)


# `[status_object]`: the names by which value classes of the analyzed tree say "did it succeed?".
STATUS_OBJECT_KEYS = {"ok_tests", "codes", "note"}


@dataclass(frozen=True)
class StatusObjectSpec:
    """Status classes returned by value (`Status f(...)`, `OrtxStatus g(...)`): a class of the tree
    that declares one of `ok_tests` is one. Its object is read as an integer status, 0 when it
    succeeded: `x.IsOK()` is `x == 0`, `x.Code()` is `x` and a `return {};` / `return T();` of it is 0.

    Why: a helper that writes its out-parameter only on success and says so through such an
    object (`if (st.IsOk()) *out = p.release(); return st.Code();`, `return {};` after the writes,
    `return Status::OK();`) has a success case its caller's `if (!st.IsOk()) return st;` can tell
    from its failures only if the object has a value the engine can compare."""

    ok_tests: frozenset[str] = frozenset()
    codes: frozenset[str] = frozenset()


def load_status_objects(current: StatusObjectSpec, raw: Any,
                        fail: Callable[[str, str, str | None, int | None], None]) -> StatusObjectSpec:
    """Validate one file's `[status_object]` table; its names are added to those of earlier files."""
    if raw is None:
        return current
    if not isinstance(raw, dict):
        fail("status_object", "must be a table: [status_object]", None, None)
    unknown = set(raw) - STATUS_OBJECT_KEYS
    if unknown:
        fail(f"status_object.{sorted(unknown)[0]}",
             f"unknown key (expected one of: {', '.join(sorted(STATUS_OBJECT_KEYS))})", None, None)
    lists = {}
    for name in ("ok_tests", "codes"):
        value = raw.get(name, [])
        if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
            fail(f"status_object.{name}", "must be a list of method names", None, None)
        lists[name] = frozenset(value)
    return StatusObjectSpec(current.ok_tests | lists["ok_tests"], current.codes | lists["codes"])
