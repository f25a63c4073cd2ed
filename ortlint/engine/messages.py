"""The texts of trace steps and messages shared by the engine modules."""
from __future__ import annotations

from .. import ir
from ..policy import CallSpec
from .slots import CONSTRUCTOR_THROW_NOTE


def branch_note(term: ir.Branch, truth: bool) -> str:
    if term.kind == "pp":
        return f"assuming {'`' + term.text + '`'} is {'taken' if truth else 'not taken'}"
    if term.kind == "loop":
        return f"loop condition `{term.text}` is {'true' if truth else 'false'}"
    if term.kind == "case":
        return f"{'taking' if truth else 'not taking'} `{term.text}`"
    return f"assuming `{term.text}` is {'true' if truth else 'false'}"


def failure_note(callee: str, spec: CallSpec) -> str:
    if spec.returns == "status":
        return f"assuming {callee}() fails (returns a non-NULL OrtStatus*)"
    if spec.returns == "code":
        return f"assuming {callee}() fails"
    return f"assuming {callee}() fails (returns NULL)"


def ignored_status_msg(callee: str, noun: str = "OrtStatus*", releasers: list[str] | None = None) -> str:
    release = (releasers or ["ReleaseStatus"])[0]
    return (f"the {noun} returned by {callee}() is ignored; a failure status leaks and the error goes unnoticed "
            f"(check it and release it with {release}())")


def exit_phrase(exit_entry: tuple) -> str:
    line, _col, text, how = exit_entry
    if how == "lost":
        return f"when its last reference is lost at line {line}"
    if how == "overwritten":
        return f"when it is overwritten at line {line}"
    if how == "throw":
        note = CONSTRUCTOR_THROW_NOTE if text.endswith(CONSTRUCTOR_THROW_NOTE) else ""  # slots.py
        return f"when an exception leaves the function at line {line}{note}"
    return f"when returning at line {line}"


def subject(name: str, callee: str | None, label: str | None = None) -> str:
    """How a message refers to a value named `name` (`shown`): `x` in backquotes, with its kind
    when known (`x` (OrtValue)); a value only a front-end temporary held (`$3`, `$3.buf`) or
    that has no name is the result of the call that made it, or "a value"."""
    kind = f" ({label})" if label else ""
    if name and name[:1] != "$":
        return f"`{name}`{kind}"
    if callee:
        return f"the {label + ' ' if label else 'value '}returned by {callee}()"
    return f"a {label}" if label else "a value"
