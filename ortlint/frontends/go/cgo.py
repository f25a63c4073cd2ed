"""cgo preambles: the C code in the comment right before `import "C"` is compiled by cgo as a
C file, so it is analyzed by the C front end with the C policy. The comment markers are
replaced by spaces and every other line of the Go file is blanked, so the C front end reports
at the lines and columns of the .go file."""
from __future__ import annotations

import re

from ... import ir
from ...policy import Policy

_IMPORT_C = re.compile(rb'^[ \t]*import[ \t]+"C"[ \t]*(?://[^\n]*)?$', re.M)
_LINE_COMMENT = re.compile(rb"^([ \t]*)//", re.M)


def preamble_source(src: bytes) -> bytes | None:
    """The file with only the cgo preamble left (as C), or None when there is none."""
    m = _IMPORT_C.search(src)
    if m is None:
        return None
    end = m.start()
    head = src[:end]
    lines = head.split(b"\n")
    if lines and lines[-1].strip() == b"":
        lines = lines[:-1]  # the (empty) start of the import line itself
    if not lines:
        return None
    last = lines[-1].rstrip()
    start_line = len(lines)
    if last.endswith(b"*/"):
        start = head.rfind(b"/*")
        if start < 0:
            return None
        start_line = head.count(b"\n", 0, start)
        body = head[start:]
        body = body.replace(b"/*", b"  ", 1)
        cut = body.rfind(b"*/")
        body = body[:cut] + b"  " + body[cut + 2:]
        prefix_lines = start_line
        line_start = head.rfind(b"\n", 0, start) + 1
        body = b" " * (start - line_start) + body
    else:
        k = len(lines) - 1
        while k >= 0 and lines[k].lstrip().startswith(b"//"):
            k -= 1
        if k == len(lines) - 1:
            return None
        start_line = k + 1
        prefix_lines = start_line
        body = _LINE_COMMENT.sub(lambda mm: mm.group(1) + b"  ", b"\n".join(lines[start_line:]))
    if not body.strip():
        return None
    total = src.count(b"\n")
    text = b"\n" * prefix_lines + body
    return text + b"\n" * max(0, total - text.count(b"\n"))


def add_cgo_preamble(unit: ir.SourceUnit, src: bytes, policy: Policy) -> ir.SourceUnit:
    """Add the C functions of the preamble to the Go file's unit."""
    if b'"C"' not in src:
        return unit
    c_src = preamble_source(src)
    if c_src is None:
        return unit
    from ..c.frontend import parse_c
    c_unit = parse_c(unit.path, policy, c_src)
    unit.functions.extend(c_unit.functions)
    unit.notes.extend(c_unit.notes)
    unit.constants.update(c_unit.constants)
    return unit
