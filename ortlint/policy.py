"""The release-map policy: resource kinds and what each known call does to them, read from
TOML files (`rules/*.toml` plus any file a user adds) and compiled into lookup tables.

The policy is data so that users can teach ortlint their own APIs without writing Python, the
way cppcheck's library files work. Every file is validated on load; a mistake is reported as a
`PolicyError` naming the file, the line and the key.
"""
from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .paths import PACKAGE_DIR
from .policy_callbacks import CallbackSpec, load_callbacks
from .policy_scope import load_uses, scoped_file
from .policy_self_owning import SelfOwningSpec, load_self_owning
from .policy_csharp import CsharpApiClass, load_csharp_api
from .policy_guards import GuardSpec, StatusObjectSpec, load_guards, load_status_objects
from .tomlfile import read_toml

STYLES = ("plain", "table", "method", "new", "any")
RETURNS = ("none", "status", "code")
ON_FAILURE = ("continue", "abort", "throw", "return")
RULE_IDS = ("ORT001", "ORT002", "ORT003", "ORT004", "ORT005", "ORT006", "ORT007", "ORT010", "ORT020", "ORT030")
RECEIVER = -1  # Acquire.owner: the receiver of a method call rather than an argument
_INTO = re.compile(r"^(return|token|\*(\d+)|(\d+)\[\]|(receiver))$")


class PolicyError(Exception):
    """A policy file that cannot be used; the message names file, line and key."""


MANAGED_LANGUAGES = frozenset({"java", "go", "csharp"})  # a Kind's `language` besides "c" (C, C++, JNI)
_KIND_LANGUAGE = {"c": "c", "cpp": "c"}  # a function's language -> the `language` of the kinds it handles


@dataclass(frozen=True, slots=True)
class Kind:
    """A type of resource: what is acquired and what may release it."""

    id: str
    label: str
    owned: bool = True  # False: borrowed, the caller must never release it
    must_release: bool = True  # False: tracked for misuse only (JNI local references)
    loop_leak: bool = False  # a leak when a loop iteration overwrites one never released
    token: bool = False  # no handle value: released by a call naming its owner (locks, frames)
    frame: bool = False  # a token whose release frees the loop_leak resources created while it was held
    capacity: bool = False  # a token reserving room for loop_leak resources; its owner argument says how many
    wrong_release_rule: str = "ORT003"
    language: str = "c"  # "java" kinds report ORT010 instead of ORT001, "go" kinds ORT020, "csharp" kinds ORT030
    contains: str | None = None  # Java: iterating over it yields values of this (borrowed) kind (a Result's outputs)
    closed_by_elements: bool = False  # Java: a list of values to close one by one (OnnxSequence.getValue())
    allocator_block: bool = False  # handed out by the OrtAllocator passed to the call: from the program's own allocator it is that allocator's Free's family
    general: bool = False  # general-purpose memory: reported in files that use a policy's API (policy_scope.py)
    # a function that never calls one of its releases keeps it on purpose: its leaks count only in a
    # function that releases it on some path (a JNI thread attachment: engine/lock_functions.py)
    kept_unless_released_here: bool = False


@dataclass(frozen=True, slots=True)
class Acquire:
    """A resource a call hands out. `into` is "return", "*N" (through out-argument N),
    "N[]" (into each element of array argument N), "token" or "receiver"."""

    kind: str
    into: str
    owner: int | None = None  # argument that owns it (JNI array or string; parent of a borrow)
    nullable: bool = True  # "return": NULL means failure; "*N": a successful call may write NULL
    only_if_null: int | None = None  # acquired only when this argument is NULL (`realpath(p, NULL)`; with a buffer it returns the buffer)
    none_if_count_zero: int | None = None  # out-argument N receives a count; when it is 0 the call writes NULL and allocates nothing
    keeps: int | None = None  # the acquired object holds a reference to argument N's (reference-counted) object

    @property
    def arg(self) -> int | None:
        return _into_arg(self.into)


@dataclass(frozen=True, slots=True)
class Release:
    kinds: frozenset[str]
    arg: int | None = 0  # None: a token release (or the receiver for method style)
    owner: int | None = None  # must name the same object the resource was acquired from
    keep_if_arg: int | None = None  # e.g. JNI mode argument ...
    keep_if_value: int | None = None  # ... equal to JNI_COMMIT: copy back, do not release
    receiver: bool = False  # Java `x.close()`: the receiver is released
    elements: bool = False  # Java `OnnxValue.close(map)`: every element of the collection is released
    copy_back: bool = False  # what the released buffer holds is handed to its owner object (JNI arrays)...
    copy_back_unless_arg: int | None = None  # ... unless this (mode) argument ...
    copy_back_unless_value: int | None = None  # ... equals this (JNI_ABORT: the changes are dropped)


@dataclass(frozen=True, slots=True)
class StatusCheck:
    """A helper or macro that consumes a status: `checkOrtStatus(env, api, status)`."""

    arg: int
    success_returns: int | None = None
    failure_returns: int | None = None
    on_failure: str = "continue"
    releases: bool = True
    release_with: str = "ReleaseStatus"  # the release the helper makes (OgaDestroyResult for GenAI helpers)
    passes: int | None = None  # the argument the helper returns when the check passes (Go `must.M1(v, err)`)


@dataclass(frozen=True, slots=True)
class CallSpec:
    name: str
    style: str
    returns: str = "none"
    success: int | None = None  # for returns="code": the value that means success
    acquires: tuple[Acquire, ...] = ()
    release: Release | None = None
    escapes: frozenset[int] = frozenset()
    escapes_all: bool = False
    noreturn: str | None = None  # "abort" | "throw"
    assume: int | None = None  # assert-like: the path continues only if this argument is true
    moves: int | None = None  # realloc-like: on success this argument's block moves into the result
    status_check: StatusCheck | None = None
    origin: str = ""
    type: str = ""  # Java: the static type of the result (`var s = env.createSession(p)` types s)
    stores: str | None = None  # Java collections: "receiver" (`list.add(x)`) or "return" (`Map.of(k, x)`) keeps the arguments
    view: bool = False  # Java: the result shows the receiver's elements (`map.values()`)
    element: bool = False  # Java: the result is one element of the receiver (`iterator.next()`)
    field_of: tuple[str, ...] = ()  # a function-pointer field of these C struct types (`ep->CreateAllocator(ep, ...)`)
    untyped: bool = False  # field_of: also matched on a receiver whose type is unknown
    status_kind: str = "ort.Status"  # returns = "status": the kind of the non-NULL result (OgaResult: "oga.Result")
    nonzero: bool = False  # the result is never 0 (GetErrorCode of a status: a non-NULL status is never ORT_OK)
    suggest: bool = True  # named in messages as the way to release its kinds (false: an overloaded helper)


