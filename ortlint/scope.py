"""Which findings are outside the default scope: those about general-purpose memory (a policy
kind with `general = true`, C++ `new`/`delete`) in a file that uses none of the policies' APIs.

They are tagged `general` and dropped unless `scope = "all"` (`--scope all`), the way findings in
tests are tagged and dropped with `--exclude-tests`. Why (policy_scope.py has the long form): a
whole repository where ONNX Runtime is a small part is mostly C++ that never touches it, and its
own ownership idioms are where an ONNX Runtime checker knows least; next to ONNX Runtime's
handles, a raw `new` is part of what the checker is for. A file's scope depends on its own text
only, so the result does not depend on which other files are named.
"""
from __future__ import annotations

import functools
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from .findings import Finding
from .policy_scope import compile_uses

if TYPE_CHECKING:
    from .policy import Policy

GENERAL_TAG = "general"
SCOPES = ("onnxruntime", "all")


def tag_general_findings(findings: list[Finding], policy: "Policy", read: Callable[[str], bytes]) -> list[Finding]:
    """`findings` with those about a general kind in a file that does not use a policy's API tagged."""
    general = {k.id for k in policy.kinds.values() if k.general}
    if not general or not any(f.kind in general for f in findings):
        return findings
    pattern = compile_uses(policy.uses)

    @functools.lru_cache(maxsize=None)
    def uses_api(path: str) -> bool:
        if pattern is None:
            return True  # no policy says what using its API looks like: nothing is outside
        return pattern.search(read(path).decode("utf-8", "replace")) is not None

    return [replace(f, tags=f.tags + (GENERAL_TAG,)) if f.kind in general and GENERAL_TAG not in f.tags
            and not uses_api(f.path) else f for f in findings]


def in_scope(findings: list[Finding], scope: str) -> list[Finding]:
    """The findings a run with `scope` reports."""
    if scope == "all":
        return findings
    return [f for f in findings if GENERAL_TAG not in f.tags]
