"""Command line: options -> RunConfig -> run -> formatter. No analysis here."""
from __future__ import annotations

import sys

import click

from . import __version__
from .engine.analyze import Options
from .policy import PolicyError, load_policy
from .report import get_formatter
from .runner import RunConfig, run


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "sarif", "json", "github"]), default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write the report to FILE.")
@click.option("--rules", "rule_files", multiple=True, type=click.Path(), help="Extra policy file (repeatable).")
@click.version_option(__version__, prog_name="ortlint")
def main(paths: tuple[str, ...], fmt: str, output: str | None, rule_files: tuple[str, ...]) -> None:
    """Check release pairing in C, C++, JNI and Java code that uses ONNX Runtime."""
    try:
        policy = load_policy(rule_files)
    except PolicyError as exc:
        click.echo(f"ortlint: {exc}", err=True)
        sys.exit(2)
    report = run(RunConfig(list(paths) or ["."], policy, Options()))
    text = get_formatter(fmt)(report)
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        click.echo(text, nl=False)
    sys.exit(1 if report.findings else 0)


if __name__ == "__main__":
    main()
