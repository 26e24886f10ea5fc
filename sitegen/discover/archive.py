"""Find the jobs, runs and trials directories of an archive (docs/formats.md §1).

Two layouts, side by side at any depth:

* **experiment**: ``<exp>/logs/*.out`` (one run, jobs in SLURM-id order) and
  ``<exp>/<run_name>[/<run_name>]/trace_jobs/`` serving the whole run;
* **flat**: a directory with ``*.out``/``*.log`` files directly and its
  trials in ``trace_jobs/`` or ``trials/`` beside them.

A ``.err`` beside a ``.out`` (or ``.log``) of the same stem is that job's stderr, first in
:attr:`JobSource.infra_logs` (docs/formats.md §1, "Split logs").

Nothing is dropped silently: every folder below the root (an experiment's ``logs/``
too) is a job, part of one, or reported as skipped with the reason. Directory links are
never followed, file links only inside the archive. Paths enter the model redacted (a
secret in a name becomes a stable hash, :meth:`Redactor.path`);
:attr:`Discovery.real_paths` maps them back to the files to read.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from msgspec.structs import replace

from sitegen.errors import ArchiveError, BuildWarning
from sitegen.model.parsed import Discovery, JobSource, ParsedLog
from sitegen.redact import Redactor, SecretTally, undecodable_shown

TRIALS_DIR_NAMES = ("trace_jobs", "trials")
LOG_SUFFIXES = (".out", ".log")
ERR_SUFFIX = ".err"  # a job's stderr, when its script sends it to a file of its own
SLUG_RE = re.compile(r"[^A-Za-z0-9._-]+")
# A path whose id needs no hash: its id alone says which path it came from.
CANONICAL_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*(?:/[A-Za-z0-9_][A-Za-z0-9_-]*)*")
JOB_ID_RE = re.compile(r"(\d+)$")
MAX_ID_CHARS = 200  # an id is a file name (data/jobs/<id>.json): at most 255 bytes
NO_JOB = "no .out/.log files and no trials directory"
NOT_A_JOB = "log holds nothing of SkyRL, Ray, vLLM or a SLURM status: not a training job"
EMPTY_LOG = "empty log: not a training job (yet)"
_SHARED_INFRA = "infra-*.log beside several job logs: cannot tell whose engines they are, not read"
MARKER = ".sitegen-site"  # a site folder's manifest: which of its files sitegen made
# What sitegen writes beside an output folder (write.SitePaths): its lock, build cache and
# staging folder, ".<name>.lock", ".<name>.cache", ".<name>.staging-<pid>".
COMPANION_RE = re.compile(r"\..+\.(?:lock|cache|staging-\d+)")


def slug(rel: str) -> str:
    """A URL-safe id for a path relative to the archive, made from that path alone.

    A path of plain segments gives itself, ``/`` as ``.`` (``exp/run_1`` → ``exp.run_1``):
    such ids read back, so no two plain paths share one. Any other path, or one past
    :data:`MAX_ID_CHARS`, gets ``-`` for odd characters and a short hash of the whole path:
    ``x.y`` and ``x/y`` differ, and adding a job never moves another job's URL.
    """
    base = rel.replace("/", ".")
    if CANONICAL_RE.fullmatch(rel) and len(base) <= MAX_ID_CHARS:
        return base
    clean = SLUG_RE.sub("-", base).strip("-.") or "x"
    clean = re.sub(r"\.{2,}", ".", clean)
    return f"{clean[:80]}-{_hash(rel)}"


def _hash(s: str) -> str:
    return hashlib.sha1(s.encode("utf-8", "surrogateescape")).hexdigest()[:6]


def _is_log(name: str) -> bool:
    """A job's log, or the stderr half of one (:func:`_pair_streams` tells which)."""
    return name.endswith((*LOG_SUFFIXES, ERR_SUFFIX)) and not name.startswith("infra-")


