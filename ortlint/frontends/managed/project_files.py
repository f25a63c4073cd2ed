"""The source files of a project folder, as the managed front ends index them (Java's source root,
C#'s project folder): every file with the language's suffix, in a stable order, or None when the
project is larger than one worker should read (each worker indexes it on its own)."""
from __future__ import annotations

import os
from typing import Callable

MAX_INDEX_FILES = 4000  # a project with more source files is not indexed
MAX_INDEX_BYTES = 64 * 1024 * 1024  # nor one with more source bytes in all


def project_files(root: str, suffix: str, descend: Callable[[str], bool] | None) -> list[str] | None:
    """Every `suffix` file below `root`, folders and files in sorted order; `descend(name)` says
    which subfolders to walk into (None: `root` itself only). None past the index's bounds."""
    files: list[str] = []
    total = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if descend(d)) if descend is not None else []
        for name in sorted(names):
            if name.endswith(suffix):
                full = os.path.join(folder, name)
                files.append(full)
                try:
                    total += os.path.getsize(full)
                except OSError:
                    pass
        if len(files) > MAX_INDEX_FILES or total > MAX_INDEX_BYTES:
            return None
    return files
