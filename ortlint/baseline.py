"""Baselines: adopt ortlint on an existing code base without fixing every old finding first.

`--write-baseline FILE` records the current findings; `--baseline FILE` then reports (and fails
on) only findings that are not in it. Findings are matched by fingerprint, which leaves out line
numbers (rule, file, function and what the finding is about), so inserting or deleting lines
elsewhere does not turn old findings into new ones. Paths are stored relative to the baseline
file's folder, so the baseline works from any working directory. When a fingerprint occurs
several times, as many current findings match as the baseline recorded; the rest are new.

A leak is recorded with its leaking exits, without their line numbers (`"exits": ["When
returning", "When returning", "When an exception leaves the function"]`: the related locations'
messages less "at line N"; a finding folded at a macro's definition records its expansions,
"expanded in f()"). A finding matches an entry only when it leaks on no exit the entry lacks
(as a multiset: two leaking returns now against one recorded is one too many), so a handle
that was baselined for one early return but now also leaks on a new one is reported again,
while one that leaks on fewer exits (some fixed) stays baselined. Counting exits per kind is
what survives edits: their lines move with every edit above them, their text is not in the
finding. What it cannot see: one exit fixed and another of the same kind added in one change
(the count is unchanged), and exits past the 64 a finding lists (engine/leaks.py).
Entries written before exits were recorded (no "exits" key) still load and match as they did,
whatever the exits (per acquisition); `--write-baseline` again records them. The format
version stays 1: the key is optional, and older ortlint versions read new files (ignoring it).

The file may be the analyzed tree's (`baseline = ...` in its configuration): it is read as a
regular file of at most 512 MB (`fileio.read_bounded`); JSON nested too deeply to decode is an
error message, never a traceback.

File format (JSON, sorted, one finding per entry):

    {"ortlint-baseline": 1, "findings": [
      {"fingerprint": "…", "rule": "ORT001", "path": "src/a.c", "function": "f", "message": "…",
       "exits": ["When returning"]}]}
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import replace

from .fileio import DATA_BYTES, read_bounded
from .findings import Finding
from .textsafe import json_safe

FORMAT_VERSION = 1
_AT_LINE = re.compile(r" at line \d+")

# What a baseline entry accepts: its fingerprint, and the leaking exits it may have (None: any,
# an entry written before exits were recorded).
Entry = tuple[str, "Counter[str] | None"]


class BaselineError(Exception):
    """A baseline file that cannot be read or written; the message names the file."""


def _relative(path: str, root: str) -> str:
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, root)
    return (absolute if rel.startswith("..") else rel).replace(os.sep, "/")


def fingerprint(finding: Finding, root: str) -> str:
    """The finding's fingerprint with its path made relative to `root`."""
    return replace(finding, path=_relative(finding.path, root)).fingerprint()


def exits(finding: Finding) -> list[str]:
    """The finding's leaking exits (its related locations) without line numbers, sorted."""
    return sorted(_AT_LINE.sub("", step.message) for step in finding.related)


def _root(baseline_file: str) -> str:
    return os.path.dirname(os.path.abspath(baseline_file))


def write_baseline(path: str, findings: list[Finding]) -> None:
    """Record `findings` in `path` (overwriting it)."""
    root = _root(path)
    entries = [{"fingerprint": fingerprint(f, root), "rule": f.rule, "path": _relative(f.path, root),
                "function": f.function, "message": f.message, "exits": exits(f)} for f in findings]
    entries.sort(key=lambda e: (e["path"], e["function"], e["rule"], e["fingerprint"], e["message"]))
    text = json_safe(json.dumps({"ortlint-baseline": FORMAT_VERSION, "findings": entries}, indent=2,
                                ensure_ascii=False))  # a file name that is not UTF-8 is written escaped
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text + "\n")
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write baseline: {exc.strerror or exc}") from None


def read_baseline(path: str) -> list[Entry]:
    """The entries recorded in `path`: fingerprint and leaking exits (None: not recorded)."""
    try:
        doc = json.loads(read_bounded(path, DATA_BYTES).decode("utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{path}: baseline file not found (create it with --write-baseline {path})") from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: not a baseline file (invalid JSON: {exc})") from None
    except RecursionError:
        raise BaselineError(f"{path}: not a baseline file (JSON nested too deeply)") from None
    if not isinstance(doc, dict) or doc.get("ortlint-baseline") != FORMAT_VERSION or not isinstance(doc.get("findings"), list):
        raise BaselineError(f"{path}: not an ortlint baseline (expected {{\"ortlint-baseline\": {FORMAT_VERSION}, \"findings\": [...]}})")
    entries: list[Entry] = []
    for i, entry in enumerate(doc["findings"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str):
            raise BaselineError(f"{path}: findings[{i}]: expected an object with a \"fingerprint\" string")
        recorded = entry.get("exits")
        if recorded is not None and (not isinstance(recorded, list) or not all(isinstance(e, str) for e in recorded)):
            raise BaselineError(f"{path}: findings[{i}]: \"exits\" must be a list of strings")
        entries.append((entry["fingerprint"], None if recorded is None else Counter(recorded)))
    return entries


def split_new(path: str, findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(new findings, findings already in the baseline at `path`), both in input order. Each
    entry matches one finding at most: of the entries that cover a finding's exits, the one
    with the fewest exits (entries without recorded exits last), so that a larger entry stays
    for a finding with more exits."""
    remaining: dict[str, list[Counter[str] | None]] = {}
    for key, recorded in read_baseline(path):
        remaining.setdefault(key, []).append(recorded)
    for candidates in remaining.values():
        candidates.sort(key=lambda c: (c is None, c.total() if c is not None else 0, sorted(c.items()) if c else []))
    root = _root(path)
    new: list[Finding] = []
    known: list[Finding] = []
    for finding in findings:
        candidates = remaining.get(fingerprint(finding, root), [])
        leaking = Counter(exits(finding))
        index = next((i for i, c in enumerate(candidates) if c is None or not leaking - c), None)
        if index is None:
            new.append(finding)
        else:
            del candidates[index]
            known.append(finding)
    return new, known
