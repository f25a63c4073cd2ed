"""Helpers shared by the CLI, SARIF and bad-input tests: run the real command line in-process."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from ortlint.cli import main

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
FIXTURES = ROOT / "fixtures"

# A leak on the early return: ORT001 at line 3, column 13.
LEAK_C = """#include <stdlib.h>
void leaky(int n) {
  char *p = malloc(n);
  if (n > 3)
    return;
  free(p);
}
"""
CLEAN_C = """#include <stdlib.h>
void ok(void) {
  char *p = malloc(4);
  free(p);
}
"""


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


def ortlint(*args: str, env: dict[str, str] | None = None) -> Result:
    """Run `ortlint ARGS` in this process, as the console script would."""
    runner = CliRunner()
    result = runner.invoke(main, list(args), env=env, catch_exceptions=False, prog_name="ortlint")
    return Result(result.exit_code, result.stdout, result.stderr)


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
