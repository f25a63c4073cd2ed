"""Finding the files to analyze: walking folders, excludes, ignore files, language by extension.

The tree is not trusted (CI checks out pull requests from forks), so the walk is bounded by what
the tree is, not by what it points to:

* only regular files are analyzed: a FIFO named `x.go` blocked the run until the time limit, a
  link to `/dev/zero` named `x.h` filled memory; FIFOs, sockets and devices are skipped with a
  warning, and so is anything in /proc or /sys;
* a symbolic link that leaves the analyzed folder (to `/`, to `$HOME`, to another checkout) is
  not followed (a note says so), unless `follow_symlinks` (`--follow-symlinks`) asks for it; a
  link inside the folder is followed;
* every real folder is walked once, so link loops and fan-outs end (`a -> .`, ten links to `..`).

And the walk finds what a user expects it to find (issue 30):

* **each file once, by real path**: a file reached through several paths (a symlinked folder,
  a linked `alsa.cc`, a folder named twice) is analyzed once and reported under one stable
  path: its real path when the walk reaches it directly (not through a link), else the first
  (sorted) path that reached it. A file named on the command line through a link is reported
  under the real path a whole run would use, so a hook and a full run agree;
* **ignore files**: `.gitignore`, `.ignore` and `.git/info/exclude` from the repository's top
  folder down are respected (`ignorefiles.py`, pathspec's gitignore matching), unless
  `respect_ignore` is off (`--no-ignore`);
* **excludes**: the default folder names (build output, VCS folders, vendored code) are
  skipped as folders only (a file `build-graph.cc` is analyzed), user globs match a name or a
  relative path;
* **configuration per folder**: `rules_for(folder)` (the configuration layer's) gives the walk
  rules of the nearest configuration file, so a sub-project's `exclude` applies below it.

`Walker` holds these rules in one place.
"""
from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Callable

from .fileio import in_pseudo_filesystem, kind_of
from .frontends.registry import LANGUAGE_BY_SUFFIX
from .ignorefiles import Chain, IgnoreFiles, deciding_file, ignored, vcs_top

# Folder names skipped by default (as folders only: a file is never excluded by these). Version
# control, build output of CMake, Bazel, Gradle/Android, Maven, Xcode and friends, virtual
# environments and caches, and vendored code.
DEFAULT_EXCLUDES = (".git", ".hg", ".svn", "build", "build-*", "_build", "Build", "cmake-build-*", "bazel-*",
                    "CMakeFiles", "out", "dist", "target", ".gradle", ".cxx", ".externalNativeBuild", "DerivedData",
                    ".cache", "node_modules", "vendor", "third_party", "third-party", "3rdparty",
                    "3rd_party", "3rd-party", "thirdparty", "ThirdParty", "external", ".venv", "venv",
                    "__pycache__", ".tox", ".ortlint_cache", ".mypy_cache", ".pytest_cache")


@dataclass(frozen=True)
class SourceFile:
    path: str  # as the user will see it (relative when given relative)
    language: str


@dataclass(frozen=True)
class WalkRules:
    """What decides which files below a folder are analyzed: one configuration's discovery
    settings (with the command line applied), or the run's own when no configuration applies."""

    excludes: tuple[str, ...] = ()  # globs: a name, or a path relative to `anchor` or to the walked folder
    default_excludes: bool = True
    respect_ignore: bool = True  # .gitignore, .ignore, .git/info/exclude
    extensions: tuple[tuple[str, str], ...] = ()  # extra suffix -> language
    anchor: str = ""  # absolute folder that relative globs are also matched from (the configuration's folder)
    source: str = ""  # the configuration file these rules come from ("": the run's settings)
    error: str = ""  # the configuration file is invalid: nothing below its folder is analyzed
    # Not discovery's, but per configuration file too, for the run: where `#include "..."` is
    # also looked up for files here (header index), and what test code is (testcode.py).
    include_dirs: tuple[str, ...] = ()
    test_patterns: tuple[str, ...] | None = None  # None: the run's

    @functools.cached_property
    def extension_map(self) -> dict[str, str] | None:
        return dict(self.extensions) or None


RulesFor = Callable[[str], WalkRules]  # absolute folder -> the rules in force there


