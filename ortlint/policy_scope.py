"""The `[policy]` table of a policy file: its name, description and `uses`, the patterns that tell
a source file using the API it describes.

Why: ortlint checks the release of ONNX Runtime's resources, and of the general-purpose memory
(`new`/`delete`) that code around them handles. On a whole repository where ONNX Runtime is a
small part (a search engine, a computer-vision library), most C++ files never touch it, and
their own object ownership (intrusive reference counts, objects that delete themselves, owning
containers, project smart-pointer aliases) is where an ONNX Runtime checker knows least. A kind
marked `general = true` is reported in the files that use one of the policies' APIs, whose
`uses` patterns (regular expressions) match the file's text; `--scope all` reports it everywhere.

Schema:

    [policy]
    name = "onnxruntime"
    description = "..."
    uses = ['\\bOrt[A-Z_]', '(?i:onnxruntime)']   # a file matching one of these uses this API
    scoped = true   # every kind of this file is reported only in such files, like `general` kinds

`scoped` is for a C API whose calls go through a function table: on a receiver of unknown type,
`x->GetProperty()` is named like the table entry `GetProperty`, and in a file that never names the
API (a toolkit's own `actor->GetProperty()`) the match can only be a coincidence of names.
"""
from __future__ import annotations

import re
from typing import Any, Callable

POLICY_KEYS = {"name", "description", "uses", "scoped"}


def load_uses(uses: list[str], raw: Any, fail: Callable[[str, str], None]) -> None:
    """Validate one file's `[policy]` table and add its `uses` patterns to `uses`."""
    if raw is None:
        return
    if not isinstance(raw, dict):
        fail("policy", "must be a table: [policy]")
    unknown = set(raw) - POLICY_KEYS
    if unknown:
        fail(f"policy.{sorted(unknown)[0]}", f"unknown key (expected one of: {', '.join(sorted(POLICY_KEYS))})")
    for key in ("name", "description"):
        if key in raw and not isinstance(raw[key], str):
            fail(f"policy.{key}", "must be a string")
    if not isinstance(raw.get("scoped", False), bool):
        fail("policy.scoped", "must be true or false")
    patterns = raw.get("uses", [])
    if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
        fail("policy.uses", "must be a list of non-empty strings (regular expressions)")
    for i, pattern in enumerate(patterns):
        try:
            re.compile(f"(?:{pattern})")  # as compile_uses joins it (a global `(?i)` must be `(?i:...)`)
        except re.error as exc:
            fail(f"policy.uses[{i}]", f"not a regular expression: {exc}")
        if pattern not in uses:
            uses.append(pattern)


def scoped_file(raw: Any) -> bool:
    """Whether a policy file's `[policy]` table scopes the kinds it declares (`scoped = true`)."""
    return isinstance(raw, dict) and raw.get("scoped") is True


def compile_uses(uses: list[str]) -> re.Pattern[str] | None:
    """One pattern matching any of `uses` (None: no policy names its API's marks)."""
    if not uses:
        return None
    return re.compile("|".join(f"(?:{p})" for p in uses))
