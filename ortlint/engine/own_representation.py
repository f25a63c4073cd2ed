"""In a program that implements a policy release entry, its body's way of releasing is that kind's.

ONNX Runtime's own tree implements the C API: `OrtApis::ReleaseStatus(value)` is
`delete[] reinterpret_cast<uint8_t*>(value)` (through its `DeleteStatus`), and the library's
internal helpers release statuses the same way without naming the entry (`ToStatusAndRelease`
hands the status to a `unique_ptr` whose deleter is `DeleteStatus`). A status a plugin's callback
returned is the policy's `OrtStatus`; released by such a helper, the call's release reads as a
`delete[]`, "not a release of OrtStatus" (ORT003), although it is exactly what the program's own
`ReleaseStatus` does with it.

`own_api.py` decides, call by call, that a call of the tree's own entry releases what the entry
releases and what its body releases. This module draws the consequence for the whole program:
when the program implements the entry of kind K with a body that releases by kinds B, a release
by B of an object of kind K (or by K of an object of a kind of B) is that program's release of it,
whichever of its functions does it. Which functions implement an entry is known only once they
are analyzed (their summaries), and any function of the tree may release through the same
representation, so the mismatches are settled after the analysis, over the whole program.
A program that implements no entry keeps every mismatch: a user's helper that `delete[]`s an
`OrtStatus` the API made is still ORT003.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..findings import Finding
from ..policy import Policy
from .own_api import implemented_release_entry, release_entry_named
from .summaries import Summary


def is_entry_candidate(policy: Policy, name: str) -> bool:
    """Could the function `name` implement a policy release entry (its summary is then needed
    even when nobody in the program calls it)?"""
    return release_entry_named(policy, name) is not None


Representation = tuple[frozenset[str], frozenset[str]]  # (the entry's kinds, its body's kinds)


def representation_classes(functions: Iterable[tuple[str, Summary | None]], policy: Policy) -> list[Representation]:
    """For each analyzed function that implements a policy release entry (`own_api`), the kinds
    its entry releases and the other kinds its body releases them by."""
    classes: set[Representation] = set()
    for name, summary in functions:
        if summary is None or not is_entry_candidate(policy, name):
            continue
        entry = release_entry_named(policy, name)
        spec = implemented_release_entry(policy, name, len(summary.params), summary)
        if entry is None or entry.release is None or spec is None or spec.release is None:
            continue
        body = spec.release.kinds - entry.release.kinds
        if body:
            classes.add((entry.release.kinds, body))
    return sorted(classes, key=lambda c: (sorted(c[0]), sorted(c[1])))


def drop_own_representation_mismatches(findings: list[Finding], classes: list[Representation]) -> list[Finding]:
    """The findings without the wrong-kind releases (ORT003) that release an object by the way
    the program's own implementation of its entry releases it."""
    if not classes:
        return findings
    return [f for f in findings if not _same_representation(f, classes)]


def _same_representation(f: Finding, classes: list[Representation]) -> bool:
    """An object of the entry's kind released by nothing but the body's kinds (`delete[]` of an
    OrtStatus). Another entry whose body shares that kind (ReleaseSession is `delete`, as
    ReleaseValue is) releases a value no more than before: its own kind is not the entry's."""
    if f.rule != "ORT003" or not f.released_as or not f.kind:
        return False
    released = frozenset(f.released_as)
    return any(f.kind in entry and released <= body for entry, body in classes)