@dataclass
class Discovery:
    files: list[SourceFile]
    problems: list[tuple[str, str]]  # (path, message): warnings, and errors for paths that do not exist
    notes: list[tuple[str, str]] = field(default_factory=list)  # (path, message): links not followed
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, message): invalid configuration files
    rules: dict[str, WalkRules] = field(default_factory=dict)  # file path -> the rules that admitted it
    duplicates: int = 0  # paths that reached a file already found through another path (links)
    force_excluded: int = 0  # files named explicitly and skipped by --force-exclude


def language_of(path: str, extra: dict[str, str] | None = None) -> str | None:
    suffix = os.path.splitext(path)[1].lower()
    if extra and suffix in extra:
        return extra[suffix]
    return LANGUAGE_BY_SUFFIX.get(suffix)


def discover(paths: list[str], excludes: tuple[str, ...] = (), use_default_excludes: bool = True,
             extensions: dict[str, str] | None = None, follow_symlinks: bool = False, respect_ignore: bool = True,
             rules_for: RulesFor | None = None, top_of: Callable[[str], str] | None = None,
             force_exclude: bool = False) -> Discovery:
    """Expand files and folders into source files, each once, in a stable order; never raise.

    `rules_for` gives the walk rules in force in a folder (per configuration file); without it
    every folder has the rules made of `excludes`, `use_default_excludes`, `extensions` and
    `respect_ignore`. `top_of(path)` is the top folder of the repository holding an (absolute)
    path, where ignore files start (default: the git checkout's top, else the path itself).
    `force_exclude`: files named explicitly are excluded and ignored like walked ones."""
    base = WalkRules(tuple(excludes), use_default_excludes, respect_ignore, tuple(sorted((extensions or {}).items())))
    context = _Context(rules_for or (lambda _folder: base), top_of or _default_top)
    found = Discovery([], [])
    candidates: dict[str, list[tuple[tuple[bool, int, str], SourceFile, WalkRules]]] = {}
    for order, raw in enumerate(paths):
        if not _lexists(raw):
            found.problems.append((raw, "no such file or directory"))
            continue
        if os.path.isdir(raw):
            Walker(raw, context, follow_symlinks, found, order).walk(candidates)
            continue
        _named_file(raw, context, found, order, force_exclude, candidates)
    found.problems.extend(context.ignore_files.problems)
    chosen = []
    for real, options in candidates.items():
        options.sort(key=lambda option: option[0])
        _key, source, rules = options[0]
        found.duplicates += len({o[1].path for o in options}) - 1
        chosen.append(source)
        found.rules[source.path] = rules
    found.files = sorted(set(chosen), key=lambda f: f.path)
    return found


class _Context:
    """What the walks of one discovery share: the rules per folder, the ignore files read."""

    def __init__(self, rules_for: RulesFor, top_of: Callable[[str], str]):
        self.rules_for = rules_for
        self.top_of = top_of
        self.ignore_files = IgnoreFiles()

    def chain(self, top: str, folder: str) -> Chain:
        return self.ignore_files.chain_to(top, folder)


def _default_top(path: str) -> str:
    top = vcs_top(path)
    return top if top is not None else (path if os.path.isdir(path) else os.path.dirname(path))


def _named_file(raw: str, context: _Context, found: Discovery, order: int, force_exclude: bool,
                candidates: dict) -> None:
    """A file named on the command line: analyzed even if excluded or ignored (unless
    `force_exclude`); reported under the real path a walk of its repository would use."""
    absolute = os.path.abspath(raw)
    rules = context.rules_for(os.path.dirname(absolute))
    if rules.error:
        found.errors.append((rules.source, rules.error))
        return
    lang = language_of(raw, rules.extension_map)
    if lang is None:
        found.problems.append((raw, "not a C, C++, Java or Go source file (by extension); skipped"))
        return
    problem = not_regular(raw)
    if problem:  # named explicitly: followed wherever it points, but only to a regular file
        found.problems.append((raw, f"{problem}; skipped"))
        return
    top = context.top_of(absolute)
    if force_exclude and excluded_path(absolute, top, context):
        found.force_excluded += 1
        return
    path, linked = _canonical_named(raw, absolute, top, context)
    if path != os.path.normpath(raw):  # reported under its real path: that folder's configuration applies
        rules = context.rules_for(os.path.dirname(os.path.abspath(path)))
    real = os.path.realpath(absolute)
    candidates.setdefault(real, []).append(((linked, order, path), SourceFile(path, lang), rules))


