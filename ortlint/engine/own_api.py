"""Calls to the tree's own implementation of an API entry the policy names.

A library that implements the C API itself (ONNX Runtime's own tree: `OrtApis::CreateStatus`,
`OrtApis::ReleaseStatus`, ...) calls its entries directly. Their bodies work on the bytes behind
the handle (`new uint8_t[]` in CreateStatus, `delete[]` in ReleaseStatus), so their summaries
speak of `new[]` where every other caller, and the callbacks that hand statuses to the library,
speak of the policy's kind. Mixing the two is what made a status released through the library's
own ReleaseStatus "not released": the release went by the body, the acquisition by the policy.

So such a call is the policy's entry, for acquisitions and releases alike, whatever its body
does: both ends of a pairing then speak the policy's kinds. A function is taken for the API's
entry only when nothing else could be meant: it is defined in the tree (it has a summary), its
name is qualified (`NS::Entry`, not a free function of the caller's that happens to share the
name), the bare name is a function-table entry of the policy that acquires, releases or returns a
status, the call
has that entry's argument count, and a releasing entry's body takes the argument it releases.
"""
from __future__ import annotations

from ..ir import Call
from ..policy import CallSpec, Policy
from .summaries import Summary


def own_api_entry(policy: Policy, ev: Call, summary: Summary) -> CallSpec | None:
    """The policy's table entry that the analyzed callee of `ev` implements, or None."""
    if ev.style != "plain" or "::" not in ev.callee:
        return None
    name = ev.callee.rsplit("::", 1)[1]
    spec = policy.lookup("table", name)
    if spec is None or spec.status_check is not None:
        return None
    if not (spec.acquires or spec.release is not None or spec.returns == "status"):
        return None
    arity = policy.table_arity.get(name)
    if arity is not None and len(ev.args) not in arity:
        return None
    return spec if _body_agrees(spec, summary) else None


def _body_agrees(spec: CallSpec, summary: Summary) -> bool:
    """Whether the callee's body is that entry's, as far as a summary tells: it takes the
    argument the entry releases (releases it or hands it on, on some path), and it returns a
    new object on some path when the entry returns one (a status: `OrtApis::CreateOpAttr`
    is the entry, `onnxruntime::standalone::CreateOpAttr`, returning a C++ `Status` value,
    is not). What an entry hands out through an out-argument is not asked: ONNX Runtime's
    CreateSession stores a smart pointer's object there, which no summary calls new."""
    rel = spec.release
    if rel is not None and not rel.receiver and rel.arg is not None:
        if not any(e.path == (rel.arg,) and e.what in ("release", "escape", "consume")
                   for c in summary.cases for e in c.effects):
            return False
    if spec.returns == "status" or any(a.into == "return" for a in spec.acquires):
        return any(c.ret is not None and c.ret[0] == "fresh" for c in summary.cases)
    return True
