"""Finding the compile database (precise mode), kept apart from `clang_frontend` so that the
check runs on every C/C++ run without importing libclang's bindings or the C++ model."""
from __future__ import annotations

from pathlib import Path

DB_NAME = "compile_commands.json"


def find_compile_commands(paths: list[str]) -> str | None:
    """Auto-discovery: `compile_commands.json` in an analyzed folder or its `build/`, or in a
    parent folder up to the project root (the first folder with a `.git`)."""
    for raw in paths:
        try:
            start = Path(raw).resolve()
        except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13): nothing to find
            continue
        folder = start if start.is_dir() else start.parent
        candidates = [folder]
        probe = folder
        while not (probe / ".git").exists() and probe.parent != probe and len(candidates) < 12:
            probe = probe.parent
            candidates.append(probe)
        if not (probe / ".git").exists():
            candidates = [folder]
        for cand in candidates:
            for db in (cand / DB_NAME, cand / "build" / DB_NAME):
                if db.is_file():
                    return str(db)
    return None


def resolve_compile_commands(value: str | None, paths: list[str]) -> str | None:
    """`--compile-commands` may name the file or its folder; unset means auto-discovery; an
    empty string turns precise mode off."""
    if value == "":
        return None
    if value is None:
        return find_compile_commands(paths)
    p = Path(value)
    if p.is_dir():
        for db in (p / DB_NAME, p / "build" / DB_NAME):
            if db.is_file():
                return str(db)
    return value