# What a macro whose definition is not visible does, as the statement the front ends expand it
# to (`A` is the argument named by `arg`): `[[macro]] acts = ...` in rules/macros.toml.
MACRO_ACTS = {
    "return-on-status": "do {{ OrtStatus *__ortlint_st = ({a}); if (__ortlint_st != NULL) return __ortlint_st; }} while (0)",
    "return-on-false": "do {{ if (!({a})) return 0; }} while (0)",
    "abort-on-false": "do {{ if (!({a})) abort(); }} while (0)",
    "abort": "abort()",
    "abort-on-true": "do {{ if ({a}) abort(); }} while (0)",
    # gtest's fatal assertions (`ASSERT_EQ(A, B)`): A and B are compared, a failure ends the test
    "abort-unless-equal": "do {{ if (!(({a}) == ({b}))) abort(); }} while (0)",
    "abort-unless-not-equal": "do {{ if (!(({a}) != ({b}))) abort(); }} while (0)",
    "throw-on-false": "do {{ if (!({a})) throw 0; }} while (0)",
    "throw": "throw 0",
    # `ASSIGN_OR_RETURN(OrtValue* v, MakeValue(api))`: A is a declaration (`type name`) or the
    # place assigned, B the expression after it, N the declared name (found by the front end);
    # the variable is bound to the value, and the function returns when there is none
    "declare-or-return": "{a} = ({b}); if (!({n})) return __ortlint_failed_status",
    # `__builtin_expect(e, 0)` (what `unlikely(e)` expands to): an expression whose value is
    # A's, so a test of it is a test of A (`if (unlikely(p == NULL))` tells p is NULL)
    "value-of-arg": "({a})",
    # `FAILED(hr)` / `SUCCEEDED(hr)` of the Windows SDK (winerror.h: `((HRESULT)(hr)) < 0`): a
    # sign test of A, so two tests of one unchanged value agree (and `hr = E_FAIL` decides them)
    "negative-test": "(({a}) < 0)",
    "nonnegative-test": "(({a}) >= 0)",
}
# The shapes whose argument `arg` is a declaration, followed by the expression that initializes it.
DECLARING_ACTS = frozenset({"declare-or-return"})
# The shapes about two arguments, `arg` and the one after it (the operands of a comparison).
TWO_OPERAND_ACTS = frozenset({"abort-unless-equal", "abort-unless-not-equal"})
# The shapes that are expressions, not statements (never terminated as a statement before parsing).
EXPRESSION_ACTS = frozenset({"value-of-arg", "negative-test", "nonnegative-test"})


@dataclass(frozen=True)
class MacroShape:
    """A `[[macro]]` entry: a function-like macro described by what it does."""

    name: str
    acts: str
    params: tuple[str, ...]
    body: str
    variadic: bool = True
    statement: bool = True
    declares: int | None = None  # DECLARING_ACTS: the index of the declaration argument


