"""What the inputs look like, from stats alone: fingerprints, trials-folder watches, signatures.

A build decides that nothing changed before it parses anything (:meth:`Sources.changed_since`):
it stats every log, infra log and ``notes.md``, and of each trials folder only what its
*watch* names (the folders holding trials, each trial without a complete ``result.json``,
the tar archives) instead of listing thousands of trials again. ``serve``'s watcher asks too.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from sitegen import __version__
from sitegen.assemble.runs import RUNNING_WINDOW_S
from sitegen.cache.files import Fingerprint, Known, LastBuild, Watch
from sitegen.present.assets import package_dir

if TYPE_CHECKING:
    from sitegen.model.parsed import Discovery
    from sitegen.options import BuildOptions

# sitegen.read is imported where it is used: a build that finds nothing changed needs none of it.


class Listing(msgspec.Struct, frozen=True):
    """What the parse found listing a trials folder: each trial's ``result.json`` path (existing
    or not), its tar archives' names, and the folders walked for a Harbor job's trials or
    looked into in an eval session, with their mtimes (``read.trials.TrialPlan.dirs``)."""

    files: list[str]
    tars: list[str]
    dirs: list[tuple[str, int]] = []


def fingerprint(paths: Iterable[Path]) -> Fingerprint:
    """(name, size, mtime_ns) of each path; (name, -1, -1) when it cannot be read."""
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((str(p), st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((str(p), -1, -1))
    return tuple(out)


def tree_signature(*roots: Path, suffix: str | tuple[str, ...] = "") -> str:
    """A hash of the name, size and mtime of every file under ``roots`` whose name ends in
    ``suffix`` (``os.scandir``: one ``stat`` a file, at every build)."""
    h = hashlib.sha1()
    for root in roots:
        found: list[tuple[str, int, int]] = []
        _scan_files(str(root), "", suffix, found)
        for rel, size, mtime in sorted(found):
            h.update(f"{rel}:{size}:{mtime}\n".encode())
    return h.hexdigest()


def _scan_files(
    path: str, rel: str, suffix: str | tuple[str, ...], out: list[tuple[str, int, int]]
) -> None:
    try:
        it = os.scandir(path)
    except OSError:
        return
    with it:
        for e in it:
            name = f"{rel}{e.name}"
            if e.is_dir():
                _scan_files(e.path, f"{name}/", suffix, out)
            elif e.name.endswith(suffix) and e.is_file():
                st = e.stat()
                out.append((name, st.st_size, st.st_mtime_ns))


@functools.cache
def code_signature() -> str:
    """The signature of sitegen's own ``.py`` files and chart skeletons, so changed code of the
    same version makes every page again. Taken once per process: it stands for the code this
    process has loaded."""
    return tree_signature(Path(__file__).resolve().parents[1], suffix=(".py", ".json"))


def assets_signature() -> str:
    """The templates', static files' and sitegen's own code's signature, as one string."""
    return tree_signature(package_dir("templates"), package_dir("static")) + code_signature()


class Sources(msgspec.Struct, frozen=True):
    """The stats of every input, taken once before anything is parsed, so what changes during
    the build differs from what the next build sees, and is built then."""

    opts: BuildOptions
    disc: Discovery
    assets: str  # the templates' and static files' signature
    now: float  # what a "running" job's status is judged against
    logs: dict[str, Fingerprint]  # job id -> its log, infra logs and notes
    folders: dict[str, Watch]  # trials folder (as shown) -> its folders' mtimes

    @classmethod
    def take(cls, opts: BuildOptions, disc: Discovery, assets: str, now: float) -> Sources:
        arch = opts.archive
        logs = {
            j.id: fingerprint(arch / disc.real(r) for r in (j.log, *j.infra_logs, j.notes) if r)
            for j in disc.jobs
        }
        folders = {
            d: _folder_stats(arch, disc.real(d)) for ds in disc.trials_dirs.values() for d in ds
        }
        return cls(opts, disc, assets, now, logs, folders)

    def signature(self, watch: dict[str, Watch], open_jobs: frozenset[str]) -> str:
        """Every input of the site, hashed from stats alone; ``open_jobs``: the jobs without an
        end marker, whose status changes with time alone."""
        opts, disc = self.opts, self.disc
        h = hashlib.sha1()
        h.update(
            repr(
                (__version__, opts.title, opts.base_url, opts.redact_patterns, self.assets)
                + (opts.transcripts_wanted(), opts.site_budget)
            ).encode()
        )
        h.update(repr((disc.jobs, disc.trials_dirs, disc.skipped, disc.warnings)).encode())
        for job in disc.jobs:
            fp = self.logs[job.id]
            status = "fixed"  # an end marker, or no log: time alone changes nothing
            if job.log and job.id in open_jobs:
                # as sitegen.assemble.runs.job_status judges it, from the log's mtime
                running = self.now - fp[0][2] / 1e9 < RUNNING_WINDOW_S
                status = "running" if running else "incomplete"
            h.update(repr((fp, status)).encode())
        for d in sorted(watch):
            h.update(repr((d, watch[d])).encode())
        return h.hexdigest()

    def changed_since(self, last: LastBuild | None) -> str | None:
        """None when every input is as the last build saw it (by stats alone); else a token of
        the inputs as they are, which changes with any change of them."""
        watch = last.watch if last else {}
        signature = self.signature(watch, last.open_jobs if last else frozenset())
        seen = {d: watch_now(self.opts.archive, w) for d, w in watch.items()}
        if (
            last is not None
            and set(self.folders) == set(watch)
            and seen == watch
            and signature == last.sources
        ):
            return None
        return hashlib.sha1(repr((signature, sorted(seen.items()))).encode()).hexdigest()

    def watch_of(self, folder: str, known: Known, listing: Listing | None = None) -> Watch:
        """A trials folder's watch, from its stats taken before the parse, its outcomes and
        what the parse's listing found (without one, it is listed here)."""
        archive = self.opts.archive
        return _watch(archive, self.disc.real(folder), known, self.folders[folder], listing)


