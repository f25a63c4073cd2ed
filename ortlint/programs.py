"""Finding a program to run (git for `--diff`, a compiler asked where its headers are) without
running one from the analyzed tree.

`shutil.which` walks PATH as the shell does, and in CI PATH is not clean: an empty entry or `.`
means the current folder (the checkout), and tools put folders of the checkout on it
(`node_modules/.bin`, direnv's `bin/`). A `./clang` or `./git` committed to the repository then
ran with the job's token. `trusted_program` skips every PATH entry that is empty or relative,
that is the current folder, or that lies inside an analyzed folder (`distrust`), and refuses a
program whose real path (after links) lies inside one; what it returns is an absolute path.
"""
from __future__ import annotations

import os
from typing import Iterable

_untrusted: tuple[str, ...] = ()  # real paths of the analyzed folders (set by the runner and the CLI; only grows)


def distrust(paths: Iterable[str]) -> None:
    """Mark the analyzed paths (files or folders) as untrusted for programs: each folder, or the
    folder of each file, and everything below it. (The current folder itself is never trusted
    either; see `trusted_program`.)"""
    global _untrusted
    folders = set(_untrusted)
    for path in paths:
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            continue
        folders.add(real if os.path.isdir(real) else os.path.dirname(real))
    _untrusted = tuple(sorted(folders))


def untrusted_folders() -> tuple[str, ...]:
    return _untrusted


def inside_untrusted(path: str) -> bool:
    """Whether `path` (made real) is one of the untrusted folders or inside one."""
    real = os.path.realpath(path)
    return any(real == folder or real.startswith(folder.rstrip(os.sep) + os.sep) for folder in _untrusted)


def program_folder_trusted(entry: str) -> bool:
    """Whether a PATH entry may provide programs: absolute, not the current folder, not inside
    an analyzed folder."""
    if not entry or not os.path.isabs(entry):
        return False  # "" and relative entries mean the current folder, wherever that is
    folder = os.path.realpath(entry)
    return folder != os.path.realpath(os.getcwd()) and not inside_untrusted(folder)


def trusted_program(name: str, search: str | None = None) -> str | None:
    """The absolute path of `name` on PATH (or `search`), skipping untrusted entries (see the
    module docstring); None when no trusted entry holds it."""
    for entry in (os.environ.get("PATH", os.defpath) if search is None else search).split(os.pathsep):
        if not program_folder_trusted(entry):
            continue
        for candidate in _names(os.path.join(entry, name)):
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK) and not inside_untrusted(candidate):
                return os.path.abspath(candidate)
    return None


def _names(path: str) -> list[str]:
    if os.name != "nt":
        return [path]
    exts = [e for e in os.environ.get("PATHEXT", ".EXE;.BAT;.CMD").split(";") if e]
    return [path] + [path + e for e in exts]
