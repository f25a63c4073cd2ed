"""A per-file cache of analysis results, like ruff's, kept in the user's cache folder.

Each analyzed file gets one entry, keyed by its path and content hash, holding per function:
its name, callees, summary, findings and notes, plus the digests of the callee summaries it was
analyzed against. A later run reuses a function's results when its file is unchanged and every
callee summary it used is unchanged; otherwise the file is parsed (once) and re-analyzed. The
cache is namespaced by ortlint's version, a digest of its sources and a hash of the policy and options, so changing
either starts afresh. An index (path -> size, mtime, hash) lets a run on a few changed files
(pre-commit) use the summaries of the rest of the tree without parsing it.

What the cache holds cannot run code. Everything in a checked-out tree is the author's in CI,
and the cache used to be pickles read from `.ortlint_cache/` in the tree: a committed pickle ran
its author's code. Now:

* entries are data: JSON written by `datacodec.Codec`, decoded only into the classes listed in
  `CACHED_CLASSES`; every file starts with a header line holding the format version and a
  BLAKE2b hash of the rest, and an entry whose header, hash or contents do not validate is
  rejected (a warning in the report; the file is analyzed as if it were not cached);
* by default the cache lives outside the analyzed tree, in the user cache folder
  (`$XDG_CACHE_HOME/ortlint`, `~/Library/Caches/ortlint`, `%LOCALAPPDATA%\\ortlint`), one folder
  per project (`default_cache_dir`); `--cache-dir` or `cache-dir` still put it anywhere;
* files are read as `fileio.read_bounded` reads them (a FIFO planted where an entry is looked up
  is refused, not waited on).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..datacodec import Codec, CodecError
from ..engine.slot_facts import FreshReturn, Install, SlotFacts, SlotStore
from ..engine.summaries import Case, Effect, Summary
from ..fileio import DATA_BYTES, read_bounded
from ..findings import Edit, Finding, Fix, FixFacts, Notice, Report, Step
from ..ir import Loc

CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This folder is a cache created by ortlint.\n"
FORMAT = 1  # of the entry files (header line, then the data); a new format starts afresh
ENTRY_SUFFIX = ".json"


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


def default_cache_dir(project: str | os.PathLike[str]) -> str:
    """The cache folder of a project when none is configured: in the user cache folder, named
    after the project folder and a hash of its real path (two checkouts never share entries,
    and nothing is written into the tree)."""
    real = os.path.realpath(project)
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(real))[:40] or "root"
    digest = hashlib.blake2b(os.fsencode(real), digest_size=8).hexdigest()
    return os.path.join(user_cache_root(), "ortlint", f"{name}-{digest}")


def user_cache_root() -> str:
    """The platform's per-user cache folder (XDG on Linux and other Unixes)."""
    if sys.platform == "win32":
        return os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches")
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return xdg if os.path.isabs(xdg) else os.path.expanduser("~/.cache")


def find_project_root(start: str | None = None) -> Path:
    """The nearest folder holding pyproject.toml, .ortlint.toml or .git; else the start folder."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in ("pyproject.toml", ".ortlint.toml", ".git")):
            return folder
    return here


CACHED_CLASSES = (FileRecord, FunctionRecord, Summary, Case, Effect, Finding, Step, Notice, Report,
                  SlotFacts, SlotStore, Install, FreshReturn, Loc, FixFacts, Fix, Edit)
_CODEC = Codec(CACHED_CLASSES)


class Rejected(Exception):
    """A cache file that exists but does not validate; the message says why."""


def encode_entry(value: object) -> bytes:
    """A cache file: a header line (format, hash of the rest), then the value as codec JSON."""
    body = _CODEC.dumps(value).encode("ascii")
    header = json.dumps({"ortlint-cache": FORMAT, "blake2b": _digest(body)}, separators=(",", ":"))
    return header.encode("ascii") + b"\n" + body


def decode_entry(data: bytes) -> object:
    """The value of a cache file; Rejected when its header, hash or contents do not validate."""
    head, sep, body = data.partition(b"\n")
    try:
        header = json.loads(head) if sep else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("ortlint-cache") != FORMAT:
        raise Rejected(f"not an ortlint cache file of format {FORMAT}")
    if header.get("blake2b") != _digest(body):
        raise Rejected("its content does not match its hash")
    try:
        return _CODEC.loads(body)
    except CodecError as exc:
        raise Rejected(f"its content is not valid ({exc})") from None


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of ortlint's own Python sources (a few milliseconds, once per process): an
    editable install keeps its version number across commits, and a cached summary or finding
    made by other code must not be replayed as this code's."""
    package = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(digest_size=6)
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