def _canonical_named(raw: str, absolute: str, top: str, context: _Context) -> tuple[str, bool]:
    """(the path to report, whether it goes through a link). A file named through a link is
    reported under its real path, spelled from the repository's top folder as `raw` is spelled
    (relative or absolute), when a walk of that folder would analyze it there."""
    norm = os.path.normpath(raw)
    rel = os.path.relpath(absolute, top)
    if rel == ".." or rel.startswith(".." + os.sep):
        return norm, False
    real_top = os.path.realpath(top)
    real = os.path.realpath(absolute)
    if real == os.path.join(real_top, rel):
        return norm, False
    inside = os.path.relpath(real, real_top)
    if inside == ".." or inside.startswith(".." + os.sep) or excluded_path(os.path.join(top, inside), top, context):
        return norm, True
    spelled_top = top if os.path.isabs(raw) else os.path.relpath(top)
    return os.path.normpath(os.path.join(spelled_top, inside)), False


def excluded_path(path: str, top: str, context: "_Context | None" = None, rules_for: RulesFor | None = None) -> bool:
    """Would a walk of `top` skip `path` (both absolute): an exclude or an ignore file matches
    it or a folder between `top` and it? (`--force-exclude` for files named explicitly.)"""
    context = context or _Context(rules_for or (lambda _folder: WalkRules()), _default_top)
    rel = os.path.relpath(path, top)
    if rel == ".." or rel.startswith(".." + os.sep):
        top = os.path.dirname(path)
        rel = os.path.basename(path)
    parts = [p for p in rel.split(os.sep) if p not in ("", ".")]
    folder = top
    for index, name in enumerate(parts):
        rules = context.rules_for(folder)
        full = os.path.join(folder, name)
        is_dir = index < len(parts) - 1
        walked = os.path.join(*parts[:index + 1])
        if _excluded(rules, name, walked, full, is_dir):
            return True
        if rules.respect_ignore and ignored(context.chain(top, folder), full, is_dir):
            return True
        folder = full
    return False


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


def _excluded(rules: WalkRules, name: str, rel: str, full: str, is_dir: bool) -> bool:
    """Does an exclude of `rules` match this entry? Default excludes match folder names only; a
    user glob matches the name, the path relative to the walked folder (`rel`) or to the
    configuration's folder; a glob ending in `/` matches folders only."""
    if is_dir and rules.default_excludes and _DEFAULT_REGEX.match(name) and not _is_jvm_package(name, full):
        return True
    if not rules.excludes:
        return False
    any_kind, folders_only = _exclude_regexes(rules.excludes)
    names = [os.path.normcase(name), os.path.normcase(rel)]
    if rules.anchor:
        anchored = os.path.relpath(full, rules.anchor) if os.path.isabs(full) else ""
        if anchored and not anchored.startswith(".."):
            names.append(os.path.normcase(anchored))
    for regex in ((any_kind, folders_only) if is_dir else (any_kind,)):
        if regex is not None and any(regex.match(n) for n in names):
            return True
    return False


@functools.lru_cache(maxsize=64)
def _exclude_regexes(patterns: tuple[str, ...]) -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """The globs compiled once into one regular expression each (a tree of 20 000 files
    otherwise costs a million fnmatch calls): (any entry, folders only)."""
    any_kind = [p for p in patterns if not p.endswith("/")]
    folders = [p.rstrip("/") for p in patterns if p.endswith("/") and p.strip("/")]
    return _compile(tuple(any_kind)), _compile(tuple(folders))


def _compile(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(fnmatch.translate(os.path.normcase(p).rstrip(os.sep)) for p in patterns))


_DEFAULT_REGEX = re.compile("|".join(fnmatch.translate(p) for p in DEFAULT_EXCLUDES))
# `src/java/`, `src/main/java/`, `app/src/test/kotlin/`: a JVM source root (Maven, Gradle, Android)
_JVM_SOURCE_ROOT = re.compile(r"(?:^|[\\/])src[\\/](?:[^\\/]+[\\/])?(?:java|kotlin|scala|groovy)[\\/]")
_PACKAGE_NAME = re.compile(r"[A-Za-z_]\w*")


def _is_jvm_package(name: str, full: str) -> bool:
    """A folder below a JVM source root is a package (`com/acme/adapter/out`, `.../build`,
    `.../target`), named like one, never build output: hexagonal code puts its outbound adapters in
    a package `out`, and Java code there was silently not analyzed."""
    return _PACKAGE_NAME.fullmatch(name) is not None and _JVM_SOURCE_ROOT.search(full) is not None


