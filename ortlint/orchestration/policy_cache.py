"""The loaded policy kept between runs, so that a run on a few files (pre-commit) does not parse
and validate eleven TOML files again (about a third of its start-up CPU).

`load_policy_cached` gives exactly what `policy.load_policy` gives for the same files: an entry
is keyed by ortlint's version, a digest of its sources (`cache.code_digest`: the loader is part
of the input) and the path and bytes of every policy file in load order; a policy file that does
not load is never stored, so its error is reported as before. Entries are data, never code: the
`datacodec` JSON the analysis cache uses, with the same header (format, BLAKE2b of the body),
decoded only into the policy's classes. A missing, unreadable, corrupt or foreign entry is a
miss (the policy is loaded from its files and the entry written again); a failed write is
ignored. Unlike the analysis cache, entries live only in the user cache folder (or
`ORTLINT_POLICY_CACHE=FOLDER`), never in a folder an analyzed tree's configuration names;
`ORTLINT_POLICY_CACHE=0` turns it off. `--no-cache` is about analysis results and leaves this
cache on: a hit cannot change a result.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Iterable

from .. import __version__
from ..datacodec import Codec, CodecError
from ..fileio import DATA_BYTES, read_bounded
from ..policy import (Acquire, CallSpec, Kind, MacroShape, Policy, Release, StatusCheck, default_rules_dir,
                      load_policy)
from ..policy_callbacks import CallbackSpec
from ..policy_csharp import CsharpApiClass
from ..policy_guards import GuardSpec, StatusObjectSpec
from ..policy_self_owning import SelfOwningSpec
from . import cache

FORMAT = 1  # of the entry files; a new format only misses
KEEP = 8  # entries kept in the folder (one per version of ortlint and its rules, newest first)
_CODEC = Codec((Policy, Kind, Acquire, Release, StatusCheck, CallSpec, MacroShape, CallbackSpec, CsharpApiClass,
                GuardSpec, StatusObjectSpec, SelfOwningSpec))


def cache_folder() -> Path | None:
    """Where entries live, or None when the cache is off (ORTLINT_POLICY_CACHE=0)."""
    setting = os.environ.get("ORTLINT_POLICY_CACHE", "")
    if setting == "0":
        return None
    if setting:
        return Path(setting)
    return Path(cache.user_cache_root()) / "ortlint" / "policy"


def policy_paths(extra_files: Iterable[str | Path] = (), include_defaults: bool = True) -> list[Path]:
    """The files `load_policy` reads, in its order."""
    paths: list[Path] = sorted(default_rules_dir().glob("*.toml")) if include_defaults else []
    paths.extend(Path(p) for p in extra_files)
    return paths


def entry_key(paths: list[Path]) -> str | None:
    """The key of the policy these files load to; None when one cannot be read (no caching:
    the load reports it)."""
    h = hashlib.blake2b(f"{FORMAT}\0{__version__}\0{cache.code_digest()}".encode(), digest_size=16)
    for path in paths:
        try:
            data = read_bounded(path, DATA_BYTES)
        except (OSError, ValueError):
            return None
        h.update(b"\0" + os.fsencode(str(path)) + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def load_policy_cached(extra_files: Iterable[str | Path] = (), include_defaults: bool = True) -> Policy:
    """`load_policy(extra_files, include_defaults)`, from the cache when an entry matches."""
    extra = list(extra_files)
    folder = cache_folder()
    key = entry_key(policy_paths(extra, include_defaults)) if folder is not None else None
    if folder is None or key is None:
        return load_policy(extra, include_defaults)
    target = folder / f"{key}.json"
    cached = read_entry(target)
    if cached is not None:
        return cached
    policy = load_policy(extra, include_defaults)
    if entry_key(policy_paths(extra, include_defaults)) == key:  # (a file edited meanwhile: stored under neither)
        write_entry(target, policy)
    return policy


def read_entry(path: Path) -> Policy | None:
    """The policy stored in `path`; None when there is none or it does not validate."""
    try:
        data = read_bounded(path, DATA_BYTES)
    except (OSError, ValueError):
        return None
    head, sep, body = data.partition(b"\n")
    try:
        header = json.loads(head) if sep else None
    except ValueError:
        return None
    if not isinstance(header, dict) or header.get("ortlint-policy") != FORMAT or header.get("blake2b") != _digest(body):
        return None
    try:
        value = _CODEC.loads(body)
    except (CodecError, ValueError, TypeError, RecursionError):
        return None
    return value if isinstance(value, Policy) else None


def write_entry(path: Path, policy: Policy) -> None:
    """Store a freshly loaded policy (its lookup caches empty) atomically; failures are ignored,
    and older entries beyond `KEEP` are removed."""
    fresh = dataclasses.replace(policy, _blank_re=None, _spec_languages={})
    try:
        body = _CODEC.dumps(fresh).encode("ascii")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(json.dumps({"ortlint-policy": FORMAT, "blake2b": _digest(body)}).encode("ascii") + b"\n" + body)
            os.replace(tmp, path)
        except BaseException:
            _unlink(Path(tmp))
            raise
        _prune(path.parent)
    except (OSError, CodecError, ValueError, TypeError):
        return


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[KEEP:]:
        _unlink(old)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()
