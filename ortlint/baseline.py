"""Baselines: adopt ortlint on an existing code base without fixing every old finding first.

`--write-baseline FILE` records the current findings; `--baseline FILE` then reports (and fails
on) only findings that are not in it. Findings are matched by fingerprint, which leaves out line
numbers (rule, file, function and what the finding is about), so inserting or deleting lines
elsewhere does not turn old findings into new ones. Paths are stored relative to the baseline
file's folder, so the baseline works from any working directory. When a fingerprint occurs
several times, as many current findings match as the baseline recorded; the rest are new.
The file may be the analyzed tree's (`baseline = ...` in its configuration): it is read as a
regular file of at most 512 MB (`fileio.read_bounded`); JSON nested too deeply to decode is an
error message, never a traceback.

File format (JSON, sorted, one finding per entry):

    {"ortlint-baseline": 1, "findings": [
      {"fingerprint": "…", "rule": "ORT001", "path": "src/a.c", "function": "f", "message": "…"}]}
"""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import replace

from .fileio import DATA_BYTES, read_bounded
from .findings import Finding
from .textsafe import json_safe

FORMAT_VERSION = 1


class BaselineError(Exception):
    """A baseline file that cannot be read or written; the message names the file."""


def _relative(path: str, root: str) -> str:
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, root)
    return (absolute if rel.startswith("..") else rel).replace(os.sep, "/")


def fingerprint(finding: Finding, root: str) -> str:
    """The finding's fingerprint with its path made relative to `root`."""
    return replace(finding, path=_relative(finding.path, root)).fingerprint()


def _root(baseline_file: str) -> str:
    return os.path.dirname(os.path.abspath(baseline_file))


def write_baseline(path: str, findings: list[Finding]) -> None:
    """Record `findings` in `path` (overwriting it)."""
    root = _root(path)
    entries = [{"fingerprint": fingerprint(f, root), "rule": f.rule, "path": _relative(f.path, root),
                "function": f.function, "message": f.message} for f in findings]
    entries.sort(key=lambda e: (e["path"], e["function"], e["rule"], e["fingerprint"], e["message"]))
    text = json_safe(json.dumps({"ortlint-baseline": FORMAT_VERSION, "findings": entries}, indent=2,
                                ensure_ascii=False))  # a file name that is not UTF-8 is written escaped
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text + "\n")
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write baseline: {exc.strerror or exc}") from None


def read_baseline(path: str) -> Counter[str]:
    """Fingerprints recorded in `path`, with how often each occurs."""
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
    counts: Counter[str] = Counter()
    for i, entry in enumerate(doc["findings"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str):
            raise BaselineError(f"{path}: findings[{i}]: expected an object with a \"fingerprint\" string")
        counts[entry["fingerprint"]] += 1
    return counts


def split_new(path: str, findings: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(new findings, findings already in the baseline at `path`), both in input order."""
    remaining = read_baseline(path)
    root = _root(path)
    new: list[Finding] = []
    known: list[Finding] = []
    for finding in findings:
        key = fingerprint(finding, root)
        if remaining[key] > 0:
            remaining[key] -= 1
            known.append(finding)
        else:
            new.append(finding)
    return new, known
