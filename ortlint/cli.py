"""Command line: options -> settings -> `runner.run` -> post-processing -> formatter.

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

import json
import os
import sys
import time
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from . import __version__
from .baseline import BaselineError, read_baseline, split_new, write_baseline
from .config import (
    FORMATS,
    MAX_JOBS,
    MAX_MEMORY_LIMIT,
    MIN_MEMORY_LIMIT,
    UNKNOWN_CALLS,
    ConfigError,
    Overrides,
    ConfigTree,
    Settings,
    describe_settings,
    discovery_options,
    load_settings,
    load_tree,
    resolve_rules,
    time_limit_problem,
)
from .docs import render_for_terminal, rule_markdown
from .engine.analyze import Options
from .findings import RULES, Notice, Report
from .testcode import TEST_TAG
from .orchestration.runner import run
from .orchestration.settings import Limits, RunConfig
from .policy import PolicyError, load_policy
from .programs import distrust
from .report import get_formatter
from .summary_report import as_policy as summaries_as_policy
from .summary_report import explain as explain_summaries
from .textsafe import terminal_safe

if TYPE_CHECKING:
    from .gitdiff import ChangedLines
    from .orchestration.progress import Progress
    from .report.progress import ProgressLine

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class UsageFailure(Exception):
    """Bad options, configuration, policy or baseline: reported in one line, exit code 2."""


class _DefaultCommandGroup(click.Group):
    """`ortlint PATH...` means `ortlint check PATH...`: linting is what people run 99% of the time.

    A first argument that names a subcommand (`rules`, `explain`, `check`) selects it; to lint a
    folder called `rules`, write `ortlint ./rules` or `ortlint check rules`.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            args = ["check", *args]
        return super().parse_args(ctx, args)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"ortlint {__version__}")
    ctx.exit()


@click.group(cls=_DefaultCommandGroup, context_settings=CONTEXT)
def main() -> None:
    """Release-pairing checks for ONNX Runtime C API, JNI, C++ and Java code."""


def console() -> None:
    """The `ortlint` command: `main`, then an exit without the interpreter's teardown, which
    frees every object of the run one by one (a tenth of a second on a large tree, after the
    results are out; mypy exits the same way). Output is flushed first; the workers are
    already stopped."""
    try:
        main(prog_name="ortlint")
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    except Exception as exc:  # noqa: BLE001 - a bug outside `check`'s own net: still one line and exit 2
        _internal_error(exc)
        code = EXIT_ERROR
    if code is not None and not isinstance(code, int):
        print(terminal_safe(str(code)), file=sys.stderr)
        code = EXIT_ERROR
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            code = code or 1
    os._exit(code or 0)


# ----------------------------------------------------------------------------- check


@dataclass
class Presentation:
    """How to show the results; none of this changes what is found."""

    output: str | None = None
    color: str = "auto"
    quiet: bool = False
    verbose: bool = False
    exit_zero: bool = False
    write_baseline: str | None = None
    list_unknown_calls: bool = False
    explain_summaries: bool = False
    write_summaries: str | None = None
    progress: bool | None = None  # the progress line on stderr; None: on a terminal, not in CI (`_shows_progress`)
    show_source: bool = True  # text: the source line and a caret under each finding


def _check_time_limit(_ctx: click.Context, _param: click.Parameter, value: float | None) -> float | None:
    """`nan` passed click's range check (every comparison with it is false) and turned the
    watchdog off; `inf` never fires either."""
    if value is not None and time_limit_problem(value):
        raise click.BadParameter(time_limit_problem(value) or "")
    return value


_EPILOG = """\b
Configuration: [tool.ortlint] in pyproject.toml or a .ortlint.toml file: the nearest one above
the paths named for the run, and above each file for its per-file settings (or --config FILE);
command-line options win. `--show-settings PATH` shows what applies to PATH.
.gitignore, .ignore and .git/info/exclude are respected (--no-ignore).
Suppress a finding with `// ortlint: ignore[ORT001]` on its line or the line above.
Other commands: `ortlint rules` (list the rules), `ortlint explain ORT001` (explain a rule),
`ortlint sanitizer LOG` (explain AddressSanitizer/LeakSanitizer reports).
Exit codes: 0 no findings, 1 findings, 2 usage/configuration error, missing path or internal failure.
Documentation: docs/cli.md"""


