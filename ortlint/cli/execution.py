"""Running one `ortlint check`: settings -> `RunConfig` -> `runner.run` -> post-processing (unused
suppressions, rule selection per file, --diff, baseline) -> the report shown -> the exit code.

No analysis happens here. The post-processing steps only filter a finished `Report`, so that the
Python API, the CLI and every output format agree on what a run found."""
from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING

import click

from ..baseline import read_baseline, split_new, write_baseline
from ..config import ConfigError, ConfigTree, Settings, discovery_options
from ..engine.analyze import Options
from ..findings import Report
from ..orchestration.runner import run
from ..orchestration.settings import Limits, RunConfig
from ..orchestration.policy_cache import load_policy_cached
from ..programs import distrust
from ..summary_report import as_policy as summaries_as_policy
from ..summary_report import explain as explain_summaries
from ..scope import GENERAL_TAG
from ..testcode import TEST_TAG
from ..textsafe import terminal_safe
from .editing import add_unused_suppressions, current_editing, fix_step, read_stdin, with_overlay
from .presentation import (EXIT_ERROR, Presentation, UsageFailure, echo_errors, emit, exit_code, format_report,
                           internal_error, is_failure, progress_line, unknown_calls_json, unknown_calls_table, unshown,
                           use_color)

if TYPE_CHECKING:
    from ..gitdiff import ChangedLines
    from ..orchestration.progress import Progress


def build_run_config(settings: Settings, tree: ConfigTree | None = None) -> RunConfig:
    """Settings -> the runner's configuration (loads and validates the policy)."""
    if settings.compile_commands and not os.path.exists(settings.compile_commands):
        raise UsageFailure(f"--compile-commands: {settings.compile_commands}: no such file or directory")
    policy = load_policy_cached(settings.rules)
    paths = settings.paths or ["."]
    return RunConfig(paths=paths, policy=policy,
                     options=Options(unknown_calls=settings.unknown_calls),
                     use_default_excludes=settings.default_excludes,
                     jobs=settings.jobs, compile_commands=settings.compile_commands,
                     cache_dir=settings.effective_cache_dir(), extensions=dict(settings.extensions) or None,
                     suppressions=True, limits=Limits(settings.time_limit, settings.memory_limit),
                     isolate=os.environ.get("ORTLINT_IN_PROCESS", "") in ("", "0"),
                     include_dirs=tuple(settings.include_dirs), test_patterns=tuple(settings.test_patterns),
                     follow_symlinks=settings.follow_symlinks, **discovery_options(settings, tree))


def analyze(settings: Settings, config: RunConfig, tree: ConfigTree | None = None,
            progress: "Progress | None" = None) -> Report:
    """Run the analysis (which applies suppression comments), then rule selection (per file:
    the nearest configuration file's `select`, `ignore`, `exclude-tests` and `scope`)."""
    report = run(config, progress=progress)
    add_unused_suppressions(report)
    report.notices = list(dict.fromkeys(report.notices))  # one message per file, line and text
    report.stats.setdefault("suppressed", 0)
    of_file = _settings_per_file(settings, tree)
    report.findings = [f for f in report.findings if f.rule in of_file(f.path).enabled_rules()]
    kept = [f for f in report.findings if not (of_file(f.path).exclude_tests and TEST_TAG in f.tags)]
    if len(kept) != len(report.findings) or settings.exclude_tests:
        report.stats["tests_excluded"] = len(report.findings) - len(kept)
    in_scope = [f for f in kept if not (GENERAL_TAG in f.tags and of_file(f.path).scope != "all")]
    if len(in_scope) != len(kept):
        report.stats["outside_scope"] = len(kept) - len(in_scope)
    report.findings = in_scope
    return report


def _settings_per_file(settings: Settings, tree: ConfigTree | None):  # -> Callable[[str], Settings]
    """The settings of a reported file: its nearest configuration file's (one look-up per folder)."""
    if tree is None:
        return lambda _path: settings
    folders: dict[str, Settings] = {}

    def of_file(path: str) -> Settings:
        folder = os.path.dirname(os.path.abspath(path))
        found = folders.get(folder)
        if found is None:
            try:
                found = folders[folder] = tree.settings_for_folder(folder)
            except ConfigError:  # reported by discovery already (exit 2)
                found = folders[folder] = settings
        return found
    return of_file


