"""Diagnostics as plain data, and the registry of rules they refer to.

The engine produces `Finding`s; reporters only format them. Rule metadata (name, level, short
description) lives here so every reporter and `ortlint rules` agree; the long documentation
of each rule is the Markdown page docs/rules/<ID>.md.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from .pickling import pickle_by_fields


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    name: str
    level: str  # SARIF level: "error" | "warning" | "note"
    summary: str
    precision: str = "high"
    tags: tuple[str, ...] = ("correctness", "resource-management")


RULES: dict[str, Rule] = {r.id: r for r in (
    Rule("ORT001", "leak", "error", "An acquired handle, buffer or status is not released on some path."),
    Rule("ORT002", "double-release", "error", "A resource is released a second time."),
    Rule("ORT003", "mismatched-release", "error",
         "A resource is released by a function of another kind, or against another owner object."),
    Rule("ORT004", "ignored-status", "error", "An OrtStatus* returned by a call is dropped, so a failure status leaks."),
    Rule("ORT005", "foreign-free", "error", "Memory or an object the caller does not own is freed or released."),
    Rule("ORT006", "use-after-release", "error", "A released resource (or a pointer borrowed from it) is used."),
    Rule("ORT007", "jni-local-ref-overflow", "warning",
         "A JNI local reference is created on every iteration of an input-sized loop and never deleted: "
         "the local reference table can overflow."),
    Rule("ORT010", "java-unclosed", "error", "An ONNX Runtime Java AutoCloseable is not closed on every path."),
    Rule("ORT020", "go-undestroyed", "error",
         "An onnxruntime_go object (or the environment) is not destroyed on every path."),
    Rule("ORT030", "csharp-undisposed", "error",
         "An ONNX Runtime .NET object the caller owns is not disposed on every path."),
    Rule("ORT100", "unused-suppression", "warning",
         "A suppression comment silences no finding (reported with --unused-suppressions).",
         tags=("maintainability",)),
)}

RULE_BY_NAME = {r.name: r for r in RULES.values()}


def resolve_rule(token: str) -> Rule | None:
    """Accept a rule id (ORT001), a name (leak) or an id prefix (ORT00)."""
    token = token.strip()
    if token.upper() in RULES:
        return RULES[token.upper()]
    return RULE_BY_NAME.get(token.lower())


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class Step:
    """One line of a finding's explanation: a location and what happens there."""

    path: str
    line: int
    col: int
    message: str


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class FixFacts:
    """What the engine knows about a finding that a fix needs, as plain data: `ortlint.fixes`
    turns these facts and the file's text into edits. The engine decides nothing about fixes."""

    kind: str  # "dropped-status" (ORT004 at the call) | "leak" (ORT001: a missing release)
    release: str = ""  # the call that releases the resource, as the policy names it (ReleaseStatus)
    var: str = ""  # the variable the resource was acquired into (leak)
    release_arg: int = 0  # where the resource goes among the release call's arguments (self argument dropped)
    owner_arg: int = -1  # where the owner goes among them (JNI: the array), -1 for none
    owner: str = ""  # the owner's text in the acquiring call (JNI: `arr`)
    arity: int = 1  # how many arguments the release call takes (self argument dropped)
    exits: tuple[str, ...] = ()  # how each related exit leaves the function ("return", "throw", ...)


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text from (line, col) up to (end_line, end_col) with `text`; lines and
    columns from 1, columns in characters (Unicode code points) of the line."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class Fix:
    """A change that removes a finding. `safe` fixes keep what the program does apart from the
    defect (`ortlint --fix` applies them); the others need a look (`--unsafe-fixes`)."""

    title: str
    edits: tuple[Edit, ...]
    safe: bool = True


