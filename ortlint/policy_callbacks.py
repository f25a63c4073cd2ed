"""`[[callback]]` policy tables: what ONNX Runtime does with the result of a function an
implementer installs in one of its structs (`alloc->Info = MyInfo;`, `ep->GetName = ...`).

Why: ONNX Runtime calls these functions, possibly many times, and either treats what they return
as borrowed (`OrtAllocator::Info`, `OrtEp::GetName`: the object must outlive the calls and is
never released by ONNX Runtime) or takes it over (`OrtAllocator::Alloc`, released later through
`Free`). An installed function that creates a new object per call for a borrowed result leaks one
per call; nothing in the implementer's own code looks wrong function by function.

Schema:

    [[callback]]
    struct = "OrtAllocator"
    fields = ["Info"]
    result = "borrowed"        # or "owned" (ONNX Runtime takes it over; `released_by` says how)
    released_by = "Free"       # optional, for "owned"
    note = "..."
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

CALLBACK_KEYS = {"struct", "fields", "result", "released_by", "note"}
RESULTS = ("borrowed", "owned")


@dataclass(frozen=True)
class CallbackSpec:
    """One function-pointer field of an implementer struct and who owns what it returns."""

    struct: str
    field: str
    result: str  # "borrowed" | "owned"
    released_by: str = ""


def load_callbacks(tables: dict[str, list[CallbackSpec]], raw_tables: Any, fail: Callable[[str, str, str | None, int | None], None]) -> None:
    """Validate the `[[callback]]` tables of one file and add them to `tables` (the policy's callbacks, by field name)."""
    if raw_tables is None:
        return
    if not isinstance(raw_tables, list):
        fail("callback", "must be an array of tables: [[callback]]", None, None)
    for i, raw in enumerate(raw_tables):
        key = f"callback[{i}]"
        if not isinstance(raw, dict):
            fail(key, "must be a table", "callback", i)
        unknown = set(raw) - CALLBACK_KEYS
        if unknown:
            fail(f"{key}.{sorted(unknown)[0]}", f"unknown key (expected one of: {', '.join(sorted(CALLBACK_KEYS))})",
                 "callback", i)
        struct = raw.get("struct")
        if not isinstance(struct, str) or not struct:
            fail(f"{key}.struct", "a non-empty struct name is required", "callback", i)
        fields = raw.get("fields")
        if not isinstance(fields, list) or not fields or not all(isinstance(f, str) and f for f in fields):
            fail(f"{key}.fields", "must be a non-empty list of field names", "callback", i)
        result = raw.get("result")
        if result not in RESULTS:
            fail(f"{key}.result", f"must be one of: {', '.join(RESULTS)}", "callback", i)
        released_by = raw.get("released_by", "")
        if not isinstance(released_by, str):
            fail(f"{key}.released_by", "must be a field name", "callback", i)
        for name in fields:
            tables.setdefault(name, []).append(CallbackSpec(struct, name, result, released_by))
