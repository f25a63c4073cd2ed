"""The Python API: `lint(paths)` is what the CLI runs, minus option parsing and formatting."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from .engine.analyze import Options
from .findings import Report
from .orchestration.runner import run
from .orchestration.settings import RunConfig
from .orchestration.policy_cache import load_policy_cached
from .policy import Policy

if TYPE_CHECKING:
    from .sanitizer.matcher import SanitizerResult

_default_policy: Policy | None = None


def default_policy() -> Policy:
    """The shipped policy, loaded once per process."""
    global _default_policy
    if _default_policy is None:
        _default_policy = load_policy_cached()
    return _default_policy


def lint(paths: Iterable[str], rule_files: Iterable[str] = (), options: Options | None = None,
         policy: Policy | None = None) -> Report:
    """Analyze files and folders; returns every finding and notice, sorted."""
    rule_files = list(rule_files)
    if policy is None:
        policy = load_policy_cached(rule_files) if rule_files else default_policy()
    return run(RunConfig(list(paths), policy, options or Options()))


def explain_sanitizer_log(log_text: str, paths: Iterable[str], rule_files: Iterable[str] = (),
                          options: Options | None = None) -> "SanitizerResult":
    """`ortlint sanitizer` without the command line: each AddressSanitizer/LeakSanitizer report in
    `log_text` with the finding of `paths` that explains it, or the reason none does."""
    from .sanitizer.command import explain_log
    from .sanitizer.log import parse_log
    rule_files = list(rule_files)
    policy = load_policy_cached(rule_files) if rule_files else default_policy()
    return explain_log(parse_log(log_text), lambda: lint(paths, options=options, policy=policy), policy)