# ----------------------------------------------------------------------------- fixes, stdin, unused suppressions


@dataclass
class Editing:
    """Options of `check` for fixes, standard input and unused suppressions (issue 33): kept
    apart from `check`'s own parameters, in the click context."""

    fix: bool = False
    unsafe_fixes: bool = False
    stdin_filename: str | None = None
    unused_suppressions: bool = False
    stdin_data: bytes | None = None


_EDITING = "ortlint.editing"


def _editing() -> Editing:
    ctx = click.get_current_context(silent=True)
    found = ctx.meta.get(_EDITING) if ctx is not None else None
    return found if isinstance(found, Editing) else Editing()


def _editing_options(command):
    """Add --fix, --unsafe-fixes, --stdin-filename and --unused-suppressions to `command`;
    their values go to the click context (`_editing()`), not to its parameters."""
    import functools

    @functools.wraps(command)
    def wrapper(*args, fix: bool, unsafe_fixes: bool, stdin_filename: str | None, unused_suppressions: bool,
                **kwargs):
        click.get_current_context().meta[_EDITING] = Editing(fix or unsafe_fixes, unsafe_fixes, stdin_filename,
                                                             unused_suppressions)
        return command(*args, **kwargs)

    options = [
        click.option("--fix", is_flag=True, help="Apply the safe fixes to the files (with --stdin-filename: print "
                                                 "the fixed source); report what is left."),
        click.option("--unsafe-fixes", is_flag=True, help="With --fix, also apply fixes that change behaviour "
                                                          "(implies --fix)."),
        click.option("--stdin-filename", metavar="PATH",
                     help="Read the source from standard input and analyze it as if it were PATH."),
        click.option("--unused-suppressions", is_flag=True,
                     help="Also report suppression comments that silence nothing (ORT100)."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def _read_stdin(editing: Editing, settings: Settings) -> None:
    """--stdin-filename PATH: the source comes from standard input, bounded as a file is."""
    from .frontends.common.source import MAX_BYTES
    path = editing.stdin_filename or ""
    if not path:
        raise UsageFailure("--stdin-filename: the path is empty")
    if settings.paths and [os.path.normpath(p) for p in settings.paths] != [os.path.normpath(path)]:
        raise UsageFailure("--stdin-filename: give no other PATH (the source comes from standard input)")
    editing.stdin_data = sys.stdin.buffer.read(MAX_BYTES + 1)
    settings.paths = [path]


def _with_overlay(config: RunConfig, editing: Editing) -> RunConfig:
    if editing.stdin_data is None or editing.stdin_filename is None:
        return config
    import dataclasses
    return dataclasses.replace(config, overlays={os.path.normpath(editing.stdin_filename): editing.stdin_data})


def _content_reader(editing: Editing):
    """The bytes the findings were computed on: standard input for --stdin-filename, else the file."""
    from .fileio import read_prefix
    from .frontends.common.source import MAX_BYTES
    stdin = os.path.normpath(editing.stdin_filename) if editing.stdin_filename else None

    def read(path: str) -> bytes | None:
        if stdin is not None and os.path.normpath(path) == stdin:
            return editing.stdin_data
        try:
            return read_prefix(path, MAX_BYTES + 1)
        except OSError:
            return None
    return read


def _fix_step(report: Report, config: RunConfig, editing: Editing) -> None:
    """Give findings their fixes; with --fix, apply them (to the files, or to standard input's
    text, printed) and keep only the findings left."""
    from .fixes import attach_fixes
    read = _content_reader(editing)
    attach_fixes(report, config.policy, read)
    if not editing.fix:
        return
    from .fixes.apply import FixResult, apply_fixes, fixed_text, plan
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


def _add_unused_suppressions(report: Report) -> None:
    """--unused-suppressions: ORT100 findings join the report (then rule selection applies)."""
    if _editing().unused_suppressions and report.unused_suppressions:
        report.findings = report.findings + list(report.unused_suppressions)
        report.sort()


@main.command(context_settings=CONTEXT, epilog=_EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(), metavar="[PATH]...")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Output format.  [default: text]")
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="Write the report to FILE instead of stdout.")
@click.option("--select", multiple=True, metavar="RULE",
              help="Report only these rules (ids, names or prefixes; repeatable, comma lists).")
@click.option("--ignore", multiple=True, metavar="RULE", help="Do not report these rules (repeatable, comma lists).")
@click.option("--rules", "rule_files", multiple=True, type=click.Path(), metavar="FILE",
              help="Extra policy file describing your own API (repeatable).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Read settings from FILE instead of looking for one.")
@click.option("--isolated", is_flag=True, help="Ignore configuration files.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip files and folders matching GLOB (repeatable).")
@click.option("--force-exclude", is_flag=True, default=None,
              help="Apply excludes to files named on the command line too (for pre-commit).")
@click.option("--no-default-excludes", is_flag=True, default=None,
              help="Also walk .git, build, vendor, third_party and similar folders.")
@click.option("--no-ignore", is_flag=True, default=None,
              help="Also analyze what .gitignore, .ignore and .git/info/exclude ignore.")
@click.option("--show-settings", metavar="PATH",
              help="Print the settings that apply to PATH and where each comes from, then exit.")
@click.option("--extension", "extensions", multiple=True, metavar="SUFFIX=LANG",
              help="Analyze SUFFIX as c, cpp, java, go or csharp, e.g. .cu=cpp (repeatable).")
@click.option("--jobs", "-j", type=click.IntRange(min=0, max=MAX_JOBS),
              help="Worker processes; 0 = one per core (never more than the cores or the files).  [default: 0]")
@click.option("--time-limit", type=float, callback=_check_time_limit, metavar="SECONDS",
              help="Stop parsing a file or analyzing a function after this much CPU time (a warning; "
                   "the results of everything else are kept).  [default: 60]")
@click.option("--memory-limit", type=click.IntRange(min=MIN_MEMORY_LIMIT, max=MAX_MEMORY_LIMIT), metavar="MB",
              help="Stop a file or function whose analysis grows its worker by more than this and report it "
                   "as lost (a worker that grew that much is replaced).  [default: 1024]")
@click.option("--baseline", type=click.Path(dir_okay=False), metavar="FILE",
              help="Report only findings that are not in this baseline.")
@click.option("--diff", "diff_rev", metavar="REV",
              help="Report only findings on lines changed since git revision REV (whole files are still analyzed).")
@click.option("--write-baseline", type=click.Path(dir_okay=False), metavar="FILE",
              help="Record the current findings as the baseline and exit 0.")
@click.option("--exclude-tests", is_flag=True, default=None,
              help="Do not report findings in test code (tagged `test` otherwise; see `test-patterns`).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--quiet", "-q", is_flag=True, help="Text format: only the one-line findings.")
@click.option("--verbose", "-v", is_flag=True,
              help="Text format: also list notes about code that could not be fully analyzed.")
@click.option("--show-source/--no-show-source", default=True,
              help="Text format: show the source line and a caret under each finding (not with --quiet).  "
                   "[default: show]")
@click.option("--progress/--no-progress", default=None,
              help="Show files parsed and functions analyzed on stderr while the run goes on.  "
                   "[default: on a terminal, not in CI]")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Color text output.")
@click.option("--unknown-calls", type=click.Choice(UNKNOWN_CALLS),
              help="A resource passed to an unknown function: `escape` (it takes ownership) or `keep`.  "
                   "[default: escape]")
@click.option("--list-unknown-calls", is_flag=True,
              help="List unknown functions that received a resource (to complete your policy) instead of findings.")
@click.option("--explain-summaries", is_flag=True,
              help="Show what each called function does to its arguments (inferred summaries) instead of findings.")
@click.option("--write-summaries", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the inferred summaries the policy schema can express as a policy file and exit 0.")
@click.option("--compile-commands", type=click.Path(), metavar="PATH",
              help="compile_commands.json (or its folder): parse C/C++ with libclang.")
@click.option("--cache-dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Per-file result cache.  [default: a folder per project in the user cache folder]")
@click.option("--follow-symlinks", is_flag=True, default=None,
              help="Follow links to folders and files outside the analyzed folders (not followed by default).")
@click.option("--no-cache", is_flag=True, default=None, help="Do not read or write the cache (also: ORTLINT_NO_CACHE=1).")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
@_editing_options
def check(paths: tuple[str, ...], fmt: str | None, output: str | None, select: tuple[str, ...], ignore: tuple[str, ...],
          rule_files: tuple[str, ...], config_file: str | None, isolated: bool, exclude: tuple[str, ...],
          force_exclude: bool | None, no_default_excludes: bool | None, extensions: tuple[str, ...],
          jobs: int | None, time_limit: float | None, memory_limit: int | None, baseline: str | None,
          write_baseline: str | None, exit_zero: bool, quiet: bool, verbose: bool, color: str,
          unknown_calls: str | None, list_unknown_calls: bool, explain_summaries: bool, write_summaries: str | None,
          compile_commands: str | None, cache_dir: str | None, follow_symlinks: bool | None, no_cache: bool | None,
          diff_rev: str | None, exclude_tests: bool | None, no_ignore: bool | None, show_settings: str | None,
          show_source: bool = True, progress: bool | None = None) -> None:
    """Check C, C++, JNI, Java, Go and C# files and folders (default: the current folder)."""
    overrides = Overrides(paths=list(paths), select=list(select), ignore=list(ignore), rules=list(rule_files),
                          exclude=list(exclude), default_excludes=False if no_default_excludes else None,
                          extensions=list(extensions), jobs=jobs, format=fmt, baseline=baseline,
                          unknown_calls=unknown_calls, compile_commands=compile_commands,
                          cache_dir=cache_dir, cache=False if no_cache else None, force_exclude=force_exclude,
                          time_limit=time_limit, memory_limit=memory_limit, exclude_tests=exclude_tests,
                          follow_symlinks=follow_symlinks, respect_gitignore=False if no_ignore else None)
    view = Presentation(output, color, quiet, verbose, exit_zero, write_baseline, list_unknown_calls,
                        explain_summaries, write_summaries, progress=progress, show_source=show_source)
    try:
        tree = load_tree(overrides, config_file, isolated)
        if show_settings is not None:
            click.echo(describe_settings(tree, show_settings), nl=False)
            sys.exit(EXIT_CLEAN)
        code = execute(tree.root, view, diff_rev, tree)
    except (ConfigError, PolicyError, BaselineError, UsageFailure) as exc:
        click.echo(f"ortlint: error: {terminal_safe(str(exc))}", err=True)
        code = EXIT_ERROR
    except KeyboardInterrupt:
        click.echo("ortlint: interrupted", err=True)
        code = 130  # the shell convention for SIGINT; never mistaken for "findings"
    except Exception as exc:  # noqa: BLE001 - a bug must end with a clear message and exit 2, never 1
        _internal_error(exc)
        code = EXIT_ERROR
    sys.exit(code)



def build_run_config(settings: Settings, tree: ConfigTree | None = None) -> RunConfig:
    """Settings -> the runner's configuration (loads and validates the policy)."""
    if settings.compile_commands and not os.path.exists(settings.compile_commands):
        raise UsageFailure(f"--compile-commands: {settings.compile_commands}: no such file or directory")
    policy = load_policy(settings.rules)
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
    the nearest configuration file's `select`, `ignore` and `exclude-tests`)."""
    report = run(config, progress=progress)
    _add_unused_suppressions(report)
    report.notices = list(dict.fromkeys(report.notices))  # one message per file, line and text
    report.stats.setdefault("suppressed", 0)
    of_file = _settings_per_file(settings, tree)
    report.findings = [f for f in report.findings if f.rule in of_file(f.path).enabled_rules()]
    kept = [f for f in report.findings if not (of_file(f.path).exclude_tests and TEST_TAG in f.tags)]
    if len(kept) != len(report.findings) or settings.exclude_tests:
        report.stats["tests_excluded"] = len(report.findings) - len(kept)
    report.findings = kept
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
    editing = _editing()
    if editing.stdin_filename is not None:
        _read_stdin(editing, settings)
    config = _with_overlay(build_run_config(settings, tree), editing)
    progress = _progress_line(view)
    try:
        report = analyze(settings, config, tree, progress)
        _fix_step(report, config, editing)
    except Exception as exc:  # noqa: BLE001 - an analyzer bug must end with a clear message and exit 2
        _internal_error(exc)
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
            and not any(_is_failure(n) for n in report.notices):
        click.echo(f"ortlint: warning: no C, C++, Java or Go source files found in "
                   f"{terminal_safe(', '.join(config.paths))}", err=True)
    if view.write_summaries:
        _write_summaries(report, config, view.write_summaries)
    if view.list_unknown_calls:
        _emit(_unknown_calls_json(report) if settings.format == "json" else _unknown_calls_table(report),
              view.output, color=False)
    elif view.explain_summaries:
        _emit(explain_summaries(report.summaries), view.output, color=False)
    elif editing.fix and editing.stdin_data is not None and not view.output:  # stdout holds the fixed source
        click.echo(_format(report, settings.format, view), nl=False, err=True)
    elif (view.write_baseline or view.write_summaries) and not view.output:
        _echo_errors(report, "", view)  # a writer's one line instead of the report; failures still show
    else:
        _emit(_format(report, settings.format, view), view.output, color=_use_color(view))
        _echo_errors(report, settings.format, view)
    report.stats["output_seconds"] = time.perf_counter() - analyzed
    _write_stats(report)
    return _exit_code(report, view)


def _shows_progress(view: Presentation) -> bool:
    """The progress line: as asked (`--progress` / `--no-progress`); else only where someone
    watches: stderr is a terminal, not a CI job (CI=true: some CI runners give jobs a
    terminal), not a dumb terminal, and not `--quiet`."""
    if view.progress is not None:
        return view.progress
    if view.quiet or os.environ.get("CI", "").lower() not in ("", "0", "false") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _progress_line(view: Presentation) -> "ProgressLine | None":
    if not _shows_progress(view):
        return None
    from .report.progress import ProgressLine
    try:
        terminal = sys.stderr.isatty()
    except (AttributeError, ValueError):
        terminal = False
    return ProgressLine(sys.stderr, terminal)


def _changed_lines(rev: str) -> "ChangedLines":
    from .gitdiff import DiffError, changed_lines
    try:
        return changed_lines(rev)
    except DiffError as exc:
        raise UsageFailure(str(exc)) from None


def _keep_changed(report: Report, changed: "ChangedLines", rev: str) -> None:
    """--diff: only findings that touch a changed line; the analysis itself was not narrowed."""
    from .gitdiff import select_changed
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
               f"to {terminal_safe(path)}{_unshown(report)}", err=True)


def _unshown(report: Report) -> str:
    """What a writer's one line says about the run (the report is not shown)."""
    files = len(report.files)
    warnings = sum(1 for n in report.notices if n.level == "warning")
    return f" ({files} file{'' if files == 1 else 's'}" + (f", {warnings} warning{'' if warnings == 1 else 's'} not shown)"
                                                          if warnings else ")")


def _apply_baseline(report: Report, settings: Settings, view: Presentation) -> None:
    """Record the findings (--write-baseline), or keep only those the baseline does not know."""
    if view.write_baseline:
        write_baseline(view.write_baseline, report.findings)
        count = len(report.findings)
        click.echo(f"ortlint: wrote {count} finding{'' if count == 1 else 's'} to baseline "
                   f"{terminal_safe(view.write_baseline)}{_unshown(report)}", err=True)
    elif settings.baseline:
        report.findings, known = split_new(settings.baseline, report.findings)
        report.stats["baselined"] = len(known)


def _internal_error(exc: BaseException) -> None:
    click.echo(f"ortlint: internal error: {type(exc).__name__}: {terminal_safe(str(exc))}", err=True)
    if os.environ.get("ORTLINT_DEBUG"):
        click.echo("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)), err=True)
    else:
        click.echo("ortlint: this is a bug in ortlint; rerun with ORTLINT_DEBUG=1 for the traceback and please report it",
                   err=True)


def _format(report: Report, fmt: str, view: Presentation) -> str:
    formatter = get_formatter(fmt)
    return formatter(report, color=_use_color(view), quiet=view.quiet, verbose=view.verbose,
                     show_source=view.show_source)


def _use_color(view: Presentation) -> bool:
    """`auto` means: writing to a terminal, and the user did not ask for no color (NO_COLOR)."""
    if view.color != "auto":
        return view.color == "always"
    if view.output or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _emit(text: str, output: str | None, color: bool) -> None:
    if not output:
        click.echo(text, nl=False, color=color)
        return
    try:
        with open(output, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except OSError as exc:
        raise UsageFailure(f"--output: {output}: cannot write: {exc.strerror or exc}") from None


def _echo_errors(report: Report, fmt: str, view: Presentation) -> None:
    """Errors about the run (a missing path) also go to stderr when stdout is not the text report."""
    if fmt == "text" and not view.output:
        return
    for n in report.notices:
        if n.level == "error":
            click.echo(f"ortlint: error: {terminal_safe(n.path)}: {terminal_safe(n.message)}", err=True)


def _unknown_calls_table(report: Report) -> str:
    rows = sorted(((terminal_safe(name), count) for name, count in report.unknown_callees.items()),
                  key=lambda kv: (-kv[1], kv[0]))
    if not rows:
        return "No unknown call received a tracked resource.\n"
    width = max(len(name) for name, _ in rows)
    lines = [f"{'CALL':<{width}}  RESOURCES PASSED"] + [f"{name:<{width}}  {count}" for name, count in rows]
    lines.append("")
    lines.append("Describe these in a policy file (--rules FILE): [[call]] entries for functions that release or")
    lines.append("take ownership, [[neutral]] names for functions that only look at what they are given.")
    return "\n".join(lines) + "\n"


def _unknown_calls_json(report: Report) -> str:
    """--list-unknown-calls --format json: `{"schema": 1, "unknown_calls": [{"call", "style", "name",
    "resources"}]}`, most resources first. `style` and `name` are how a policy file spells the call:
    `method:OrtSession.run` is `name = "OrtSession.run"` with `style = "method"`."""
    rows = sorted(report.unknown_callees.items(), key=lambda kv: (-kv[1], kv[0]))
    calls = []
    for callee, count in rows:
        style, sep, name = callee.partition(":")
        if not sep or not style.isalpha():
            style, name = "plain", callee
        calls.append({"call": callee, "style": style, "name": name, "resources": count})
    return json.dumps({"schema": 1, "unknown_calls": calls}, indent=2, ensure_ascii=True) + "\n"


def _is_failure(n: Notice) -> bool:
    return n.level == "error" or n.message.startswith("internal error")


def _exit_code(report: Report, view: Presentation) -> int:
    if any(_is_failure(n) for n in report.notices):
        return EXIT_ERROR
    if view.write_baseline or view.write_summaries or view.list_unknown_calls or view.explain_summaries \
            or view.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if report.findings else EXIT_CLEAN


# ----------------------------------------------------------------------------- sanitizer


@main.command(context_settings=CONTEXT, epilog="""\b
Exit codes: 0 the log holds no report, 1 it holds at least one, 2 the log cannot be read
(or a usage error). Documentation: docs/cli.md, section `ortlint sanitizer`.""")
@click.argument("log", metavar="LOG")
@click.argument("paths", nargs=-1, type=click.Path(), metavar="[PATH]...")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True,
              help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the result to FILE instead of stdout.")
@click.option("--rules", "rule_files", multiple=True, type=click.Path(), metavar="FILE",
              help="Extra policy file describing your own API (repeatable).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Read settings from FILE instead of looking for one.")
@click.option("--isolated", is_flag=True, help="Ignore configuration files.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip files and folders matching GLOB (repeatable).")
@click.option("--jobs", "-j", type=click.IntRange(min=0, max=MAX_JOBS), help="Worker processes; 0 = one per core.")
@click.option("--unknown-calls", type=click.Choice(UNKNOWN_CALLS), help="As for `ortlint check`.")
@click.option("--cache-dir", type=click.Path(file_okay=False), metavar="DIR", help="Per-file result cache.")
@click.option("--no-cache", is_flag=True, default=None, help="Do not read or write the cache.")
@click.option("--quiet", "-q", is_flag=True, help="Text format: no traces, no summary line.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
def sanitizer(log: str, paths: tuple[str, ...], fmt: str, output: str | None, rule_files: tuple[str, ...],
              config_file: str | None, isolated: bool, exclude: tuple[str, ...], jobs: int | None,
              unknown_calls: str | None, cache_dir: str | None, no_cache: bool | None, quiet: bool, color: str) -> None:
    """Explain AddressSanitizer/LeakSanitizer reports in LOG (`-`: standard input) with the findings
    for PATHs (default: the current folder): which finding explains each leak, double free or use
    after free, or why none does."""
    from .report.sanitizer_report import FORMATTERS
    from .sanitizer.command import LogUnreadable, explain_log, log_warning, read_log
    overrides = Overrides(paths=list(paths), rules=list(rule_files), exclude=list(exclude), jobs=jobs,
                          unknown_calls=unknown_calls, cache_dir=cache_dir, cache=False if no_cache else None)
    view = Presentation(output=output, color=color, quiet=quiet)
    try:
        parsed = read_log(log)
        settings = load_settings(overrides, config_file, isolated)
        config = build_run_config(settings)
        result = explain_log(parsed, lambda: analyze(settings, config), config.policy, config.extensions)
        warning = log_warning(parsed, log)
        if warning:
            click.echo(f"ortlint: warning: {terminal_safe(warning)}", err=True)
        if fmt != "text" or output:  # the text report lists them itself
            for line, problem in parsed.problems:
                click.echo(f"ortlint: warning: {terminal_safe(log)}:{line}: {terminal_safe(problem)}", err=True)
        failures = [n for n in result.report.notices if _is_failure(n)]
        for n in failures:
            click.echo(f"ortlint: error: {terminal_safe(n.path)}: {terminal_safe(n.message)}", err=True)
        _emit(FORMATTERS[fmt](result, color=_use_color(view), quiet=quiet), output, color=_use_color(view))
        code = EXIT_ERROR if failures else EXIT_FINDINGS if result.explained else EXIT_CLEAN
    except (LogUnreadable, ConfigError, PolicyError, UsageFailure) as exc:
        click.echo(f"ortlint: error: {terminal_safe(str(exc))}", err=True)
        code = EXIT_ERROR
    except KeyboardInterrupt:
        click.echo("ortlint: interrupted", err=True)
        code = 130
    except Exception as exc:  # noqa: BLE001 - a bug must end with a clear message and exit 2
        _internal_error(exc)
        code = EXIT_ERROR
    sys.exit(code)


# ----------------------------------------------------------------------------- server


@main.command(context_settings=CONTEXT)
@click.option("--stdio", is_flag=True, help="Talk over standard input and output (the default; editors pass it).")
def server(stdio: bool) -> None:
    """Language server (LSP) over standard input and output: diagnostics as you type, fixes and
    suppressions as code actions. Editor settings: docs/editors.md."""
    del stdio  # the only transport
    try:
        from .server.lsp import serve
    except ImportError as exc:  # pygls is a dependency; a broken install still says why
        click.echo(f"ortlint: error: the language server needs pygls and lsprotocol ({exc})", err=True)
        sys.exit(EXIT_ERROR)
    serve()
    sys.exit(EXIT_CLEAN)


# ----------------------------------------------------------------------------- rules / explain


@main.command(context_settings=CONTEXT)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules(fmt: str) -> None:
    """List every rule: id, name, default level and what it finds."""
    if fmt == "json":
        data = [{"id": r.id, "name": r.name, "level": r.level, "summary": r.summary,
                 "docs": f"docs/rules/{r.id}.md"} for r in RULES.values()]
        click.echo(json.dumps(data, indent=2))
        return
    width = max(len(r.name) for r in RULES.values())
    click.echo(f"{'ID':<7} {'NAME':<{width}}  {'LEVEL':<7} DESCRIPTION")
    for r in RULES.values():
        click.echo(f"{r.id:<7} {r.name:<{width}}  {r.level:<7} {r.summary}")
    click.echo("\n`ortlint explain ID` shows what a rule finds, why it matters, an example and the fix.")


@main.command(context_settings=CONTEXT)
@click.argument("rule")
def explain(rule: str) -> None:
    """Explain RULE (an id such as ORT001 or a name such as leak)."""
    try:
        ids = resolve_rules([rule], "explain")
    except ConfigError as exc:
        click.echo(f"ortlint: error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    for rule_id in ids:
        page = rule_markdown(rule_id)
        if not page:
            r = RULES[rule_id]
            page = f"# {r.id}: {r.name}\n\n{r.summary}\n"
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        click.echo(render_for_terminal(page, "\033[1m" if color else "", "\033[0m" if color else ""), nl=False, color=color)


if __name__ == "__main__":
    main()
