"""`[[csharp_api]]` policy tables: the public surface of a .NET API as the C# front end needs it.

Why: C# overloads differ by parameter types, not only by count (`InferenceSession.Run(inputs,
outputs)` writes into caller-provided outputs and returns nothing, `Run(inputs, outputNames)`
returns a collection the caller must dispose), and `var` hides the type of most locals. The
front end resolves a call to one overload and types what it returns from these tables; what a
resolved call does to ownership is still said by `[[call]]` entries. The tables are generated
from the binding's own sources by tools/gen_csharp_policy.py.

Schema (one table per class; `members` are signatures as the generator writes them):

    [[csharp_api]]
    class = "InferenceSession"          # simple name (nested: "Outer.Inner"), generic arity dropped
    namespace = "Microsoft.ML.OnnxRuntime"
    bases = ["IDisposable"]             # as written in the class header
    disposable = true                   # implements IDisposable (directly or through a base)
    members = [
      "new(string, SessionOptions)",                          # a constructor
      "Run(IReadOnlyCollection<NamedOnnxValue>) : IDisposableReadOnlyCollection<DisposableNamedOnnxValue>",
      "static CreateTensorValueFromMemory<T>(T[], long[]) : OrtValue",
      "InputNames : IReadOnlyList<string>",                   # a property or field (no parentheses)
      "Run(RunOptions, IReadOnlyCollection<string> =) : void",  # `=`: the parameter has a default
    ]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

CSHARP_API_KEYS = {"class", "namespace", "bases", "disposable", "members", "note"}


@dataclass(frozen=True)
class CsharpApiClass:
    """One class of a .NET API: where it lives, what it derives from and its public members."""

    name: str
    namespace: str = ""
    bases: tuple[str, ...] = ()
    disposable: bool = False
    members: tuple[str, ...] = ()


def load_csharp_api(tables: dict[str, CsharpApiClass], raw_tables: Any,
                    fail: Callable[[str, str, str | None, int | None], None]) -> None:
    """Validate the `[[csharp_api]]` tables of one file and add them to `tables` (by class name;
    a later file's table for the same class adds its members)."""
    if raw_tables is None:
        return
    if not isinstance(raw_tables, list):
        fail("csharp_api", "must be an array of tables: [[csharp_api]]", None, None)
    for i, raw in enumerate(raw_tables):
        key = f"csharp_api[{i}]"
        if not isinstance(raw, dict):
            fail(key, "must be a table", "csharp_api", i)
        unknown = set(raw) - CSHARP_API_KEYS
        if unknown:
            fail(f"{key}.{sorted(unknown)[0]}", f"unknown key (expected one of: {', '.join(sorted(CSHARP_API_KEYS))})",
                 "csharp_api", i)
        name = raw.get("class")
        if not isinstance(name, str) or not name:
            fail(f"{key}.class", "must be a non-empty string", "csharp_api", i)
        namespace = raw.get("namespace", "")
        if not isinstance(namespace, str):
            fail(f"{key}.namespace", "must be a string", "csharp_api", i)
        lists = {}
        for field in ("bases", "members"):
            value = raw.get(field, [])
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                fail(f"{key}.{field}", "must be a list of non-empty strings", "csharp_api", i)
            lists[field] = tuple(value)
        disposable = raw.get("disposable", False)
        if not isinstance(disposable, bool):
            fail(f"{key}.disposable", "must be true or false", "csharp_api", i)
        old = tables.get(name)
        members = (old.members if old is not None else ()) + lists["members"]
        tables[name] = CsharpApiClass(name, namespace or (old.namespace if old else ""),
                                      lists["bases"] or (old.bases if old else ()),
                                      disposable or bool(old and old.disposable), members)
