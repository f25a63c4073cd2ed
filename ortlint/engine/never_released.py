"""Kinds a program keeps for good on purpose: leaks of them count only where it releases them.

Some resources are released so rarely on purpose that a program which never calls their release
anywhere is telling us it keeps them. A JNI thread attachment is one (`paired_in_program = true` on
`jni.AttachedThread`): the JNI specification says that "trying to attach a thread that is already
attached is a no-op", so a program whose callbacks run on threads Java called into uses
`AttachCurrentThread` only to get their `JNIEnv`, and must never detach them (that would detach a
Java thread); a program that attaches its own threads for their whole life detaches them nowhere
either. In both, an attach "not released" is no defect of the function: the program has no
`DetachCurrentThread` for it to miss. Once the program detaches somewhere, attachment is paired
in it and every attach that skips its detach on some path is reported as before.

The question is about the whole analyzed program, so it is answered after every function's
analysis, from per-file facts kept with each file's record (`SlotFacts.paired_releases`): the
`paired_in_program` kinds some call of the file releases.
"""
from __future__ import annotations

from collections.abc import Iterable

from .. import ir
from ..findings import Finding
from ..policy import Policy


def released_paired_kinds(fn: ir.Function, policy: Policy) -> set[str]:
    """The `paired_in_program` kinds that some call of `fn` releases (by the policy's entries)."""
    names = policy.paired_releases()
    out: set[str] = set()
    if not names:
        return out
    for block in fn.blocks:
        for ev in block.events:
            if isinstance(ev, ir.Call) and ev.callee in names:
                spec = policy.lookup(ev.style, ev.callee)
                if spec is not None and spec.release is not None:
                    out |= spec.release.kinds & names[ev.callee]
    return out


def never_released(released: Iterable[set[str]], policy: Policy) -> frozenset[str]:
    """The `paired_in_program` kinds that no file of the program releases (`released`: each
    file's released paired kinds)."""
    paired = {k for k, kind in policy.kinds.items() if kind.paired_in_program}
    for kinds in released:
        paired -= kinds
        if not paired:
            break
    return frozenset(paired)


def drop_unpaired_leaks(findings: list[Finding], unpaired: frozenset[str]) -> list[Finding]:
    """The findings without the leaks of kinds the program never releases anywhere."""
    if not unpaired:
        return findings
    return [f for f in findings if not (f.rule == "ORT001" and f.kind in unpaired)]