def _pair_streams(logs: list[os.DirEntry]) -> list[tuple[os.DirEntry, os.DirEntry | None]]:
    """Each job log of a folder with its ``.err``: the ``.err`` of a ``.out`` (else a
    ``.log``) of its stem is that log's other stream; a ``.err`` with neither is a log."""
    names = {e.name for e in logs}
    out: list[tuple[os.DirEntry, os.DirEntry | None]] = []
    for e in logs:
        stem, suffix = e.name.rsplit(".", 1)
        err = stem + ERR_SUFFIX
        if suffix == "err":
            if f"{stem}.out" not in names and f"{stem}.log" not in names:
                out.append((e, None))
        elif err in names and (suffix == "out" or f"{stem}.out" not in names):
            out.append((e, next(x for x in logs if x.name == err)))
        else:
            out.append((e, None))
    return out


def _is_infra(name: str) -> bool:
    return name.startswith("infra-") and name.endswith(".log")


@dataclass
class _Dir:
    """One folder of the walk: what it held, and whether it belongs to a job."""

    path: str  # a plain string: Path objects of deep folders cost more than the walk
    parent: _Dir | None
    scanned: tuple[list[os.DirEntry], list[os.DirEntry]] | None = None  # read ahead (logs/)
    experiment_logs: bool = False  # an experiment's logs/: its files are that experiment's
    found: bool = False  # it, or something below it, is (part of) a job
    reported: bool = False  # it, or something below it, is reported as skipped
    children: list[_Dir] = field(default_factory=list)


