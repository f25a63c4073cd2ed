"""ORT001: a release missing on some exits (an early return, a `goto` past the cleanup, a JNI
`Release<Type>ArrayElements` missing before a return).

Whichever the function already does: when it releases the resource at a cleanup label and the
leaking path takes a `goto` to a label below that release, the goto is pointed at the label
that releases it; otherwise the release is inserted before each leaking return. The inserted
call is the function's own release of that variable when it has one (copied as written),
else one written from the policy: the releasing call through the table of the acquiring call,
the owner as the acquisition names it (JNI: the array, with `JNI_ABORT`: the elements are freed
without copying back, as the leaking path never copied them either).

Safe: a retargeted goto whose new rung only releases; an insertion on a path that passed the
acquisition (no label between them); a NULL-guarded insertion when the variable starts NULL.
Anything else is offered as unsafe."""
from __future__ import annotations

import re

from tree_sitter import Node

from ..findings import Finding, Fix, FixFacts
from .source import FixSource
from .syntax import (call_parts, calls_named, declared_type, enclosing, fresh_name, function_at, gotos, identifiers,
                     labels, node_at, receiver_is_self_arg, same_expr, statement_of, walk)

_NULL = re.compile(r"^(NULL|nullptr|0|\(\s*\w+\s*\*\s*\)\s*0)$")
_JNI_ELEMENTS = re.compile(r"^Release(Boolean|Byte|Char|Short|Int|Long|Float|Double)ArrayElements$")
_CPP_CASTS = ("reinterpret_cast", "static_cast", "const_cast")


def leak_fixes(src: FixSource, finding: Finding) -> list[Fix]:
    facts = finding.facts
    if facts is None or not facts.exits or any(how != "return" for how in facts.exits):
        return []
    at = src.offset(finding.line, finding.col)
    function = function_at(src, at)
    acquire = node_at(src, at, ("call_expression",))
    if function is None or acquire is None:
        return []
    existing = _existing_releases(src, function, facts, after=acquire.end_byte)
    if existing:
        fix = _retarget(src, finding, function, existing[0], acquire)
        if fix is not None:
            return [fix]
    release = _copied(src, existing[0]) if existing else _written(src, facts, acquire)
    if release is None:
        return []
    return _insertions(src, finding, function, acquire, release, copied=bool(existing))


def _existing_releases(src: FixSource, function: Node, facts: FixFacts, after: int) -> list[Node]:
    """The function's calls of the releasing function on this variable (and owner) that do
    release (not `JNI_COMMIT`), after the acquisition."""
    found = []
    for call, prefix, args in calls_named(src, function, facts.release):
        if call.start_byte < after:
            continue
        shift = 1 if receiver_is_self_arg(prefix) else 0
        if len(args) < shift + facts.arity:
            continue
        if not same_expr(args[shift + facts.release_arg], facts.var):
            continue
        if facts.owner_arg >= 0 and facts.owner and not same_expr(args[shift + facts.owner_arg], facts.owner):
            continue
        if any(a.strip() == "JNI_COMMIT" for a in args[shift:]):
            continue
        found.append(call)
    return found


def _copied(src: FixSource, call: Node) -> str:
    return src.text(call) + ";"


def _written(src: FixSource, facts: FixFacts, acquire: Node) -> str | None:
    parts = call_parts(src, acquire)
    if parts is None:
        return None
    prefix, _name, acquire_args = parts
    spec_table = src.policy.lookup("table", facts.release)
    spec_plain = src.policy.lookup("plain", facts.release)
    if spec_table is not None and spec_table.release is not None:
        if not prefix:
            return None
    elif spec_plain is not None and spec_plain.release is not None:
        prefix = ""
    else:
        return None
    var = _as_acquired(src, facts.release, facts.var, acquire)
    if var is None:
        return None
    args: list[str | None] = [None] * facts.arity
    args[facts.release_arg] = var
    if facts.owner_arg >= 0:
        if not facts.owner:
            return None
        args[facts.owner_arg] = facts.owner
    rest = [i for i, a in enumerate(args) if a is None]
    if len(rest) > 1 or (rest and not facts.release.endswith("ArrayElements")):
        return None
    for i in rest:
        args[i] = "JNI_ABORT"
    if prefix and receiver_is_self_arg(prefix):
        args.insert(0, acquire_args[0] if acquire_args else None)
    if any(a is None for a in args):
        return None
    return f"{prefix}{facts.release}({', '.join(a for a in args if a is not None)});"


def _as_acquired(src: FixSource, release: str, var: str, acquire: Node) -> str | None:
    """`var` as the release takes it. When the acquired value was converted before it was stored
    (`const int64_t *dims = reinterpret_cast<int64_t *>(env->GetLongArrayElements(a, 0))`), the
    variable's type is not the release's parameter type: a JNI element release gets the
    variable cast back to its element pointer (`(jlong *)dims`), `free` takes it as `void *`
    (`str = (char *)malloc(n)`: a `const` one too); any other release, whose parameter type the
    policy does not spell, gets no fix."""
    if not _converted(src, acquire):
        return var
    element = _JNI_ELEMENTS.match(release)
    if element:
        return f"(j{element.group(1).lower()} *){var}"
    return f"(void *){var}" if release == "free" else None


