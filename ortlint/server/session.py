"""One workspace as the language server sees it: settings, open documents, runs.

A run analyzes the workspace folder (or, for a file outside it, that file) with the open
documents' text in place of what is on disk (`RunConfig.overlays`), through the per-file cache:
files that did not change since the last run are taken from it with their summaries, so a save
or an edit re-analyzes the changed file (and what depends on it through summaries) only.
Unsaved text is never written to the cache."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

from ..config import ConfigError, Overrides, Settings, find_config, load_settings
from ..discover import language_of
from ..engine.analyze import Options
from ..fileio import read_prefix
from ..findings import Finding, Notice, Report
from ..fixes import attach_fixes
from ..frontends.common.source import MAX_BYTES
from ..orchestration.runner import run
from ..orchestration.settings import Limits, RunConfig
from ..policy import Policy, PolicyError, load_policy
from ..suppress import UNUSED_RULE

# workspace configuration keys (initializationOptions or the client's `ortlint` section)
_LISTS = {"select": "select", "ignore": "ignore", "rules": "rules", "exclude": "exclude",
          "extensions": "extensions"}


@dataclass
class ClientSettings:
    """What the editor configures (`ortlint.*`): added to the project's own configuration."""

    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    extensions: list[str] = field(default_factory=list)
    unknown_calls: str | None = None
    config: str | None = None  # a configuration file instead of the one found in the workspace
    unused_suppressions: bool = True
    in_process: bool = False  # parse and analyze in the server's own process (no worker process)
    jobs: int | None = None
    debounce: float = 0.3  # seconds between the last change and the analysis

    @classmethod
    def from_json(cls, data: Any) -> "ClientSettings":
        """Settings from `{"ortlint": {...}}` or `{...}`; unknown keys and wrong types are ignored."""
        if isinstance(data, dict) and isinstance(data.get("ortlint"), dict):
            data = data["ortlint"]
        out = cls()
        if not isinstance(data, dict):
            return out
        for key, attr in _LISTS.items():
            value = data.get(key)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                setattr(out, attr, list(value))
        for key, attr in (("unknownCalls", "unknown_calls"), ("config", "config")):
            if isinstance(data.get(key), str):
                setattr(out, attr, data[key])
        for key, attr in (("unusedSuppressions", "unused_suppressions"), ("inProcess", "in_process")):
            if isinstance(data.get(key), bool):
                setattr(out, attr, data[key])
        if isinstance(data.get("jobs"), int) and not isinstance(data.get("jobs"), bool):
            out.jobs = data["jobs"]
        if isinstance(data.get("debounce"), (int, float)) and 0 <= data["debounce"] <= 10:
            out.debounce = float(data["debounce"])
        return out


@dataclass
class RunResult:
    findings: dict[str, list[Finding]]  # absolute path -> findings (fixes attached)
    notices: list[Notice]
    seconds: float = 0.0
    error: str = ""


class Workspace:
    """The server's view of one workspace folder."""

    def __init__(self, root: str, client: ClientSettings | None = None):
        self.root = os.path.abspath(root)
        self.client = client or ClientSettings()
        self.documents: dict[str, bytes] = {}  # absolute path -> the editor's text
        self._policy: tuple[tuple, Policy] | None = None

    # -- documents ---------------------------------------------------------------------------

    def open(self, path: str, text: str) -> None:
        self.documents[os.path.abspath(path)] = text.encode("utf-8", "surrogateescape")

    def close(self, path: str) -> None:
        self.documents.pop(os.path.abspath(path), None)

    def is_analyzable(self, path: str) -> bool:
        return language_of(path, None) is not None or language_of(path, dict(self._extensions())) is not None

    def read(self, path: str) -> bytes | None:
        """A document's text: the editor's when it is open, else the file's."""
        path = os.path.abspath(path)
        if path in self.documents:
            return self.documents[path]
        try:
            return read_prefix(path, MAX_BYTES + 1)
        except OSError:
            return None

    # -- runs --------------------------------------------------------------------------------

    def settings(self) -> Settings:
        c = self.client
        overrides = Overrides(paths=[], select=list(c.select), ignore=list(c.ignore), rules=list(c.rules),
                              exclude=list(c.exclude), extensions=list(c.extensions), unknown_calls=c.unknown_calls,
                              jobs=c.jobs)
        config = c.config or (str(find_config(self.root)) if find_config(self.root) else None)
        return load_settings(overrides, config, isolated=False)

    def _extensions(self) -> dict[str, str]:
        out = {}
        for item in self.client.extensions:
            suffix, _, lang = item.partition("=")
            out[suffix] = lang
        return out

    def targets(self, paths: list[str]) -> list[str]:
        """What a run analyzes: the workspace folder, and any open file outside it."""
        out = [self.root]
        for path in paths:
            if os.path.commonpath([self.root, os.path.abspath(path)]) != self.root:
                out.append(os.path.abspath(path))
        return out

    def run(self) -> RunResult:
        """Analyze the workspace with the open documents' text; findings by absolute path."""
        import time
        started = time.perf_counter()
        try:
            settings = self.settings()
            config = self._run_config(settings)
            report = run(config)
        except (ConfigError, PolicyError) as exc:
            return RunResult({}, [], time.perf_counter() - started, str(exc))
        self._select(report, settings)
        attach_fixes(report, config.policy, lambda p: self.read(p))
        by_path: dict[str, list[Finding]] = {}
        for f in report.findings:
            by_path.setdefault(os.path.abspath(f.path), []).append(f)
        return RunResult(by_path, report.notices, time.perf_counter() - started)

    def _run_config(self, settings: Settings) -> RunConfig:
        key = tuple(settings.rules)
        if self._policy is None or self._policy[0] != key:
            self._policy = (key, load_policy(settings.rules))
        overlays = {os.path.normpath(p): data for p, data in self.documents.items()}
        return RunConfig(paths=self.targets(list(self.documents)), policy=self._policy[1],
                         options=Options(unknown_calls=settings.unknown_calls), excludes=tuple(settings.exclude),
                         use_default_excludes=settings.default_excludes, jobs=settings.jobs,
                         compile_commands=settings.compile_commands, cache_dir=settings.effective_cache_dir(),
                         extensions=dict(settings.extensions) or None, suppressions=True,
                         limits=Limits(settings.time_limit, settings.memory_limit),
                         isolate=not self.client.in_process, include_dirs=tuple(settings.include_dirs),
                         test_patterns=tuple(settings.test_patterns), follow_symlinks=settings.follow_symlinks,
                         overlays=overlays)

    def _select(self, report: Report, settings: Settings) -> None:
        """Rule selection as the command line does it, with unused suppressions as hints."""
        enabled = settings.enabled_rules()
        findings = report.findings
        if self.client.unused_suppressions:
            findings = findings + list(report.unused_suppressions)
        report.findings = [f for f in findings if f.rule in enabled]
        if settings.exclude_tests:
            from ..testcode import TEST_TAG
            report.findings = [f for f in report.findings if TEST_TAG not in f.tags]
        from ..scope import in_scope
        report.findings = in_scope(report.findings, settings.scope)


def with_client(workspace: Workspace, client: ClientSettings) -> Workspace:
    workspace.client = dataclasses.replace(client)
    workspace._policy = None
    return workspace


__all__ = ["ClientSettings", "RunResult", "Workspace", "UNUSED_RULE", "with_client"]
