"""Command line: options -> settings -> `runner.run` -> post-processing -> formatter.

    commands.py      the click commands and their options (`check`, `sanitizer`, `server`, `rules`,
                     `explain`), `main` and the `ortlint` console entry point
    execution.py     one `check`: settings -> `RunConfig` -> run -> rule selection, --diff, baseline
                     -> the report shown -> the exit code
    editing.py       --stdin-filename, --fix/--unsafe-fixes and --unused-suppressions at work
    presentation.py  how the outcome is shown: exit codes, one-line errors, progress, formats, colors

No analysis happens here. The post-processing steps (suppression comments, rule selection,
baseline) only filter a finished `Report`, so that the Python API, the CLI and every output
format agree on what a run found.

    ortlint [OPTIONS] [PATH]...      analyze files and folders (same as `ortlint check`)
    ortlint rules                    the table of rules
    ortlint explain ORT001           what a rule finds, why it matters, an example and the fix
    ortlint sanitizer LOG [PATH]...  which finding explains each ASan/LSan report in LOG, or why none does
    ortlint server                   a language server (LSP) over stdio, for editors (docs/editors.md)

Exit codes: 0 no findings, 1 findings, 2 usage or configuration error, a path that does not
exist, or an internal failure. An internal failure never exits 1 (which means "findings"): any
exception that escapes is reported in one line and exits 2.
"""
from __future__ import annotations

from .commands import check, console, explain, main, rules, sanitizer, server

__all__ = ["check", "console", "explain", "main", "rules", "sanitizer", "server"]
