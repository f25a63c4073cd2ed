"""Showing inferred summaries to users: as explanations, and as a policy file to commit.

`ortlint --explain-summaries` answers "why does ortlint think my helper releases this?";
`--write-summaries FILE` turns the summaries that the policy schema can express into
`[[call]]` entries, so a team can review them and commit them (hand-written entries win over
inferred ones on later runs).
"""
from __future__ import annotations

from .engine.summaries import Case, Summary
from .policy import Policy
from .textsafe import terminal_safe


def explain(summaries: dict[tuple[str, str, int], Summary]) -> str:
    lines: list[str] = []
    for (path, name, line), summary in sorted(summaries.items()):
        interesting = any(c.effects or c.outs or (c.ret and c.ret[0] == "fresh") for c in summary.cases)
        if not interesting and not summary.noreturn:
            continue
        lines.append(terminal_safe(f"{path}:{line}: {name}()"))  # names and paths come from the tree
        for text in summary.describe():
            lines.append(f"    {terminal_safe(text)}")
    if not lines:
        return "No function in these files releases, acquires or takes ownership of anything.\n"
    return "\n".join(lines) + "\n"


def as_policy(summaries: dict[tuple[str, str, int], Summary], policy: Policy) -> str:
    """TOML `[[call]]` entries for the summaries the schema can express; others as comments."""
    out = ["# Inferred by `ortlint --write-summaries`. Review before committing: entries here win over",
           "# what ortlint infers from the source on later runs.", ""]
    seen: set[str] = set()
    for (path, name, line), summary in sorted(summaries.items()):
        if name in seen:
            continue
        seen.add(name)
        entry = _entry(summary, policy)
        if entry is None:
            continue
        out.append(f"# inferred from {terminal_safe(path)}:{line}")  # (a newline in a file name ends a comment)
        if isinstance(entry, str):
            out.append(f"# {terminal_safe(name)}: {entry}")
            out.append("")
            continue
        out.append("[[call]]")
        out.append(f'name = "{name}"')
        out.extend(entry)
        out.append("")
    return "\n".join(out) + "\n"


def _entry(summary: Summary, policy: Policy) -> list[str] | str | None:
    cases = summary.cases
    if not cases:
        return None
    if all(c.exit == "abort" for c in cases):
        return ['noreturn = "abort"']
    if all(c.exit == "throw" for c in cases):
        return ['noreturn = "throw"']
    lines: list[str] = []
    check = _status_check(cases)
    if check is not None:
        return check
    if any(c.ret is not None and c.ret[0] == "param" for c in cases):
        return "may return one of its arguments; the policy schema cannot say that (kept as a summary)"
    if any(len(e.path) > 1 for c in cases for e in c.effects) or any(len(p) > 2 for c in cases for p, _k in c.outs):
        return "acts on fields or elements of its arguments; the policy schema cannot say that (kept as a summary)"
    released = _released_params(cases)
    if len(released) > 1:
        return "releases several arguments; the policy schema has one release per call (kept as a summary)"
    for idx, relby in released.items():
        kinds = policy.lookup("table", relby) or policy.lookup("plain", relby) if relby else None
        kind_list = sorted(kinds.release.kinds) if kinds is not None and kinds.release is not None else []
        if not kind_list:
            return f"releases argument {idx} through {relby or 'an unknown call'}"
        lines.append(f"release = {{ arg = {idx}, kinds = [{', '.join(repr(k).replace(chr(39), chr(34)) for k in kind_list)}] }}")
    escaped = sorted({e.path[0] for c in cases for e in c.effects if e.what == "escape" and len(e.path) == 1})
    if escaped:
        lines.append(f"escapes = {escaped}")
    fresh = {c.ret[1] for c in cases if c.ret and c.ret[0] == "fresh"}
    outs = {(p, k) for c in cases for p, k in c.outs if len(p) == 2 and p[1] == "*"}
    if "ort.Status" in fresh and outs:
        lines.append('returns = "status"')
        lines.append("acquire = [" + ", ".join(f'{{ kind = "{k}", into = "*{p[0]}" }}' for p, k in sorted(outs)) + "]")
    elif len(fresh) == 1 and "ort.Status" not in fresh:
        kind = next(iter(fresh))
        nullable = any(c.ret == ("k", 0) for c in cases)
        lines.append(f'acquire = {{ kind = "{kind}", into = "return"{", nullable = false" if not nullable else ""} }}')
    elif outs:
        lines.append("acquire = [" + ", ".join(f'{{ kind = "{k}", into = "*{p[0]}" }}' for p, k in sorted(outs)) + "]")
    return lines or None


def _released_params(cases: tuple[Case, ...]) -> dict[int, str | None]:
    """Top-level parameters released on every path where they are not known to be NULL."""
    candidates = {e.path[0]: e.relby for c in cases for e in c.effects if e.what == "release" and len(e.path) == 1}
    out = {}
    for idx, relby in candidates.items():
        if all(any(e.path == (idx,) and e.what == "release" for e in c.effects) or ((idx,), "null") in c.pre
               for c in cases if c.exit == "return"):
            out[idx] = relby
    return out


def _status_check(cases: tuple[Case, ...]) -> list[str] | None:
    """Two cases, NULL status -> value A, non-NULL status released -> B: a status checker."""
    if len(cases) != 2:
        return None
    null_case = next((c for c in cases if len(c.pre) == 1 and c.pre[0][1] == "null"), None)
    bad_case = next((c for c in cases if len(c.pre) == 1 and c.pre[0][1] == "nonnull"), None)
    if null_case is None or bad_case is None or null_case.pre[0][0] != bad_case.pre[0][0]:
        return None
    path = null_case.pre[0][0]
    if len(path) != 1 or not any(e.path == path and e.what == "release" and e.relby == "ReleaseStatus" for e in bad_case.effects):
        return None
    parts = [f"arg = {path[0]}"]
    if null_case.ret is not None and null_case.ret[0] == "k":
        parts.append(f"success_returns = {null_case.ret[1]}")
    if bad_case.ret is not None and bad_case.ret[0] == "k":
        parts.append(f"failure_returns = {bad_case.ret[1]}")
    on_failure = {"return": "continue", "abort": "abort", "throw": "throw"}.get(bad_case.exit, "continue")
    parts.append(f'on_failure = "{on_failure}"')
    return [f"status_check = {{ {', '.join(parts)} }}"]