class Walker:
    """One analyzed folder: the walk, and the rules for links, special files, excludes and
    ignore files (module docstring)."""

    def __init__(self, root: str, context: _Context, follow_symlinks: bool, found: Discovery, order: int = 0):
        self.root = root
        self.abs_root = os.path.abspath(root)
        self.real_root = os.path.realpath(root)
        self.context = context
        self.follow_symlinks = follow_symlinks
        self.found = found
        self.order = order
        self.top = context.top_of(self.abs_root)
        self.seen_dirs: set[tuple[int, int]] = set()

    def walk(self, candidates: dict) -> None:
        """Folders reached through a link are walked after every other folder: each real folder
        is walked once, and then by its own path when the walk reaches it without a link."""
        # (folder as spelled, its path below the root, its real path, reached through a link)
        parent = os.path.dirname(self.abs_root)
        root_linked = self.real_root != os.path.join(os.path.realpath(parent), os.path.basename(self.abs_root))
        stack = [(self.root, ".", self.real_root, root_linked)]
        deferred: list[tuple[str, str, str, bool]] = []
        while stack or deferred:
            if not stack:
                stack, deferred = sorted(deferred, reverse=True), []
            folder, rel_dir, real_dir, linked = stack.pop()
            if not self._enter(folder):
                continue
            absolute = os.path.abspath(folder)
            rules = self.context.rules_for(absolute)
            if rules.error:
                self.found.errors.append((rules.source, rules.error))
                continue
            chain = self.context.chain(self.top, absolute) if rules.respect_ignore else ()
            subfolders = []
            for entry in self._entries(folder):
                rel = os.path.normpath(os.path.join(rel_dir, entry.name))
                full = os.path.normpath(os.path.join(folder, entry.name))
                is_dir = _is_dir(entry)
                if not is_dir and language_of(entry.name, rules.extension_map) is None:
                    continue  # neither a folder nor a source file: nothing to decide
                full_abs = os.path.join(absolute, entry.name)
                if _excluded(rules, entry.name, rel, full_abs, is_dir):
                    continue
                if chain and ignored(chain, full_abs, is_dir):
                    continue
                link = entry.is_symlink()
                real = os.path.realpath(full) if link else os.path.join(real_dir, entry.name)
                if is_dir:
                    if self._may_follow(entry, full, "folder"):
                        (deferred if link and not linked else subfolders).append((full, rel, real, linked or link))
                    continue
                self._file(entry, full, real, linked or link, rules, candidates)
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

    def _file(self, entry: os.DirEntry, full: str, real: str, linked: bool, rules: WalkRules,
              candidates: dict) -> None:
        lang = language_of(entry.name, rules.extension_map)
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
            candidates.setdefault(real, []).append(((linked, self.order, full), SourceFile(full, lang), rules))


def why_skipped(path: str, top: str, rules_for: RulesFor | None = None) -> str | None:
    """Why a walk of `top` skips `path` (absolute), in words (for --show-settings), or None."""
    context = _Context(rules_for or (lambda _folder: WalkRules()), _default_top)
    rel = os.path.relpath(path, top)
    if rel == ".." or rel.startswith(".." + os.sep):
        return None
    parts = [p for p in rel.split(os.sep) if p not in ("", ".")]
    folder = top
    for index, name in enumerate(parts):
        rules = context.rules_for(folder)
        full = os.path.join(folder, name)
        is_dir = index < len(parts) - 1
        if _excluded(rules, name, os.path.join(*parts[:index + 1]), full, is_dir):
            return f"{full}: excluded (exclude patterns{', default excludes' if rules.default_excludes else ''})"
        chain = context.chain(top, folder) if rules.respect_ignore else ()
        if chain and ignored(chain, full, is_dir):
            return f"{full}: ignored by {deciding_file(chain, full, is_dir)}"
        folder = full
    return None


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # follows a link (whether to walk it is `_may_follow`'s question)
    except OSError:
        return False


def repository_root(path: str, fallback: str | None = None) -> str:
    """The folder a path's project starts at (absolute): the top of its git (or Mercurial)
    checkout; else `fallback` (the folder of the run's configuration file, or the current
    folder) when the path is inside it; else the path's own folder. Ignore files are read
    from here down, and the tree's headers are indexed from here, whatever paths are named."""
    absolute = os.path.abspath(path)
    top = vcs_top(absolute)
    if top is not None:
        return top
    if fallback:
        fallback = os.path.abspath(fallback)
        if absolute == fallback or absolute.startswith(fallback.rstrip(os.sep) + os.sep):
            return fallback
    return absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
