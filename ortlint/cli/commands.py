"""The commands and their options: `check` (the default: `ortlint PATH...`), `sanitizer`, `server`,
`rules` and `explain`. Options become settings here; running them is `execution.py`'s job, showing
the outcome `presentation.py`'s."""
from __future__ import annotations

import json
import os
import sys

import click

from .. import __version__
from ..baseline import BaselineError
from ..config import (
    FORMATS,
    MAX_JOBS,
    MAX_MEMORY_LIMIT,
    MIN_MEMORY_LIMIT,
    UNKNOWN_CALLS,
    ConfigError,
    Overrides,
    describe_settings,
    load_settings,
    load_tree,
    resolve_rules,
    time_limit_problem,
)
from ..docs import render_for_terminal, rule_markdown
from ..findings import RULES
from ..policy import PolicyError
from ..scope import SCOPES
from ..textsafe import terminal_safe
from .editing import EDITING_KEY, Editing
from .execution import analyze, build_run_config, execute
from .presentation import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, Presentation, UsageFailure, emit, internal_error, \
    is_failure, use_color


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


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
        internal_error(exc)
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


def _editing_options(command):
    """Add --fix, --unsafe-fixes, --stdin-filename and --unused-suppressions to `command`;
    their values go to the click context (`current_editing()`), not to its parameters."""
    import functools

    @functools.wraps(command)
    def wrapper(*args, fix: bool, unsafe_fixes: bool, stdin_filename: str | None, unused_suppressions: bool,
                **kwargs):
        click.get_current_context().meta[EDITING_KEY] = Editing(fix or unsafe_fixes, unsafe_fixes, stdin_filename,
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


def _policy_and_config_options(command):
    """--rules, --config, --isolated and --exclude: the same for `check` and `sanitizer`."""
    options = [
        click.option("--rules", "rule_files", multiple=True, type=click.Path(), metavar="FILE",
                     help="Extra policy file describing your own API (repeatable)."),
        click.option("--config", "config_file", type=click.Path(dir_okay=False), metavar="FILE",
                     help="Read settings from FILE instead of looking for one."),
        click.option("--isolated", is_flag=True, help="Ignore configuration files."),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Skip files and folders matching GLOB (repeatable)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@main.command(context_settings=CONTEXT, epilog=_EPILOG)
@click.argument("paths", nargs=-1, type=click.Path(), metavar="[PATH]...")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Output format.  [default: text]")
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="Write the report to FILE instead of stdout.")
@click.option("--select", multiple=True, metavar="RULE",
              help="Report only these rules (ids, names or prefixes; repeatable, comma lists).")
@click.option("--ignore", multiple=True, metavar="RULE", help="Do not report these rules (repeatable, comma lists).")
@_policy_and_config_options
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
@click.option("--scope", type=click.Choice(SCOPES), default=None,
              help="`all`: also report findings about C++ `new`/`delete` memory and ONNX Runtime C API objects in "
                   "files that use neither ONNX Runtime nor JNI (tagged `general`).  [default: onnxruntime]")
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
          diff_rev: str | None, exclude_tests: bool | None, scope: str | None, no_ignore: bool | None, show_settings: str | None,
          show_source: bool = True, progress: bool | None = None) -> None:
    """Check C, C++, JNI, Java, Go and C# files and folders (default: the current folder)."""
    overrides = Overrides(paths=list(paths), select=list(select), ignore=list(ignore), rules=list(rule_files),
                          exclude=list(exclude), default_excludes=False if no_default_excludes else None,
                          extensions=list(extensions), jobs=jobs, format=fmt, baseline=baseline,
                          unknown_calls=unknown_calls, compile_commands=compile_commands,
                          cache_dir=cache_dir, cache=False if no_cache else None, force_exclude=force_exclude,
                          time_limit=time_limit, memory_limit=memory_limit, exclude_tests=exclude_tests, scope=scope,
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
        internal_error(exc)
        code = EXIT_ERROR
    sys.exit(code)


@main.command(context_settings=CONTEXT, epilog="""\b
Exit codes: 0 the log holds no report, 1 it holds at least one, 2 the log cannot be read
(or a usage error). Documentation: docs/cli.md, section `ortlint sanitizer`.""")
@click.argument("log", metavar="LOG")
@click.argument("paths", nargs=-1, type=click.Path(), metavar="[PATH]...")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text", show_default=True,
              help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write the result to FILE instead of stdout.")
@_policy_and_config_options
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
    from ..report.sanitizer_report import FORMATTERS
    from ..sanitizer.command import LogUnreadable, explain_log, log_warning, read_log
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
        failures = [n for n in result.report.notices if is_failure(n)]
        for n in failures:
            click.echo(f"ortlint: error: {terminal_safe(n.path)}: {terminal_safe(n.message)}", err=True)
        emit(FORMATTERS[fmt](result, color=use_color(view), quiet=quiet), output, color=use_color(view))
        code = EXIT_ERROR if failures else EXIT_FINDINGS if result.explained else EXIT_CLEAN
    except (LogUnreadable, ConfigError, PolicyError, UsageFailure) as exc:
        click.echo(f"ortlint: error: {terminal_safe(str(exc))}", err=True)
        code = EXIT_ERROR
    except KeyboardInterrupt:
        click.echo("ortlint: interrupted", err=True)
        code = 130
    except Exception as exc:  # noqa: BLE001 - a bug must end with a clear message and exit 2
        internal_error(exc)
        code = EXIT_ERROR
    sys.exit(code)


@main.command(context_settings=CONTEXT)
@click.option("--stdio", is_flag=True, help="Talk over standard input and output (the default; editors pass it).")
def server(stdio: bool) -> None:
    """Language server (LSP) over standard input and output: diagnostics as you type, fixes and
    suppressions as code actions. Editor settings: docs/editors.md."""
    del stdio  # the only transport
    try:
        from ..server.lsp import serve
    except ImportError as exc:  # pygls is a dependency; a broken install still says why
        click.echo(f"ortlint: error: the language server needs pygls and lsprotocol ({exc})", err=True)
        sys.exit(EXIT_ERROR)
    serve()
    sys.exit(EXIT_CLEAN)


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
