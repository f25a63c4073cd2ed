"""Relating runtime sanitizer reports to the findings of a static run.

For each report: the first stack frame inside the analyzed tree (matched by path suffix, so a log
from another machine or build folder works) is the *site*. A finding of the fitting rule on the
line of one of the in-tree frames explains the report (a leak allocated in a helper that returns
the handle is found at the caller's call line, which is where the engine reports it). When no
finding does, the reason is looked up in what the run produced: a note that the function's
analysis was incomplete, or the escape rule that made the engine stop following the value
(`facts.fate`), or else the runtime path is one the engine considers infeasible.

The decision whether there is a bug stays with the engine; this module only relates.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .. import ir
from ..findings import Finding, Notice, Report
from . import facts
from .log import (DOUBLE_FREE, LEAK, USE_AFTER_FREE, Frame, SanitizerLog, SanitizerReport, merge_repeats,
                  stack_key)

RULES_FOR = {LEAK: ("ORT001",), DOUBLE_FREE: ("ORT002", "ORT006"), USE_AFTER_FREE: ("ORT006", "ORT002")}


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    function: str


@dataclass
class Explained:
    """One runtime report (repeats merged) and what the static analysis says about it."""

    report: SanitizerReport
    count: int  # how many times the log reported it
    site: Site | None
    finding: Finding | None
    explanation: str
    allocation: list[Site] = field(default_factory=list)  # in-tree frames of the allocation stack
    indirect: list[tuple[SanitizerReport, int]] = field(default_factory=list)  # leaks hanging off this one

    @property
    def kind(self) -> str:
        return self.report.kind

    def full_explanation(self) -> str:
        """The explanation, plus the indirect leaks grouped under this report."""
        if not self.indirect:
            return self.explanation
        size = sum(r.bytes for r, _ in self.indirect)
        objects = sum(r.objects for r, _ in self.indirect)
        return (f"{self.explanation}; {size} more byte(s) in {objects} object(s) leak indirectly through it "
                f"(freed with it once it is released)")


@dataclass
class SanitizerResult:
    explained: list[Explained]
    log: SanitizerLog
    report: Report  # the static run the reports were related to


class PathIndex:
    """Finds the analyzed file a frame's path names, by the longest common path suffix."""

    def __init__(self, files: list[str]):
        self.by_name: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for path in sorted(files):
            parts = _parts(os.path.abspath(path))
            if parts:
                self.by_name.setdefault(parts[-1], []).append((parts, path))

    def resolve(self, frame_path: str | None) -> str | None:
        if not frame_path:
            return None
        parts = _parts(frame_path)
        if not parts:
            return None
        best, best_score = None, 0
        for candidate_parts, path in self.by_name.get(parts[-1], ()):
            score = _common_suffix(parts, candidate_parts)
            if score > best_score:
                best, best_score = path, score
        return best


def _parts(path: str) -> tuple[str, ...]:
    return tuple(p for p in path.replace("\\", "/").split("/") if p not in ("", "."))


def _common_suffix(a: tuple, b: tuple) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