class _Walker:
    def __init__(self, root: Path, redactor: Redactor, markers: tuple[str, ...]) -> None:
        self.root = root
        self.markers = markers  # the files that make a folder sitegen's own
        self.root_real = root.resolve()
        self.redactor = redactor
        self.jobs: list[JobSource] = []
        self.trials: dict[str, list[str]] = {}
        self.skipped: list[tuple[str, str]] = []
        self.warnings: list[BuildWarning] = []
        self.seen: set[tuple[int, int]] = set()
        # Folders are known by (device, inode): no path resolving per folder, which would make
        # a deep tree cost depth squared.
        self.exclude: set[tuple[int, int]] = set()
        self.claimed: set[tuple[int, int]] = set()  # trials folders an experiment owns
        self.owned: set[tuple[int, int]] = set()  # <run_name>/ folders holding those
        self.real_paths: dict[str, str] = {}
        self.named_secrets: set[str] = set()  # names whose secret is reported (as shown)

    def rel(self, p: Path | str) -> str:
        """The path as the site shows it: relative to the archive, secrets hashed."""
        real = Path(p).relative_to(self.root).as_posix()
        if real in ("", "."):
            return "."
        shown = self.redactor.path(real)
        if shown != real:
            last = real.rsplit("/", 1)[-1]  # (a folder's own warning covers the files in it)
            if shown not in self.real_paths:
                if undecodable_shown(last) != last:
                    said = "name is not valid UTF-8: shown with U+FFFD and the bytes' hex"
                    self.warnings.append(BuildWarning(shown, None, said))
                self._secret_names(real.split("/"), shown.split("/"))
            self.real_paths[shown] = real
        return shown

    def _secret_names(self, real: list[str], shown: list[str]) -> None:
        """One warning for each file or folder whose name held a secret (once per name)."""
        for i, (name, hashed) in enumerate(zip(real, shown, strict=True)):
            where = "/".join(shown[: i + 1])
            if name == hashed or where in self.named_secrets:
                continue
            self.named_secrets.add(where)
            secrets = SecretTally()
            secrets.add(self.redactor.hide(undecodable_shown(name))[1], "this name")
            if (found := secrets.warning(where)) is not None:
                self.warnings.append(found)

    def warn(self, p: Path | str, message: str) -> None:
        self.warnings.append(BuildWarning(self.rel(p), None, message))

    def scan(self, d: str | Path) -> tuple[list[os.DirEntry], list[os.DirEntry]] | None:
        """Files and folders of ``d`` (links vetted), or ``None`` when it cannot be read."""
        try:
            st = os.stat(d)
            key = (st.st_dev, st.st_ino)
            if key in self.seen:
                self.warn(d, "directory seen twice (link loop): skipped")
                return None
            self.seen.add(key)
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.warn(d, f"cannot read directory: {exc.strerror}")
            return None
        files, dirs = [], []
        for e in entries:
            try:
                if e.is_symlink():
                    target = Path(os.path.realpath(e.path))
                    if not target.is_relative_to(self.root_real):
                        self.warn(e.path, "link points outside the archive: not followed")
                        continue
                    if target.is_dir():
                        self.warn(e.path, "directory link: not followed")
                        continue
                if e.is_dir(follow_symlinks=False):
                    dirs.append(e)
                elif e.is_file():  # a regular file, or a link to one inside the archive
                    files.append(e)
                else:
                    self.warn(e.path, "not a regular file (FIFO, socket or device): not read")
            except OSError as exc:
                self.warn(e.path, f"cannot stat: {exc.strerror}")
        return files, dirs

    def walk(self) -> None:
        """Visit every folder below the root, depth first, without recursion."""
        top = _Dir(str(self.root), None)
        order: list[_Dir] = []
        stack = [top]
        while stack:
            node = stack.pop()
            order.append(node)
            node.children = self.visit(node)
            stack.extend(reversed(node.children))
        # Children before parents: a folder holding nothing is reported, unless something
        # below it is already (one line for an empty tree's leaves, not one per level).
        for node in reversed(order):
            node.found = node.found or any(c.found for c in node.children)
            node.reported = node.reported or any(c.reported for c in node.children)
            if node.parent is not None and not node.found and not node.reported:
                self.skipped.append((self.rel(node.path), NO_JOB))
                node.reported = True

    def visit(self, node: _Dir) -> list[_Dir]:
        """Read one folder: record its jobs; return the subfolders still to visit."""
        d = node.path
        scanned = node.scanned or self.scan(d)
        if scanned is None:
            node.reported = True  # its warning says why
            return []
        files, dirs = scanned
        if node.parent is not None and any(f.name in self.markers for f in files):
            # A site or a build cache sitegen wrote (a cache moved or renamed too): passed
            # over silently, marked reported so that a parent holding only it is not listed
            # either.
            node.reported = True
            return []
        trials: list[os.DirEntry] = []  # trials folders this folder's job reads
        logs_node = None
        if node.experiment_logs:
            node.found = True  # read by its experiment; its subfolders are walked as any other
        else:
            logs_node, trials = self._jobs_of(node, files, dirs)
        below: list[_Dir] = []
        for e in dirs:
            if self._passed_over(e):
                continue
            ident = _ident(e)
            if e in trials or ident in self.claimed:
                continue  # a job's trials: read by the trials reader
            if e.name == "eval_sessions" or COMPANION_RE.fullmatch(e.name):
                continue  # (a site's cache or staging folder: sitegen's own, not input)
            if e.name.startswith("."):
                self.skipped.append((self.rel(e.path), "hidden folder: not read"))
                continue
            if e.name == "logs" and logs_node is not None:
                below.append(logs_node)
                continue
            child = _Dir(e.path, node)
            child.found = ident in self.owned  # <run_name>/ holding the experiment's trace_jobs
            below.append(child)
        return below

    def _jobs_of(
        self, node: _Dir, files: list[os.DirEntry], dirs: list[os.DirEntry]
    ) -> tuple[_Dir | None, list[os.DirEntry]]:
        """Record the jobs of one folder; return its ``logs/`` (read ahead) and its trials folders."""
        logs = [e for e in files if _is_log(e.name)]
        logs_node = None
        trials: list[os.DirEntry] = []
        exp_logs: list[os.DirEntry] = []
        for e in dirs:
            if e.name == "logs" and not self._passed_over(e) and not self.sitegens(e.path):
                logs_node = _Dir(e.path, node, scanned=self.scan(e.path))
                if logs_node.scanned is None:
                    logs_node.reported = True
                else:
                    exp_logs = [f for f in logs_node.scanned[0] if _is_log(f.name)]
                    logs_node.experiment_logs = bool(exp_logs)
        if exp_logs:
            self.experiment(Path(node.path), logs_node, exp_logs, files, dirs)  # type: ignore[arg-type]
            node.found = True
            for e in logs:
                self.warn(
                    e.path,
                    "log beside an experiment's logs/ folder: not read (its job logs belong in logs/)",
                )
        else:
            names = {e.name: e for e in dirs}
            trials = [
                names[n]
                for n in TRIALS_DIR_NAMES
                if n in names
                and _ident(names[n]) not in self.claimed
                and not self.sitegens(names[n].path)
            ]
            if logs or trials:
                infra = [e for e in files if _is_infra(e.name)]
                self.flat(Path(node.path), logs, infra, trials, files)
                node.found = True
        return logs_node, trials

    def sitegens(self, path: str | Path) -> bool:
        """Whether the folder at ``path`` is a site or a build cache sitegen wrote."""
        return any(os.path.isfile(os.path.join(path, m)) for m in self.markers)

    def trials_dir(self, p: Path) -> bool:
        """Whether an experiment's ``trace_jobs``/``trials`` candidate is a trials folder."""
        return p.is_dir() and not p.is_symlink() and not self.sitegens(p)

    def _passed_over(self, e: os.DirEntry) -> bool:
        """sitegen's own output (and its cache) inside the archive: not read, not reported."""
        return bool(self.exclude) and _ident(e) in self.exclude

    def experiment(self, d: Path, logs_node: _Dir, logs: list, files: list, dirs: list) -> None:
        group = self.rel(d)
        logs_dir = Path(logs_node.path)
        log_files = logs_node.scanned[0] if logs_node.scanned else []
        infra = [e for e in log_files if _is_infra(e.name)]
        jobs = _pair_streams(logs)
        self._add_jobs(jobs, group, "experiment", infra, _notes(files) or _notes(log_files))
        if infra and len(jobs) > 1:
            self.warn(logs_dir, _SHARED_INFRA)
        found: list[Path] = []
        for e in dirs:
            if e.name == "logs" or e.name.startswith(".") or self.sitegens(e.path):
                continue
            p = Path(e.path)
            for cand in (p, p / e.name):
                if cand != p and (cand.is_symlink() or not cand.is_dir()):
                    continue
                for tn in TRIALS_DIR_NAMES:
                    if self.trials_dir(cand / tn):
                        found.append(cand / tn)
                        self.owned.update(_ident(x) for x in {p, cand})
        for base in (d, logs_dir):  # trials beside logs/, or (seen once) inside it
            for tn in TRIALS_DIR_NAMES:
                if self.trials_dir(base / tn):
                    found.append(base / tn)
        if found:
            self.claimed.update(_ident(p) for p in found)
            self.trials[group] = sorted({self.rel(p) for p in found})

    def flat(self, d: Path, logs: list, infra: list, trials: list, files: list) -> None:
        group = self.rel(d)
        notes = _notes(files)
        jobs = _pair_streams(logs)
        if infra and len(jobs) > 1:
            self.warn(d, _SHARED_INFRA)
        self._add_jobs(jobs, group, "flat", infra, notes)
        if not logs:
            # Trials without any log: a job known only by its trials.
            self.jobs.append(
                JobSource(
                    id=slug(group),
                    log=None,
                    group=group,
                    layout="flat",
                    order_key=(group, 0, ""),
                    notes=self.rel(notes) if notes else None,
                )
            )
        if trials:
            self.trials[group] = [self.rel(t.path) for t in trials]

    def _add_jobs(
        self, jobs: list, group: str, layout: str, infra: list, notes: Path | None
    ) -> None:
        """A job for each log and its ``.err``; the infra logs go to a folder's only job."""
        shared = infra if len(jobs) == 1 else []
        for e, err in jobs:
            own = [err] if err else []
            self.jobs.append(self._job(Path(e.path), group, layout, own + shared, notes))

    def _job(
        self, path: Path, group: str, layout: str, infra: list, notes: Path | None
    ) -> JobSource:
        rel = self.rel(path)
        stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        m = JOB_ID_RE.search(stem)
        slurm_id = int(m.group(1)) if m else 0
        id_path = f"{group}/{stem}" if group != "." else stem
        return JobSource(
            id=slug(id_path),
            log=rel,
            group=group,
            layout=layout,
            order_key=(group, slurm_id, stem),
            infra_logs=tuple(self.rel(e.path) for e in infra),
            notes=self.rel(notes) if notes else None,
        )


