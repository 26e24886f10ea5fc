"""Opening input files safely: regular files inside the archive, read with a size bound.

Every file sitegen reads from an archive goes through :func:`open_regular` or
:func:`read_bytes`:

* a symbolic link is followed only when its target lies inside ``root``;
* FIFOs, sockets and devices are refused from ``lstat``, before any ``open``
  (opening a FIFO blocks, reading ``/dev/zero`` never ends);
* the file is opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked again on the
  open descriptor: still a regular file, the same inode, and (on Linux, through
  ``/proc/self/fd``) really inside ``root`` — so a folder swapped for a link
  between the check and the open is caught too;
* :func:`read_bytes` stops at a byte limit.

Refusals raise :class:`UnsafeInput`, an :class:`OSError` whose ``strerror``
says why, so callers' ``except OSError`` paths turn them into warnings.
"""

from __future__ import annotations

import errno
import os
import stat
from functools import cache
from pathlib import Path
from typing import BinaryIO

import msgspec

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_CHUNK = 1 << 20  # what a file that grew after its fstat is read on in


class UnsafeInput(OSError):
    """An input that is not read: outside the archive, not a regular file, or too large."""

    def __init__(self, reason: str) -> None:
        super().__init__(errno.EPERM, reason)


class Root(msgspec.Struct, frozen=True):
    """An archive root and its real path, worked out once for many reads below it (a plain
    path's is worked out on every call, a system call per folder). Taken when made: a root
    that later becomes a link elsewhere leaves its files refused, not read."""

    path: str
    real: str

    @classmethod
    def of(cls, root: Path | str) -> Root:
        return cls(os.fspath(root), os.path.realpath(root))


def _real_root(root: Path | str | Root | None) -> str | None:
    if root is None:
        return None
    return root.real if isinstance(root, Root) else os.path.realpath(root)


@cache
def _proc_fd() -> bool:
    """Whether ``/proc/self/fd`` says what a descriptor really opened (Linux); asked once."""
    return os.path.isdir("/proc/self/fd")


def _inside(path: str, root_real: str) -> bool:
    return path == root_real or path.startswith(root_real.rstrip(os.sep) + os.sep)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _checked(path: str, root_real: str | None) -> tuple[str, os.stat_result]:
    """The file to open for ``path`` (a link resolved, only inside the root) and its ``lstat``."""
    st = os.lstat(path)
    if stat.S_ISREG(st.st_mode):
        return path, st  # the common case: one system call
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(path)
        if root_real is None or not _inside(target, root_real):
            raise UnsafeInput("link points outside the archive: not read")
        st = os.lstat(target)
        if stat.S_ISREG(st.st_mode):
            return target, st
    raise UnsafeInput(f"{_kind(st.st_mode)}: not read")


def _open_fd(path: Path | str, root: Path | str | Root | None) -> tuple[int, os.stat_result]:
    """A descriptor of the checked regular file at ``path`` and its ``fstat``."""
    path, root_real = os.fspath(path), _real_root(root)
    target, st = _checked(path, root_real)
    fd = os.open(target, _FLAGS)
    try:
        fst = os.fstat(fd)
        same = stat.S_ISREG(fst.st_mode) and (fst.st_dev, fst.st_ino) == (st.st_dev, st.st_ino)
        if not same:
            raise UnsafeInput("file changed while being opened: not read")
        # What was really opened, whatever links a parent folder may have become.
        if (
            root_real is not None
            and _proc_fd()
            and not _inside(os.readlink(f"/proc/self/fd/{fd}"), root_real)
        ):
            raise UnsafeInput("file lies outside the archive: not read")
        return fd, fst
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: Path | str, root: Path | str | Root | None = None) -> BinaryIO:
    """Open a regular file for reading in binary mode, inside ``root`` when given;
    :class:`UnsafeInput` for a link out of ``root``, a FIFO, socket, device or directory."""
    fd, _ = _open_fd(path, root)
    try:
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def root_of(path: Path | str, rel: str) -> Path:
    """The archive root ``path`` lies in, given ``rel``, its path below the root (maybe as
    shown, a secret in a name hashed: only its number of segments counts)."""
    return Path(path).parents[max(0, len(rel.strip("/").split("/")) - 1)]


def read_bytes(
    path: Path | str, root: Path | str | Root | None, limit: int, cut: bool = False
) -> bytes:
    """The whole file, if it is at most ``limit`` bytes (else :class:`UnsafeInput`); with
    ``cut``, a larger file gives its first ``limit`` bytes instead."""
    fd, st = _open_fd(path, root)
    try:
        if st.st_size > limit and not cut:
            raise UnsafeInput(f"larger than {_size(limit)}: not read")
        data = _read_to(fd, st, limit)
    finally:
        os.close(fd)
    if len(data) > limit:
        if cut:
            return data[:limit]
        raise UnsafeInput(f"larger than {_size(limit)}: not read")
    return data


def read_bytes_stat(
    path: Path | str, root: Path | str | Root | None, limit: int
) -> tuple[bytes | None, os.stat_result]:
    """The whole file and the ``fstat`` of what was opened, checked as :func:`read_bytes`
    checks it; the bytes are None when the file is larger than ``limit`` (or grew past it).
    For a reader that keeps each file's size and mtime: no second ``stat`` by path."""
    fd, st = _open_fd(path, root)
    try:
        data = _read_to(fd, st, limit) if st.st_size <= limit else None
    finally:
        os.close(fd)
    return (data if data is not None and len(data) <= limit else None), st


def _read_to(fd: int, st: os.stat_result, limit: int) -> bytes:
    """The file's bytes, up to one past ``limit`` (so a caller sees that it is larger): one
    read of the fstat size plus one byte, the end when it gives exactly that size; else on
    to the end (a file may have grown since its fstat)."""
    want = limit + 1
    data = os.read(fd, min(st.st_size + 1, want))
    if data and len(data) < want and len(data) != st.st_size:
        parts = [data]
        got = len(data)
        while got < want:
            more = os.read(fd, min(want - got, _CHUNK))
            if not more:
                break
            parts.append(more)
            got += len(more)
        if len(parts) > 1:
            data = b"".join(parts)
    return data


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):g} {unit}"
    return f"{n} bytes"
