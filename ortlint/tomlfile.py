"""Reading a TOML file (policy or configuration) with errors that name the file.

The file may come from the analyzed tree (`pyproject.toml`, a `rules = [...]` entry), so it is
read as `fileio.read_bounded` reads (a regular file, at most CONFIG_BYTES) and its nesting is
measured before `tomllib` sees it: tomllib recurses once per level of arrays and inline
tables, and a value nested 100 000 deep ended in a RecursionError traceback.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from .fileio import CONFIG_BYTES, read_bounded

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

MAX_NESTING = 64  # arrays and inline tables inside each other; real files nest 3 or 4 deep


def read_toml(path: str | os.PathLike[str], what: str, error: type[Exception]) -> tuple[dict[str, Any], str]:
    """(document, text) of a TOML file; anything wrong raises `error` naming the file and
    `what` it is ("policy file", "configuration file")."""
    p = Path(path)
    try:
        text = read_bounded(p, CONFIG_BYTES).decode("utf-8")
    except (OSError, ValueError) as exc:
        if isinstance(exc, UnicodeDecodeError):
            raise error(f"{p}: {what} is not UTF-8 text") from None
        reason = getattr(exc, "strerror", None) or exc
        raise error(f"{p}: cannot read {what}: {reason}") from None
    depth, line = nesting(text)
    if depth > MAX_NESTING:
        raise error(f"{p}:{line}: {what} nests arrays or inline tables more than {MAX_NESTING} deep; "
                    "flatten the value")
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{p}: invalid TOML: {exc}") from None
    except RecursionError:  # a nesting the scan above did not see; never a traceback
        raise error(f"{p}: {what} is nested too deeply to read; flatten it") from None


def nesting(text: str) -> tuple[int, int]:
    """(deepest nesting of `[`/`{` in values, the line where it is reached), skipping strings
    and comments. Table headers (`[a.b]`, `[[x]]`) open and close on their line, so they count
    one or two, far below the bound. One regular expression finds strings, comments and
    brackets; only brackets are looked at (the shipped policy is scanned in a few ms)."""
    depth = deepest = 0
    where = 0
    for m in _TOKENS.finditer(text):
        token = m.group()
        if token == "[" or token == "{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, m.start()
                if deepest > MAX_NESTING:
                    break
        elif token == "]" or token == "}":
            depth = max(0, depth - 1)
    return deepest, text.count("\n", 0, where) + 1


# strings (multi-line first), comments, brackets; an unterminated string matches to the end of
# its line (tomllib reports it)
_TOKENS = re.compile(r'''"""(?:[^"\\]|\\.|"(?!""))*(?:"""|$)|\'\'\'.*?(?:\'\'\'|$)|"(?:[^"\\\n]|\\.)*"?|\'[^\'\n]*\'?'''
                     r"|#[^\n]*|[\[\]{}]", re.S)
