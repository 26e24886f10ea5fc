"""Find the jobs, runs and trials directories of an archive (formats.md §1).

Two layouts, side by side at any depth:

* **experiment**: ``<exp>/logs/*.out`` (one run, jobs in SLURM-id order) and
  ``<exp>/<run_name>[/<run_name>]/trace_jobs/`` serving the whole run;
* **flat**: a directory with ``*.out``/``*.log`` files directly and its
  trials in ``trace_jobs/`` or ``trials/`` beside them.

Directory links are never followed (no loops), file links only when they
stay inside the archive. Every directory that holds nothing usable is
reported as skipped, with the reason.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from sitegen.errors import ArchiveError, BuildWarning
from sitegen.model.parsed import Discovery, JobSource

TRIALS_DIR_NAMES = ("trace_jobs", "trials")
LOG_SUFFIXES = (".out", ".log")
SLUG_RE = re.compile(r"[^A-Za-z0-9._-]+")
JOB_ID_RE = re.compile(r"(\d+)$")


def slug(rel: str) -> str:
    """A URL-safe, stable id for a path relative to the archive.

    Separators become ``.``; any other character outside ``[A-Za-z0-9._-]``
    becomes ``-`` and then a short hash of the original path is appended, so
    two paths that differ only in such characters keep distinct ids.
    """
    base = rel.replace("/", ".")
    clean = SLUG_RE.sub("-", base).strip("-.") or "x"
    clean = re.sub(r"\.{2,}", ".", clean)
    if clean != base:
        clean = (
            f"{clean[:80]}-{hashlib.sha1(rel.encode('utf-8', 'surrogateescape')).hexdigest()[:6]}"
        )
    return clean


def _is_log(name: str) -> bool:
    return name.endswith(LOG_SUFFIXES) and not name.startswith("infra-")


def _is_infra(name: str) -> bool:
    return name.startswith("infra-") and name.endswith(".log")


class _Walker:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.root_real = root.resolve()
        self.jobs: list[JobSource] = []
        self.trials: dict[str, list[str]] = {}
        self.skipped: list[tuple[str, str]] = []
        self.warnings: list[BuildWarning] = []
        self.seen: set[tuple[int, int]] = set()
        self.exclude: set[str] = set()

    def rel(self, p: Path) -> str:
        r = p.relative_to(self.root).as_posix()
        return "." if r in ("", ".") else r

    def scan(self, d: Path) -> tuple[list[os.DirEntry], list[os.DirEntry]] | None:
        try:
            st = d.stat()
            key = (st.st_dev, st.st_ino)
            if key in self.seen:
                self.warnings.append(
                    BuildWarning(self.rel(d), None, "directory seen twice (link loop): skipped")
                )
                return None
            self.seen.add(key)
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.warnings.append(
                BuildWarning(self.rel(d), None, f"cannot read directory: {exc.strerror}")
            )
            return None
        files, dirs = [], []
        for e in entries:
            try:
                if e.is_symlink():
                    target = Path(os.path.realpath(e.path))
                    if not target.is_relative_to(self.root_real):
                        self.warnings.append(
                            BuildWarning(
                                self.rel(Path(e.path)),
                                None,
                                "link points outside the archive: not followed",
                            )
                        )
                        continue
                    if target.is_dir():
                        self.warnings.append(
                            BuildWarning(
                                self.rel(Path(e.path)), None, "directory link: not followed"
                            )
                        )
                        continue
                if e.is_dir(follow_symlinks=False):
                    dirs.append(e)
                elif e.is_file():
                    files.append(e)
            except OSError as exc:
                self.warnings.append(
                    BuildWarning(self.rel(Path(e.path)), None, f"cannot stat: {exc.strerror}")
                )
        return files, dirs

    def walk(self, d: Path) -> bool:
        """Visit ``d``; return whether it or anything below it held a job."""
        scanned = self.scan(d)
        if scanned is None:
            return False
        files, dirs = scanned
        names = {e.name: e for e in dirs}
        logs_dir = names.get("logs")
        if logs_dir is not None:
            sub = self.scan(Path(logs_dir.path))
            exp_logs = [e for e in sub[0] if _is_log(e.name)] if sub else []
            if exp_logs:
                self.experiment(d, Path(logs_dir.path), exp_logs, sub[0] if sub else [], dirs)
                return True
        logs = [e for e in files if _is_log(e.name)]
        trials = [names[n] for n in TRIALS_DIR_NAMES if n in names]
        found = False
        if logs or trials:
            self.flat(d, logs, [e for e in files if _is_infra(e.name)], trials)
            found = True
        for e in dirs:
            if e.name in TRIALS_DIR_NAMES or e.name == "eval_sessions":
                continue
            if os.path.realpath(e.path) in self.exclude:
                continue  # sitegen's own output (and its cache) inside the archive
            if e.name.startswith("."):
                self.skipped.append((self.rel(Path(e.path)), "hidden folder: not read"))
                continue
            if self.walk(Path(e.path)):
                found = True
            elif not self._reported_below(Path(e.path)):
                self.skipped.append(
                    (self.rel(Path(e.path)), "no .out/.log files and no trials directory")
                )
        return found

    def _reported_below(self, d: Path) -> bool:
        prefix = self.rel(d) + "/"
        return any(p.startswith(prefix) or p == self.rel(d) for p, _ in self.skipped)

    def experiment(self, d: Path, logs_dir: Path, logs: list, log_files: list, dirs: list) -> None:
        group = self.rel(d)
        infra = [e for e in log_files if _is_infra(e.name)]
        notes = _notes(d) or _notes(logs_dir)
        for e in logs:
            self.jobs.append(
                self._job(Path(e.path), group, "experiment", infra if len(logs) == 1 else [], notes)
            )
        if infra and len(logs) > 1:
            self.warnings.append(
                BuildWarning(
                    self.rel(logs_dir),
                    None,
                    "infra-*.log beside several job logs: cannot tell whose engines they are, not read",
                )
            )
        found = []
        for e in dirs:
            if e.name == "logs":
                continue
            p = Path(e.path)
            for cand in (p, p / e.name):
                for tn in TRIALS_DIR_NAMES:
                    if (cand / tn).is_dir() and not (cand / tn).is_symlink():
                        found.append(self.rel(cand / tn))
        for tn in TRIALS_DIR_NAMES:
            if (d / tn).is_dir():
                found.append(self.rel(d / tn))
        if found:
            self.trials[group] = sorted(set(found))

    def flat(self, d: Path, logs: list, infra: list, trials: list) -> None:
        group = self.rel(d)
        notes = _notes(d)
        if infra and len(logs) > 1:
            self.warnings.append(
                BuildWarning(
                    group,
                    None,
                    "infra-*.log beside several job logs: cannot tell whose engines they are, not read",
                )
            )
        for e in logs:
            self.jobs.append(
                self._job(Path(e.path), group, "flat", infra if len(logs) == 1 else [], notes)
            )
        if not logs:
            # Trials without any log: a job known only by its trials.
            self.jobs.append(
                JobSource(
                    id=slug(group),
                    log=None,
                    group=group,
                    layout="flat",
                    order_key=(group, 0, ""),
                    notes=notes,
                )
            )
        if trials:
            self.trials[group] = [self.rel(Path(t.path)) for t in trials]

    def _job(
        self, path: Path, group: str, layout: str, infra: list, notes: str | None
    ) -> JobSource:
        rel = self.rel(path)
        stem = path.stem
        m = JOB_ID_RE.search(stem)
        slurm_id = int(m.group(1)) if m else 0
        id_path = f"{group}/{stem}" if group != "." else stem
        return JobSource(
            id=slug(id_path),
            log=rel,
            group=group,
            layout=layout,
            order_key=(group, slurm_id, stem),
            infra_logs=tuple(self.rel(Path(e.path)) for e in infra),
            notes=notes and self.rel(Path(notes)),
        )


def _notes(d: Path) -> str | None:
    p = d / "notes.md"
    return str(p) if p.is_file() else None


def discover(root: Path, exclude: tuple[Path, ...] = ()) -> Discovery:
    """Walk ``root`` and list its jobs, trials directories and skipped directories.

    Folders in ``exclude`` (the site being built, when it lies inside the
    archive) are passed over silently; hidden folders are reported as skipped.
    """
    if not root.exists():
        raise ArchiveError(f"archive not found: {root} (give the folder that holds your job logs)")
    if not root.is_dir():
        raise ArchiveError(f"archive is not a directory: {root}")
    w = _Walker(root)
    w.exclude = {os.path.realpath(p) for p in exclude}
    w.walk(root)
    ids: dict[str, str] = {}
    jobs = []
    for j in sorted(w.jobs, key=lambda j: j.order_key):
        if j.id in ids:  # same slug from two paths: disambiguate by a hash of the path
            j = JobSource(
                **{
                    **j.__dict__,
                    "id": f"{j.id}-{hashlib.sha1((j.log or j.group).encode()).hexdigest()[:6]}",
                }
            )
        ids[j.id] = j.log or j.group
        jobs.append(j)
    return Discovery(
        jobs=tuple(jobs),
        trials_dirs={k: v for k, v in sorted(w.trials.items())},
        skipped=tuple(sorted(w.skipped)),
        warnings=tuple(w.warnings),
    )
