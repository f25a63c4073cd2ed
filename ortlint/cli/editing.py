"""`check`'s editing options at work (issue 33): --stdin-filename (the source from standard input),
--fix and --unsafe-fixes (fixes applied to the files or to standard input's text) and
--unused-suppressions (ORT100 findings). Their values live in the click context (`current_editing`)."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import click

from ..config import Settings
from ..findings import Report
from ..orchestration.settings import RunConfig
from .presentation import UsageFailure


@dataclass
class Editing:
    """Options of `check` for fixes, standard input and unused suppressions (issue 33): kept
    apart from `check`'s own parameters, in the click context."""

    fix: bool = False
    unsafe_fixes: bool = False
    stdin_filename: str | None = None
    unused_suppressions: bool = False
    stdin_data: bytes | None = None


EDITING_KEY = "ortlint.editing"


def current_editing() -> Editing:
    ctx = click.get_current_context(silent=True)
    found = ctx.meta.get(EDITING_KEY) if ctx is not None else None
    return found if isinstance(found, Editing) else Editing()


def read_stdin(editing: Editing, settings: Settings) -> None:
    """--stdin-filename PATH: the source comes from standard input, bounded as a file is."""
    from ..frontends.common.source import MAX_BYTES
    path = editing.stdin_filename or ""
    if not path:
        raise UsageFailure("--stdin-filename: the path is empty")
    if settings.paths and [os.path.normpath(p) for p in settings.paths] != [os.path.normpath(path)]:
        raise UsageFailure("--stdin-filename: give no other PATH (the source comes from standard input)")
    editing.stdin_data = sys.stdin.buffer.read(MAX_BYTES + 1)
    settings.paths = [path]


def with_overlay(config: RunConfig, editing: Editing) -> RunConfig:
    if editing.stdin_data is None or editing.stdin_filename is None:
        return config
    import dataclasses
    return dataclasses.replace(config, overlays={os.path.normpath(editing.stdin_filename): editing.stdin_data})


def _content_reader(editing: Editing):
    """The bytes the findings were computed on: standard input for --stdin-filename, else the file."""
    from ..fileio import read_prefix
    from ..frontends.common.source import MAX_BYTES
    stdin = os.path.normpath(editing.stdin_filename) if editing.stdin_filename else None

    def read(path: str) -> bytes | None:
        if stdin is not None and os.path.normpath(path) == stdin:
            return editing.stdin_data
        try:
            return read_prefix(path, MAX_BYTES + 1)
        except OSError:
            return None
    return read


def fix_step(report: Report, config: RunConfig, editing: Editing) -> None:
    """Give findings their fixes; with --fix, apply them (to the files, or to standard input's
    text, printed) and keep only the findings left."""
    from ..fixes import attach_fixes
    read = _content_reader(editing)
    attach_fixes(report, config.policy, read)
    if not editing.fix:
        return
    from ..fixes.apply import FixResult, apply_fixes, fixed_text, plan
    if editing.stdin_data is not None:
        chosen = plan(report.findings, editing.unsafe_fixes)
        text = editing.stdin_data.decode("utf-8", "surrogateescape")
        items = next(iter(chosen.values()), [])
        new, applied = fixed_text(text, [fix for _f, fix in items])
        sys.stdout.buffer.write(new.encode("utf-8", "surrogateescape"))
        sys.stdout.flush()
        result = FixResult({editing.stdin_filename or "-": len(applied)} if applied else {})
        result.fixed = {f.sort_key() for f, fix in items if any(fix is a for a in applied)}
    else:
        result = apply_fixes(report.findings, editing.unsafe_fixes, read)
    report.findings = [f for f in report.findings if f.sort_key() not in result.fixed]
    report.stats["fixed"] = sum(result.applied.values())
    total = sum(result.applied.values())
    if total:
        click.echo(f"ortlint: fixed {total} problem{'s' if total != 1 else ''} in {len(result.applied)} "
                   f"file{'s' if len(result.applied) != 1 else ''}", err=True)
    unsafe = 0 if editing.unsafe_fixes else sum(1 for f in report.findings if f.fixes and not any(x.safe for x in f.fixes))
    if unsafe:
        click.echo(f"ortlint: {unsafe} more fix{'es' if unsafe != 1 else ''} available with --unsafe-fixes", err=True)


def add_unused_suppressions(report: Report) -> None:
    """--unused-suppressions: ORT100 findings join the report (then rule selection applies)."""
    if current_editing().unused_suppressions and report.unused_suppressions:
        report.findings = report.findings + list(report.unused_suppressions)
        report.sort()
