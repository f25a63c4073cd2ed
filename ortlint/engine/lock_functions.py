"""Tokens a function hands on or keeps: lock functions, and thread attachments it never undoes.

A function that returns what it acquired hands it to its caller, who must release it. A token has
no value to return (`MonitorEnter(env, obj)` locks `obj`'s monitor), but a function can hand one
on all the same: when it acquires the token on an object its caller gave it (a parameter) and then
does nothing but return, acquiring is the whole point of it. That is the shape of a lock function
with its unlock sibling (`Java_Panel_lock` enters the monitor, `Java_Panel_unlock` exits it, and
Java pairs the calls), and its caller is the one to release. A function that goes on working
while it holds the token (any call after the acquisition, on some path) uses the lock itself, and
must release it: an early return that skips its `MonitorExit` is still a leak.

Some tokens belong to the thread rather than to the function that takes them (`kept_unless_released_here`
on the kind): a JNI attachment. "Trying to attach a thread that is already attached is a no-op"
(JNI specification), so a function that never calls `DetachCurrentThread` uses
`AttachCurrentThread` to get the `JNIEnv` of a thread Java called into (detaching it would break
the Java thread), or attaches its thread for life, to be detached at thread exit elsewhere. Only a
function that detaches on some path pairs the attachment itself, and then it must detach on every
path (an early return that skips the detach is still a leak).
"""
from __future__ import annotations

from typing import Callable

from .. import ir
from ..policy import Policy


def acquired_last(ev: ir.Call, block: ir.Block, blocks: dict[int, ir.Block],
                  succs: Callable[[int], list[int]]) -> bool:
    """Is `ev` (in `block`) followed by no call on any path to the function's exits?"""
    after = False
    for other in block.events:
        if other is ev:
            after = True
        elif after and isinstance(other, ir.Call):
            return False
    if not after:
        return False  # a call the front end made up (a destructor's): not one the function writes
    seen = {block.id}
    todo = list(succs(block.id))
    while todo:
        bid = todo.pop()
        if bid in seen:
            continue
        seen.add(bid)
        if any(isinstance(other, ir.Call) for other in blocks[bid].events):
            return False
        todo.extend(succs(bid))
    return True


def releases_kind(fn: ir.Function, kind: str, policy: Policy) -> bool:
    """Does some call of `fn` release tokens of `kind` (by the policy's entries)?"""
    for block in fn.blocks:
        for ev in block.events:
            if isinstance(ev, ir.Call):
                spec = policy.lookup(ev.style, ev.callee)
                if spec is not None and spec.release is not None and kind in spec.release.kinds:
                    return True
    return False


def caller_object(owner: ir.Expr, params: dict[str, int]) -> bool:
    """Is the token's owner a parameter: an object the caller can name to release it?"""
    return isinstance(owner, ir.Var) and owner.name in params