def _ident(p: os.DirEntry | Path) -> tuple[int, int]:
    """A folder's identity (device, inode), links not followed; one gone since it was
    listed matches nothing (reading it then gives the warning)."""
    try:
        st = p.stat(follow_symlinks=False) if isinstance(p, os.DirEntry) else os.lstat(p)
    except OSError:
        return -1, hash(os.fspath(p.path if isinstance(p, os.DirEntry) else p))
    return st.st_dev, st.st_ino


def _notes(files: list[os.DirEntry]) -> Path | None:
    """``notes.md`` among a folder's vetted files (a link leading out is never among them)."""
    return next((Path(e.path) for e in files if e.name == "notes.md"), None)


def drop_non_jobs(
    disc: Discovery, logs: Mapping[str, ParsedLog | None]
) -> tuple[Discovery, frozenset[str]]:
    """``disc`` without the jobs whose log shows no sign of a training job
    (``ParsedLog.evidence``), each listed in ``skipped``, and the paths of those logs. A log
    that could not be read (None) stays a job. A folder or experiment with trials whose
    every log is dropped keeps its last job, without a log, so the trials are still shown
    (under the id that job had).
    """
    dropped = {
        j.id: log for j in disc.jobs if (log := logs.get(j.id)) is not None and not log.evidence
    }
    if not dropped:
        return disc, frozenset()
    kept_groups = {j.group for j in disc.jobs if j.id not in dropped}
    last_of: dict[str, JobSource] = {}
    for j in disc.jobs:
        if j.id in dropped and j.group in disc.trials_dirs and j.group not in kept_groups:
            last_of[j.group] = j  # (jobs are in order: the last one wins)
    jobs = []
    for j in disc.jobs:
        if j.id not in dropped:
            jobs.append(j)
        elif last_of.get(j.group) is j:
            jobs.append(replace(j, log=None, infra_logs=()))
    skipped = [
        (j.log, EMPTY_LOG if log.size_bytes == 0 else NOT_A_JOB)
        for j in disc.jobs
        if j.log is not None and (log := dropped.get(j.id)) is not None
    ]
    return (
        replace(disc, jobs=tuple(jobs), skipped=tuple(sorted({*disc.skipped, *skipped}))),
        frozenset(log.path for log in dropped.values()),
    )


