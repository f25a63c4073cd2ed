"""Findings as LSP diagnostics, fixes and suppressions as code actions.

Positions: findings count columns in bytes of the line (as the front ends do), edits in
characters; LSP counts UTF-16 code units. Each conversion reads the line's text."""
from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from ..findings import Edit, Finding, Fix, Step
from ..fixes.suppression import removal_edit, suppression_edit
from ..suppress import UNUSED_RULE

DOCS = "https://github.com/ortlint/ortlint/blob/main/docs/rules/{rule}.md"
SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
            "note": types.DiagnosticSeverity.Information}


class Lines:
    """A document's lines, for position conversions."""

    def __init__(self, data: bytes):
        self.raw = data.split(b"\n")

    def _line(self, line: int) -> bytes:
        return self.raw[line - 1].rstrip(b"\r") if 1 <= line <= len(self.raw) else b""

    def from_bytes(self, line: int, col: int) -> types.Position:
        """(line, byte column), both from 1 -> an LSP position."""
        prefix = self._line(line)[:max(col, 1) - 1].decode("utf-8", "replace")
        return types.Position(max(line - 1, 0), _utf16(prefix))

    def from_chars(self, line: int, col: int) -> types.Position:
        """(line, character column), both from 1 -> an LSP position (a line past the end is the end)."""
        if line > len(self.raw):
            last = self.raw[-1].decode("utf-8", "replace") if self.raw else ""
            return types.Position(max(len(self.raw) - 1, 0), _utf16(last))
        text = self._line(line).decode("utf-8", "replace")
        return types.Position(line - 1, _utf16(text[:max(col, 1) - 1]))


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def uri_of(path: str) -> str:
    return Path(path).resolve().as_uri()


def diagnostic(f: Finding, lines: Lines) -> types.Diagnostic:
    start = lines.from_bytes(f.line, f.col)
    end = lines.from_bytes(f.end_line or f.line, f.end_col) if f.end_line else start
    if (end.line, end.character) <= (start.line, start.character):
        end = types.Position(start.line, start.character + 1)
    related = [_related(s) for s in f.trace] + [_related(s) for s in f.related]
    unused = f.rule == UNUSED_RULE
    return types.Diagnostic(
        range=types.Range(start, end), message=f.message, source="ortlint", code=f.rule,
        code_description=types.CodeDescription(href=DOCS.format(rule=f.rule)),
        severity=types.DiagnosticSeverity.Hint if unused else SEVERITY.get(f.effective_level,
                                                                           types.DiagnosticSeverity.Warning),
        tags=[types.DiagnosticTag.Unnecessary] if unused else None,
        related_information=related or None,
        data={"rule": f.rule, "line": f.line, "col": f.col, "fixes": len(f.fixes)})


def _related(step: Step) -> types.DiagnosticRelatedInformation:
    position = types.Position(max(step.line - 1, 0), max(step.col - 1, 0))
    return types.DiagnosticRelatedInformation(
        location=types.Location(uri=uri_of(step.path), range=types.Range(position, position)), message=step.message)


def text_edit(edit: Edit, lines: Lines) -> types.TextEdit:
    return types.TextEdit(range=types.Range(lines.from_chars(edit.line, edit.col),
                                            lines.from_chars(edit.end_line, edit.end_col)), new_text=edit.text)


def fix_action(f: Finding, fix: Fix, uri: str, lines: Lines, diag: types.Diagnostic, preferred: bool) -> types.CodeAction:
    title = fix.title if fix.safe else f"{fix.title} (unsafe)"
    return types.CodeAction(title=f"ortlint: {title}", kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                            is_preferred=preferred,
                            edit=types.WorkspaceEdit(changes={uri: [text_edit(e, lines) for e in fix.edits]}))


def suppress_action(f: Finding, uri: str, text: str, lines: Lines, diag: types.Diagnostic) -> types.CodeAction | None:
    if f.rule == UNUSED_RULE:
        edit = removal_edit(f, text)
        title = "ortlint: Remove the unused suppression"
    else:
        edit = suppression_edit(f, text)
        title = f"ortlint: Suppress {f.rule} on this line"
    if edit is None:
        return None
    return types.CodeAction(title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diag],
                            edit=types.WorkspaceEdit(changes={uri: [text_edit(edit, lines)]}))


def actions_for(findings: list[Finding], uri: str, data: bytes, wanted: types.Range) -> list[types.CodeAction]:
    """Code actions of the findings whose range meets `wanted`: their fixes (the first safe one
    preferred), then a suppression comment (or, for ORT100, removing it)."""
    lines = Lines(data)
    text = data.decode("utf-8", "surrogateescape")
    out: list[types.CodeAction] = []
    for f in findings:
        diag = diagnostic(f, lines)
        if not _meets(diag.range, wanted):
            continue
        first_safe = next((fix for fix in f.fixes if fix.safe), None)
        out.extend(fix_action(f, fix, uri, lines, diag, fix is first_safe) for fix in f.fixes)
        action = suppress_action(f, uri, text, lines, diag)
        if action is not None:
            out.append(action)
    return out


def _meets(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)
    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)
