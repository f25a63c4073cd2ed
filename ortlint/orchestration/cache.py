"""A per-file cache of analysis results, like ruff's: `.ortlint_cache/` in the project root.

Each analyzed file gets one entry, keyed by its path and content hash, holding per function:
its name, callees, summary, findings and notes, plus the digests of the callee summaries it was
analyzed against. A later run reuses a function's results when its file is unchanged and every
callee summary it used is unchanged; otherwise the file is parsed (once) and re-analyzed. The
cache is namespaced by ortlint's version and a hash of the policy and options, so changing
either starts afresh. An index (path -> size, mtime, hash) lets a run on a few changed files
(pre-commit) use the summaries of the rest of the tree without parsing it.
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..engine.summaries import Summary
from ..findings import Finding

CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This folder is a cache created by ortlint.\n"


@dataclass
class FunctionRecord:
    name: str
    line: int
    is_static: bool
    callees: tuple[str, ...]
    summary: Summary | None
    findings: list[Finding]
    notes: list[tuple[int, str]]
    unknown_callees: dict[str, int]
    deps: dict[str, str]  # callee name -> digest of the summary it was analyzed against


@dataclass
class FileRecord:
    path: str
    content_hash: str
    lines: int
    notes: list[tuple[int, str, str]]  # front-end notes (line, message, level), incl. per-function ones
    functions: list[FunctionRecord] = field(default_factory=list)
    constants: dict[str, int] = field(default_factory=dict)
    dependencies: list[tuple[str, int, int]] = field(default_factory=list)  # (header, size, mtime_ns)
    slots: Any = None  # engine/slots.SlotFacts of the file (the whole-program view of members and globals)


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def summary_digest(summary: Summary | None) -> str:
    """A digest stable across processes (no reliance on set iteration order)."""
    if summary is None:
        return "-"
    return hashlib.blake2b(_canonical(summary).encode(), digest_size=12).hexdigest()


def _canonical(obj: object) -> str:
    if isinstance(obj, (frozenset, set)):
        return "{" + ",".join(sorted(_canonical(x) for x in obj)) + "}"
    if isinstance(obj, (tuple, list)):
        return "(" + ",".join(_canonical(x) for x in obj) + ")"
    if hasattr(obj, "__dataclass_fields__"):
        return type(obj).__name__ + _canonical(tuple(getattr(obj, f) for f in obj.__dataclass_fields__))
    return repr(obj)


def file_stamps(paths: list[str]) -> list[tuple[str, int, int]]:
    """(path, size, mtime) of each file that exists; what a cached result depends on."""
    out = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        out.append((path, st.st_size, st.st_mtime_ns))
    return out


def _unchanged(record: FileRecord) -> bool:
    deps = getattr(record, "dependencies", None) or []
    return file_stamps([p for p, _s, _m in deps]) == list(deps)


def find_project_root(start: str | None = None) -> Path:
    """The nearest folder holding pyproject.toml, .ortlint.toml or .git; else the start folder."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in ("pyproject.toml", ".ortlint.toml", ".git")):
            return folder
    return here


class Cache:
    """Reads and writes cache entries; every failure degrades to a cache miss, never an error."""

    def __init__(self, folder: str | os.PathLike, namespace: str):
        self.root = Path(folder)
        self.dir = self.root / f"v{__version__}-{namespace}"
        self.index_path = self.dir / "index.json"
        self.index: dict[str, list] = {}
        self.hits = 0
        self.misses = 0
        self._index_dirty = False
        self._made: set[Path] = set()  # entry folders known to exist
        try:
            self.index = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.index = {}

    @staticmethod
    def key(path: str, digest: str) -> str:
        """Keyed by the path as the run spells it: records hold that spelling in their function
        keys and findings, so `../src/a.c` and `/work/src/a.c` must not share an entry."""
        return hashlib.blake2b(f"{path}\0{digest}".encode(), digest_size=16).hexdigest()

    def _entry_path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.pickle"

    def load(self, path: str, digest: str) -> FileRecord | None:
        try:
            with open(self._entry_path(self.key(path, digest)), "rb") as fh:
                record = pickle.load(fh)
        except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError, ValueError):
            self.misses += 1
            return None
        if (not isinstance(record, FileRecord) or record.content_hash != digest or record.path != path
                or not _unchanged(record)):
            self.misses += 1
            return None
        self.hits += 1
        return record

    def store(self, record: FileRecord) -> None:
        target = self._entry_path(self.key(record.path, record.content_hash))
        try:
            if target.parent not in self._made:  # once per run and folder, not per file
                target.parent.mkdir(parents=True, exist_ok=True)
                self._write_tag()
                self._made.add(target.parent)
            fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(record, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
        except OSError:
            return
        try:
            st = os.stat(record.path)
            exported = sorted({f.name for f in record.functions if not f.is_static})
            self.index[os.path.abspath(record.path)] = [st.st_size, st.st_mtime_ns, record.content_hash, exported,
                                                        record.path]
            self._index_dirty = True
        except OSError:
            pass

    def unchanged_context(self, exclude: set[str], wanted: set[str]) -> list[tuple[str, str]]:
        """(path, hash) of indexed files outside this run that define a wanted function and
        whose size and mtime are unchanged since they were cached."""
        out = []
        for path, entry in sorted(self.index.items()):
            if path in exclude or len(entry) != 5 or not wanted.intersection(entry[3]):
                continue
            size, mtime, digest, _names, spelled = entry
            try:
                st = os.stat(path)
            except OSError:
                continue
            if st.st_size == size and st.st_mtime_ns == mtime:
                out.append((spelled, digest))  # records are keyed by the path as it was written
        return out

    # -- the last whole run ------------------------------------------------------------------
    # Rerunning on an unchanged tree (CI, a second pre-commit pass) needs no per-file work at
    # all: the last run's report is kept whole under a key made of every analyzed file's path,
    # language and content hash. One entry per namespace (the latest run), so it never grows.

    def load_run(self, key: str) -> object | None:
        try:
            with open(self.dir / "last-run.pickle", "rb") as fh:
                stored_key, payload = pickle.load(fh)
        except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError, ValueError):
            return None
        return payload if stored_key == key else None

    def store_run(self, key: str, payload: object) -> None:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._write_tag()
            fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump((key, payload), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.dir / "last-run.pickle")
        except (OSError, pickle.PickleError, TypeError, AttributeError):
            pass

    def flush(self) -> None:
        if not self._index_dirty:
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.index, fh, sort_keys=True)
            os.replace(tmp, self.index_path)
        except OSError:
            pass

    def _write_tag(self) -> None:
        tag = self.root / "CACHEDIR.TAG"
        if not tag.exists():
            try:
                self.root.mkdir(parents=True, exist_ok=True)
                tag.write_text(CACHEDIR_TAG, encoding="utf-8")
                (self.root / ".gitignore").write_text("*\n", encoding="utf-8")
            except OSError:
                pass
