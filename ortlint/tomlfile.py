"""Reading a TOML file (policy or configuration) with errors that name the file."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


def read_toml(path: str | os.PathLike[str], what: str, error: type[Exception]) -> tuple[dict[str, Any], str]:
    """(document, text) of a TOML file; anything wrong raises `error` naming the file and
    `what` it is ("policy file", "configuration file")."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"{p}: cannot read {what}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise error(f"{p}: {what} is not UTF-8 text") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{p}: invalid TOML: {exc}") from None
