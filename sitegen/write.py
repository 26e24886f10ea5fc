"""Write the site safely: into a staging folder, then swapped in whole.

* A non-empty output folder without our marker file is refused: the build
  never deletes or overwrites files it did not make.
* A lock file serializes builds into one folder; a second one is refused.
* Every file goes to ``.<out>.staging-<pid>/``; ``commit()`` swaps it with
  the old site (two renames). A build killed at any moment leaves the old
  site in place (or, between the two renames, in ``.<out>.old``, which the
  next build restores).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from pathlib import Path

from sitegen.errors import OutputError

MARKER = ".sitegen-site"


class SiteWriter:
    """Collects the files of one build and publishes them atomically."""

    def __init__(self, out: Path) -> None:
        self.out = out
        parent = out.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(
                f"cannot create {parent}: {exc.strerror} (choose another -o folder)"
            ) from None
        if not os.access(parent, os.W_OK):
            raise OutputError(f"output folder {parent} is not writable (choose another -o folder)")
        self.old = parent / f".{out.name}.old"
        self.lock_path = parent / f".{out.name}.lock"
        self._lock = open(self.lock_path, "w")  # noqa: SIM115 - held for the whole build
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise OutputError(
                f"another sitegen build is writing {out} right now: wait for it to finish"
            ) from None
        if not out.exists() and self.old.exists():
            os.replace(self.old, out)  # a build died between the two renames: restore
        if out.exists():
            if not out.is_dir():
                self.close()
                raise OutputError(f"{out} exists and is not a folder")
            if any(out.iterdir()) and not (out / MARKER).exists():
                self.close()
                raise OutputError(
                    f"{out} is not empty and was not made by sitegen: refusing to overwrite it "
                    "(choose an empty or new -o folder)"
                )
        self.staging = parent / f".{out.name}.staging-{os.getpid()}"
        if self.staging.exists():
            shutil.rmtree(self.staging)
        self.staging.mkdir()
        self.files = 0
        self.bytes = 0
        self.sizes: dict[str, int] = {}  # bytes of each file written, by site path

    def write(self, rel: str, data: bytes | str) -> None:
        """Add one file (``rel`` is ``/``-separated, relative to the site root)."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        path = self.staging / rel
        if not path.resolve().is_relative_to(self.staging.resolve()):
            raise OutputError(f"refusing to write outside the site: {rel}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self._count(rel, len(data))

    def copy(self, rel: str, src: Path) -> None:
        path = self.staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, path)
        self._count(rel, path.stat().st_size)

    def _count(self, rel: str, n: int) -> None:
        self.files += 1
        self.bytes += n
        self.sizes[rel] = n

    def carry_over(self, rels: list[str]) -> bool:
        """Hard-link files (or whole folders) of the current site into the new one.

        Returns False, having linked nothing, when any of them is missing.
        """
        sources = [self.out / r for r in rels]
        if not all(p.exists() for p in sources):
            return False
        for src in sources:
            files = [f for f in src.rglob("*") if f.is_file()] if src.is_dir() else [src]
            for f in files:
                dst = self.staging / f.relative_to(self.out)
                dst.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(f, dst)
                except OSError:
                    shutil.copyfile(f, dst)
                self._count(f.relative_to(self.out).as_posix(), dst.stat().st_size)
        return True

    def commit(self) -> None:
        """Swap the staged site in place of the old one."""
        (self.staging / MARKER).write_text(
            "This folder is written by sitegen; it may replace it whole.\n"
        )
        if self.out.exists():
            if self.old.exists():
                shutil.rmtree(self.old)
            os.replace(self.out, self.old)
        os.replace(self.staging, self.out)
        if self.old.exists():
            shutil.rmtree(self.old, ignore_errors=True)
        self.close()

    def abort(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
        with contextlib.suppress(OSError):
            self.lock_path.unlink()
