"""Calls to the tree's own implementation of a release entry the policy names.

A library that implements the C API itself (ONNX Runtime's own tree: `OrtApis::ReleaseStatus`,
`OrtApis::ReleaseCUDAProviderOptions`, ...) calls its entries directly. Their bodies work on the
bytes behind the handle (`delete[]` of a status, which `CreateStatus` made with `new uint8_t[]`),
so their summaries release the body's kind (`new[]`), while a status the library got from a
plugin's callback, or from a table call, is the policy's OrtStatus: released through the
library's own ReleaseStatus, it was "not released" (ORT003).

Such a call releases what the entry releases *and* what its body releases. Both are right in that
tree: the policy's kind is what the API hands out, the body's kind is how the library makes it
(its own `OrtApis::CreateStatus`, `new[]` by its body, pairs with it as before). Taking the policy
alone for the release (or for both ends) is not enough: the library's internal helpers make and
free the same objects by their representation (`ToOrtStatus` with `new[]`, `ToStatusAndRelease`
with `delete[]`), so a status from `OrtApis::CreateStatus` taken as the policy's OrtStatus is
"not released" by them. Acquisitions therefore stay the body's.

A function is taken for the entry only when nothing else could be meant: it is defined in the
tree (it has a summary), its name is qualified (`NS::Entry`, not a free function of the caller's
that happens to share the name), the bare name is a function-table entry of the policy that
releases an argument and hands nothing out, the call has that entry's argument count, and the body releases that
argument.
"""
from __future__ import annotations

from dataclasses import replace

from ..ir import Call
from ..policy import CallSpec, Policy
from .summaries import Summary


def own_release_entry(policy: Policy, ev: Call, summary: Summary) -> CallSpec | None:
    """The policy's release entry that the analyzed callee of `ev` implements, releasing also
    what its body releases; None when the call is not such an entry."""
    if ev.style != "plain":
        return None
    return implemented_release_entry(policy, ev.callee, len(ev.args), summary)


def release_entry_named(policy: Policy, name: str) -> CallSpec | None:
    """The policy's table release entry whose name the qualified function name `name` ends with
    (`OrtApis::ReleaseStatus`), when it releases an argument and hands nothing out; else None."""
    if "::" not in name:
        return None
    spec = policy.lookup("table", name.rsplit("::", 1)[1])
    if spec is None or spec.status_check is not None or spec.acquires or spec.returns == "status":
        return None  # an entry that also hands something out: its body says what, and of which kind
    rel = spec.release
    if rel is None or rel.receiver or rel.arg is None:
        return None
    return spec


def implemented_release_entry(policy: Policy, name: str, nargs: int, summary: Summary) -> CallSpec | None:
    """The release entry the function `name` (analyzed: `summary`), given `nargs` arguments,
    implements, releasing also what its body releases; None when it implements none."""
    spec = release_entry_named(policy, name)
    if spec is None or spec.release is None or spec.release.arg is None:
        return None
    arity = policy.table_arity.get(name.rsplit("::", 1)[1])
    if arity is not None and nargs not in arity:
        return None
    body = _body_kinds(policy, summary, spec.release.arg)
    if body is None:
        return None
    return replace(spec, release=replace(spec.release, kinds=spec.release.kinds | body))


def _body_kinds(policy: Policy, summary: Summary, arg: int) -> frozenset[str] | None:
    """The kinds the body's releases of argument `arg` release (the policy's specs of the calls
    that release it inside: `delete[]`), or None when no path of the body releases it."""
    names = {e.relby for c in summary.cases for e in c.effects if e.what == "release" and e.path == (arg,)}
    if not names:
        return None
    kinds: set[str] = set()
    for name in names:
        for style in ("table", "plain", "method", "any"):
            spec = policy.lookup(style, name) if name else None
            if spec is not None and spec.release is not None:
                kinds |= spec.release.kinds
                break
    return frozenset(kinds)
