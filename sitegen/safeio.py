"""Opening input files safely: regular files inside the archive, read with a size bound.

Every file sitegen reads from an archive goes through :func:`open_regular`:

* a symbolic link is followed only when its target lies inside ``root``;
* FIFOs, sockets and devices are refused from ``lstat``, before any ``open``
  (opening a FIFO blocks, reading ``/dev/zero`` never ends);
* the file is opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked again on the
  open descriptor: still a regular file, the same inode, and (on Linux, through
  ``/proc/self/fd``) really inside ``root`` — so a folder swapped for a link
  between the check and the open is caught too;
* :func:`read_bytes` and :func:`read_text` stop at a byte limit.

Refusals raise :class:`UnsafeInput`, an :class:`OSError` whose ``strerror``
says why, so callers' existing ``except OSError`` paths turn them into warnings.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_PROC_FD = Path("/proc/self/fd")


class UnsafeInput(OSError):
    """An input that is not read: outside the archive, not a regular file, or too large."""

    def __init__(self, reason: str) -> None:
        super().__init__(errno.EPERM, reason)


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


def check_regular(path: Path | str, root: Path | str | None) -> os.stat_result:
    """``lstat`` of the file :func:`open_regular` would open; raises :class:`UnsafeInput` if it would not.

    A link is resolved (only inside ``root``); with ``root=None`` links are refused.
    """
    path = os.fspath(path)
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(path)
        if root is None or not _inside(target, os.path.realpath(root)):
            raise UnsafeInput("link points outside the archive: not read")
        st = os.lstat(target)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeInput(f"{_kind(st.st_mode)}: not read")
    return st


def open_regular(path: Path | str, root: Path | str | None = None) -> BinaryIO:
    """Open a regular file for reading in binary mode, inside ``root`` when given.

    Raises :class:`UnsafeInput` (an ``OSError``) for a link leading out of
    ``root``, a FIFO, socket, device or directory; other ``OSError`` as ``open``.
    """
    path = os.fspath(path)
    st = check_regular(path, root)
    target = os.path.realpath(path) if os.path.islink(path) else path
    fd = os.open(target, _FLAGS)
    try:
        fst = os.fstat(fd)
        if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
            raise UnsafeInput("file changed while being opened: not read")
        if root is not None and _PROC_FD.is_dir():
            # What was really opened, whatever links a parent folder may have become.
            real = os.readlink(_PROC_FD / str(fd))
            if not _inside(real, os.path.realpath(root)):
                raise UnsafeInput("file lies outside the archive: not read")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def root_of(path: Path | str, rel: str) -> Path:
    """The archive root ``path`` lies in, given ``rel``, its path below the root.

    ``rel`` may be the path as shown (a secret in a name hashed): only its number
    of segments counts.
    """
    return Path(path).parents[max(0, len(rel.strip("/").split("/")) - 1)]


def read_bytes(path: Path | str, root: Path | str | None, limit: int, cut: bool = False) -> bytes:
    """The whole file, if it is at most ``limit`` bytes (else :class:`UnsafeInput`).

    With ``cut``, a larger file gives its first ``limit`` bytes instead.
    """
    with open_regular(path, root) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        if cut:
            return data[:limit]
        raise UnsafeInput(f"larger than {_size(limit)}: not read")
    return data


def read_text(path: Path | str, root: Path | str | None, limit: int, cut: bool = False) -> str:
    """The file as UTF-8 (undecodable bytes replaced); ``limit`` and ``cut`` as :func:`read_bytes`."""
    return read_bytes(path, root, limit, cut).decode("utf-8", errors="replace")


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):g} {unit}"
    return f"{n} bytes"