_RENAMED = re.compile(r"(?<=[A-Za-z0-9_\]])@\d+(?!\d)")  # a local renamed where a body was lowered in place


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    message: str
    function: str
    trace: tuple[Step, ...] = ()
    related: tuple[Step, ...] = ()  # every leaking exit, for ORT001 / ORT010
    level: str = ""  # overrides the rule's default level (exception-only Java leaks are warnings)
    anchor: str = ""  # what the finding is about, without line numbers: the acquiring call, the variable
    # The macro whose expansion made the call the finding is about, as trace steps name it, and where the
    # analyzed tree defines it ("path:line"); on a finding folded at the definition (engine/macro_defects.py),
    # `related` lists the expansions.
    macro: str = ""
    macro_at: str = ""
    expansions: int = 0  # folded: how many expansions share this defect
    tags: tuple[str, ...] = ()  # "test": in test code (testcode.py)
    facts: FixFacts | None = None  # what a fix needs (engine); None: no mechanical fix for this kind
    fixes: tuple[Fix, ...] = ()  # computed after the run by ortlint.fixes; reporters only format them
    kind: str = ""  # the policy kind of the resource it is about ("" when none): decides its scope (scope.py)
    # a release of the wrong kind (ORT003): the kinds the release call releases (engine/own_representation.py)
    released_as: tuple[str, ...] = ()

    @property
    def effective_level(self) -> str:
        return self.level or RULES[self.rule].level

    @property
    def rule_name(self) -> str:
        return RULES[self.rule].name

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.rule, self.message)

    def fingerprint(self) -> str:
        """Stable identity that survives unrelated edits above the finding (no line numbers)."""
        basis = "|".join((self.rule, self.path.replace("\\", "/"), self.function, self.anchor or self.message))
        # surrogateescape: a file name that is not UTF-8 hashes as its own bytes (never raises)
        return hashlib.sha256(basis.encode("utf-8", "surrogateescape")).hexdigest()[:32]


# Notes about a file or function start with one of these when they are not plain notes:
LOST = "internal error: "  # the run lost it (a crash, a hang): an error, exit code 2
LIMIT = "limit reached: "  # a limit stopped its parse or analysis: a warning, the exit code is as usual
# A worker stopped it at the CPU time limit (orchestration/parallel.py): a limit, but one counted
# in time, which is never cached (a later run, with another limit, tries it again).
STOPPED = LIMIT + "ortlint stopped "


def note_level(message: str, default: str) -> str:
    """The level of a note about a file or function: `error` when the run lost it, `warning`
    when a limit stopped it, else `default`."""
    if message.startswith("internal error"):
        return "error"
    if message.startswith(LIMIT):
        return "warning"
    return default


@pickle_by_fields
@dataclass(frozen=True, slots=True)
class Notice:
    """A tool notification: a file that could not be read or parsed, an analysis budget hit."""

    path: str
    line: int
    message: str
    level: str = "warning"  # "warning" | "note" | "error"


@dataclass
class Report:
    """Everything one run produced, in a stable order."""

    findings: list[Finding] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    unknown_callees: dict[str, int] = field(default_factory=dict)
    stats: dict[str, float] = field(default_factory=dict)
    summaries: dict[tuple[str, str, int], object] = field(default_factory=dict)  # (path, name, line) -> Summary
    unused_suppressions: list[Finding] = field(default_factory=list)  # ORT100, reported on request (suppress.py)

    def keep_one_per_cause(self) -> None:
        """A finding once per cause. Code lowered in place into its caller (a lambda called where
        it is written) is analyzed twice: as its own function and inside the caller, where its
        locals may be renamed (`status@2`). A finding at the same position, of the same rule and
        about the same thing is one cause: the nested function's own finding is kept (its
        message names the variables as written); otherwise the last one, as before."""
        kept: dict[tuple, Finding] = {}
        for f in self.findings:
            key = (f.rule, f.path, f.line, f.col, _RENAMED.sub("", f.anchor))
            old = kept.get(key)
            if old is not None and old.function.startswith(f.function + "::"):
                continue
            kept[key] = f
        self.findings = list(kept.values())

    def sort(self) -> None:
        self.findings.sort(key=Finding.sort_key)
        self.notices.sort(key=lambda n: (n.path, n.line, n.message))
        self.files.sort()
