"""Finding the files to analyze: walking folders, excludes, language by extension.

The tree is not trusted (CI checks out pull requests from forks), so the walk is bounded by what
the tree is, not by what it points to:

* only regular files are analyzed: a FIFO named `x.go` blocked the run until the time limit, a
  link to `/dev/zero` named `x.h` filled memory; FIFOs, sockets and devices are skipped with a
  warning, and so is anything in /proc or /sys;
* a symbolic link that leaves the analyzed folder (to `/`, to `$HOME`, to another checkout) is
  not followed (a note says so), unless `follow_symlinks` (`--follow-symlinks`) asks for it; a
  link inside the folder is followed;
* every real folder is walked once, so link loops and fan-outs end (`a -> .`, ten links to `..`).

`Walker` holds these rules in one place; issue 30 (.gitignore, one file per real path) builds
on it.
"""
from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from dataclasses import dataclass, field

from .fileio import in_pseudo_filesystem, kind_of

from .frontends.registry import LANGUAGE_BY_SUFFIX

DEFAULT_EXCLUDES = (".git", ".hg", ".svn", "build", "cmake-build-*", "out", "dist", "node_modules", "vendor",
                    "third_party", "third-party", "external", ".venv", "venv", "__pycache__", ".tox",
                    ".ortlint_cache", ".mypy_cache", ".pytest_cache")


@dataclass(frozen=True)
class SourceFile:
    path: str  # as the user will see it (relative when given relative)
    language: str


@dataclass
class Discovery:
    files: list[SourceFile]
    problems: list[tuple[str, str]]  # (path, message): warnings, and errors for paths that do not exist
    notes: list[tuple[str, str]] = field(default_factory=list)  # (path, message): links not followed


def language_of(path: str, extra: dict[str, str] | None = None) -> str | None:
    suffix = os.path.splitext(path)[1].lower()
    if extra and suffix in extra:
        return extra[suffix]
    return LANGUAGE_BY_SUFFIX.get(suffix)


def discover(paths: list[str], excludes: tuple[str, ...] = (), use_default_excludes: bool = True,
             extensions: dict[str, str] | None = None, follow_symlinks: bool = False) -> Discovery:
    """Expand files and folders into source files, in a stable order; never raise."""
    patterns = tuple(excludes) + (DEFAULT_EXCLUDES if use_default_excludes else ())
    found = Discovery([], [])
    files: dict[str, SourceFile] = {}
    for raw in paths:
        if not _lexists(raw):
            found.problems.append((raw, "no such file or directory"))
            continue
        if os.path.isdir(raw):
            Walker(raw, patterns, extensions, follow_symlinks, found).walk(files)
            continue
        lang = language_of(raw, extensions)
        if lang is None:
            found.problems.append((raw, "not a C, C++, Java or Go source file (by extension); skipped"))
            continue
        problem = not_regular(raw)
        if problem:  # named explicitly: followed wherever it points, but only to a regular file
            found.problems.append((raw, f"{problem}; skipped"))
            continue
        files.setdefault(os.path.normpath(raw), SourceFile(os.path.normpath(raw), lang))
    found.files = sorted(files.values(), key=lambda f: f.path)
    return found


def _lexists(path: str) -> bool:
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):
        return False


def not_regular(path: str, st: os.stat_result | None = None) -> str | None:
    """Why `path` is not a file to read ("broken symlink", "not a regular file (a FIFO)", ...),
    or None for a regular file."""
    try:
        st = st or os.stat(path)
    except OSError:
        return "broken symlink" if os.path.islink(path) else "cannot read file"
    if not stat.S_ISREG(st.st_mode):
        return f"not a regular file ({kind_of(st.st_mode)})"
    if in_pseudo_filesystem(st):
        return "a file of /proc or /sys"
    return None


def _excluded(rel: str, name: str, patterns: tuple[str, ...]) -> bool:
    """`fnmatch.fnmatch(name or rel, any pattern)`, with the patterns compiled once into one
    regular expression (a tree of 20 000 files otherwise costs a million fnmatch calls)."""
    if not patterns:
        return False
    regex = _exclude_regex(patterns)
    return regex.match(os.path.normcase(name)) is not None or regex.match(os.path.normcase(rel)) is not None


@functools.lru_cache(maxsize=32)
def _exclude_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(os.path.normcase(p)) for p in patterns))


class Walker:
    """One analyzed folder: the walk, and the rules for links and special files (module docstring)."""

    def __init__(self, root: str, patterns: tuple[str, ...], extensions: dict[str, str] | None,
                 follow_symlinks: bool, found: Discovery):
        self.root = root
        self.real_root = os.path.realpath(root)
        self.patterns = patterns
        self.extensions = extensions
        self.follow_symlinks = follow_symlinks
        self.found = found
        self.seen_dirs: set[tuple[int, int]] = set()

    def walk(self, files: dict[str, SourceFile]) -> None:
        stack = [(self.root, ".")]
        while stack:
            folder, rel_dir = stack.pop()
            if not self._enter(folder):
                continue
            subfolders = []
            for entry in self._entries(folder):
                rel = os.path.normpath(os.path.join(rel_dir, entry.name))
                if _excluded(rel, entry.name, self.patterns):
                    continue
                full = os.path.normpath(os.path.join(folder, entry.name))
                if _is_dir(entry):
                    if self._may_follow(entry, full, "folder"):
                        subfolders.append((full, rel))
                    continue
                self._file(entry, full, files)
            stack.extend(reversed(subfolders))

    def _enter(self, folder: str) -> bool:
        """Each real folder once (link loops end); never a folder of /proc or /sys."""
        try:
            st = os.stat(folder)
        except OSError as err:
            self.found.problems.append((folder, f"cannot read folder: {err.strerror or err}"))
            return False
        ident = (st.st_dev, st.st_ino)
        if ident in self.seen_dirs:
            return False
        self.seen_dirs.add(ident)
        if in_pseudo_filesystem(st):
            self.found.notes.append((folder, "a folder of /proc or /sys; not walked"))
            return False
        return True

    def _entries(self, folder: str) -> list[os.DirEntry]:
        try:
            with os.scandir(folder) as it:
                return sorted(it, key=lambda e: e.name)
        except OSError as err:
            self.found.problems.append((getattr(err, "filename", folder) or folder,
                                        f"cannot read folder: {err.strerror or err}"))
            return []

    def _may_follow(self, entry: os.DirEntry, full: str, what: str) -> bool:
        """A link is followed when it stays inside the analyzed folder, or when asked to."""
        if self.follow_symlinks or not entry.is_symlink():
            return True
        target = os.path.realpath(full)
        if target == self.real_root or target.startswith(self.real_root.rstrip(os.sep) + os.sep):
            return True
        self.found.notes.append((full, f"symbolic link to a {what} outside the analyzed folder ({target}); "
                                       "not followed (--follow-symlinks follows it)"))
        return False

    def _file(self, entry: os.DirEntry, full: str, files: dict[str, SourceFile]) -> None:
        lang = language_of(entry.name, self.extensions)
        if lang is None:
            return
        try:
            st = entry.stat()  # follows a link
        except OSError:
            self.found.problems.append((full, "broken symlink; skipped" if entry.is_symlink() else
                                        "cannot read file; skipped"))
            return
        problem = not_regular(full, st)
        if problem:
            self.found.problems.append((full, f"{problem}; skipped"))
            return
        if self._may_follow(entry, full, "file"):
            files.setdefault(full, SourceFile(full, lang))


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # follows a link (whether to walk it is `_may_follow`'s question)
    except OSError:
        return False