@dataclass
class Policy:
    """All loaded policy files merged into lookup tables."""

    kinds: dict[str, Kind] = field(default_factory=dict)
    calls: dict[tuple[str, str], CallSpec] = field(default_factory=dict)
    constants: dict[str, int] = field(default_factory=dict)
    neutral: dict[str, frozenset[str]] = field(default_factory=dict)  # style -> names
    neutral_prefixes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    blank_words: set[str] = field(default_factory=set)
    blank_calls: set[str] = field(default_factory=set)
    blank_patterns: list[str] = field(default_factory=list)
    rename_words: dict[str, str] = field(default_factory=dict)  # [preprocess] rename: macro -> same-length code
    # [table_arity]: entry -> its argument counts (an OrtApi entry and an implementer field of one
    # name, from two policy files, each add theirs)
    table_arity: dict[str, frozenset[int]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    # function-pointer fields (`[[call]] field_of`) also matched when the receiver's type is
    # unknown: field name -> spec; consulted only after the exact (style, name) tables missed
    untyped_fields: dict[str, CallSpec] = field(default_factory=dict)
    # kinds that `returns = "status"` calls hand out on failure (ORT004 when dropped)
    status_kinds: set[str] = field(default_factory=lambda: {"ort.Status"})
    macro_shapes: dict[str, "MacroShape"] = field(default_factory=dict)  # [[macro]]: name -> shape
    # Java APIs, from [[java_api]]: class -> `member/arity` -> the checked exceptions it declares
    # (empty: none). Generated from the binding's sources by tools/gen_java_policy.py.
    java_api: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    guards: dict[str, GuardSpec] = field(default_factory=dict)  # [[guard]]: status-holding classes (policy_guards.py)
    status_objects: StatusObjectSpec = field(default_factory=StatusObjectSpec)  # [status_object] (policy_guards.py)
    callbacks: dict[str, list[CallbackSpec]] = field(default_factory=dict)  # [[callback]]: field -> contracts (policy_callbacks.py)
    csharp_api: dict[str, CsharpApiClass] = field(default_factory=dict)  # [[csharp_api]]: .NET classes (policy_csharp.py)
    # [[self_owning]]: library base classes whose objects delete themselves (policy_self_owning.py)
    self_owning: dict[str, SelfOwningSpec] = field(default_factory=dict)
    # [policy] uses: patterns of the text of a file that uses a policy's API (policy_scope.py)
    uses: list[str] = field(default_factory=list)
    _blank_re: re.Pattern[str] | None = None
    _spec_languages: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)  # lookup_in's cache

    def lookup(self, style: str, name: str) -> CallSpec | None:
        spec = self.calls.get((style, name))
        if spec is None:
            spec = self.calls.get(("any", name))
        if spec is None and self.untyped_fields:
            spec = self._untyped_field(style, name)
        return spec

    def lookup_in(self, language: str, style: str, name: str) -> CallSpec | None:
        """`lookup` for a call in a function of `language`: an entry whose resources all belong to
        managed bindings of other languages (Java's `close`, Go's `Destroy`, C#'s `Dispose`) does
        not apply. A C++ method call on a receiver whose type is unknown (a lambda's capture) is
        named by its method alone, like Java's `x.close()`, and must not close a Java tensor."""
        spec = self.lookup(style, name)
        if spec is None:
            return None
        languages = self._spec_languages.get((style, name))
        if languages is None:
            kinds = [a.kind for a in spec.acquires] + list(spec.release.kinds if spec.release is not None else ())
            found = {self.kinds[k].language for k in kinds if k in self.kinds}
            languages = self._spec_languages[(style, name)] = frozenset(found) if found <= MANAGED_LANGUAGES else frozenset()
        if languages and _KIND_LANGUAGE.get(language, language) not in languages:
            return None
        return spec

    def _untyped_field(self, style: str, name: str) -> CallSpec | None:
        """`x->Field(...)` on a receiver of unknown type (a `table` call), or of a type that is
        not one of the field's structs (a `method` call `Derived::Field`, e.g. a class deriving
        from `OrtEpFactory`): the field's `untyped` spec, which names no argument index."""
        if style == "table":
            return self.untyped_fields.get(name)
        if style == "method" and "::" in name:
            return self.untyped_fields.get(name.rsplit("::", 1)[1])
        return None

    def java_throws(self, cls: str, member: str, arity: int) -> tuple[str, ...] | None:
        """The checked exceptions `cls.member` with `arity` arguments declares (`()`: none), or
        None when the policy does not describe it. A varargs entry (`name/N+`) matches N or more."""
        members = self.java_api.get(cls)
        if members is None:
            return None
        found = members.get(f"{member}/{arity}")
        if found is not None:
            return found
        for key, exceptions in members.items():
            name, _, count = key.partition("/")
            if name == member and count.endswith("+") and arity >= int(count[:-1]):
                return exceptions
        return None

    def is_neutral(self, style: str, name: str) -> bool:
        """A call known not to take ownership of anything it is given."""
        if name in self.neutral.get(style, ()) or name in self.neutral.get("any", ()):
            return True
        prefixes = self.neutral_prefixes.get(style, ())
        return bool(prefixes) and name.startswith(tuple(prefixes))

    def kinds_released_by(self, name: str) -> list[str]:
        """The kinds the release call `name` releases (sorted), for findings about a resource whose
        acquisition was not seen."""
        spec = self.lookup("plain", name)
        return sorted(spec.release.kinds) if spec is not None and spec.release else []

    def releasers_of(self, kind: str) -> list[str]:
        """Names of the calls that release `kind`, for messages ("use ReleaseSession")."""
        table = self.__dict__.get("_releasers")
        if table is None or table[0] != len(self.calls):  # a table built once (rebuilt if calls are added)
            by_kind: dict[str, set[str]] = {}
            helpers: dict[str, set[str]] = {}  # `suggest = false`: named only when nothing else releases the kind
            for s in self.calls.values():
                if s.release:
                    for k in s.release.kinds:
                        (by_kind if s.suggest else helpers).setdefault(k, set()).add(s.name)
            for k, names in helpers.items():
                by_kind.setdefault(k, names)
            table = self.__dict__["_releasers"] = (len(self.calls), {k: sorted(v) for k, v in by_kind.items()})
        return list(table[1].get(kind, ()))

    def holder_types(self) -> frozenset[str]:
        """Types whose methods keep their arguments in the receiver (`atomic.Pointer` of
        `atomic.Pointer.Store`, `stores = "receiver"`): a local value of such a type is a local
        collection, whose contents stay this function's."""
        table = self.__dict__.get("_holder_types")
        if table is None or table[0] != len(self.calls):  # built once (rebuilt if calls are added)
            types = frozenset(s.name.rsplit(".", 1)[0] for (style, _n), s in self.calls.items()
                              if style == "method" and s.stores == "receiver" and "." in s.name)
            table = self.__dict__["_holder_types"] = (len(self.calls), types)
        return table[1]

    def blank_regex(self) -> re.Pattern[str] | None:
        """One regex matching every decoration to blank out before parsing."""
        if self._blank_re is None:
            alts = [re.escape(w) for w in sorted(self.blank_words, key=len, reverse=True)]
            words = rf"\b(?:{'|'.join(alts)})\b" if alts else None
            calls = None
            if self.blank_calls:
                names = "|".join(re.escape(c) for c in sorted(self.blank_calls, key=len, reverse=True))
                calls = rf"\b(?:{names})\s*\([^()]*(?:\([^()]*\)[^()]*)*\)"
            parts = [p for p in (calls, words, *self.blank_patterns) if p]
            self._blank_re = re.compile("|".join(f"(?:{p})" for p in parts)) if parts else re.compile(r"(?!x)x")
        return self._blank_re


@functools.lru_cache(maxsize=None)
def _into_arg(into: str) -> int | None:
    """The argument an acquisition writes (`*2` -> 2, `1[]` -> 1); asked at every call site."""
    m = _INTO.match(into)
    if m and m.group(2):
        return int(m.group(2))
    if m and m.group(3):
        return int(m.group(3))
    return None


# ----------------------------------------------------------------------------- loading


