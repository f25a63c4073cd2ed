"""ORT004 at the call: an `OrtStatus*` result dropped by an expression statement.

Two fixes: release it where it is dropped (`api->ReleaseStatus(api->DisableMemPattern(o));`,
safe: the program goes on as before and the status no longer leaks), and, when the function
itself returns a status, return it to the caller (`{ OrtStatus *status = ...; if (status)
return status; }`: the function now stops on that failure, which is a change of behaviour,
so it is offered as an unsafe fix and listed first, as the issue's preferred form). Not when a
release or a label follows the statement: the early return would skip that cleanup and leak what
it releases (a fix that trades one finding for another)."""
from __future__ import annotations

import re

from tree_sitter import Node

from ..findings import Finding, Fix
from .source import FixSource
from .syntax import (call_parts, calls_named, declared_type, fresh_name, function_at, identifiers, node_at, unwrap_up,
                     walk)

_STATUS_TYPE = re.compile(r"\bOrtStatus\b\s*\*|\bOrtStatusPtr\b|\bStatus\b\s*\*")


def status_fixes(src: FixSource, finding: Finding) -> list[Fix]:
    facts = finding.facts
    if facts is None or not facts.release:
        return []
    offset = src.offset(finding.line, finding.col)
    call = node_at(src, offset, ("call_expression",))
    if call is None:
        return []
    expr = unwrap_up(call)
    statement = expr.parent
    function = function_at(src, offset)
    parts = call_parts(src, call)
    if statement is None or statement.type != "expression_statement" or function is None or parts is None:
        return []
    prefix = parts[0] or _release_prefix(src, function, facts.release)
    if prefix is None:
        return []
    call_text = src.text(call)
    fixes = []
    returned = declared_type(src, function)
    if _STATUS_TYPE.search(returned) and not _cleanup_follows(src, function, statement):
        name = fresh_name(identifiers(src, function), "status")
        declaration = returned.rstrip() if returned.rstrip().endswith("*") else returned.rstrip() + " "
        text = f"{{ {declaration}{name} = {call_text}; if ({name}) return {name}; }}"
        fixes.append(Fix(f"Return the status of {parts[1]}() to the caller",
                         (src.edit(statement.start_byte, statement.end_byte, text),), safe=False))
    fixes.append(Fix(f"Release the status of {parts[1]}() with {facts.release}()",
                     (src.edit(expr.start_byte, expr.end_byte, f"{prefix}{facts.release}({call_text})"),)))
    return fixes


def _cleanup_follows(src: FixSource, function: Node, statement: Node) -> bool:
    """A release or a label after `statement`: returning there would skip the cleanup that
    releases what the function holds (a new leak), so the return fix is not offered."""
    for node in walk(function):
        if node.start_byte < statement.end_byte:
            continue
        if node.type == "labeled_statement":
            return True
        if node.type == "call_expression":
            parts = call_parts(src, node)
            if parts is None:
                continue
            spec = src.policy.lookup("table" if parts[0] else "plain", parts[1])
            if spec is not None and spec.release is not None:
                return True
    return False


def _release_prefix(src: FixSource, function: object, release: str) -> str | None:
    """A call written without a table (`OrtSessionOptionsAppendExecutionProvider_CUDA(o, 0)`):
    the table the function already releases statuses through, if any."""
    for _node, prefix, _args in calls_named(src, function, release):  # type: ignore[arg-type]
        return prefix
    return None
