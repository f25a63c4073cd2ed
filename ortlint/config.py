"""Project configuration: `[tool.ortlint]` in pyproject.toml, or a `.ortlint.toml` file.

A team writes its settings once so that every developer, CI job and pre-commit hook runs
ortlint the same way. Precedence, highest first:

1. command-line options;
2. the configuration file: `--config FILE`, else the first `.ortlint.toml` or `pyproject.toml`
   with a `[tool.ortlint]` table found walking up from the current directory (in one folder,
   `.ortlint.toml` wins); `--isolated` ignores configuration files;
3. built-in defaults.

For lists, `--select` replaces the file's list; `--ignore`, `--rules`, `--exclude` and
`--extension` add to it. Relative paths in a file are relative to the folder holding it.
Every mistake is a `ConfigError` naming the file, the line and the key, because a setting that
is silently ignored is worse than one that fails. A configuration file may be the analyzed
tree's own (a pull request can change `pyproject.toml`), so every value is checked against a
range that makes sense (finite numbers, a worker count a machine can run, a suffix that can
name files, no NUL in a path) and the file is read with bounds (`tomlfile`).
"""
from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from .fileio import CONFIG_BYTES, RefusedFile, read_bounded
from .findings import RULES
from .scope import SCOPES
from .testcode import DEFAULT_TEST_PATTERNS
from .frontends.registry import BY_NAME
from .tomlfile import read_toml

FORMATS = ("text", "sarif", "json", "github")
UNKNOWN_CALLS = ("escape", "keep")
LANGUAGES = tuple(BY_NAME)  # the front ends of frontends/registry.py
CONFIG_NAMES = (".ortlint.toml", "pyproject.toml")
MAX_JOBS = 1024  # and never more than the cores or the files (runner)
MAX_TIME_LIMIT = 86400.0  # seconds: a day per file or function
MIN_MEMORY_LIMIT, MAX_MEMORY_LIMIT = 64, 1 << 20  # megabytes: 64 MB to 1 TB per worker
_SUFFIX = re.compile(r"\.[^\s./\\*?\[\]\x00]+")  # one dot, then a name part: what os.path.splitext gives


class ConfigError(Exception):
    """A configuration that cannot be used; the message names file, line and key."""


@dataclass
class Settings:
    """Everything that decides one run, after merging file and command line."""

    paths: list[str] = field(default_factory=list)
    select: list[str] | None = None  # rule ids; None means every rule
    ignore: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)  # extra policy files
    exclude: list[str] = field(default_factory=list)  # added to the default excludes (as documented since 0.1)
    extend_exclude: list[str] = field(default_factory=list)  # added too (ruff's name for it)
    default_excludes: bool = True
    respect_gitignore: bool = True  # skip what .gitignore, .ignore and .git/info/exclude ignore
    extensions: dict[str, str] = field(default_factory=dict)
    jobs: int = 0  # 0 = one worker per core
    format: str = "text"
    baseline: str | None = None
    unknown_calls: str = "escape"
    compile_commands: str | None = None
    include_dirs: list[str] = field(default_factory=list)  # `#include "..."` search folders (header index)
    cache_dir: str | None = None  # None: the user cache folder, one subfolder per project (cache.default_cache_dir)
    cache: bool = True
    force_exclude: bool = False  # apply excludes to paths named on the command line too
    time_limit: float = 60.0  # CPU seconds to parse one file or analyze one function; then it is stopped (a warning)
    memory_limit: int = 1024  # megabytes one worker request may grow by; then the item is reported lost
    test_patterns: list[str] = field(default_factory=lambda: list(DEFAULT_TEST_PATTERNS))  # test code (testcode.py)
    exclude_tests: bool = False  # drop findings in test code (they are tagged "test" otherwise)
    scope: str = "onnxruntime"  # "all": also general-purpose memory in files that use no policy's API (scope.py)
    source: str | None = None  # the configuration file these settings came from
    follow_symlinks: bool = False  # follow links to folders and files outside the analyzed folders
    origins: dict[str, str] = field(default_factory=dict)  # key -> where its value was set (--show-settings)

    def exclude_patterns(self) -> tuple[str, ...]:
        """The user's globs: `exclude` and `extend-exclude` (the default excludes are separate)."""
        return tuple(self.exclude) + tuple(p for p in self.extend_exclude if p not in self.exclude)

    def effective_cache_dir(self) -> str | None:
        """Where the per-file cache lives, or None when caching is off (--no-cache, ORTLINT_NO_CACHE):
        by default a folder of the user cache folder keyed by the project root (project_root)."""
        if not self.cache or os.environ.get("ORTLINT_NO_CACHE", "") not in ("", "0"):
            return None
        if self.cache_dir:
            return self.cache_dir
        from .orchestration.cache import default_cache_dir  # (it imports the engine)
        return default_cache_dir(project_root(self))

    def enabled_rules(self) -> set[str]:
        """Rule ids whose findings are reported."""
        chosen = set(RULES) if self.select is None else set(self.select)
        return chosen - set(self.ignore)