def discover(
    root: Path,
    exclude: tuple[Path, ...] = (),
    redactor: Redactor | None = None,
    markers: tuple[str, ...] = (MARKER,),
) -> Discovery:
    """Walk ``root`` and list its jobs, trials directories and skipped directories.

    Folders in ``exclude`` (the site being built) and folders holding a file named in
    ``markers`` (a site or a cache sitegen wrote, moved or renamed) are passed over
    silently; hidden folders are reported as skipped. Paths go through ``redactor``.
    """
    if not root.exists():
        raise ArchiveError(f"archive not found: {root} (give the folder that holds your job logs)")
    if not root.is_dir():
        raise ArchiveError(f"archive is not a directory: {root}")
    w = _Walker(root, redactor or Redactor(), markers)
    for p in exclude:
        with contextlib.suppress(OSError):
            w.exclude.add(_ident(p))
    w.walk()
    jobs = sorted(w.jobs, key=lambda j: j.order_key)
    # Ids come from each job's own path (slug), so they are stable. Two paths can still meet
    # (a.out and a.log, or a/b.out beside a/b/logs/): then each of them takes a hash of its
    # whole path, which also depends on nothing else.
    count = Counter(j.id for j in jobs)
    jobs = [
        replace(j, id=f"{j.id}-{_hash(j.log or j.group)}") if count[j.id] > 1 else j for j in jobs
    ]
    return Discovery(
        jobs=tuple(jobs),
        trials_dirs=dict(sorted(w.trials.items())),
        skipped=tuple(sorted(set(w.skipped))),
        warnings=tuple(w.warnings),
        real_paths=dict(sorted(w.real_paths.items())),
    )
