"""Ignore files as git, ripgrep and ruff read them: `.gitignore`, `.ignore`, `.git/info/exclude`.

A user's `.gitignore` already says what is not source (build output, downloaded SDKs, generated
code); a checker that walks into `build-android/` reports findings in files nobody wrote. The
matching itself is `pathspec`'s `GitIgnoreSpec` (git's own wildmatch rules, negation, `dir/`,
anchoring, `**`), so ortlint does not re-implement gitignore semantics. What this module adds is
the stacking git does:

* each folder's `.gitignore` applies below that folder, with paths relative to it;
* a deeper file's rules win over a shallower one's, and within one file the last matching line
  wins (`!keep.h` re-includes what `*.h` above ignored);
* `.ignore` (ripgrep's, ruff's) is read after `.gitignore` of the same folder and wins over it;
  `.git/info/exclude` of a repository's top folder comes before its `.gitignore`;
* a file inside an ignored folder stays ignored (git does not re-include it; the walk never
  enters the folder).

The user's global excludes file (`core.excludesFile`) is not read: results must not depend on the
machine they run on. Ignore files are read as regular files only, with a size bound.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .fileio import read_bounded

if TYPE_CHECKING:  # imported where an ignore file is read: a run that reads none skips its 50 ms import
    from pathspec import GitIgnoreSpec

IGNORE_FILE_BYTES = 1024 * 1024  # a .gitignore of 1 MB is not a hand-written one; larger ones are skipped
# Wildcard runs (`*`, `**`) one line may hold. Matching a line with k of them backtracks in time
# ~ length^k (`*a*a*a*b` against a 250-character name: 0.9 s; 12 `**` never ended); the ignore
# files of 25 public repositories have 4 600 lines, none with more than 3 (16 with 3, such as
# `**/ios/**/*.pbxuser`). A longer line is dropped with a warning: a tree cannot stall the walk.
MAX_WILDCARD_RUNS = 3
IGNORE_FILES = (".gitignore", ".ignore")  # read in this order in every folder: the later one wins
VCS_MARKERS = (".git", ".hg")


@dataclass(frozen=True)
class IgnoreSpec:
    """The rules of one ignore file; they apply to paths below `base` (absolute)."""

    base: str
    spec: GitIgnoreSpec
    source: str  # the file, for messages and --show-settings
    prefilter: re.Pattern[str] | None = None  # matches whatever some line of the file matches

    def check(self, rel: str) -> bool | None:
        """True: ignored, False: re-included (`!`), None: no line matches `rel` (relative to
        `base`, with a trailing `/` for a folder). Most paths match no line: one search of the
        lines' expressions joined tells so (pathspec tries each line in turn, 130 of them in
        ONNX Runtime's .gitignore: 4.5 s of a 0.7 s walk before this)."""
        if self.prefilter is not None and self.prefilter.search(rel) is None:
            return None
        return self.spec.check_file(rel).include


_WILDCARD_RUN = re.compile(r"\*+")

Chain = tuple[IgnoreSpec, ...]  # shallowest first; the deepest matching rule decides


class IgnoreFiles:
    """Reads and remembers the ignore files of folders (each folder read once per run)."""

    def __init__(self) -> None:
        self._specs: dict[str, Chain] = {}
        self.problems: list[tuple[str, str]] = []  # (file, why it was not read)

    def in_folder(self, folder: str) -> Chain:
        """The ignore files of `folder` itself (absolute), in the order they apply."""
        found = self._specs.get(folder)
        if found is None:
            found = self._specs[folder] = self._read_folder(folder)
        return found

    def chain_to(self, top: str, folder: str) -> Chain:
        """The rules in force inside `folder`: those of every folder from `top` (a repository's
        top folder) down to `folder`, both absolute. A folder outside `top` gets only its own."""
        folders = [folder]
        if folder != top and _is_under(folder, top):
            current = folder
            while current != top:
                current = os.path.dirname(current)
                folders.append(current)
        chain: Chain = ()
        for f in reversed(folders):
            chain = chain + self.in_folder(f)
        return chain

    def _read_folder(self, folder: str) -> Chain:
        specs = []
        exclude = os.path.join(folder, ".git", "info", "exclude")
        if os.path.isdir(os.path.join(folder, ".git")):
            specs.append(self._read(exclude, folder))
        for name in IGNORE_FILES:
            specs.append(self._read(os.path.join(folder, name), folder))
        return tuple(s for s in specs if s is not None)

    def _read(self, path: str, base: str) -> IgnoreSpec | None:
        if not os.path.lexists(path):
            return None
        try:
            data = read_bounded(path, IGNORE_FILE_BYTES)
        except OSError as exc:  # a FIFO, a folder, too large, unreadable: the folder is walked without it
            self.problems.append((path, f"ignore file not read: {exc.strerror or exc}"))
            return None
        lines = data.decode("utf-8", "replace").lstrip("\ufeff").splitlines()
        risky = [n for n, line in enumerate(lines, 1) if len(_WILDCARD_RUN.findall(line)) > MAX_WILDCARD_RUNS]
        if risky:
            self.problems.append((path, f"line {risky[0]}{f' and {len(risky) - 1} more' if len(risky) > 1 else ''}: "
                                        f"more than {MAX_WILDCARD_RUNS} wildcards in one pattern; line ignored"))
            dropped = set(risky)
            lines = [line for n, line in enumerate(lines, 1) if n not in dropped]
        from pathspec import GitIgnoreSpec
        try:
            spec = GitIgnoreSpec.from_lines(lines)
        except Exception as exc:  # noqa: BLE001 - a pattern pathspec rejects: skip the file, say so
            self.problems.append((path, f"ignore file not read: {exc}"))
            return None
        return IgnoreSpec(base, spec, path, _prefilter(spec)) if spec.patterns else None


def _prefilter(spec: GitIgnoreSpec) -> re.Pattern[str] | None:
    """One expression matching what any line's expression matches, or None (no shortcut)."""
    parts = []
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if pattern.include is None:
            continue  # a comment or blank line
        if regex is None:
            return None
        parts.append("(?:" + re.sub(r"\(\?P<[A-Za-z_]\w*>", "(", regex.pattern) + ")")
    try:
        return re.compile("|".join(parts)) if parts else None
    except re.error:
        return None


def _decide(chain: Chain, path: str, is_dir: bool) -> tuple[bool, str] | None:
    """(ignored, the file that decides) for `path` (absolute), or None when no file does: the
    deepest ignore file with a matching line decides, by its last matching line."""
    for item in reversed(chain):
        base = item.base
        if not path.startswith(base.rstrip(os.sep) + os.sep):
            continue
        rel = path[len(base.rstrip(os.sep)) + 1:].replace(os.sep, "/")
        result = item.check(rel + "/" if is_dir else rel)
        if result is not None:
            return bool(result), item.source
    return None


def ignored(chain: Chain, path: str, is_dir: bool) -> bool:
    """Is `path` (absolute, normalized) ignored by the rules of `chain`?"""
    decided = _decide(chain, path, is_dir)
    return decided is not None and decided[0]


def deciding_file(chain: Chain, path: str, is_dir: bool) -> str | None:
    """The ignore file whose rule decides `path` (for messages), or None."""
    decided = _decide(chain, path, is_dir)
    return decided[1] if decided is not None else None


def vcs_top(path: str) -> str | None:
    """The top folder of the git (or Mercurial) checkout holding `path` (absolute), or None."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in VCS_MARKERS):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _is_under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)