# ----------------------------------------------------------------------------- rule selectors


def resolve_rules(tokens: Iterable[str], where: str) -> list[str]:
    """Turn selectors into rule ids: an id (ORT001), a name (leak), an id prefix (ORT00) or ALL.

    Accepts comma-separated lists so that `--select ORT001,leak` and a TOML list both work.
    """
    out: list[str] = []
    for raw in tokens:
        for token in (t.strip() for t in str(raw).split(",")):
            if not token:
                continue
            ids = _match_rule(token)
            if not ids:
                raise ConfigError(f"{where}: unknown rule {token!r}{_suggest_rule(token)}")
            out.extend(i for i in ids if i not in out)
    return out


def _match_rule(token: str) -> list[str]:
    upper = token.upper()
    if upper == "ALL":
        return sorted(RULES)
    if upper in RULES:
        return [upper]
    by_name = [r.id for r in RULES.values() if r.name == token.lower()]
    if by_name:
        return by_name
    if re.fullmatch(r"ORT\d{0,2}", upper):
        return sorted(r for r in RULES if r.startswith(upper))
    return []


def _suggest_rule(token: str) -> str:
    names = sorted(RULES) + sorted(r.name for r in RULES.values())
    close = difflib.get_close_matches(token, names, n=1) or difflib.get_close_matches(token.upper(), names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"{hint} (known: {', '.join(f'{r.id} {r.name}' for r in RULES.values())})"


def parse_extension(spec: str, where: str) -> tuple[str, str]:
    """`.cu=cpp` -> (".cu", "cpp")."""
    suffix, sep, language = spec.partition("=")
    suffix, language = suffix.strip(), language.strip().lower()
    if not sep or not suffix:
        raise ConfigError(f"{where}: expected SUFFIX=LANGUAGE such as .cu=cpp, got {spec!r}")
    return _check_extension(suffix, language, where)


def _check_extension(suffix: str, language: str, where: str) -> tuple[str, str]:
    if language not in LANGUAGES:
        raise ConfigError(f"{where}: unknown language {language!r} for {suffix!r} (expected one of: {', '.join(LANGUAGES)})")
    suffix = suffix if suffix.startswith(".") else "." + suffix
    if not _SUFFIX.fullmatch(suffix):
        raise ConfigError(f"{where}: {suffix!r} is not a file suffix; write a dot and the end of the file names "
                          "without wildcards, separators or a second dot, such as .cu")
    return suffix.lower(), language


# ----------------------------------------------------------------------------- finding the file


def find_config(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest configuration file at or above `start` (default: the current directory)."""
    folder = Path(start or os.getcwd()).resolve()
    for candidate in (folder, *folder.parents):
        dot = candidate / ".ortlint.toml"
        if dot.is_file():
            return dot
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and _has_tool_table(pyproject):
            return pyproject
    return None


def _has_tool_table(path: Path) -> bool:
    """Cheap pre-check so an unrelated broken pyproject.toml above us is not an error. A file
    too large to read is taken (loading it then says why it cannot be used): ignoring it would
    silently drop its settings."""
    try:
        text = read_bounded(path, CONFIG_BYTES).decode("utf-8", errors="replace")
    except RefusedFile:
        return True
    except OSError:
        return False
    return re.search(r"^\s*\[\s*tool\.ortlint\s*[\].]", text, re.M) is not None


# ----------------------------------------------------------------------------- loading


@dataclass
class _Table:
    """The `[tool.ortlint]` (or top-level) table of one file, with what is needed for messages."""

    path: Path
    data: dict[str, Any]
    text: str
    header: str | None  # "tool.ortlint" when the keys live in that table

    def where(self, key: str) -> str:
        """`file:line: [tool.ortlint] key` for error messages."""
        line = _line_of(self.text, self.header, key)
        loc = f"{self.path}:{line}" if line else str(self.path)
        table = f"[{self.header}] " if self.header else ""
        return f"{loc}: {table}{key}"


def _line_of(text: str, header: str | None, key: str) -> int | None:
    """Best-effort line of `key = ...` inside the table `header` (or at the top level)."""
    lines = text.splitlines()
    inside = header is None
    head_re = re.compile(rf"^\s*\[\s*{re.escape(header)}\s*\]") if header else None
    key_re = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("["):
            inside = bool(head_re and head_re.match(line))
            continue
        if inside and key_re.match(line):
            return number
    return None


def read_table(path: str | os.PathLike[str]) -> _Table:
    """Parse a configuration file and return its ortlint table."""
    p = Path(path)
    doc, text = read_toml(p, "configuration file", ConfigError)
    tool = doc.get("tool", {}).get("ortlint") if isinstance(doc.get("tool"), dict) else None
    if tool is not None or p.name == "pyproject.toml":
        if not isinstance(tool, dict):
            raise ConfigError(f"{p}: no [tool.ortlint] table")
        return _Table(p, tool, text, "tool.ortlint")
    return _Table(p, doc, text, None)


def load_file(path: str | os.PathLike[str]) -> Settings:
    """Read and validate one configuration file."""
    table = read_table(path)
    settings = Settings(source=str(table.path))
    base = table.path.parent
    for key, value in table.data.items():
        handler = _KEYS.get(key)
        if handler is None:
            close = difflib.get_close_matches(key, list(_KEYS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{table.where(key)}: unknown key{hint} (known keys: {', '.join(sorted(_KEYS))})")
        handler(settings, value, table.where(key), base)
        line = _line_of(table.text, table.header, key)
        settings.origins[key] = f"{table.path}:{line}" if line else str(table.path)
    return settings


def _str_list(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings, got {_shown(value)}")
    for v in value:
        _no_nul(v, where)
    return list(value)


def _string(value: Any, where: str, choices: tuple[str, ...] | None = None) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a string, got {_shown(value)}")
    if choices and value not in choices:
        raise ConfigError(f"{where}: expected one of {', '.join(choices)}, got {_shown(value)}")
    return _no_nul(value, where)


def _no_nul(value: str, where: str) -> str:
    """A NUL can name no file and match no file name: it is a mistake (or an attack), never
    something to pass on to the operating system (where it raised ValueError)."""
    if "\0" in value:
        raise ConfigError(f"{where}: {_shown(value)} contains a NUL character; remove it")
    return value


def _shown(value: Any) -> str:
    """A value quoted in a message: shortened (a value can be megabytes long)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _path(value: Any, where: str, base: Path) -> str:
    """Absolute, as written (links are not resolved: a message names the file the user wrote)."""
    return os.path.abspath(base / _string(value, where))


def _set_paths(s: Settings, v: Any, where: str, base: Path) -> None:
    s.paths = [_display_path(base / p) for p in _str_list(v, where)]


def _display_path(path: Path) -> str:
    """A path as users want to read it: relative to the current directory when inside it."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, os.getcwd())
    return absolute if rel.startswith("..") else rel


def _set_select(s: Settings, v: Any, where: str, base: Path) -> None:
    s.select = resolve_rules(_str_list(v, where), where)


def _set_ignore(s: Settings, v: Any, where: str, base: Path) -> None:
    s.ignore = resolve_rules(_str_list(v, where), where)


def _set_rules(s: Settings, v: Any, where: str, base: Path) -> None:
    s.rules = [_path(p, where, base) for p in _str_list(v, where)]


def _set_exclude(s: Settings, v: Any, where: str, base: Path) -> None:
    s.exclude = _str_list(v, where)


def _set_extend_exclude(s: Settings, v: Any, where: str, base: Path) -> None:
    s.extend_exclude = _str_list(v, where)


def _set_respect_gitignore(s: Settings, v: Any, where: str, base: Path) -> None:
    if not isinstance(v, bool):
        raise ConfigError(f"{where}: expected true or false, got {_shown(v)}")
    s.respect_gitignore = v


def _set_default_excludes(s: Settings, v: Any, where: str, base: Path) -> None:
    if not isinstance(v, bool):
        raise ConfigError(f"{where}: expected true or false, got {_shown(v)}")
    s.default_excludes = v


def _set_extensions(s: Settings, v: Any, where: str, base: Path) -> None:
    if not isinstance(v, dict):
        raise ConfigError(f'{where}: expected a table such as {{ ".cu" = "cpp" }}, got {_shown(v)}')
    s.extensions = dict(_check_extension(_no_nul(k, where), _string(lang, f"{where}.{k}"), where) for k, lang in v.items())


def _set_jobs(s: Settings, v: Any, where: str, base: Path) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_JOBS:
        raise ConfigError(f"{where}: expected a whole number from 0 to {MAX_JOBS} (0 = one per core; more workers "
                          f"than cores or files are never started), got {_shown(v)}")
    s.jobs = v


def _set_format(s: Settings, v: Any, where: str, base: Path) -> None:
    s.format = _string(v, where, FORMATS)


def _set_baseline(s: Settings, v: Any, where: str, base: Path) -> None:
    s.baseline = _path(v, where, base)


def _set_unknown_calls(s: Settings, v: Any, where: str, base: Path) -> None:
    s.unknown_calls = _string(v, where, UNKNOWN_CALLS)


def _set_compile_commands(s: Settings, v: Any, where: str, base: Path) -> None:
    s.compile_commands = "" if v == "" else _path(v, where, base)  # "": no libclang, no auto-discovery


def _set_include_dirs(s: Settings, v: Any, where: str, base: Path) -> None:
    if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
        raise ConfigError(f"{where}: expected a list of folder names, got {_shown(v)}")
    s.include_dirs = [_path(x, where, base) for x in v]


def _set_cache_dir(s: Settings, v: Any, where: str, base: Path) -> None:
    s.cache_dir = _path(v, where, base)


def _set_force_exclude(s: Settings, v: Any, where: str, base: Path) -> None:
    if not isinstance(v, bool):
        raise ConfigError(f"{where}: expected true or false, got {_shown(v)}")
    s.force_exclude = v


def _set_time_limit(s: Settings, v: Any, where: str, base: Path) -> None:
    problem = time_limit_problem(v)
    if problem:
        raise ConfigError(f"{where}: {problem}")
    s.time_limit = float(v)


def time_limit_problem(v: Any) -> str | None:
    """What is wrong with a time limit (also for `--time-limit`), or None. `nan` compared false
    with everything and turned the watchdog off."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 < v <= MAX_TIME_LIMIT:
        return f"expected a number of seconds above 0 and at most {MAX_TIME_LIMIT:g} (a day), got {_shown(v)}"
    return None


def _set_memory_limit(s: Settings, v: Any, where: str, base: Path) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or not MIN_MEMORY_LIMIT <= v <= MAX_MEMORY_LIMIT:
        raise ConfigError(f"{where}: expected a whole number of megabytes from {MIN_MEMORY_LIMIT} to "
                          f"{MAX_MEMORY_LIMIT} (1 TB), got {_shown(v)}")
    s.memory_limit = v


def _set_test_patterns(s: Settings, v: Any, where: str, base: Path) -> None:
    s.test_patterns = _patterns(v, where)


def _extend_test_patterns(s: Settings, v: Any, where: str, base: Path) -> None:
    s.test_patterns = list(s.test_patterns) + [p for p in _patterns(v, where) if p not in s.test_patterns]


def _patterns(v: Any, where: str) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x.strip("/") for x in v):
        raise ConfigError(f'{where}: expected a list of non-empty glob patterns such as ["it/", "*_it.cc"], got {_shown(v)}')
    return list(v)


def _set_exclude_tests(s: Settings, v: Any, where: str, base: Path) -> None:
    if not isinstance(v, bool):
        raise ConfigError(f"{where}: expected true or false, got {_shown(v)}")
    s.exclude_tests = v


def _set_scope(s: Settings, v: Any, where: str, base: Path) -> None:
    if v not in SCOPES:
        raise ConfigError(f"{where}: expected one of {', '.join(repr(x) for x in SCOPES)}, got {_shown(v)}")
    s.scope = v


def _set_follow_symlinks(s: Settings, v: Any, where: str, base: Path) -> None:
    if not isinstance(v, bool):
        raise ConfigError(f"{where}: expected true or false, got {_shown(v)}")
    s.follow_symlinks = v


_KEYS: dict[str, Callable[[Settings, Any, str, Path], None]] = {
    "paths": _set_paths,
    "select": _set_select,
    "ignore": _set_ignore,
    "rules": _set_rules,
    "exclude": _set_exclude,
    "extend-exclude": _set_extend_exclude,
    "respect-gitignore": _set_respect_gitignore,
    "default-excludes": _set_default_excludes,
    "extensions": _set_extensions,
    "jobs": _set_jobs,
    "format": _set_format,
    "baseline": _set_baseline,
    "unknown-calls": _set_unknown_calls,
    "compile-commands": _set_compile_commands,
    "cache-dir": _set_cache_dir,
    "include-dirs": _set_include_dirs,
    "force-exclude": _set_force_exclude,
    "time-limit": _set_time_limit,
    "memory-limit": _set_memory_limit,
    "test-patterns": _set_test_patterns,
    "extend-test-patterns": _extend_test_patterns,
    "exclude-tests": _set_exclude_tests,
    "scope": _set_scope,
    "follow-symlinks": _set_follow_symlinks,
}


# ----------------------------------------------------------------------------- merging


@dataclass
class Overrides:
    """What the command line said; None (or empty) means "not given"."""

    paths: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    default_excludes: bool | None = None
    respect_gitignore: bool | None = None
    extensions: list[str] = field(default_factory=list)
    jobs: int | None = None
    format: str | None = None
    baseline: str | None = None
    unknown_calls: str | None = None
    compile_commands: str | None = None
    cache_dir: str | None = None
    cache: bool | None = None
    force_exclude: bool | None = None
    time_limit: float | None = None
    memory_limit: int | None = None
    exclude_tests: bool | None = None
    scope: str | None = None
    follow_symlinks: bool | None = None


def merge(base: Settings, cli: Overrides) -> Settings:
    """Apply command-line options over file settings (see the module docstring)."""
    out = replace(base, ignore=list(base.ignore), rules=list(base.rules), exclude=list(base.exclude),
                  extend_exclude=list(base.extend_exclude), extensions=dict(base.extensions),
                  origins=dict(base.origins))
    given = _given_on_command_line(cli)
    if cli.paths:
        out.paths = list(cli.paths)
    if cli.select:
        out.select = resolve_rules(cli.select, "--select")
    for rule in resolve_rules(cli.ignore, "--ignore"):
        if rule not in out.ignore:
            out.ignore.append(rule)
    out.rules.extend(cli.rules)
    out.exclude.extend(cli.exclude)
    for spec in cli.extensions:
        suffix, language = parse_extension(spec, "--extension")
        out.extensions[suffix] = language
    for name in ("default_excludes", "jobs", "format", "baseline", "unknown_calls", "compile_commands",
                 "cache_dir", "cache", "force_exclude", "time_limit", "memory_limit", "exclude_tests",
                 "scope", "follow_symlinks", "respect_gitignore"):
        value = getattr(cli, name)
        if value is not None:
            setattr(out, name, value)
    for key in given:
        out.origins[key] = "command line" + (" (added to the file's list)" if key in _ADDED_KEYS and
                                             key in base.origins else "")
    return out


def load_settings(cli: Overrides, config: str | None = None, isolated: bool = False) -> Settings:
    """File settings (explicit, discovered, or none) with the command line applied on top. The
    file is the nearest one at or above the folder that holds every path named (the current
    folder when none is named): `ortlint ../other/src` uses `../other`'s configuration."""
    path = config if config else (None if isolated else find_config(_common_folder(cli.paths)))
    base = load_file(path) if path else Settings()
    return merge(base, cli)


# ----------------------------------------------------------------------------- configuration per file (issue 30)
# ruff's hierarchical configuration, simplified: the nearest configuration file above an analyzed
# file decides the per-file settings for it (which rules are reported, what is excluded or
# ignored below its folder, which suffixes are analyzed, include folders, test code); settings
# that shape the whole run (policy files, limits, jobs, cache, output, baseline, compile
# database) come from the run's own configuration file, the one `load_settings` found. A nested
# file does not inherit from the files above it (ruff's rule: keys it does not set take their
# defaults); the command line applies on top of every file. `--config FILE` and `--isolated`
# turn the hierarchy off: every file gets the run's settings.

PER_FILE_KEYS = ("select", "ignore", "exclude", "extend-exclude", "default-excludes", "respect-gitignore",
                 "extensions", "include-dirs", "test-patterns", "extend-test-patterns", "exclude-tests",
                 "scope")
_ADDED_KEYS = ("ignore", "rules", "exclude", "extensions")  # the command line adds to the file's list


def _given_on_command_line(cli: Overrides) -> list[str]:
    """The configuration keys the command line set (for --show-settings)."""
    keys = []
    for name in ("paths", "select", "ignore", "rules", "exclude", "extensions"):
        if getattr(cli, name):
            keys.append(name)
    for name in ("default_excludes", "jobs", "format", "baseline", "unknown_calls", "compile_commands",
                 "cache_dir", "cache", "force_exclude", "time_limit", "memory_limit", "exclude_tests",
                 "scope", "follow_symlinks", "respect_gitignore"):
        if getattr(cli, name) is not None:
            keys.append(name.replace("_", "-"))
    return keys


def _common_folder(paths: list[str]) -> str | None:
    """The folder holding every path named (None: none named, the current folder)."""
    if not paths:
        return None
    folders = [os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in paths]
    try:
        return os.path.commonpath(folders)
    except ValueError:  # different drives
        return folders[0]


def project_root(settings: Settings) -> str:
    """The run's project root (absolute): where its configuration file is, else the top of the
    git checkout holding the analyzed paths, else the folder holding them. The default cache
    folder is keyed by it; outside a git checkout, ignore files are read and headers indexed
    from it."""
    if settings.source:
        return os.path.dirname(os.path.abspath(settings.source))
    from .ignorefiles import vcs_top
    start = _common_folder(settings.paths) or os.getcwd()
    top = vcs_top(start)
    if top is not None:
        return top
    return os.getcwd() if _is_inside(start, os.getcwd()) else start


def _is_inside(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


class ConfigTree:
    """The configuration files that apply to a run's files: the run's settings, and per folder
    the nearest configuration file above it (loaded once, with the command line applied)."""

    def __init__(self, root: Settings, cli: Overrides, hierarchical: bool = True):
        self.root = root
        self.cli = cli
        self.hierarchical = hierarchical
        self._by_folder: dict[str, Settings | ConfigError] = {}
        self._by_file: dict[str, Settings | ConfigError] = {}
        self.warnings: list[str] = []  # run-wide keys set in a nested file (ignored there)

    def settings_for_folder(self, folder: str) -> Settings:
        """The settings of files in `folder` (absolute); ConfigError for an invalid file."""
        found = self._lookup(folder)
        if isinstance(found, ConfigError):
            raise found
        return found

    def _lookup(self, folder: str) -> Settings | ConfigError:
        if not self.hierarchical:
            return self.root
        cached = self._by_folder.get(folder)
        if cached is not None:
            return cached
        own = _config_in(Path(folder))
        if own is not None:
            found = self._load(own)
        else:
            parent = os.path.dirname(folder)
            found = self.root if parent == folder else self._lookup(parent)
        self._by_folder[folder] = found
        return found

    def _load(self, path: Path) -> Settings | ConfigError:
        key = str(path)
        if self.root.source and os.path.abspath(self.root.source) == os.path.abspath(key):
            return self.root
        cached = self._by_file.get(key)
        if cached is None:
            try:
                nested = load_file(path)
                cached = self._per_file(nested)
            except ConfigError as exc:
                cached = exc
            self._by_file[key] = cached
        return cached

    def _per_file(self, nested: Settings) -> Settings:
        """The run's settings with the nested file's per-file keys (and the command line) on top."""
        ignored = sorted(k for k in nested.origins if k not in PER_FILE_KEYS)
        if ignored:
            self.warnings.append(f"{nested.source}: {', '.join(ignored)}: applies to the whole run only in the "
                                 f"run's configuration file ({self.root.source or 'none found'}); ignored here")
        per_file = merge(nested, self.cli)
        out = replace(self.root, origins=dict(self.root.origins), source=nested.source)
        for key in PER_FILE_KEYS:
            attr = key.replace("-", "_")
            if key == "extend-test-patterns":
                continue  # folded into test_patterns by its handler
            setattr(out, attr, getattr(per_file, attr))
            out.origins.pop(key, None)
            if key in per_file.origins:
                out.origins[key] = per_file.origins[key]
        if "extend-test-patterns" in per_file.origins:
            out.origins["extend-test-patterns"] = per_file.origins["extend-test-patterns"]
        return out

    def settings_for(self, path: str) -> Settings:
        """The settings of one file (or folder) as it is reported."""
        absolute = os.path.abspath(path)
        return self.settings_for_folder(absolute if os.path.isdir(absolute) else os.path.dirname(absolute))

    def walk_rules(self, folder: str) -> "WalkRules":
        """discover.WalkRules for `folder` (absolute): what its configuration says to analyze."""
        from .discover import WalkRules
        found = self._lookup(folder)
        if isinstance(found, ConfigError):
            return WalkRules(error=str(found), source=_error_source(found))
        return walk_rules_of(found)


def walk_rules_of(settings: Settings) -> "WalkRules":
    from .discover import WalkRules
    anchor = os.path.dirname(os.path.abspath(settings.source)) if settings.source else os.getcwd()
    return _walk_rules_cached(WalkRules, settings.exclude_patterns(), settings.default_excludes,
                              settings.respect_gitignore, tuple(sorted(settings.extensions.items())), anchor,
                              settings.source or "", tuple(settings.include_dirs), tuple(settings.test_patterns))


_RULES_CACHE: dict[tuple, Any] = {}


def _walk_rules_cached(cls: Any, *fields: Any) -> Any:
    """One WalkRules object per distinct configuration (the walk asks once per folder)."""
    found = _RULES_CACHE.get(fields)
    if found is None:
        excludes, default, respect, extensions, anchor, source, include_dirs, tests = fields
        found = _RULES_CACHE[fields] = cls(excludes, default, respect, extensions, anchor, source,
                                           include_dirs=include_dirs, test_patterns=tests)
    return found


def _config_in(folder: Path) -> Path | None:
    """The configuration file in `folder` itself, if any (`.ortlint.toml` wins)."""
    dot = folder / ".ortlint.toml"
    if dot.is_file():  # as find_config: a FIFO or a link to a device is not a configuration file
        return dot
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file() and _has_tool_table(pyproject):
        return pyproject
    return None


def _error_source(exc: ConfigError) -> str:
    return str(exc).split(":", 1)[0]


def discovery_options(settings: Settings, tree: ConfigTree | None = None) -> dict[str, Any]:
    """The RunConfig fields that decide which files a run analyzes."""
    return {"respect_ignore": settings.respect_gitignore, "force_exclude": settings.force_exclude,
            "project_root": project_root(settings),
            "walk_rules": tree.walk_rules if tree is not None else None,
            "excludes": settings.exclude_patterns()}


def load_tree(cli: Overrides, config: str | None = None, isolated: bool = False) -> ConfigTree:
    """The run's settings (`load_settings`) and the configuration files below them; with
    `--config` or `--isolated`, one configuration for every file."""
    return ConfigTree(load_settings(cli, config, isolated), cli, hierarchical=not (config or isolated))


# ----------------------------------------------------------------------------- --show-settings PATH

_SHOWN_KEYS = ("paths", "select", "ignore", "rules", "exclude", "extend-exclude", "default-excludes",
               "respect-gitignore", "force-exclude", "extensions", "include-dirs", "test-patterns", "exclude-tests",
               "scope", "jobs", "format", "baseline", "unknown-calls", "compile-commands", "cache-dir", "follow-symlinks",
               "time-limit", "memory-limit")


def describe_settings(tree: ConfigTree, path: str) -> str:
    """`ortlint --show-settings PATH`: whether PATH is analyzed, which configuration files apply
    and every setting with where its value comes from (a file and line, the command line, or
    the default)."""
    from .discover import language_of, repository_root, why_skipped
    absolute = os.path.abspath(path)
    root = tree.root
    lines = [f"Settings for {path}"]
    try:
        mine = tree.settings_for(path)
    except ConfigError as exc:
        return "\n".join(lines + [f"  configuration error: {exc}"]) + "\n"
    top = repository_root(absolute, project_root(root))
    if not os.path.exists(absolute):
        lines.append("  analyzed: no (no such file or folder)")
    elif os.path.isdir(absolute):
        skipped = why_skipped(absolute, top, tree.walk_rules) if absolute != top else None
        lines.append(f"  analyzed: {'no, ' + skipped + ' (unless named)' if skipped else 'yes, a folder to walk'}")
    else:
        language = language_of(absolute, mine.extensions)
        skipped = why_skipped(absolute, top, tree.walk_rules)
        lines.append("  analyzed: " + (f"no, not a source file by its suffix" if language is None else
                                       f"as {language}" + (f"; a walk skips it: {skipped} (analyzed when named, "
                                                           "skipped with --force-exclude)" if skipped else "")))
    lines.append(f"  configuration file for this path: {mine.source or 'none (defaults)'}")
    lines.append(f"  configuration file of the run (run-wide settings): {root.source or 'none (defaults)'}")
    lines.append(f"  repository root (ignore files, header index): {top}")
    lines.append(f"  cache folder: {root.effective_cache_dir() or 'none (caching off)'}")
    lines.append("")
    for key in _SHOWN_KEYS:
        source = mine if key in PER_FILE_KEYS else root
        value = _shown_value(source, key)
        origin = source.origins.get(key, "default")
        if key == "test-patterns" and "extend-test-patterns" in source.origins:
            origin = f"{origin}, extended at {source.origins['extend-test-patterns']}"
        lines.append(f"  {key} = {value}  # {origin}")
    return "\n".join(lines) + "\n"


def _shown_value(settings: Settings, key: str) -> str:
    import json
    value = getattr(settings, key.replace("-", "_"))
    if key == "select" and value is None:
        value = ["ALL"]
    if key == "cache-dir" and value is None:
        value = settings.effective_cache_dir() or ""
    if isinstance(value, tuple):
        value = list(value)
    return json.dumps(value, ensure_ascii=False) if value is not None else '""'
