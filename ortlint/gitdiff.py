"""`--diff REV`: which lines changed since a git revision, and which findings touch them.

On a pull request only what the change introduced should fail the check. The analysis itself
is not narrowed (whole files, the whole tree for summaries, the cache as usual): a finding is
kept when any line it names (the acquiring call, a release, a use, a branch of its trace, any
leaking exit) is on a line that `git diff REV` shows as added or modified in the working tree.

Conventions, documented in docs/cli.md:
* new-side line numbers of `git diff --unified=0 -M REV` hunks; a renamed file is its new path;
* a hunk that only deletes lines marks the lines on both sides of the deletion as changed (deleting
  a release changes the path through its neighbours);
* untracked files (not ignored) count as changed everywhere: a new file not yet added is new code.

git runs commands its configuration names, and on a pull request the repository's configuration,
`.gitattributes` (and, when HOME is the workspace, `~/.gitconfig`) are the author's: `core.fsmonitor`
runs on every look at the working tree, a `.gitattributes` driver's `textconv`, `clean` or
`process` runs on every changed file. So git is found with `programs.trusted_program` (never a
`./git` from the tree), and called with `--no-ext-diff --no-textconv --ignore-submodules`,
`core.fsmonitor` off, every filter and diff driver the configuration defines emptied (`-c
filter.X.clean=` ...: an empty command is no command), and `GIT_OPTIONAL_LOCKS=0` (git does not
rewrite the index on the side).
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
from typing import Iterable

from .findings import Finding
from .programs import trusted_program

EVERY_LINE = None  # a changed-lines entry that covers the whole file (new or untracked)
_HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
ChangedLines = dict[str, "set[int] | None"]  # real path -> new-side lines, or EVERY_LINE


class DiffError(Exception):
    """Not a git repository, an unknown revision, or git missing: a usage error (exit 2)."""


# settings that make git run a program, turned off for every call
SAFE_SETTINGS = ("core.quotepath=off", "core.fsmonitor=false", "core.untrackedCache=false", "diff.external=",
                 "core.pager=cat")
_DRIVER_KEYS = r"^(filter|diff)\..*\.(clean|smudge|process|textconv|command|required)$"


def _run_git(git: str, settings: list[str], args: list[str], cwd: str) -> str:
    command = [git, *(x for setting in settings for x in ("-c", setting)), *args]
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat")
    env.pop("GIT_EXTERNAL_DIFF", None)
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    except OSError as exc:
        raise DiffError(f"--diff: cannot run git: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise DiffError(f"--diff: `git {' '.join(args)}` took too long") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DiffError(f"--diff: `git {' '.join(args)}` failed: {message[-1] if message else done.returncode}")
    return done.stdout.decode("utf-8", "surrogateescape")


class _Git:
    """git calls that run no program the repository's configuration names (module docstring)."""

    def __init__(self) -> None:
        git = trusted_program("git")
        if git is None:
            raise DiffError("--diff needs git, which is not installed (a git inside the analyzed tree or the current "
                            "folder is never run)")
        self.git = git
        self.settings = list(SAFE_SETTINGS)

    def __call__(self, args: list[str], cwd: str) -> str:
        return _run_git(self.git, self.settings, args, cwd)

    def disarm_drivers(self, cwd: str) -> None:
        """Empty every filter and diff driver command the configuration defines (the names git
        prints are lower-cased where git compares without case, so they override exactly)."""
        try:
            names = _run_git(self.git, self.settings, ["config", "-z", "--name-only", "--get-regexp", _DRIVER_KEYS], cwd)
        except DiffError:  # exit status 1: no such setting
            return
        for name in filter(None, names.split("\0")):
            if "=" in name or "\n" in name:  # `-c` cannot say it: refuse rather than run the driver
                raise DiffError(f"--diff: the git configuration names a driver git cannot be told to skip ({name!r})")
            self.settings.append(f"{name}=false" if name.endswith(".required") else f"{name}=")


def changed_lines(rev: str, cwd: str = ".") -> ChangedLines:
    """Lines changed in the working tree since `rev`, keyed by real path."""
    if rev.startswith("-"):
        raise DiffError(f"--diff: {rev!r} is not a git revision")
    git = _Git()
    top = git(["rev-parse", "--show-toplevel"], cwd).strip()
    git.disarm_drivers(top)
    git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd)
    patch = git(["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--unified=0",
                 "-M", rev, "--"], top)
    changed = parse_unified_diff(patch, top)
    untracked = git(["ls-files", "--others", "--exclude-standard", "-z"], top)
    for name in filter(None, untracked.split("\0")):
        changed[os.path.realpath(os.path.join(top, name))] = EVERY_LINE
    return changed


def parse_unified_diff(patch: str, root: str) -> ChangedLines:
    """`+++ b/path` and `@@ -a,b +c,d @@` headers -> {real path: new-side changed lines}."""
    changed: ChangedLines = {}
    current: str | None = None
    for line in patch.splitlines():
        if line.startswith("+++ "):
            name = _unquote(line[4:].rstrip("\t"))
            current = None if name == "/dev/null" else os.path.realpath(os.path.join(root, name[2:]))
            if current is not None:
                changed.setdefault(current, set())
            continue
        m = _HUNK_RE.match(line)
        if m and current is not None:
            lines = changed[current]
            if lines is EVERY_LINE:
                continue
            start, count = int(m.group(1)), int(m.group(2) or 1)
            if count:
                lines.update(range(start, start + count))
            else:  # only deletions, after new-side line `start`
                lines.update((start, start + 1) if start else (1,))
    return changed


def _unquote(name: str) -> str:
    """git's C-style quoting of unusual file names: "b/a\\tb.c" -> b/a<TAB>b.c."""
    if not (len(name) >= 2 and name[0] == name[-1] == '"'):
        return name
    body = name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return body.encode("latin-1", "replace").decode("utf-8", "replace")


def finding_lines(f: Finding) -> Iterable[tuple[str, int]]:
    """Every (path, line) a finding names: its own range, its trace, its leaking exits."""
    for line in range(f.line, max(f.end_line, f.line) + 1):
        yield f.path, line
    for step in (*f.trace, *f.related):
        yield step.path, step.line


def _real(path: str) -> str:
    return _realpath(os.path.abspath(path))  # absolute first: the cache must not outlive a chdir


@functools.lru_cache(maxsize=4096)
def _realpath(path: str) -> str:
    return os.path.realpath(path)


def touches(f: Finding, changed: ChangedLines) -> bool:
    for path, line in finding_lines(f):
        key = _real(path)
        if key in changed:
            lines = changed[key]
            if lines is EVERY_LINE or line in lines:
                return True
    return False


def select_changed(findings: list[Finding], changed: ChangedLines) -> list[Finding]:
    """The findings that touch a changed line, in their original order."""
    return [f for f in findings if touches(f, changed)]
