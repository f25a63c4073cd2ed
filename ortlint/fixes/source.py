"""A file's text for fixes: its syntax tree (C family, decorations blanked as the front ends
blank them), byte offsets <-> the line and column of an `Edit`, and edits applied to text."""
from __future__ import annotations

from dataclasses import dataclass, field

import tree_sitter_c
import tree_sitter_cpp
from tree_sitter import Language, Node, Parser

from ..findings import Edit
from ..frontends.common.source import blank_decorations
from ..policy import Policy

C_LANGUAGE = Language(tree_sitter_c.language())
CPP_LANGUAGE = Language(tree_sitter_cpp.language())
C_SUFFIXES = (".c", ".h")


class EditConflict(ValueError):
    """Two edits overlap: they cannot both be applied."""


@dataclass
class FixSource:
    """One C-family file as bytes and syntax tree; offsets are byte offsets into `data`."""

    path: str
    data: bytes
    policy: Policy
    _tree: object | None = field(default=None, repr=False)
    _starts: list[int] = field(default_factory=list, repr=False)

    @property
    def root(self) -> Node:
        if self._tree is None:
            language = C_LANGUAGE if self.path.endswith(C_SUFFIXES) else CPP_LANGUAGE
            self._tree = Parser(language).parse(blank_decorations(self.data, self.policy))
        return self._tree.root_node  # type: ignore[attr-defined]

    def line_starts(self) -> list[int]:
        if not self._starts:
            starts = [0]
            starts.extend(i + 1 for i, b in enumerate(self.data) if b == 0x0A)
            self._starts = starts
        return self._starts

    def offset(self, line: int, col: int) -> int:
        """The byte offset of a finding's (line, column), both from 1 (columns in bytes, as the
        front ends count them)."""
        starts = self.line_starts()
        if not 1 <= line <= len(starts):
            return -1
        return starts[line - 1] + max(col, 1) - 1

    def text(self, node: Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def position(self, offset: int) -> tuple[int, int]:
        """A byte offset -> (line, column in characters), both from 1."""
        starts = self.line_starts()
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, len(self.data[starts[lo]:offset].decode("utf-8", "replace")) + 1

    def edit(self, start: int, end: int, text: str) -> Edit:
        line, col = self.position(start)
        end_line, end_col = self.position(end)
        return Edit(line, col, end_line, end_col, text)

    def indent_at(self, offset: int) -> str:
        """The white space that starts the line holding `offset`."""
        start = self.data.rfind(b"\n", 0, offset) + 1
        end = start
        while end < len(self.data) and self.data[end:end + 1] in (b" ", b"\t"):
            end += 1
        return self.data[start:end].decode("ascii")

    def line_start(self, offset: int) -> int:
        return self.data.rfind(b"\n", 0, offset) + 1

    def newline(self) -> str:
        return "\r\n" if b"\r\n" in self.data[:4096] else "\n"


def apply_edits(text: str, edits: list[Edit] | tuple[Edit, ...]) -> str:
    """`text` with every edit applied (positions refer to the original text). Overlapping edits
    raise `EditConflict`."""
    lines = text.splitlines(keepends=True) or [""]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:
        if line > len(lines):
            return len(text)
        return starts[line - 1] + col - 1

    spans = sorted(((offset(e.line, e.col), offset(e.end_line, e.end_col), e.text) for e in edits), reverse=True)
    out = text
    previous_start = len(text) + 1
    for start, end, new in spans:
        if end > previous_start:
            raise EditConflict("overlapping edits")
        out = out[:start] + new + out[end:]
        previous_start = start
    return out
