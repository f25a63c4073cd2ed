"""`[[self_owning]]` policy tables: library base classes whose objects delete themselves once
the work they were started for is done.

Why: `auto *w = new MyWorker(env, ...); w->Queue(); return promise;` is how Node-API addons run
work off the main thread. `Napi::AsyncWorker` (a library class, outside the analyzed tree) deletes
the worker after its completion callback, so the function that made it releases nothing, and
nothing in the tree shows it. Classes of the tree need no table: the C++ front end reads their
members (`delete this`, `std::unique_ptr<T> self(this)`). The methods listed hand the object over
to itself; before one of them runs (an early return), the object is still the caller's to delete.
With `on_construction = true` the object is owned from its construction by an object its
constructor registers it with (a `torch::jit::Node` built with its graph is in the graph's list of
nodes, which the graph deletes): the class itself and classes deriving from it. With
`parent_argument = true` it is owned from its construction only when built with a parent: an
argument that points to an object of a class listed the same way (or derived from one). Qt's
object trees: `new MyDialog(this)` or `new QLabel(text, parentWidget)` is deleted with its parent,
`new QWidget()` is not.

Schema:

    [[self_owning]]
    bases = ["Napi::AsyncWorker"]   # or `base`: the library classes (as written, namespace included)
    handed_over_by = ["Queue"]      # methods that start the work (the object deletes itself afterwards)
    on_construction = false         # or true: owned by another object as soon as it is built
    parent_argument = false         # or true: owned by its parent when built with one
    note = "..."
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

SELF_OWNING_KEYS = {"base", "bases", "handed_over_by", "on_construction", "parent_argument", "note"}


@dataclass(frozen=True)
class SelfOwningSpec:
    """One library base class whose objects own themselves once one of the listed methods ran."""

    base: str
    handed_over_by: frozenset[str]
    on_construction: bool = False
    parent_argument: bool = False  # owned from construction when an argument points to a parent


def load_self_owning(tables: dict[str, SelfOwningSpec], raw_tables: Any,
                     fail: Callable[[str, str, str | None, int | None], None]) -> None:
    """Validate the `[[self_owning]]` tables of one file and add them to `tables` (by base class name)."""
    if raw_tables is None:
        return
    if not isinstance(raw_tables, list):
        fail("self_owning", "must be an array of tables: [[self_owning]]", None, None)
    for i, raw in enumerate(raw_tables):
        key = f"self_owning[{i}]"
        if not isinstance(raw, dict):
            fail(key, "must be a table", "self_owning", i)
        unknown = set(raw) - SELF_OWNING_KEYS
        if unknown:
            fail(f"{key}.{sorted(unknown)[0]}",
                 f"unknown key (expected one of: {', '.join(sorted(SELF_OWNING_KEYS))})", "self_owning", i)
        names = raw.get("bases", [raw["base"]] if "base" in raw else [])
        if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
            fail(f"{key}.base", "a non-empty class name (or `bases`, a list of them) is required", "self_owning", i)
        on_construction = raw.get("on_construction", False)
        if not isinstance(on_construction, bool):
            fail(f"{key}.on_construction", "must be true or false", "self_owning", i)
        parent_argument = raw.get("parent_argument", False)
        if not isinstance(parent_argument, bool):
            fail(f"{key}.parent_argument", "must be true or false", "self_owning", i)
        methods = raw.get("handed_over_by", [])
        if not isinstance(methods, list) or not all(isinstance(m, str) and m for m in methods) \
                or not (methods or on_construction or parent_argument):
            fail(f"{key}.handed_over_by",
                 "must be a non-empty list of method names (unless on_construction or parent_argument = true)",
                 "self_owning", i)
        for name in names:
            tables[name] = SelfOwningSpec(name, frozenset(methods), on_construction, parent_argument)
