"""One build at a time per output folder: the build lock, and the clean-up after killed builds.

The lock is ``.<out>.lock`` beside the output folder, held with ``flock`` for
the whole build. Whoever takes it next also removes what killed builds left:
their staging folders and half-written manifests.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from pathlib import Path

from sitegen.errors import OutputError
from sitegen.write.site import MARKER, SitePaths


class OutputLock:
    """The build lock of one output folder, held for a whole build (``with OutputLock(paths):``)."""

    def __init__(self, paths: SitePaths) -> None:
        self.paths = paths
        self._fd: int | None = None

    def __enter__(self) -> OutputLock:
        parent = self.paths.out.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(
                f"cannot create {parent}: {exc.strerror} (choose another -o folder)"
            ) from None
        self._fd = self._take(self.paths.lock)
        try:
            self._clean_after_killed_builds()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _take(self, path: Path) -> int:
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
            except OSError as exc:
                raise OutputError(
                    f"cannot create the build lock {path}: {exc.strerror} (choose another -o folder)"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise OutputError(
                    f"another sitegen build is writing {self.paths.out} right now: "
                    "wait for it to finish"
                ) from None
            # The last holder unlinks the file as it lets go: a lock taken on the unlinked file
            # between our open and flock counts for nobody. Only the file at the path counts.
            try:
                if os.path.samestat(os.stat(path, follow_symlinks=False), os.fstat(fd)):
                    return fd
            except FileNotFoundError:
                pass
            os.close(fd)

    def _clean_after_killed_builds(self) -> None:
        out = self.paths.out
        # We hold the lock, so every staging folder but ours is a killed build's.
        for stale in out.parent.glob(f".{out.name}.staging-*"):
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
        for tmp in out.glob(f".{MARKER}.*.tmp"):  # a manifest half-written when it was killed
            with contextlib.suppress(OSError):
                tmp.unlink()

    def __exit__(self, *exc: object) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.paths.lock.unlink()  # while still held: see _take
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._fd = None
