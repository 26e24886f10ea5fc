"""Write the site into its folder, in place, without touching what sitegen did not make.

The output folder is often not sitegen's alone (a ``gh-pages`` worktree's ``.git``, a
user's ``CNAME``), so the site is not swapped in whole:

* The manifest, ``.sitegen-site``, lists the files sitegen made; a build replaces or removes
  only those, and one that would overwrite another file stops before changing anything.
* Pages are rendered into ``.<out>.staging-<pid>/`` beside the folder, then each new or
  changed file moves in with one rename; an unchanged file is not touched.
* Before the first rename the manifest lists old and new files, so a killed build leaves
  every file the user's or listed, and the next build finishes the job.
* A symlinked output folder is written through the link; lock, cache and staging folder
  live beside the folder it points to.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import json
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from sitegen.discover.archive import MARKER  # the manifest: which files of the folder sitegen made
from sitegen.errors import OutputError, printable

_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)

FileRecord = tuple[int, int]  # (size, mtime_ns) of a file sitegen wrote, to see it was not touched


def write_error(path: Path | str, exc: OSError) -> OutputError:
    """One line for a failed write; a full disk says so (it is the user's to fix, not a bug)."""
    if exc.errno in _DISK_FULL:
        return OutputError(
            f"cannot write {path}: the disk is full (free some space and build again)"
        )
    return OutputError(f"cannot write {path}: {exc.strerror or exc}")


@contextlib.contextmanager
def disk_full_is_an_error() -> Iterator[None]:
    """Turn a full disk met anywhere in a build (cache, compiled templates, …) into one line."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _DISK_FULL:
            raise write_error(exc.filename or "the site", exc) from None
        raise


class SitePaths(msgspec.Struct, frozen=True):
    """Where a site lives: its folder, and beside it its lock, build cache and staging folder."""

    out: Path  # the real folder (a symlinked ``-o`` resolved)
    lock: Path
    cache: Path
    staging: Path

    @classmethod
    def of(cls, out: Path) -> SitePaths:
        # realpath: "-o ." has an empty .name; a symlinked output is written through its link.
        real = Path(os.path.realpath(out))
        if real.parent == real:
            raise OutputError(f"cannot build into {real}: choose a folder below it")
        name = real.name
        return cls(
            real,
            real.parent / f".{name}.lock",
            real.parent / f".{name}.cache",
            real.parent / f".{name}.staging-{os.getpid()}",
        )

    def own(self) -> tuple[Path, ...]:
        """Everything of the site's that discovery must pass over (``-o ARCHIVE/site``)."""
        return (self.out, self.cache, self.lock, self.staging)


def read_manifest(out: Path) -> set[str] | None:
    """The files sitegen made in ``out``, from its manifest; None when it has none."""
    try:
        data = (out / MARKER).read_bytes()
    except OSError:
        return None
    try:
        files = json.loads(data)["files"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(files, list):
        return None
    return {f for f in files if isinstance(f, str) and _safe_rel(f)}


def _safe_rel(rel: str) -> bool:
    """A ``/``-separated path that stays inside the site (no ``..``, no absolute path)."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def _manifest_bytes(files: Iterable[str]) -> bytes:
    body = {
        "generator": "sitegen",
        "about": "The files sitegen made in this folder: a build replaces or removes only these.",
        "files": sorted(files),
    }
    return (json.dumps(body, indent=0, ensure_ascii=False) + "\n").encode("utf-8")


# What stands at a new page's address while the files of a build move in: a page that
# links nowhere and reloads itself (so a link from a page moved in before it never breaks).
PLACEHOLDER_PAGE = (
    b'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
    b'<meta http-equiv="refresh" content="2"><title>Updating</title></head>'
    b"<body><p>This page is being updated: it shows in a moment.</p></body></html>\n"
)
_PLACEHOLDERS = ".placeholders"  # (a folder of the staging folder, beside the site's files)
# The listings: files that link to (nearly) every page, moved in once those are in place.
_LISTINGS = frozenset({"index.html", "index-rows.js", "404.html", "sitemap.xml", "runs/index.html"})


def _is_page(rel: str) -> bool:
    return rel.endswith((".html", ".htm"))


def move_order(rel: str) -> tuple[int, str]:
    """Where ``rel`` comes among the files moved in: what pages link to (styles, scripts,
    data, images, downloads), then the pages, then the listings (the site's index last)."""
    if rel in _LISTINGS or rel.startswith("compare/"):
        rank = 4 if rel == "index.html" else 3 if _is_page(rel) else 2
    else:
        rank = 1 if _is_page(rel) else 0
    return rank, rel


class SiteWriter:
    """Collects the files of one build and publishes them into the site folder.

    ``previous``: the (size, mtime) of each file the last build wrote, so a page whose files
    are all still as written can be carried over without rendering it again.
    """

    def __init__(self, paths: SitePaths, previous: dict[str, FileRecord] | None = None) -> None:
        self.out = paths.out
        self.staging = paths.staging
        if self.out.exists() and not self.out.is_dir():
            raise OutputError(f"{self.out} exists and is not a folder (choose another -o folder)")
        # (the cache's record is data, maybe damaged or planted: a name leading out of the
        # site is no file of ours)
        self.previous = {rel: rec for rel, rec in (previous or {}).items() if _safe_rel(rel)}
        self._sorted: list[str] | None = None  # the previous files' names, sorted (_under)
        listed = read_manifest(self.out) or set()
        # The last build's files: the manifest's; and, in case it was deleted, the cache's
        # that are gone or still as written (a file of the user's at such a name is not ours)
        self.ours: set[str] = listed | {
            rel for rel, rec in self.previous.items() if rel in listed or self._as_written(rel, rec)
        }
        self.staged: set[str] = set()
        self.kept: dict[str, FileRecord | None] = {}  # left in place (None: stat at publish)
        self.files = 0
        self.bytes = 0
        self.sizes: dict[str, int] = {}  # bytes of each file of the site, by site path
        try:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging.mkdir(parents=True)
        except OSError as exc:
            raise write_error(self.staging, exc) from None

    # -- collecting ----------------------------------------------------------------------------
    def write(self, rel: str, data: bytes | str) -> None:
        """Add one file (``rel`` is ``/``-separated, relative to the site root)."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not _safe_rel(rel):
            raise OutputError(f"refusing to write outside the site: {rel}")
        self._count(rel, len(data))
        self.kept.pop(rel, None)  # (carried over before: what is written now is published)
        if self._same_as_published(rel, len(data), lambda: data):
            self._unstage(rel)  # (written before in this build: the published copy wins now)
            return
        path = self.staging / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as exc:
            raise write_error(path, exc) from None
        self.staged.add(rel)

    def _count(self, rel: str, size: int) -> None:
        """Count one file of the site once, by its latest size."""
        old = self.sizes.get(rel)
        self.files += old is None
        self.bytes += size - (old or 0)
        self.sizes[rel] = size

    def drop(self, rel: str) -> None:
        """Take back a file this build added (written or kept): it is not published, and the
        last build's copy, if any, is removed."""
        size = self.sizes.pop(rel, None)
        if size is None:
            return
        self.files -= 1
        self.bytes -= size
        self.kept.pop(rel, None)
        self._unstage(rel)

    def _unstage(self, rel: str) -> None:
        """Forget this build's staged copy of ``rel``, if it has one."""
        if rel in self.staged:
            self.staged.discard(rel)
            with contextlib.suppress(OSError):
                (self.staging / rel).unlink()

    def manifest_size(self) -> int:
        """The bytes of the manifest that lists this build's files (written when it publishes)."""
        return len(_manifest_bytes(self.sizes))

    def _same_as_published(self, rel: str, size: int, data) -> bool:
        """Whether the site already holds exactly this file: then it is left as it is, its
        mtime kept (a user's file holding exactly that, an empty ``.nojekyll``, is taken over)."""
        try:
            st = os.stat(self.out / rel, follow_symlinks=False)
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_size != size:
            return False
        try:
            same = (self.out / rel).read_bytes() == data()
        except OSError:
            return False
        if same:
            self.kept[rel] = (st.st_size, st.st_mtime_ns)
        return same

    def carry_over(self, rels: list[str]) -> bool:
        """Keep files (``rel``) or folders (``rel/``) of the last build as they are, when each is
        as it was written (:meth:`intact`); else keep nothing and return False."""
        found = self.intact(rels)
        if found is None:
            return False
        self.keep(found)
        return True

    def keep(self, found: dict[str, FileRecord]) -> None:
        """Keep the files :meth:`intact` found as they are (what :meth:`carry_over` does)."""
        for rel, record in found.items():
            if rel in self.sizes:  # written by this build already: that copy is published
                continue
            self.kept[rel] = record
            self._count(rel, record[0])

    def intact(self, rels: list[str]) -> dict[str, FileRecord] | None:
        """The files of ``rels`` with their records, when each is one ``previous`` records and
        still as written (a user's file is never claimed); None otherwise. Keeps nothing."""
        found: dict[str, FileRecord] = {}
        for rel in rels:
            if rel.endswith("/"):
                found.update((k, self.previous[k]) for k in self._under(rel))
            elif rel in self.previous:
                found[rel] = self.previous[rel]
            else:
                return None
        if not found:
            return None
        for rel, record in found.items():
            try:
                st = os.stat(self.out / rel, follow_symlinks=False)
            except OSError:
                return None
            if not stat.S_ISREG(st.st_mode) or (st.st_size, st.st_mtime_ns) != tuple(record):
                return None
        return found

    def _under(self, folder: str) -> list[str]:
        """The last build's files below ``folder`` (``a/b/``), by bisection in sorted names."""
        if self._sorted is None:
            self._sorted = sorted(self.previous)
        names = self._sorted
        start = bisect.bisect_left(names, folder)
        end = bisect.bisect_left(names, folder[:-1] + chr(ord("/") + 1), start)
        return names[start:end]

    # -- publishing ----------------------------------------------------------------------------
    def publish(self) -> dict[str, FileRecord]:
        """Move the new and changed files in, remove the last build's stale ones; return records."""
        new = self.staged | set(self.kept)
        try:
            self._check_overwrites()
            if new - self.ours:  # journal: a kill from here on leaves every file listed
                self._write_manifest(self.ours | new)
            # Every internal link resolves at every instant: each new page is a placeholder
            # first, files move in before the pages linking to them, the listings last; pages
            # no longer made become placeholders (they may link to each other), then go.
            for rel in sorted(
                r for r in self.staged if _is_page(r) and not os.path.lexists(self.out / r)
            ):
                self._move_in(rel, self._placeholder(rel))
            for rel in sorted(self.staged, key=move_order):
                self._move_in(rel)
            gone = sorted(self.ours - new, key=move_order, reverse=True)
            for rel in gone:
                if _is_page(rel) and self._removable(rel):
                    self._move_in(rel, self._placeholder(rel))
            for rel in gone:
                self._remove(rel)
            self._write_manifest(new)
            records = {rel: self._record(rel) for rel in new}
            manifest_size = (self.out / MARKER).stat().st_size  # published too: it counts
            self.files, self.bytes = self.files + 1, self.bytes + manifest_size
            self.sizes[MARKER] = manifest_size
        except OSError as exc:
            raise write_error(self.out, exc) from None
        finally:
            shutil.rmtree(self.staging, ignore_errors=True)
        return records

    def _check_overwrites(self) -> None:
        """Stop before changing anything if a new file would replace one the user made."""
        clashes: dict[str, None] = {}  # (each named once: a file standing where a folder
        for rel in sorted(self.staged):  # goes clashes with every file of that folder)
            dst = self.out / rel
            for parent in reversed(Path(rel).parents[:-1]):
                p = self.out / parent
                if os.path.lexists(p) and (p.is_symlink() or not p.is_dir()):
                    clashes[f"{parent.as_posix()} (not a folder)"] = None
                    break
            else:
                if os.path.lexists(dst) and (
                    rel not in self.ours or dst.is_symlink() or dst.is_dir()
                ):
                    clashes[rel] = None
            if len(clashes) >= 5:
                break
        if clashes:
            raise OutputError(
                f"{self.out} holds files sitegen did not make that the site would overwrite: "
                f"{', '.join(map(printable, clashes))} (move them away, or choose another -o folder)"
            )

    def _placeholder(self, rel: str) -> Path:
        """A page with no link, in the staging folder, to stand at ``rel`` until its own comes."""
        path = self.staging / _PLACEHOLDERS / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(PLACEHOLDER_PAGE)
        return path

    def _move_in(self, rel: str, src: Path | None = None) -> None:
        src, dst = src or self.staging / rel, self.out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(src, dst)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            # The site folder is a mount point of its own: copy beside the target, then rename.
            tmp = dst.with_name(f".{dst.name}.{os.getpid()}.tmp")
            shutil.copyfile(src, tmp)
            os.replace(tmp, dst)

    def _as_written(self, rel: str, record: FileRecord) -> bool:
        """Whether nothing stands at ``rel`` or the file there is still as ``record`` says."""
        try:
            st = os.lstat(self.out / rel)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return stat.S_ISREG(st.st_mode) and (st.st_size, st.st_mtime_ns) == tuple(record)

    def _through_link(self, rel: str) -> bool:
        """Whether a folder on the way to ``rel`` is a link (planted: it may point anywhere)."""
        return any((self.out / p).is_symlink() for p in Path(rel).parents[:-1])

    def _removable(self, rel: str) -> bool:
        """Whether ``rel`` is a file of ours to replace or remove: a regular file, reached
        through no link."""
        if self._through_link(rel):
            return False
        try:
            return stat.S_ISREG(os.lstat(self.out / rel).st_mode)
        except OSError:
            return False

    def _remove(self, rel: str) -> None:
        """Remove a file of the last build that this one no longer makes, and emptied folders."""
        path = self.out / rel
        if self._through_link(rel):
            return
        with contextlib.suppress(FileNotFoundError):
            if path.is_symlink() or not path.is_dir():
                path.unlink()
        for parent in Path(rel).parents[:-1]:  # deepest first; a folder holding anything stays
            try:
                (self.out / parent).rmdir()
            except OSError:
                break

    def _write_manifest(self, files: set[str]) -> None:
        data = _manifest_bytes(files)
        path = self.out / MARKER
        with contextlib.suppress(OSError):
            if path.read_bytes() == data:
                return
        self.out.mkdir(parents=True, exist_ok=True)
        tmp = self.out / f".{MARKER}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def _record(self, rel: str) -> FileRecord:
        kept = self.kept.get(rel)
        if kept is not None and rel not in self.staged:
            return kept
        st = os.stat(self.out / rel, follow_symlinks=False)
        return (st.st_size, st.st_mtime_ns)

    def abort(self) -> None:
        """Drop what was collected; the site stays as it was."""
        shutil.rmtree(self.staging, ignore_errors=True)
