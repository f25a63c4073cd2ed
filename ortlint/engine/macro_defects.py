"""One finding per macro defect.

A macro defined in the analyzed tree can itself be wrong: `#define CHECK(x) if ((x) != NULL) return -1;`
drops the status it tests in every expansion. Reported per expansion, one defect becomes a hundred
findings (WinML's `RETURN_HR_IF_NOT_OK_MSG`: 149) that a user fixes with one edit. When a finding's
acquiring call comes from a macro expansion and every path that loses the resource ends inside that
same expansion, nothing at the call site takes part in the defect: it is the macro's. Such findings
are folded into one, at the macro's `#define`, with every expansion as a related location.

A leak that leaves the expansion (the macro hands a handle to its caller, who forgets it) depends on
the call site and stays where it is. Macros described by the policy (`[[macro]]` shapes) and macros
libclang expanded have no definition in the tree and are never folded.
"""
from __future__ import annotations

import os

from ..findings import Finding, Step

FOLDED_RULES = ("ORT001", "ORT002", "ORT003", "ORT004", "ORT005", "ORT006", "ORT007")


def _within(step: Step, f: Finding) -> bool:
    """Is `step` inside the source range of `f` (the macro's invocation)?"""
    return step.path == f.path and (f.line, f.col) <= (step.line, step.col) <= (f.end_line, f.end_col)


def is_macro_defect(f: Finding) -> bool:
    """The finding's resource is made and lost inside one expansion of a macro the tree defines."""
    return bool(f.macro_at) and f.rule in FOLDED_RULES and all(_within(s, f) for s in f.related)


def _definition(macro_at: str) -> tuple[str, int]:
    path, _, line = macro_at.rpartition(":")
    return path, int(line) if line.isdigit() else 1


def _name(label: str) -> str:
    """`CHECK_ORT (utils.h:12)` -> `CHECK_ORT` (a trace step's label of the macro)."""
    return label.split(" ", 1)[0]


def _fold(group: list[Finding]) -> Finding:
    first = group[0]
    path, line = _definition(first.macro_at)
    name = _name(first.macro)
    functions = len({(f.path, f.function) for f in group})
    count = len(group)
    where = (f"its expansion in {first.function}()" if count == 1 else
             f"each of its {count} expansions ({functions} function{'s' if functions != 1 else ''}, listed)")
    example = f"{os.path.basename(first.path)}:{first.line}"
    message = f"macro {name} has this defect in {where}; at {example}: {first.message}"
    related = tuple(Step(f.path, f.line, f.col, f"expanded in {f.function}()") for f in group)
    trace = (Step(path, line, 1, f"macro {name} is defined here"),) + tuple(
        s for s in first.trace if not s.message.startswith("in the expansion of "))
    return Finding(first.rule, path, line, 1, line, 1, message, name, trace, related, first.level,
                   anchor=f"macro:{name}:{first.rule}", macro=first.macro, macro_at=first.macro_at, expansions=count,
                   kind=first.kind)


def fold_macro_defects(findings: list[Finding]) -> list[Finding]:
    """Findings with each macro defect reported once, at the macro's definition; the others as they are."""
    groups: dict[tuple[str, str, str], list[Finding]] = {}
    kept: list[Finding] = []
    for f in findings:
        if is_macro_defect(f):
            groups.setdefault((f.rule, f.macro_at, _name(f.macro)), []).append(f)
        else:
            kept.append(f)
    for group in groups.values():
        group.sort(key=Finding.sort_key)
        kept.append(_fold(group))
    return kept