def _folder_stats(archive: Path, folder: str) -> Watch:
    """The mtimes of the folders holding a trials folder's trials: a trial or tar archive
    added or removed changes one."""
    root = archive / folder
    prefix = f"{folder}/" if folder != "." else ""
    dirs = [folder]
    evals = root / "eval_sessions"
    if evals.is_dir() and not evals.is_symlink():
        dirs.append(f"{prefix}eval_sessions")
        with contextlib.suppress(OSError), os.scandir(evals) as it:
            dirs += sorted(
                f"{prefix}eval_sessions/{e.name}" for e in it if e.is_dir(follow_symlinks=False)
            )
    return tuple((d, _mtime_ns(archive / d)) for d in dirs), ()


def _watch(
    archive: Path, folder: str, known: Known, before: Watch, listing: Listing | None = None
) -> Watch:
    """What to stat to know that a trials folder did not change, without listing it again.

    The folders' mtimes before the parse (``before``) and those walked for a Harbor job's
    trials; with the stat the parse saw (missing: ``-1``), each trial without a complete
    ``result.json`` (it may still change; a Harbor job's summary is rewritten as its trials
    end) and each tar archive. The trials are those the parse listed (``listing``), after
    ``before`` was taken, so anything added since changed a folder's mtime.
    """
    prefix = f"{folder}/" if folder != "." else ""
    if listing is None:
        listing = _list(archive / folder, prefix)
    pending = []
    for rel in listing.files:
        hit = known.get(rel)
        if hit is None or not isinstance(hit[2], tuple) or hit[2][0] not in ("ok", "eval"):
            pending.append((rel, hit[0], hit[1]) if hit else (rel, -1, -1))
    for rel in (prefix + n for n in listing.tars):
        hit = known.get(rel)
        pending.append((rel, hit[0], hit[1]) if hit else _stats(archive, [rel])[0])
    return before[0] + tuple(listing.dirs), tuple(pending)


def _list(root: Path, prefix: str) -> Listing:
    """A trials folder listed as the parse lists it (``read.trials.plan_trials``)."""
    from sitegen.read.trials import list_trial_dirs, scan_trials_dir

    top, tars, _ = scan_trials_dir(str(root))
    files = [f"{prefix}{sub}/result.json" for sub, _name, _is_eval in list_trial_dirs(top)]
    return Listing(files, tars)


def _mtime_ns(path: Path) -> int:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime_ns
    except OSError:
        return -1


def _stats(archive: Path, rels: list[str]) -> Fingerprint:
    """:func:`fingerprint` of files of the archive, named by their paths in it."""
    found = fingerprint(archive / rel for rel in rels)
    return tuple((rel, size, mtime) for rel, (_, size, mtime) in zip(rels, found, strict=True))


def watch_holds(archive: Path, watch: Watch) -> bool:
    """Whether a trials folder is as its watch saw it."""
    return watch_now(archive, watch) == watch


def watch_now(archive: Path, watch: Watch) -> Watch:
    """A trials folder's watch as it is now: the same folders and files, stat'ed again."""
    dirs, files = watch
    return tuple((d, _mtime_ns(archive / d)) for d, _ in dirs), _stats(
        archive, [f for f, _, _ in files]
    )