def _converted(src: FixSource, acquire: Node) -> bool:
    """The acquiring call's value goes through a cast before it is stored."""
    node = acquire.parent
    while node is not None and node.type == "parenthesized_expression":
        node = node.parent
    if node is None:
        return False
    if node.type == "cast_expression":
        return True
    call = node.parent if node.type == "argument_list" else None
    function = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
    return function is not None and function.type == "template_function" and \
        src.text(function).split("<", 1)[0].strip() in _CPP_CASTS


def _retarget(src: FixSource, finding: Finding, function: Node, release: Node, acquire: Node) -> Fix | None:
    """The leaking path takes `goto L` past the rung that releases the resource: `goto` the
    label of that rung instead."""
    statement = statement_of(release)
    rung = _rung_label(src, function, statement) if statement is not None else None
    if rung is None:
        return None
    rung_name, rung_node = rung
    on_path = {step.line for step in finding.trace}
    acquired = statement_of(acquire)
    after = acquired.end_byte if acquired is not None else acquire.end_byte  # not the acquisition's own failure
    by_name = labels(src, function)
    edits = []
    for goto, target in gotos(src, function):
        label_node = by_name.get(target)
        if label_node is None or goto.start_byte < after or label_node.start_byte <= release.start_byte:
            continue
        holder = goto.parent if goto.parent is not None and goto.parent.type == "if_statement" else goto
        if src.position(holder.start_byte)[0] not in on_path and src.position(goto.start_byte)[0] not in on_path:
            continue
        label = goto.child_by_field_name("label")
        if label is not None:
            edits.append((src.edit(label.start_byte, label.end_byte, rung_name), label_node))
    if not edits:
        return None
    safe = all(_only_releases(src, rung_node.start_byte, label_node.start_byte, function) for _e, label_node in edits)
    return Fix(f"Jump to `{rung_name}`, which releases `{finding.facts.var if finding.facts else ''}`",
               tuple(e for e, _l in edits), safe=safe)


def _rung_label(src: FixSource, function: Node, statement: Node) -> tuple[str, Node] | None:
    """The label that execution falls through from to `statement` (the release's rung):
    the nearest label above it with no jump or return in between."""
    best = None
    for name, node in labels(src, function).items():
        if node.start_byte <= statement.start_byte and (best is None or node.start_byte > best[1].start_byte):
            best = (name, node)
    if best is None:
        return None
    if not _only_releases(src, best[1].start_byte, statement.start_byte, function):
        return None
    return best


def _only_releases(src: FixSource, start: int, end: int, function: Node) -> bool:
    """No return, goto or loop between two offsets of the function: falling through runs them all."""
    for node in walk(function):
        if start < node.start_byte < end and node.type in ("return_statement", "goto_statement", "for_statement",
                                                           "while_statement", "do_statement", "break_statement"):
            return False
    return True


def _insertions(src: FixSource, finding: Finding, function: Node, acquire: Node, release: str, copied: bool) -> list[Fix]:
    facts = finding.facts
    assert facts is not None
    acquired = statement_of(acquire)
    guarded = _starts_null(src, function, facts.var)
    other_value = _written_elsewhere(src, function, facts.var, acquire)
    body = function.child_by_field_name("body")
    edits = []
    safe = True
    for step in finding.related:
        offset = src.offset(step.line, step.col)
        exit_node = node_at(src, offset, ("return_statement",))
        if exit_node is None:
            if body is None or offset not in (body.end_byte - 1, body.end_byte):
                return []
            exit_node = body  # falling off the end: insert before the closing brace
        if exit_node is not body and exit_node.start_byte < acquire.end_byte:
            return []
        passes = acquired is not None and _dominates(src, function, acquired, exit_node)
        if not passes and other_value:
            return []  # the exit is also reached holding another value (a borrowed one): no release fits
        text = release if passes or not guarded else f"if ({facts.var}) {release}"
        safe = safe and (passes or guarded)
        if _returns_use_of(src, exit_node, facts.var):
            edit = _release_after_value(src, function, exit_node, text)
            if edit is None:
                return []
            edits.append(edit)
            continue
        edits.append(_insert_before(src, exit_node, text))
    if not edits:
        return []
    title = f"Release `{facts.var}` with {facts.release}() before " + \
        ("returning" if len(edits) == 1 else f"each of {len(edits)} returns")
    return [Fix(title, tuple(edits), safe=safe)]


