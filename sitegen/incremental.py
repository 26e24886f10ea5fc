"""The build cache: parsed logs (with where to read on), trial outcomes, the last manifest.

It lives beside the output folder, in ``.<out>.cache/``, one pickle per log
and per trials directory, each written atomically, so a crash leaves it
usable. A change of sitegen's version or of the options that shape parsed
data (redaction patterns) invalidates all of it; ``--clean`` wipes it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import shutil
from pathlib import Path

from sitegen import __version__
from sitegen.errors import OutputError

CACHE_FORMAT = 2  # 2: trial stage times and block times in the model


class BuildCache:
    def __init__(self, out: Path, key: dict, enabled: bool = True) -> None:
        self.dir = out.parent / f".{out.name}.cache"
        self.key = {"sitegen": __version__, "format": CACHE_FORMAT, **key}
        meta = self.dir / "meta.json"
        valid = False
        if enabled and meta.exists():
            with contextlib.suppress(OSError, ValueError):
                valid = json.loads(meta.read_text()) == self.key
        if not valid:
            shutil.rmtree(self.dir, ignore_errors=True)
            try:
                self.dir.mkdir(parents=True, exist_ok=True)
                self._atomic(meta, json.dumps(self.key).encode())
            except OSError as exc:
                raise OutputError(
                    f"cannot write the build cache {self.dir}: {exc.strerror}"
                ) from None

    def _file(self, kind: str, name: str) -> Path:
        return (
            self.dir
            / kind
            / f"{hashlib.sha1(name.encode('utf-8', 'surrogateescape')).hexdigest()[:20]}.pkl"
        )

    @staticmethod
    def _atomic(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def load(self, kind: str, name: str) -> object | None:
        """The object stored under ``kind/name``; None when absent or unreadable."""
        try:
            with open(self._file(kind, name), "rb") as fh:
                return pickle.load(fh)
        except (
            OSError,
            pickle.PickleError,
            EOFError,
            AttributeError,
            ImportError,
            TypeError,
            ValueError,
        ):
            return None

    def save(self, kind: str, name: str, obj: object) -> None:
        self._atomic(self._file(kind, name), pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))

    def subdir(self, name: str) -> Path:
        """A folder inside the cache for another tool's own cache (compiled templates)."""
        d = self.dir / name
        d.mkdir(exist_ok=True)
        return d

    def manifest(self) -> dict:
        try:
            return json.loads((self.dir / "manifest.json").read_text())
        except (OSError, ValueError):
            return {}

    def save_manifest(self, manifest: dict) -> None:
        self._atomic(self.dir / "manifest.json", json.dumps(manifest).encode())


def fingerprint(paths: list[Path]) -> list[tuple[str, int, int]]:
    """(name, size, mtime_ns) of each path; (name, -1, -1) when it cannot be read."""
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((str(p), st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((str(p), -1, -1))
    return out


def tree_signature(*roots: Path) -> str:
    """A hash of every file's name, size and mtime under ``roots`` (templates, static)."""
    h = hashlib.sha1()
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                st = p.stat()
                h.update(f"{p.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()
