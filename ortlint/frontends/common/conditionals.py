"""Conditional groups that break the parse, reduced to one alternative.

tree-sitter reads `#if` / `#else` / `#endif` as syntax, so it only accepts a conditional whose
alternatives are each a whole declaration, member or statement. Real code splits constructs
across alternatives (`#if X  if (a) {  #else  if (b) {  #endif`, a class's base clause or an
enumerator list per platform, `#if 0` around half a function), and error recovery then loses
everything from the enclosing namespace to the end of the file: a header of ONNX Runtime's tree
lost 1 100 lines to one such group. A compiler sees one alternative, so the parse is retried on
the text where each group that touches an error keeps one alternative: the first that is
compiled (not `#if 0`) and does not stop the build (`#error`). Groups that parsed are left as
they are (their other alternatives stay analyzed). Everything else is replaced by spaces of the
same length, so every offset and line stays where it was."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

_DIRECTIVE = re.compile(rb"[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")
_NEVER = re.compile(rb"\(?[ \t]*0[ \t]*\)?(?:[ \t]|$|//|/\*)")  # `#if 0`, `#if (0)`
_ERROR = re.compile(rb"^[ \t]*#[ \t]*error\b", re.M)
SPACES = bytes(32 if c not in (10, 13) else c for c in range(256))  # bytes.translate: all but line ends to blanks


@dataclass
class Group:
    """One `#if` ... `#endif`: its directive lines (first, last; 0-based, continuation lines
    included) and for each alternative whether it is never compiled (`#if 0`)."""
    directives: list[tuple[int, int]] = field(default_factory=list)
    never: list[bool] = field(default_factory=list)

    @property
    def span(self) -> tuple[int, int]:
        return self.directives[0][0], self.directives[-1][1]

    def alternatives(self) -> list[tuple[int, int]]:
        """The lines of each alternative, between its directive and the next (may be empty)."""
        marks = self.directives
        return [(marks[k][1] + 1, marks[k + 1][0] - 1) for k in range(len(marks) - 1)]


def groups_of(lines: list[bytes]) -> list[Group]:
    """Every complete conditional group, inner groups before the ones that hold them."""
    found: list[Group] = []
    open_groups: list[Group] = []
    index, count = 0, len(lines)
    while index < count:
        match = _DIRECTIVE.match(lines[index])
        if match is None:
            index += 1
            continue
        last = index
        while last + 1 < count and lines[last].rstrip().endswith(b"\\"):
            last += 1
        keyword = match.group(1)
        condition = lines[index][match.end():].strip()
        if keyword in (b"if", b"ifdef", b"ifndef"):
            open_groups.append(Group([(index, last)], [keyword == b"if" and _NEVER.match(condition) is not None]))
        elif keyword == b"endif":
            if open_groups:
                group = open_groups.pop()
                group.directives.append((index, last))
                found.append(group)
        elif open_groups:
            open_groups[-1].directives.append((index, last))
            open_groups[-1].never.append(False)
        index = last + 1
    return found


def lost_tokens(root: object) -> tuple[set[int], int]:
    """The 0-based lines and the byte count of the tokens error recovery skipped (inside ERROR
    nodes; a function definition it recovered inside one is not lost, its own errors are):
    where a group can have broken the parse, and how much of the file the parse lost (smaller
    is better)."""
    lines: set[int] = set()
    size = 0
    stack = [(root, False)]
    while stack:
        node, inside = stack.pop()
        kind = node.type  # type: ignore[attr-defined]
        inside = kind == "ERROR" or (inside and kind != "function_definition")
        children = node.children  # type: ignore[attr-defined]
        if inside and not children:
            lines.update(range(node.start_point[0], node.end_point[0] + 1))  # type: ignore[attr-defined]
            size += node.end_byte - node.start_byte  # type: ignore[attr-defined]
        elif inside or node.has_error:  # type: ignore[attr-defined]
            stack.extend((child, inside) for child in children)
    return lines, size


Blanked = tuple[int, int, tuple[int, int], tuple[int, int]]  # start and end byte, start and end point


def one_alternative(data: bytes, error_lines: set[int]) -> tuple[bytes, list[Blanked]]:
    """`data` where each group with a directive on an error line, and each `#if 0` group, keeps
    one alternative (see the module docstring), with the ranges blanked (so the previous tree
    can be edited and parsed again incrementally); `data` and no range when no group qualifies."""
    lines = data.split(b"\n")
    groups = groups_of(lines)
    if not groups:
        return data, []
    starts = _line_starts(lines)
    out = bytearray(data)
    spans = sorted(group.span for group in groups)
    blanked: list[Blanked] = []
    for group in groups:
        touched = any(line in error_lines for first, last in group.directives for line in range(first, last + 1))
        if not touched and not any(group.never):
            continue
        keep = _kept(group, lines, spans)
        for number, (first, last) in enumerate(group.alternatives()):
            if number != keep and first <= last:
                blanked.append(_blank(out, starts, lines, first, last))
        for first, last in group.directives:
            blanked.append(_blank(out, starts, lines, first, last))
    return (bytes(out), blanked) if blanked else (data, [])


def _kept(group: Group, lines: list[bytes], spans: list[tuple[int, int]]) -> int | None:
    """The first alternative that is compiled and has no `#error` of its own (nested groups'
    `#error`s are theirs)."""
    for number, (first, last) in enumerate(group.alternatives()):
        if group.never[number]:
            continue
        if first > last or not _ERROR.search(b"\n".join(_own_lines(lines, first, last, spans))):
            return number
    return None


def _own_lines(lines: list[bytes], first: int, last: int, spans: list[tuple[int, int]]) -> Iterable[bytes]:
    nested = [(a, b) for a, b in spans if first <= a and b <= last]
    line = first
    for a, b in nested:
        if a < line:
            continue
        yield from lines[line:a]
        line = b + 1
    yield from lines[line:last + 1]


def _line_starts(lines: list[bytes]) -> list[int]:
    starts, offset = [], 0
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    return starts


def _blank(out: bytearray, starts: list[int], lines: list[bytes], first: int, last: int) -> Blanked:
    begin, end = starts[first], starts[last] + len(lines[last])
    out[begin:end] = bytes(out[begin:end]).translate(SPACES)
    return begin, end, (first, 0), (last, len(lines[last]))