def execute(settings: Settings, view: Presentation, diff_rev: str | None = None, tree: ConfigTree | None = None) -> int:
    """One `ortlint check`; returns the exit code. Raises the usage errors `check` reports."""
    if settings.baseline and not view.write_baseline:
        read_baseline(settings.baseline)  # fail fast, before a long run, on a bad baseline
    distrust(settings.paths or ["."])  # no program is run from the analyzed tree (git, compilers)
    changed = _changed_lines(diff_rev) if diff_rev else None  # fail fast on a bad revision too
    editing = current_editing()
    if editing.stdin_filename is not None:
        read_stdin(editing, settings)
    config = with_overlay(build_run_config(settings, tree), editing)
    progress = progress_line(view)
    try:
        report = analyze(settings, config, tree, progress)
        fix_step(report, config, editing)
    except Exception as exc:  # noqa: BLE001 - an analyzer bug must end with a clear message and exit 2
        internal_error(exc)
        return EXIT_ERROR
    finally:
        if progress is not None:
            progress.finish()
    analyzed = time.perf_counter()
    if changed is not None:
        _keep_changed(report, changed, diff_rev or "")
    _apply_baseline(report, settings, view)
    for warning in tree.warnings if tree is not None else ():
        click.echo(f"ortlint: warning: {terminal_safe(warning)}", err=True)
    if config.paths and not report.files and not report.stats.get("force_excluded") \
            and not any(is_failure(n) for n in report.notices):
        click.echo(f"ortlint: warning: no C, C++, Java or Go source files found in "
                   f"{terminal_safe(', '.join(config.paths))}", err=True)
    if view.write_summaries:
        _write_summaries(report, config, view.write_summaries)
    if view.list_unknown_calls:
        emit(unknown_calls_json(report) if settings.format == "json" else unknown_calls_table(report),
              view.output, color=False)
    elif view.explain_summaries:
        emit(explain_summaries(report.summaries), view.output, color=False)
    elif editing.fix and editing.stdin_data is not None and not view.output:  # stdout holds the fixed source
        click.echo(format_report(report, settings.format, view), nl=False, err=True)
    elif (view.write_baseline or view.write_summaries) and not view.output:
        echo_errors(report, "", view)  # a writer's one line instead of the report; failures still show
    else:
        emit(format_report(report, settings.format, view), view.output, color=use_color(view))
        echo_errors(report, settings.format, view)
    report.stats["output_seconds"] = time.perf_counter() - analyzed
    _write_stats(report)
    return exit_code(report, view)


def _changed_lines(rev: str) -> "ChangedLines":
    from ..gitdiff import DiffError, changed_lines
    try:
        return changed_lines(rev)
    except DiffError as exc:
        raise UsageFailure(str(exc)) from None


def _keep_changed(report: Report, changed: "ChangedLines", rev: str) -> None:
    """--diff: only findings that touch a changed line; the analysis itself was not narrowed."""
    from ..gitdiff import select_changed
    total = len(report.findings)
    report.findings = select_changed(report.findings, changed)
    report.stats["outside_diff"] = total - len(report.findings)
    if total != len(report.findings):
        click.echo(f"ortlint: --diff {rev}: {total - len(report.findings)} finding(s) on unchanged lines not reported",
                   err=True)


def _write_stats(report: Report) -> None:
    """ORTLINT_STATS=FILE: the run's counters and phase timings as JSON (used by bench/)."""
    target = os.environ.get("ORTLINT_STATS")
    if not target:
        return
    try:
        with open(target, "w", encoding="utf-8") as fh:
            json.dump(report.stats, fh, indent=1, sort_keys=True)
    except OSError as exc:
        click.echo(f"ortlint: warning: ORTLINT_STATS: {target}: cannot write: {exc.strerror or exc}", err=True)


def _write_summaries(report: Report, config: RunConfig, path: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            text = summaries_as_policy(report.summaries, config.policy)
            fh.write(text)
    except OSError as exc:
        raise UsageFailure(f"--write-summaries: cannot write {path}: {exc.strerror or exc}") from None
    entries = text.splitlines().count("[[call]]")
    click.echo(f"ortlint: wrote {entries} inferred {'summary' if entries == 1 else 'summaries'} as [[call]] entries "
               f"to {terminal_safe(path)}{unshown(report)}", err=True)


def _apply_baseline(report: Report, settings: Settings, view: Presentation) -> None:
    """Record the findings (--write-baseline), or keep only those the baseline does not know."""
    if view.write_baseline:
        write_baseline(view.write_baseline, report.findings)
        count = len(report.findings)
        click.echo(f"ortlint: wrote {count} finding{'' if count == 1 else 's'} to baseline "
                   f"{terminal_safe(view.write_baseline)}{unshown(report)}", err=True)
    elif settings.baseline:
        report.findings, known = split_new(settings.baseline, report.findings)
        report.stats["baselined"] = len(known)