def default_rules_dir() -> Path:
    """The `rules/` folder shipped with ortlint (inside the package once installed)."""
    here = PACKAGE_DIR
    for candidate in (here / "rules", here.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise PolicyError(f"ortlint's own rules folder is missing (looked in {here / 'rules'})")


def load_policy(extra_files: Iterable[str | Path] = (), include_defaults: bool = True) -> Policy:
    """Load the default policy files and any extra ones, validating each."""
    paths: list[Path] = []
    if include_defaults:
        paths.extend(sorted(default_rules_dir().glob("*.toml")))
    paths.extend(Path(p) for p in extra_files)
    policy = Policy()
    docs = [(p, _read_toml(p)) for p in paths]
    for path, doc in docs:  # kinds first, so files may use each other's kinds in any order
        _Loader(policy, path, doc).load_kinds()
    for path, doc in docs:
        _Loader(policy, path, doc).load_rest()
        policy.files.append(str(path))
    return policy


def _read_toml(path: Path) -> dict[str, Any]:
    doc, text = read_toml(path, "policy file", PolicyError)
    doc["__text__"] = text
    return doc


_TOP_KEYS = {"policy", "kind", "call", "constants", "neutral", "preprocess", "macro", "java_api", "guard", "callback", "__text__", "table_arity",
             "csharp_api", "self_owning", "status_object"}
_MACRO_KEYS = {"names", "acts", "arg", "note"}
_KIND_KEYS = {"id", "label", "owned", "must_release", "loop_leak", "token", "frame", "capacity", "wrong_release_rule", "language", "contains",
              "closed_by_elements", "allocator_block", "general", "kept_unless_released_here"}
_CALL_KEYS = {"type", "stores", "view", "element",
              "name", "names", "style", "returns", "success", "acquire", "borrow", "release",
              "escapes", "noreturn", "assume", "status_check", "moves", "note", "field_of", "untyped", "status_kind",
              "nonzero", "suggest"}
_ACQ_KEYS = {"kind", "into", "owner", "nullable", "from", "only_if_null", "none_if_count_zero", "keeps"}
_REL_KEYS = {"kinds", "kind", "arg", "owner", "keep_if", "receiver", "elements", "copy_back"}
_CHECK_KEYS = {"arg", "success_returns", "failure_returns", "on_failure", "releases", "release_with", "passes"}


class _Loader:
    """Validates one parsed policy file and adds it to a `Policy`."""

    def __init__(self, policy: Policy, path: Path, doc: dict[str, Any]):
        self.policy = policy
        self.path = path
        self.doc = doc
        self.text: str = doc.get("__text__", "")
        self._line_cache: list[str] | None = None
        self._header_cache: dict[str, list[int]] = {}

    # -- errors -------------------------------------------------------------------------

    def fail(self, key: str, message: str, table: str | None = None, index: int | None = None) -> None:
        line = self._line_of(table, index, key.rsplit(".", 1)[-1].split("[")[0])
        where = f"{self.path}:{line}" if line else str(self.path)
        raise PolicyError(f"{where}: {key}: {message}")

    def _line_of(self, table: str | None, index: int | None, leaf: str) -> int | None:
        """Best-effort line of a key: the N-th `[[table]]` header, then the key inside it."""
        lines = self._lines()
        start = 0
        if table is not None and index is not None:
            headers = self._headers(table)
            if index >= len(headers):
                return None
            start = headers[index]
        key_re = re.compile(rf"^\s*{re.escape(leaf)}\s*=|[{{,]\s*{re.escape(leaf)}\s*=")
        for i in range(start, len(lines)):
            if i > start and table is not None and lines[i].lstrip().startswith("[["):
                break
            if key_re.search(lines[i]):
                return i + 1
        return start + 1 if table is not None else None

    def _lines(self) -> list[str]:
        if self._line_cache is None:
            self._line_cache = self.text.splitlines()
        return self._line_cache

    def _headers(self, table: str) -> list[int]:
        """Indexes of the lines holding a `[[table]]` header, in order (computed once: every
        [[call]] records the line it comes from)."""
        found = self._header_cache.get(table)
        if found is None:
            header = re.compile(rf"^\s*\[\[\s*{re.escape(table)}\s*\]\]")
            found = self._header_cache[table] = [i for i, text in enumerate(self._lines()) if header.match(text)]
        return found

    def check_keys(self, obj: dict[str, Any], allowed: set[str], key: str, table: str | None, index: int | None) -> None:
        for k in obj:
            if k not in allowed:
                close = sorted(allowed - {"__text__"})
                self.fail(f"{key}.{k}", f"unknown key (expected one of: {', '.join(close)})", table, index)

    # -- sections -------------------------------------------------------------------------

    def load_kinds(self) -> None:
        """First pass: kinds and constants, which other files may refer to."""
        for k in self.doc:
            if k not in _TOP_KEYS:
                self.fail(k, f"unknown section (expected one of: {', '.join(sorted(_TOP_KEYS - {'__text__'}))})")
        kinds = self._tables("kind")
        scoped = scoped_file(self.doc.get("policy"))
        for i, raw in enumerate(kinds):
            key = f"kind[{i}]"
            if not isinstance(raw, dict):
                self.fail(key, "must be a table", "kind", i)
            self.check_keys(raw, _KIND_KEYS, key, "kind", i)
            kid = self._str(raw, "id", key, "kind", i, required=True)
            rule = raw.get("wrong_release_rule", "ORT003")
            if rule not in RULE_IDS:
                self.fail(f"{key}.wrong_release_rule", f"unknown rule id {rule!r}", "kind", i)
            kind = Kind(
                id=kid,
                label=self._str(raw, "label", key, "kind", i) or kid,
                owned=self._bool(raw, "owned", key, "kind", i, True),
                must_release=self._bool(raw, "must_release", key, "kind", i, True),
                loop_leak=self._bool(raw, "loop_leak", key, "kind", i, False),
                token=self._bool(raw, "token", key, "kind", i, False),
                frame=self._bool(raw, "frame", key, "kind", i, False),
                capacity=self._bool(raw, "capacity", key, "kind", i, False),
                wrong_release_rule=rule,
                language=self._str(raw, "language", key, "kind", i) or "c",
                contains=self._str(raw, "contains", key, "kind", i) or None,
                closed_by_elements=self._bool(raw, "closed_by_elements", key, "kind", i, False),
                allocator_block=self._bool(raw, "allocator_block", key, "kind", i, False),
                general=self._bool(raw, "general", key, "kind", i, False) or scoped,
                kept_unless_released_here=self._bool(raw, "kept_unless_released_here", key, "kind", i, False),
            )
            self.policy.kinds[kid] = kind
        self._load_constants()
        self._load_table_arity()

    def load_rest(self) -> None:
        load_uses(self.policy.uses, self.doc.get("policy"), lambda key, message: self.fail(key, message))
        self._load_preprocess()
        self._load_neutral()
        self._load_macros()
        self._load_java_api()
        load_guards(self.policy.guards, self.doc.get("guard"), self.fail)
        self.policy.status_objects = load_status_objects(self.policy.status_objects, self.doc.get("status_object"), self.fail)
        load_callbacks(self.policy.callbacks, self.doc.get("callback"), self.fail)
        load_self_owning(self.policy.self_owning, self.doc.get("self_owning"), self.fail)
        load_csharp_api(self.policy.csharp_api, self.doc.get("csharp_api"), self.fail)
        calls = self._tables("call")
        for i, raw in enumerate(calls):
            for spec in self._call(raw, i):
                if spec.field_of:
                    self._add_field(spec)
                else:
                    self.policy.calls[(spec.style, spec.name)] = spec

    def _add_field(self, spec: CallSpec) -> None:
        """A struct's function-pointer field: the C++ front end names `x->F(...)` on an `x` of
        declared type `T` (or `T*`) the `method` call `T::F`, all C arguments kept."""
        for struct in spec.field_of:
            self.policy.calls[("method", f"{struct}::{spec.name}")] = spec
        if spec.untyped:
            # on a receiver of unknown type the self argument may have been dropped (C's
            # `x->F(x, ...)`), so argument indexes cannot be trusted: only what it returns applies
            # (a field that releases or keeps an argument keeps every argument there)
            keeps = bool(spec.release or spec.escapes or spec.escapes_all or spec.moves is not None)
            bare = dataclasses.replace(spec, acquires=(), release=None, escapes=frozenset(), escapes_all=keeps,
                                       moves=None, status_check=None, style="table")
            self.policy.untyped_fields.setdefault(spec.name, bare)

    def _load_table_arity(self) -> None:
        """`[table_arity] Run = 8`: a function-table entry's argument count (generated from the
        API reference; a list for a name several structs' fields have). A `table` call with
        another count is some other object's method."""
        table = self.doc.get("table_arity", {})
        if not isinstance(table, dict):
            self.fail("table_arity", "must be a table of Name = argument count")
        for name, value in table.items():
            counts = value if isinstance(value, list) else [value]
            if not counts or any(not isinstance(c, int) or isinstance(c, bool) or not 0 <= c <= 64 for c in counts):
                self.fail(f"table_arity.{name}", "must be an argument count from 0 to 64 (or a list of them)")
            self.policy.table_arity[name] = self.policy.table_arity.get(name, frozenset()) | set(counts)

    def _load_constants(self) -> None:
        consts = self.doc.get("constants", {})
        if not isinstance(consts, dict):
            self.fail("constants", "must be a table of NAME = integer")
        for name, value in consts.items():
            if not isinstance(value, int) or isinstance(value, bool):
                self.fail(f"constants.{name}", "must be an integer")
            self.policy.constants[name] = value

    def _load_renames(self, renames: object) -> None:
        """`rename = { ORT_TRY = "try" }`: an object-like macro whose definition is not visible
        written as the code it stands for, padded to the same length (offsets stay put)."""
        if not isinstance(renames, dict):
            self.fail("preprocess.rename", 'must be a table such as { ORT_TRY = "try" }')
        for name, code in renames.items():
            if not re.fullmatch(r"[A-Za-z_]\w*", name):
                self.fail("preprocess.rename", f"{name!r} is not a macro name")
            if not isinstance(code, str) or not code.strip() or "\n" in code:
                self.fail("preprocess.rename", f"{name}: must be one line of code")
            if len(code) > len(name):
                self.fail("preprocess.rename", f"{name}: {code!r} is longer than the macro name: offsets would move")
            self.policy.rename_words[name] = code

    def _load_preprocess(self) -> None:
        pre = self.doc.get("preprocess", {})
        if not isinstance(pre, dict):
            self.fail("preprocess", "must be a table")
        self.check_keys(pre, {"blank", "blank_calls", "blank_patterns", "rename"}, "preprocess", None, None)
        self._load_renames(pre.get("rename", {}))
        self.policy.blank_words.update(self._str_list(pre, "blank", "preprocess"))
        self.policy.blank_calls.update(self._str_list(pre, "blank_calls", "preprocess"))
        for pattern in self._str_list(pre, "blank_patterns", "preprocess"):
            try:
                re.compile(pattern)
            except re.error as exc:
                self.fail("preprocess.blank_patterns", f"invalid regular expression {pattern!r}: {exc}")
            self.policy.blank_patterns.append(pattern)
        self.policy._blank_re = None

    def _tables(self, section: str, single_ok: bool = False) -> list:
        """The `[[section]]` entries of the file (`[section]`, a single table, where `single_ok`)."""
        tables = self.doc.get(section, [])
        if single_ok and isinstance(tables, dict):
            tables = [tables]
        if not isinstance(tables, list):
            self.fail(section, f"must be an array of tables: [[{section}]]")
        return tables

    def _load_macros(self) -> None:
        """`[[macro]] names = [...], acts = "<shape>", arg = N`: macros whose definition is in a
        system or SDK header the analysis cannot see (a visible definition always wins)."""
        macros = self._tables("macro", single_ok=True)
        for i, raw in enumerate(macros):
            key = f"macro[{i}]"
            if not isinstance(raw, dict):
                self.fail(key, "must be a table", "macro", i)
            self.check_keys(raw, _MACRO_KEYS, key, "macro", i)
            names = self._str_list(raw, "names", key, "macro", i)
            if not names:
                self.fail(f"{key}.names", "missing (a list of macro names)", "macro", i)
            acts = self._str(raw, "acts", key, "macro", i, required=True)
            if acts not in MACRO_ACTS:
                self.fail(f"{key}.acts", f"must be one of {', '.join(sorted(MACRO_ACTS))}", "macro", i)
            arg = raw.get("arg", 0)
            if not isinstance(arg, int) or isinstance(arg, bool) or not 0 <= arg < 16:
                self.fail(f"{key}.arg", "must be an argument index from 0 to 15", "macro", i)
            declares = arg if acts in DECLARING_ACTS else None
            if declares is not None and arg > 14:
                self.fail(f"{key}.arg", f"{acts}: the declaration (argument {arg}) must be followed by its expression; at most 14", "macro", i)
            two = declares is not None or acts in TWO_OPERAND_ACTS
            params = tuple(f"__ortlint_a{n}" for n in range(arg + (2 if two else 1)))
            if declares is not None:
                params += ("__ortlint_name",)  # inserted by the front end (declaration_macros.with_declared_name)
            body = MACRO_ACTS[acts].format(a=params[arg], b=params[arg + 1] if two else "", n=params[-1])
            for name in names:
                if not re.fullmatch(r"[A-Za-z_]\w*", name):
                    self.fail(f"{key}.names", f"{name!r} is not a macro name", "macro", i)
                self.policy.macro_shapes[name] = MacroShape(name, acts, params, body, declares=declares,
                                                            statement=acts not in EXPRESSION_ACTS)

    def _load_java_api(self) -> None:
        """[[java_api]] class = "OrtSession", nothrow = ["m/1"], [java_api.throws] "m/2" = ["E"]."""
        tables = self._tables("java_api")
        for i, raw in enumerate(tables):
            key = f"java_api[{i}]"
            if not isinstance(raw, dict):
                self.fail(key, "must be a table", "java_api", i)
            self.check_keys(raw, {"class", "nothrow", "throws"}, key, "java_api", i)
            cls = self._str(raw, "class", key, "java_api", i, required=True)
            members = self.policy.java_api.setdefault(cls, {})
            for member in self._str_list(raw, "nothrow", key, "java_api", i):
                self._member_key(member, f"{key}.nothrow", i)
                members[member] = ()
            throws = raw.get("throws", {})
            if not isinstance(throws, dict):
                self.fail(f"{key}.throws", "must be a table of `member/arity` = [exception names]", "java_api", i)
            for member, exceptions in throws.items():
                self._member_key(member, f"{key}.throws", i)
                if not isinstance(exceptions, list) or not exceptions or not all(isinstance(e, str) for e in exceptions):
                    self.fail(f"{key}.throws.{member}", "must be a non-empty list of exception class names", "java_api", i)
                members[member] = tuple(exceptions)

    def _member_key(self, member: str, key: str, i: int) -> None:
        name, slash, count = member.partition("/")
        if not name or not slash or not count.rstrip("+").isdigit():
            self.fail(key, f"{member!r} is not `name/arity` (or `name/N+` for varargs)", "java_api", i)

    def _load_neutral(self) -> None:
        neutral = self._tables("neutral", single_ok=True)
        for i, raw in enumerate(neutral):
            key = f"neutral[{i}]"
            self.check_keys(raw, {"style", "names", "prefixes", "note"}, key, "neutral", i)
            style = raw.get("style", "plain")
            if style not in STYLES:
                self.fail(f"{key}.style", f"must be one of {', '.join(STYLES)}", "neutral", i)
            names = self._str_list(raw, "names", key, "neutral", i)
            self.policy.neutral[style] = self.policy.neutral.get(style, frozenset()) | frozenset(names)
            prefixes = tuple(self._str_list(raw, "prefixes", key, "neutral", i))
            self.policy.neutral_prefixes[style] = self.policy.neutral_prefixes.get(style, ()) + prefixes

    def _call(self, raw: Any, i: int) -> list[CallSpec]:
        key = f"call[{i}]"
        if not isinstance(raw, dict):
            self.fail(key, "must be a table", "call", i)
        self.check_keys(raw, _CALL_KEYS, key, "call", i)
        names = self._names(raw, key, i)
        styles = self._styles(raw, key, i)
        style = styles[0]
        returns = raw.get("returns", "none")
        if returns not in RETURNS:
            self.fail(f"{key}.returns", f"must be one of {', '.join(RETURNS)}, not {returns!r}", "call", i)
        acquires = tuple(self._acquire(a, f"{key}.acquire[{j}]", i, borrowed=False) for j, a in enumerate(self._list(raw, "acquire", key, i)))
        borrows = tuple(self._acquire(a, f"{key}.borrow[{j}]", i, borrowed=True) for j, a in enumerate(self._list(raw, "borrow", key, i)))
        noreturn = raw.get("noreturn")
        if noreturn is True:
            noreturn = "abort"
        if noreturn not in (None, False, "abort", "throw"):
            self.fail(f"{key}.noreturn", "must be true, \"abort\" or \"throw\"", "call", i)
        escapes_raw = raw.get("escapes", [])
        escapes_all = escapes_raw == "all"
        if not escapes_all and (not isinstance(escapes_raw, list) or not all(isinstance(x, int) for x in escapes_raw)):
            self.fail(f"{key}.escapes", "must be a list of argument indexes or \"all\"", "call", i)
        success = raw.get("success")
        if success is not None:
            success = self._value(success, f"{key}.success", i)
        if returns == "code" and success is None:
            self.fail(f"{key}.success", "returns = \"code\" needs the value that means success", "call", i)
        assume = raw.get("assume")
        if assume is not None and not isinstance(assume, int):
            self.fail(f"{key}.assume", "must be an argument index", "call", i)
        moves = raw.get("moves")
        if moves is not None and not isinstance(moves, int):
            self.fail(f"{key}.moves", "must be an argument index", "call", i)
        nonzero = raw.get("nonzero", False)
        if not isinstance(nonzero, bool):
            self.fail(f"{key}.nonzero", "must be true or false", "call", i)
        origin = f"{self.path}:{self._line_of('call', i, 'name') or 0}"
        field_of, untyped = self._field_of(raw, key, i, styles)
        status_kind = self._status_kind(raw, key, i, returns)
        specs = []
        for name, style in ((n, st) for n in names for st in styles):
            specs.append(CallSpec(
                name=name, style=style, returns=returns, success=success,
                acquires=acquires + borrows,
                release=self._release(raw.get("release"), f"{key}.release", i) if "release" in raw else None,
                escapes=frozenset(() if escapes_all else escapes_raw), escapes_all=escapes_all,
                noreturn=noreturn or None, assume=assume, moves=moves,
                status_check=self._status_check(raw.get("status_check"), f"{key}.status_check", i) if "status_check" in raw else None,
                origin=origin, type=self._java_type(raw, key, i), stores=self._stores(raw, key, i),
                view=bool(raw.get("view", False)), element=bool(raw.get("element", False)),
                field_of=field_of, untyped=untyped, status_kind=status_kind, nonzero=nonzero,
                suggest=self._suggest(raw, key, i),
            ))
        return specs

    def _suggest(self, raw: dict[str, Any], key: str, i: int) -> bool:
        """`suggest = false`: a release that messages never recommend (an overloaded helper such as
        `Ort::detail::OrtRelease`, which releases every handle type but is not the API's own way)."""
        value = raw.get("suggest", True)
        if not isinstance(value, bool):
            self.fail(f"{key}.suggest", "must be true or false", "call", i)
        return value

    def _styles(self, raw: dict[str, Any], key: str, i: int) -> list[str]:
        """`style = "table"`, or a list: `style = ["table", "method"]` for an API table reached both
        as `api->F(...)` and as `holder.api.F(...)` on a receiver whose type is unknown."""
        value = raw.get("style", "method" if "field_of" in raw else "plain")
        styles = value if isinstance(value, list) and value else [value]
        for style in styles:
            if style not in STYLES:
                self.fail(f"{key}.style", f"must be one of {', '.join(STYLES)} (or a list of them), not {style!r}", "call", i)
        return styles

    def _status_kind(self, raw: dict[str, Any], key: str, i: int, returns: str) -> str:
        """`status_kind = "oga.Result"`: an API whose error object is not an OrtStatus."""
        if "status_kind" not in raw:
            return "ort.Status"
        if returns != "status":
            self.fail(f"{key}.status_kind", "only meaningful with returns = \"status\"", "call", i)
        kind = self._kind_ref(raw["status_kind"], f"{key}.status_kind", i)
        if not self.policy.kinds[kind].owned:
            self.fail(f"{key}.status_kind", f"kind {kind!r} is borrowed (owned = false); a status must be released", "call", i)
        self.policy.status_kinds.add(kind)
        return kind

    def _field_of(self, raw: dict[str, Any], key: str, i: int, styles: list[str]) -> tuple[tuple[str, ...], bool]:
        """`field_of = ["OrtEpFactory"]` (a list of C struct names) and `untyped = true|false`."""
        if "field_of" not in raw:
            if "untyped" in raw:
                self.fail(f"{key}.untyped", "only meaningful with field_of", "call", i)
            return (), False
        structs = raw["field_of"]
        if not isinstance(structs, list) or not structs or \
                not all(isinstance(x, str) and re.fullmatch(r"[A-Za-z_]\w*", x) for x in structs):
            self.fail(f"{key}.field_of", "must be a non-empty list of struct type names such as [\"OrtEpFactory\"]", "call", i)
        if "style" in raw and styles != ["method"]:
            self.fail(f"{key}.style", "a field_of call is matched as `x->F(...)` on its struct: leave style out "
                      "(or write \"method\")", "call", i)
        untyped = raw.get("untyped", False)
        if not isinstance(untyped, bool):
            self.fail(f"{key}.untyped", "must be true or false", "call", i)
        return tuple(structs), untyped

    def _names(self, raw: dict[str, Any], key: str, i: int) -> list[str]:
        if "name" in raw and "names" in raw:
            self.fail(key, "use either name or names, not both", "call", i)
        if "name" in raw:
            return [self._str(raw, "name", key, "call", i, required=True)]
        names = self._str_list(raw, "names", key, "call", i)
        if not names:
            self.fail(f"{key}.name", "missing (every [[call]] needs name or names)", "call", i)
        return names

    def _acquire(self, raw: Any, key: str, i: int, borrowed: bool) -> Acquire:
        if not isinstance(raw, dict):
            self.fail(key, "must be a table like { kind = \"...\", into = \"*0\" }", "call", i)
        self.check_keys(raw, _ACQ_KEYS, key, "call", i)
        kind = self._kind_ref(raw.get("kind"), f"{key}.kind", i)
        into = raw.get("into", "return")
        if not isinstance(into, str) or not _INTO.match(into):
            self.fail(f"{key}.into", "must be \"return\", \"*N\", \"N[]\", \"token\" or \"receiver\"", "call", i)
        if borrowed and self.policy.kinds[kind].owned:
            self.fail(f"{key}.kind", f"kind {kind!r} is owned; a borrow needs a kind with owned = false", "call", i)
        owner = raw.get("from" if borrowed else "owner", raw.get("owner"))
        if owner == "receiver":  # Java `result.get(i)`: borrowed from the object the method is called on
            owner = RECEIVER
        if owner is not None and not isinstance(owner, int):
            self.fail(f"{key}.owner", "must be an argument index", "call", i)
        only_if_null = raw.get("only_if_null")
        if only_if_null is not None and (not isinstance(only_if_null, int) or isinstance(only_if_null, bool) or only_if_null < 0):
            self.fail(f"{key}.only_if_null", "must be an argument index", "call", i)
        count = raw.get("none_if_count_zero")
        if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 0
                                  or not into.startswith("*") or _into_arg(into) == count):
            self.fail(f"{key}.none_if_count_zero",
                      "must be the index of the count out-argument, other than the `into = \"*N\"` one", "call", i)
        keeps = raw.get("keeps")
        if keeps is not None and (not isinstance(keeps, int) or isinstance(keeps, bool) or keeps < 0
                                  or _into_arg(into) == keeps):
            self.fail(f"{key}.keeps", "must be the index of an argument other than the `into` one", "call", i)
        return Acquire(kind=kind, into=into, owner=owner, nullable=bool(raw.get("nullable", into == "return")),
                       only_if_null=only_if_null, none_if_count_zero=count, keeps=keeps)

    def _release(self, raw: Any, key: str, i: int) -> Release:
        if not isinstance(raw, dict):
            self.fail(key, "must be a table like { arg = 0, kinds = [\"...\"] }", "call", i)
        self.check_keys(raw, _REL_KEYS, key, "call", i)
        kinds_raw = raw.get("kinds", [raw["kind"]] if "kind" in raw else None)
        if not isinstance(kinds_raw, list) or not kinds_raw:
            self.fail(f"{key}.kinds", "must list the kinds this call releases", "call", i)
        kinds = frozenset(self._kind_ref(k, f"{key}.kinds", i) for k in kinds_raw)
        keep_arg = keep_val = None
        if "keep_if" in raw:
            keep = raw["keep_if"]
            if not isinstance(keep, dict) or set(keep) - {"arg", "equals"} or "arg" not in keep or "equals" not in keep:
                self.fail(f"{key}.keep_if", "must be { arg = N, equals = VALUE }", "call", i)
            keep_arg = keep["arg"]
            keep_val = self._value(keep["equals"], f"{key}.keep_if.equals", i)
        copy_back, back_arg, back_val = self._copy_back(raw.get("copy_back", False), key, i)
        receiver = bool(raw.get("receiver", False))
        arg = raw.get("arg", None if receiver else 0)
        if arg is not None and not isinstance(arg, int):
            self.fail(f"{key}.arg", "must be an argument index", "call", i)
        if all(self.policy.kinds[k].token for k in kinds):
            arg = None  # tokens have no handle: the release names the owner, if anything
        return Release(kinds=kinds, arg=arg, owner=raw.get("owner"), keep_if_arg=keep_arg,
                       keep_if_value=keep_val, receiver=receiver, elements=bool(raw.get("elements", False)),
                       copy_back=copy_back, copy_back_unless_arg=back_arg, copy_back_unless_value=back_val)

    def _copy_back(self, raw: Any, key: str, i: int) -> tuple[bool, int | None, int | None]:
        """`copy_back = true` or `copy_back = { unless = { arg = N, equals = VALUE } }`."""
        if isinstance(raw, bool):
            return raw, None, None
        unless = raw.get("unless") if isinstance(raw, dict) and set(raw) <= {"unless"} else None
        if not isinstance(unless, dict) or set(unless) != {"arg", "equals"} or not isinstance(unless["arg"], int):
            self.fail(f"{key}.copy_back", "must be true or { unless = { arg = N, equals = VALUE } }", "call", i)
        return True, unless["arg"], self._value(unless["equals"], f"{key}.copy_back.unless.equals", i)

    def _java_type(self, raw: dict[str, Any], key: str, i: int) -> str:
        value = raw.get("type", "")
        if not isinstance(value, str):
            self.fail(f"{key}.type", "must be a type name such as \"OrtSession.Result\"", "call", i)
        return value

    def _stores(self, raw: dict[str, Any], key: str, i: int) -> str | None:
        value = raw.get("stores")
        if value not in (None, "receiver", "return"):
            self.fail(f"{key}.stores", "must be \"receiver\" or \"return\"", "call", i)
        return value

    def _status_check(self, raw: Any, key: str, i: int) -> StatusCheck:
        if not isinstance(raw, dict):
            self.fail(key, "must be a table like { arg = 0, success_returns = 0 }", "call", i)
        self.check_keys(raw, _CHECK_KEYS, key, "call", i)
        on_failure = raw.get("on_failure", "continue")
        if on_failure not in ON_FAILURE:
            self.fail(f"{key}.on_failure", f"must be one of {', '.join(ON_FAILURE)}", "call", i)
        if not isinstance(raw.get("arg", 0), int):
            self.fail(f"{key}.arg", "must be an argument index", "call", i)
        succ = raw.get("success_returns")
        fail = raw.get("failure_returns")
        passes = raw.get("passes")
        if passes is not None and (not isinstance(passes, int) or isinstance(passes, bool) or passes < 0):
            self.fail(f"{key}.passes", "must be an argument index", "call", i)
        if passes is not None and succ is not None:
            self.fail(f"{key}.passes", "cannot be combined with success_returns", "call", i)
        return StatusCheck(
            arg=raw.get("arg", 0),
            success_returns=None if succ is None else self._value(succ, f"{key}.success_returns", i),
            failure_returns=None if fail is None else self._value(fail, f"{key}.failure_returns", i),
            on_failure=on_failure,
            releases=bool(raw.get("releases", True)),
            release_with=self._str(raw, "release_with", key, "call", i) or "ReleaseStatus",
            passes=passes,
        )

    # -- small typed readers -------------------------------------------------------------

    def _value(self, raw: Any, key: str, i: int) -> int:
        """An integer, or the name of a constant declared in some policy file."""
        if isinstance(raw, bool):
            return int(raw)
        if isinstance(raw, int):
            return raw
        if isinstance(raw, str):
            if raw in self.policy.constants:
                return self.policy.constants[raw]
            self.fail(key, f"unknown constant {raw!r}; declare it under [constants]", "call", i)
        self.fail(key, "must be an integer or a constant name", "call", i)
        raise AssertionError

    def _kind_ref(self, raw: Any, key: str, i: int) -> str:
        if not isinstance(raw, str):
            self.fail(key, "must be a kind id (a string)", "call", i)
        if raw not in self.policy.kinds:
            self.fail(key, f"unknown kind {raw!r}; declare it with [[kind]] id = {raw!r}", "call", i)
        return raw

    def _list(self, raw: dict[str, Any], name: str, key: str, i: int) -> list[Any]:
        value = raw.get(name, [])
        if isinstance(value, dict):
            return [value]
        if not isinstance(value, list):
            self.fail(f"{key}.{name}", "must be a table or an array of tables", "call", i)
        return value

    def _str(self, raw: dict[str, Any], name: str, key: str, table: str | None, i: int | None, required: bool = False) -> str:
        value = raw.get(name)
        if value is None:
            if required:
                self.fail(f"{key}.{name}", "missing", table, i)
            return ""
        if not isinstance(value, str) or not value:
            self.fail(f"{key}.{name}", "must be a non-empty string", table, i)
        return value

    def _bool(self, raw: dict[str, Any], name: str, key: str, table: str, i: int, default: bool) -> bool:
        value = raw.get(name, default)
        if not isinstance(value, bool):
            self.fail(f"{key}.{name}", "must be true or false", table, i)
        return value

    def _str_list(self, raw: dict[str, Any], name: str, key: str, table: str | None = None, i: int | None = None) -> list[str]:
        value = raw.get(name, [])
        if not isinstance(value, list) or not all(isinstance(x, str) and x for x in value):
            self.fail(f"{key}.{name}", "must be a list of non-empty strings", table, i)
        return value