class Matcher:
    def __init__(self, report: Report, code: facts.TreeCode):
        self.report = report
        self.code = code
        self.index = PathIndex(report.files)
        self._names: set[str] | None = None

    # ------------------------------------------------------------------ entry point

    def explain_all(self, log: SanitizerLog) -> list[Explained]:
        merged = merge_repeats(log.reports)
        direct = [(r, n) for r, n in merged if not r.indirect]
        results = [self.explain(r, n) for r, n in direct]
        for r, n in merged:
            if not r.indirect:
                continue
            parent = self._parent_of(r, direct, results)
            if parent is not None:
                parent.indirect.append((r, n))
            else:
                results.append(self.explain(r, n))
        return results

    def explain(self, r: SanitizerReport, count: int) -> Explained:
        stack = self.in_tree(r.stack)
        allocation = self.in_tree(r.allocated if r.kind != LEAK else r.stack)
        sites = [s for s, _ in allocation]
        if r.truncated and not r.stack:
            return Explained(r, count, None, None, "the log ends before the report's stack; nothing to relate it to")
        if not stack:
            where = next((f.describe() for f in r.stack if f.function), "unknown code")
            text = (f"no frame of the {'allocation' if r.kind == LEAK else 'failing'} stack is inside the analyzed "
                    f"tree (first frame: {where}); the code is outside the tree")
            return Explained(r, count, None, None, text, sites)
        site = stack[0][0]
        if r.kind == LEAK:
            finding, text = self._explain_leak(r, stack)
        else:
            finding, text = self._explain_release_error(r, stack, allocation)
        if r.indirect:
            text = ("indirect leak (reachable only from other leaked memory, whose report it could not be grouped "
                    "under); " + text)
        if count > 1:
            text += f" (reported {count} times)"
        return Explained(r, count, site, finding, text, sites)

    # ------------------------------------------------------------------ helpers

    def in_tree(self, frames: list[Frame]) -> list[tuple[Site, Frame]]:
        out = []
        for f in frames:
            path = self.index.resolve(f.path) if f.line else None
            if path is not None:
                out.append((Site(path, f.line or 0, f.function), f))
        return out

    def _tree_names(self) -> set[str]:
        """Functions of the tree that are called somewhere (they have summaries), without
        parsing the whole tree a second time."""
        if self._names is None:
            self._names = {name for _path, name, _line in self.report.summaries}
        return self._names

    def _finding_at(self, rules: tuple[str, ...], site: Site, fn: ir.Function | None,
                    above: list[Frame] = ()) -> Finding | None:
        """The finding of the first fitting rule on the call at `site`. When one call has several
        (`st = api->CreateSession(..., &session)` leaks a status on one path, a session on
        another), the frames above the site decide: a status allocator there means the status."""
        spans = [(c.loc.line, c.loc.end_line) for c in facts.calls_at(fn, site.line)] if fn else []
        spans.append((site.line, site.line))
        for rule in rules:
            hits = [f for f in self.report.findings if f.rule == rule and facts.same_file(f.path, site.path)
                    and any(lo <= f.line <= hi for lo, hi in spans)]
            if hits:
                status_frames = any("status" in f.function.lower() for f in above)
                return min(hits, key=lambda f: (("OrtStatus" in f.message) != status_frames, f.sort_key()))
        return None

    def _incomplete(self, site: Site, fn: ir.Function | None) -> Notice | None:
        for n in self.report.notices:
            if "incomplete" in n.message and facts.same_file(n.path, site.path) and \
                    (fn is None or n.line == fn.loc.line or f"{fn.name}()" in n.message):
                return n
        return None

    def _at(self, site: Site, line: int | None = None) -> str:
        return f"{display_path(site.path)}:{line or site.line}"

    # ------------------------------------------------------------------ leaks

    def _explain_leak(self, r: SanitizerReport, stack: list[tuple[Site, Frame]]) -> tuple[Finding | None, str]:
        trail: list[str] = []
        first_in_tree = r.stack.index(stack[0][1])
        for site, _frame in stack:
            fn = self.code.function_at(site.path, site.line)
            finding = self._finding_at(RULES_FOR[LEAK], site, fn, r.stack[:first_in_tree])
            if finding is not None:
                return finding, "; ".join(trail + [f"{finding.rule} reports the leaking path: {finding.message}"])
            if fn is None:
                return None, "; ".join(trail + [f"{self._at(site)} is not inside any function ortlint analyzed "
                                                f"(the front end produced none there), so nothing is known "
                                                f"about its paths"])
            notice = self._incomplete(site, fn)
            if notice is not None:
                return None, "; ".join(trail + [f"the analysis of {fn.name}() was incomplete ({notice.message})"])
            call = self._acquiring_call(fn, site.line)
            if call is None:
                return None, "; ".join(trail + [f"ortlint sees no call at {self._at(site)} in {fn.name}()"])
            fate = facts.fate(fn, call, self.code.policy, self._tree_names())
            if fate is not None and fate.how in (facts.RETURNED, facts.CALLER_MEMORY):
                how = "returned" if fate.how == facts.RETURNED else f"stored into `{fate.slot}` for the caller"
                trail.append(f"{fn.name}() hands it to its caller ({how} at {self._at(site, fate.line)})")
                continue
            if fate is not None:
                return None, "; ".join(trail + [self._escape_text(fate, site)])
            return None, "; ".join(trail + [
                f"ortlint follows `{call.text}` in {fn.name}() and finds it released on every path it considers "
                f"feasible: the path this run took is one ortlint considers infeasible"])
        return None, "; ".join(trail + ["the last caller in the tree hands it on to code outside the analyzed tree"])

    def _acquiring_call(self, fn: ir.Function, line: int) -> ir.Call | None:
        """The call on `line` that acquires: a policy acquisition first, then a helper of the
        tree (which may return what it acquired), then the innermost call."""
        calls = facts.calls_at(fn, line)
        for call in calls:
            spec = self.code.policy.lookup(call.style, call.callee)
            if spec is not None and spec.acquires:
                return call
        for call in calls:
            if call.style == "plain" and call.callee in self._tree_names():
                return call
        return calls[0] if calls else None

    def _escape_text(self, fate: facts.Fate, site: Site, leak: bool = True) -> str:
        where = self._at(site, fate.line)
        if fate.how == facts.HANDED:
            return (f"escaped at {where}: passed to {fate.slot}(), which ortlint assumes takes ownership "
                    f"(a policy `escapes` entry, or an unknown function with --unknown-calls=escape)")
        what = "the global" if fate.how == facts.GLOBAL else "memory ortlint does not own,"
        text = f"escaped at {where}: stored into {what} `{fate.slot}` (a store ortlint treats as an escape)"
        releases = facts.releases_of_slot(self.code, fate.slot, fate.root)
        if not releases:
            return text + "; it is stored in a slot that no code in the tree releases"
        named = ", ".join(f"{rel.function}() at {display_path(rel.path)}:{rel.line}" for rel in releases[:3])
        if not leak:
            return text + (f"; that slot is released by {named}, and ortlint does not follow what a slot outside "
                           f"the function holds from one call to the next")
        return text + f"; that slot is released only by {named}, which this run did not reach before the memory was lost"

    # ------------------------------------------------------------------ double free / use after free

    def _explain_release_error(self, r: SanitizerReport, stack: list[tuple[Site, Frame]],
                               allocation: list[tuple[Site, Frame]]) -> tuple[Finding | None, str]:
        for site, _frame in stack:
            fn = self.code.function_at(site.path, site.line)
            finding = self._finding_at(RULES_FOR[r.kind], site, fn)
            if finding is not None:
                return finding, f"{finding.rule} reports it: {finding.message}"
        site = stack[0][0]
        fn = self.code.function_at(site.path, site.line)
        notice = self._incomplete(site, fn)
        if notice is not None:
            return None, f"the analysis of {fn.name if fn else site.function}() was incomplete ({notice.message})"
        freed = self.in_tree(r.freed)
        first = f" (first released at {self._at(freed[0][0])})" if freed else ""
        if allocation:
            alloc_site = allocation[0][0]
            alloc_fn = self.code.function_at(alloc_site.path, alloc_site.line)
            call = self._acquiring_call(alloc_fn, alloc_site.line) if alloc_fn else None
            fate = facts.fate(alloc_fn, call, self.code.policy, self._tree_names()) if call and alloc_fn else None
            if fate is not None and fate.how not in (facts.RETURNED, facts.CALLER_MEMORY):
                return None, (f"ortlint stopped following the block allocated at {self._at(alloc_site)}{first}: "
                              + self._escape_text(fate, alloc_site, leak=False))
        return None, (f"no finding at {self._at(site)}{first}: the releases are on paths ortlint considers "
                      f"infeasible together, or in functions whose summaries do not connect them")

    # ------------------------------------------------------------------ indirect leaks

    def _parent_of(self, r: SanitizerReport, direct: list[tuple[SanitizerReport, int]],
                   results: list[Explained]) -> Explained | None:
        """The direct leak an indirect one hangs off. LSan does not say which block held the
        pointer, so: the direct leak with the same in-tree allocation stack (the user call that
        created both), else the one whose whole stack differs only in the allocator and the
        function that called it (two blocks allocated by one constructor)."""
        mine = [(s.path, s.line) for s, _ in self.in_tree(r.stack)]
        if mine:
            for (d, _n), result in zip(direct, results):
                if d.kind == LEAK and [(s.path, s.line) for s, _ in self.in_tree(d.stack)] == mine:
                    return result
        key = stack_key(r.stack)
        best, best_common = None, max(1, len(key) - 2)
        for (d, _n), result in zip(direct, results):
            common = _common_suffix(stack_key(d.stack), key) if d.kind == LEAK else 0
            if common >= best_common and (best is None or common > best[1]):
                best = (result, common)
        return best[0] if best else None


def display_path(path: str) -> str:
    """Relative to the current folder when inside it, else absolute."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute)
    return absolute if rel.startswith("..") else rel.replace(os.sep, "/")


def relate(log: SanitizerLog, report: Report, code: facts.TreeCode) -> SanitizerResult:
    """Every report of `log` explained against the static `report` of the tree."""
    return SanitizerResult(Matcher(report, code).explain_all(log), log, report)