class Cache:
    """Reads and writes cache entries; every failure degrades to a cache miss, never an error.
    Entries that exist but do not validate are listed in `rejected` (the runner warns)."""

    def __init__(self, folder: str | os.PathLike, namespace: str):
        self.root = Path(folder)
        self.dir = self.root / f"v{__version__}-{code_digest()}-{namespace}"
        self.index_path = self.dir / "index.json"
        self.run_path = self.dir / f"last-run{ENTRY_SUFFIX}"
        self.hits = 0
        self.misses = 0
        self.rejected: list[tuple[str, str]] = []  # (file, why)
        self._index_dirty = False
        self._made: set[Path] = set()  # entry folders known to exist
        self.index: dict[str, list] = self._load_index()

    @staticmethod
    def key(path: str, digest: str) -> str:
        """Keyed by the path as the run spells it: records hold that spelling in their function
        keys and findings, so `../src/a.c` and `/work/src/a.c` must not share an entry."""
        return hashlib.blake2b(f"{path}\0{digest}".encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()

    def _entry_path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}{ENTRY_SUFFIX}"

    def _read(self, path: Path) -> object | None:
        """The value stored in `path`; None when there is none (a miss) or it is rejected."""
        try:
            data = read_bounded(path, DATA_BYTES)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._reject(path, exc.strerror or str(exc))
            return None
        try:
            return decode_entry(data)
        except Rejected as exc:
            self._reject(path, str(exc))
            return None

    def _reject(self, path: Path, why: str) -> None:
        self.rejected.append((str(path), why))

    def _write(self, target: Path, value: object) -> None:
        """Write atomically (a reader sees the old file or the new one); OSError on failure."""
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(encode_entry(value))
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def load(self, path: str, digest: str) -> FileRecord | None:
        record = self._read(self._entry_path(self.key(path, digest)))
        if record is not None and not isinstance(record, FileRecord):
            self._reject(self._entry_path(self.key(path, digest)), "it does not hold a file record")
            record = None
        if record is None or record.content_hash != digest or record.path != path or not _unchanged(record):
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
            self._write(target, record)
        except (OSError, CodecError):
            return
        try:
            st = os.stat(record.path)
            exported = sorted({f.name for f in record.functions if not f.is_static})
            self.index[os.path.abspath(record.path)] = [st.st_size, st.st_mtime_ns, record.content_hash, exported,
                                                        record.path]
            self._index_dirty = True
        except OSError:
            pass

    def _load_index(self) -> dict[str, list]:
        index = self._read(self.index_path)
        if index is None:
            return {}
        if not isinstance(index, dict) or not all(_index_entry(k, v) for k, v in index.items()):
            self._reject(self.index_path, "it does not hold an index")
            return {}
        return index

    def unchanged_context(self, exclude: set[str], wanted: set[str]) -> list[tuple[str, str]]:
        """(path, hash) of indexed files outside this run that define a wanted function and
        whose size and mtime are unchanged since they were cached."""
        out = []
        for path, entry in sorted(self.index.items()):
            if path in exclude or not wanted.intersection(entry[3]):
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
        stored = self._read(self.run_path)
        if stored is None:
            return None
        if not (isinstance(stored, dict) and isinstance(stored.get("key"), str) and "payload" in stored):
            self._reject(self.run_path, "it does not hold a run")
            return None
        return stored["payload"] if stored["key"] == key else None

    def store_run(self, key: str, payload: object) -> None:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._write_tag()
            self._write(self.run_path, {"key": key, "payload": payload})
        except (OSError, CodecError):
            pass

    def flush(self) -> None:
        if not self._index_dirty:
            return
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._write(self.index_path, self.index)
        except (OSError, CodecError):
            pass

    def notices(self) -> list[Notice]:
        """One warning for the entries this run rejected (they were analyzed afresh)."""
        if not self.rejected:
            return []
        path, why = self.rejected[0]
        more = f" (and {len(self.rejected) - 1} more)" if len(self.rejected) > 1 else ""
        return [Notice(path, 0, f"cache entry rejected: {why}{more}; not used, the files were analyzed again",
                       "warning")]

    def _write_tag(self) -> None:
        tag = self.root / "CACHEDIR.TAG"
        if not tag.exists():
            try:
                self.root.mkdir(parents=True, exist_ok=True)
                tag.write_text(CACHEDIR_TAG, encoding="utf-8")
                (self.root / ".gitignore").write_text("*\n", encoding="utf-8")
            except OSError:
                pass


def _index_entry(path: object, entry: object) -> bool:
    """[size, mtime_ns, content hash, exported names, path as spelled]."""
    return (isinstance(path, str) and isinstance(entry, list) and len(entry) == 5
            and isinstance(entry[0], int) and isinstance(entry[1], int) and isinstance(entry[2], str)
            and isinstance(entry[3], list) and all(isinstance(n, str) for n in entry[3]) and isinstance(entry[4], str))
