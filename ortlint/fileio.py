"""Reading files the analyzed tree controls: regular files only, and never more than a bound.

Every file ortlint reads may be the attacker's in CI (a pull request from a fork): a FIFO named
`pyproject.toml` or `x.go` blocks `open()` until a writer comes, a link to `/dev/zero` or a
4 GB sparse file exhausts memory, `/proc/self/environ` leaks the environment into a report.
`read_bounded` opens without blocking (`O_NONBLOCK`), refuses whatever is not a regular file
(or lives in `/proc` or `/sys`), and refuses a file larger than the caller's bound before
reading it. Refusals are `RefusedFile`, an `OSError` whose `strerror` says why, so callers that
already turn `OSError` into a message need no new branch.
"""
from __future__ import annotations

import errno
import os
import stat

MB = 1024 * 1024
CONFIG_BYTES = 16 * MB  # a configuration or policy file (the shipped policy is 160 KB in all)
DATA_BYTES = 512 * MB  # a baseline, a compile database, a cache entry: data a tool wrote
_PSEUDO_ROOTS = ("/proc", "/sys")


class RefusedFile(OSError):
    """A file that must not be read: not a regular file, in /proc or /sys, or too large."""

    def __init__(self, path: str | os.PathLike[str], reason: str):
        super().__init__(errno.EINVAL, reason, os.fspath(path))


def kind_of(mode: int) -> str:
    """What a file that is not regular is, in words ("a FIFO")."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def not_regular_reason(mode: int) -> str:
    return f"not a regular file ({kind_of(mode)})"


_pseudo_devices: set[int] | None = None


def in_pseudo_filesystem(st: os.stat_result) -> bool:
    """Whether a file lives on /proc or /sys (by device: a link or a bind mount cannot hide it)."""
    global _pseudo_devices
    if _pseudo_devices is None:
        found = set()
        for root in _PSEUDO_ROOTS:
            try:
                found.add(os.stat(root).st_dev)
            except OSError:
                pass
        _pseudo_devices = found
    return st.st_dev in _pseudo_devices


def read_bounded(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; RefusedFile (an OSError) otherwise,
    and OSError when it cannot be opened. Never blocks on a FIFO, never reads a device."""
    data = _read_regular(path, limit, refuse_larger=True)
    if len(data) > limit:  # grew while being read
        raise RefusedFile(path, too_large(len(data), limit))
    return data


def read_prefix(path: str | os.PathLike[str], count: int) -> bytes:
    """The first `count` bytes of a regular file (callers that say "too large" themselves);
    RefusedFile for anything but a regular file."""
    return _read_regular(path, count - 1, refuse_larger=False)[:count]


def _read_regular(path: str | os.PathLike[str], limit: int, refuse_larger: bool) -> bytes:
    """At most `limit` + 1 bytes of a regular file, opened without blocking."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RefusedFile(path, not_regular_reason(st.st_mode))
        if in_pseudo_filesystem(st):
            raise RefusedFile(path, "a file of /proc or /sys; not read")
        if refuse_larger and st.st_size > limit:
            raise RefusedFile(path, too_large(st.st_size, limit))
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def too_large(size: int, limit: int) -> str:
    return f"too large ({_size(size)}; at most {_size(limit)} is read)"


def _size(n: int) -> str:
    return f"{n / MB:.0f} MB" if n >= MB else f"{n} bytes"


def read_text_bounded(path: str | os.PathLike[str], limit: int) -> str:
    """`read_bounded` decoded as UTF-8 (UnicodeDecodeError when it is not)."""
    return read_bounded(path, limit).decode("utf-8")


def regular_file(path: str | os.PathLike[str]) -> bool:
    """`os.path.isfile`, and not in /proc or /sys."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and not in_pseudo_filesystem(st)