def _returns_use_of(src: FixSource, exit_node: Node, var: str) -> bool:
    """`return p[0];`: the returned value reads the resource, so it is computed before the release."""
    value = exit_node.named_children[0] if exit_node.type == "return_statement" and exit_node.named_children else None
    root = re.match(r"[A-Za-z_]\w*", var)
    return value is not None and root is not None and root.group(0) in identifiers(src, value)


def _release_after_value(src: FixSource, function: Node, exit_node: Node, release: str):
    """`return f[0];` -> `{ jfloat result = f[0]; release; return result; }`."""
    returned = declared_type(src, function).strip()
    if not returned or returned == "void" or "auto" in returned.split():
        return None
    name = fresh_name(identifiers(src, function), "result")
    value = src.text(exit_node.named_children[0])
    declaration = returned if returned.endswith("*") else returned + " "
    return src.edit(exit_node.start_byte, exit_node.end_byte,
                    f"{{ {declaration}{name} = {value}; {release} return {name}; }}")


def _starts_null(src: FixSource, function: Node, var: str) -> bool:
    """`T *var = NULL;` in the function."""
    for node in walk(function):
        if node.type == "init_declarator":
            declarator = node.child_by_field_name("declarator")
            value = node.child_by_field_name("value")
            while declarator is not None and declarator.type == "pointer_declarator":
                declarator = declarator.child_by_field_name("declarator")
            if declarator is not None and value is not None and src.text(declarator) == var \
                    and _NULL.match(src.text(value).strip()):
                return True
    return False


def _written_elsewhere(src: FixSource, function: Node, var: str, acquire: Node) -> bool:
    """`var` gets a value other than NULL somewhere but the acquisition: assigned, initialized,
    or its address passed to another call (`GetAllocatorWithDefaultOptions(&allocator)` on the
    other branch). An exit that the acquisition does not dominate may then hold that value,
    which a NULL guard does not tell from the resource: releasing it could free what the
    function does not own."""
    def holds_acquire(node: Node | None) -> bool:
        return node is not None and node.start_byte <= acquire.start_byte and acquire.end_byte <= node.end_byte

    for node in walk(function):
        if node.start_byte >= acquire.start_byte and node.end_byte <= acquire.end_byte:
            continue
        if node.type in ("assignment_expression", "init_declarator"):
            target = node.child_by_field_name("left" if node.type == "assignment_expression" else "declarator")
            value = node.child_by_field_name("right" if node.type == "assignment_expression" else "value")
            while target is not None and target.type == "pointer_declarator":
                target = target.child_by_field_name("declarator")
            if target is None or value is None or not same_expr(src.text(target), var) or holds_acquire(value):
                continue
            if not _NULL.match(src.text(value).strip()):
                return True
        elif node.type == "pointer_expression" and src.text(node).startswith("&"):
            argument = node.child_by_field_name("argument")
            if argument is not None and same_expr(src.text(argument), var):
                return True
    return False


def _dominates(src: FixSource, function: Node, acquired: Node, exit_node: Node) -> bool:
    """Every way to `exit_node` runs `acquired` first, judged by structure: the acquisition is a
    statement of a block around the exit, before it, and no label lies between them."""
    block = acquired.parent
    while block is not None and block.type == "labeled_statement":
        block = block.parent
    node: Node | None = exit_node
    inside = False
    while node is not None:
        if node == block:
            inside = True
            break
        node = node.parent
    if not inside:
        return False
    for n in walk(function):
        if n.type == "labeled_statement" and acquired.end_byte <= n.start_byte <= exit_node.start_byte:
            return False
        if n.type in ("case_statement",) and acquired.end_byte <= n.start_byte <= exit_node.start_byte \
                and enclosing(acquired, ("case_statement",)) is None:
            return False
    return True


def _insert_before(src: FixSource, node: Node, text: str):
    """An edit that runs `text` just before the statement `node` (or, for a function body,
    before its closing brace)."""
    nl = src.newline()
    if node.type == "compound_statement":
        close = node.end_byte - 1
        start = src.line_start(close)
        if src.data[start:close].strip() == b"":
            indent = src.indent_at(close) + "  "
            inner = [c for c in node.named_children if c.type != "comment"]
            if inner:
                indent = src.indent_at(inner[-1].start_byte)
            return src.edit(start, start, f"{indent}{text}{nl}")
        return src.edit(close, close, f" {text} ")
    parent = node.parent
    in_block = parent is not None and parent.type in ("compound_statement", "labeled_statement", "case_statement")
    if parent is not None and parent.type == "labeled_statement" and parent.parent is not None \
            and parent.parent.type not in ("compound_statement", "labeled_statement", "case_statement"):
        in_block = False
    if not in_block:
        return src.edit(node.start_byte, node.end_byte, f"{{ {text} {src.text(node)} }}")
    start = src.line_start(node.start_byte)
    if src.data[start:node.start_byte].strip() == b"":
        return src.edit(start, start, f"{src.indent_at(node.start_byte)}{text}{nl}")
    return src.edit(node.start_byte, node.start_byte, f"{text} ")
