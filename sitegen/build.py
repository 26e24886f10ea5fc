"""``build()``: archive in, website out. Reads top to bottom.

discover → parse (logs and trials, in parallel) → assemble jobs and runs →
analyse into page objects → render pages and charts → write (atomic swap).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
import tomllib
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .assemble import assemble
from .assets import package_dir
from .cache import BuildCache, fingerprint, tree_signature
from .discover import discover
from .errors import ArchiveError, BuildWarning, ConfigError
from .logfile import LogState, parse_log
from .model import Discovery, ParsedLog, TrialSet
from .pages import index_page, job_page, job_row, read_notes, run_page, run_summary
from .redact import Redactor
from .trials import decode_files, parse_trials
from .write import MARKER, SiteWriter

CONFIG_KEYS = {"title", "base_url", "redact_patterns", "workers"}
TRIAL_SHARD_MIN = 2000  # trials directories larger than this are read in parallel shards


@dataclass(frozen=True)
class BuildOptions:
    archive: Path
    out: Path = Path("site")
    title: str = "SkyRL run archive"
    base_url: str | None = None
    workers: int = 0  # 0: the CPU count
    redact_patterns: tuple[str, ...] = ()
    strict: bool = False
    clean: bool = False  # ignore (and wipe) the build cache
    now: float | None = None  # for tests: the time "running" is judged against


@dataclass
class BuildReport:
    jobs: int = 0
    runs: int = 0
    trials: int = 0
    pages: int = 0
    files: int = 0
    bytes: int = 0
    skipped: int = 0
    warnings: list[BuildWarning] = field(default_factory=list)
    stage_s: dict[str, float] = field(default_factory=dict)
    parse: ParseStats | None = None
    unchanged: bool = False  # nothing changed since the last build: the output was not touched
    pages_reused: int = 0

    def summary(self) -> str:
        """The closing line: what was built, what was reused, and the time per stage."""
        stages = ", ".join(f"{k} {v:.2f}s" for k, v in self.stage_s.items())
        p = self.parse
        parsed = (
            f"; logs parsed {p.logs_parsed} (resumed {p.logs_resumed}), cached {p.logs_cached}; "
            f"trial files read {p.trial_files_read}, cached {p.trial_files_cached}"
            if p
            else ""
        )
        what = (
            "nothing changed, site left as it was"
            if self.unchanged
            else f"built {self.pages} pages ({self.pages_reused} carried over)"
        )
        return (
            f"{what}: {self.runs} runs, {self.jobs} jobs, {self.trials} trials, "
            f"{len(self.warnings)} warnings, {self.skipped} skipped folders{parsed} ({stages})"
        )


def load_config(path: Path | None) -> dict:
    """Read a ``sitegen.toml``; unknown keys are an error naming the key."""
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path} is not valid TOML: {exc}") from None
    unknown = set(data) - CONFIG_KEYS
    if unknown:
        raise ConfigError(
            f"config {path}: unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(CONFIG_KEYS))})"
        )
    pats = data.get("redact_patterns", [])
    if not isinstance(pats, list) or not all(isinstance(p, str) for p in pats):
        raise ConfigError(f"config {path}: redact_patterns must be a list of regular expressions")
    import re

    for p in pats:
        try:
            re.compile(p)
        except re.error as exc:
            raise ConfigError(f"config {path}: redact pattern {p!r} is invalid: {exc}") from None
    return data


# -- parse stage -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _LogEntry:
    """What the cache keeps per log: its inputs' fingerprint, the result, where to read on."""

    fingerprint: tuple
    parsed: ParsedLog
    state: LogState


def _parse_log_task(
    archive: str,
    rel: str,
    infra: tuple[str, ...],
    patterns: tuple[str, ...],
    state: LogState | None,
) -> tuple[ParsedLog, LogState] | BuildWarning:
    root = Path(archive)
    try:
        return parse_log(
            root / rel, rel, Redactor(patterns), tuple((root / x, x) for x in infra), state
        )
    except OSError as exc:
        return BuildWarning(rel, None, f"cannot read log: {exc.strerror}")


@dataclass
class ParseStats:
    logs_parsed: int = 0
    logs_resumed: int = 0
    logs_cached: int = 0
    trial_files_read: int = 0
    trial_files_cached: int = 0


def parse_all(
    disc: Discovery,
    opts: BuildOptions,
    cache: BuildCache,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, ParsedLog | None], dict[str, TrialSet], list[BuildWarning], ParseStats, dict]:
    """Parse every log and trials directory (unchanged ones come from the cache), across processes.

    Returns logs by job id, trial sets by group, warnings, counts, and the
    fingerprints that make up the build's input signature.
    """
    archive = str(opts.archive)
    workers = opts.workers or os.cpu_count() or 1
    stats = ParseStats()
    warnings: list[BuildWarning] = []
    logs: dict[str, ParsedLog | None] = {j.id: None for j in disc.jobs}
    fingerprints: dict[str, object] = {}
    log_tasks = []
    entries: dict[str, _LogEntry] = {}
    for j in disc.jobs:
        if not j.log:
            continue
        fp = tuple(fingerprint([opts.archive / j.log, *(opts.archive / x for x in j.infra_logs)]))
        fingerprints[j.log] = fp
        entry = cache.load("log", j.log)
        if isinstance(entry, _LogEntry) and entry.fingerprint == fp:
            logs[j.id] = entry.parsed
            stats.logs_cached += 1
            continue
        # Read on from where the last build stopped (the log grew); infra logs are re-read whole.
        state = entry.state if isinstance(entry, _LogEntry) else None
        if state is not None:
            stats.logs_resumed += 1
        log_tasks.append((j, fp, state))
    unreadable: dict[str, BuildWarning] = {}
    if progress is not None and hasattr(progress, "total"):
        progress.total = len(log_tasks) + sum(len(d) for d in disc.trials_dirs.values())

    def take_log(j, fp, res) -> None:
        if isinstance(res, BuildWarning):
            unreadable[j.id] = res
            return
        parsed, state = res
        logs[j.id] = parsed
        stats.logs_parsed += 1
        entries[j.log] = _LogEntry(fp, parsed, state)
        if progress:
            progress(f"log {parsed.path}: {len(parsed.blocks)} steps")

    trials: dict[str, TrialSet] = {}
    with contextlib.ExitStack() as stack:
        pool: ProcessPoolExecutor | None = None

        def get_pool() -> ProcessPoolExecutor:
            nonlocal pool
            if pool is None:
                pool = stack.enter_context(ProcessPoolExecutor(max_workers=workers))
            return pool

        def decode_map(items: list) -> list:
            """Decode new result.json files, in shards across the workers when there are many."""
            if workers == 1 or len(items) < TRIAL_SHARD_MIN:
                return decode_files(archive, items)
            n = workers * 4
            shards = [items[i::n] for i in range(n)]
            parts = list(get_pool().map(decode_files, [archive] * n, shards))
            out: list = [None] * len(items)
            for i, part in enumerate(parts):
                out[i::n] = part
            return out

        futures = []
        if workers > 1 and len(log_tasks) > 1:
            futures = [
                (
                    j,
                    fp,
                    get_pool().submit(
                        _parse_log_task, archive, j.log, j.infra_logs, opts.redact_patterns, st
                    ),
                )
                for j, fp, st in log_tasks
            ]
        else:
            for j, fp, st in log_tasks:
                take_log(
                    j, fp, _parse_log_task(archive, j.log, j.infra_logs, opts.redact_patterns, st)
                )
        # Trials are stat'ed here while the workers parse logs; only new files are read.
        for group, dirs in disc.trials_dirs.items():
            sets = []
            for d in dirs:
                old = cache.load("trials", d)
                old = old if isinstance(old, dict) else {}
                ts, known = parse_trials(opts.archive / d, opts.archive, old, decode_map)
                read = sum(1 for rel, v in known.items() if rel not in old or old[rel][:2] != v[:2])
                stats.trial_files_read += read
                stats.trial_files_cached += len(known) - read
                if read or len(known) != len(old):
                    cache.save("trials", d, known)
                fingerprints[d] = (
                    ts.path,
                    len(ts.results),
                    ts.malformed,
                    ts.missing,
                    ts.eval_count,
                    sorted((rel, v[0], v[1]) for rel, v in known.items()),
                )
                sets.append(ts)
                if progress:
                    progress(f"trials {d}: {len(ts.results)}")
            trials[group] = sets[0] if len(sets) == 1 else merge_trial_sets(sets)
        for j, fp, fut in futures:
            take_log(j, fp, fut.result())

    for rel, entry in entries.items():
        cache.save("log", rel, entry)
    for j in disc.jobs:  # warnings in archive order, whether parsed now or cached
        log = logs.get(j.id)
        if log is not None:
            warnings.extend(log.warnings)
        elif j.id in unreadable:
            warnings.append(unreadable[j.id])
    for t in trials.values():
        warnings.extend(t.warnings)
    return logs, trials, warnings, stats, fingerprints


def merge_trial_sets(parts: list[TrialSet]) -> TrialSet:
    """Join the trial sets of one run's several trials directories."""
    results = sorted((r for p in parts for r in p.results), key=lambda r: r.name)
    return TrialSet(
        "+".join(p.path for p in parts),
        tuple(results),
        sum(p.eval_count for p in parts),
        sum(p.malformed for p in parts),
        sum(p.missing for p in parts),
        sum(p.archives for p in parts),
        tuple(w for p in parts for w in p.warnings),
    )


# -- the build ---------------------------------------------------------------------------------


def build(opts: BuildOptions, progress: Callable[[str], None] | None = None) -> BuildReport:
    """Build the site for ``opts.archive`` into ``opts.out``; return what was done.

    Incremental: inputs whose fingerprint (path, size, mtime) did not change
    come from the cache; when nothing that a page shows changed, the output is
    not touched at all, and otherwise unchanged job and run pages are carried
    over from the previous site instead of being rendered again.
    """
    report = BuildReport()
    clock = time.perf_counter()

    def stage(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        report.stage_s[name] = report.stage_s.get(name, 0.0) + now - clock
        clock = now

    archive = opts.archive
    disc = discover(archive)
    if not disc.jobs:
        raise ArchiveError(
            f"no jobs found in {archive}: expected *.out/*.log files or trace_jobs/ folders"
        )
    report.warnings.extend(disc.warnings)
    report.skipped = len(disc.skipped)
    stage("discover")

    # Check the output folder and take the build lock before any work.
    writer = SiteWriter(opts.out)
    try:
        cache = BuildCache(
            opts.out, {"redact_patterns": list(opts.redact_patterns)}, enabled=not opts.clean
        )
        logs, trials, parse_warnings, report.parse, fps = parse_all(disc, opts, cache, progress)
        report.warnings.extend(parse_warnings)
        stage("parse")

        now = opts.now if opts.now is not None else time.time()
        jobs, runs = assemble(disc, logs, trials, now)
        trials_total = sum(len(t.results) for t in trials.values())
        report.jobs, report.runs, report.trials = len(jobs), len(runs), trials_total
        signature = _signature(opts, disc, jobs, fps, len(report.warnings))
        previous = cache.manifest()
        if previous.get("signature") == signature and (opts.out / MARKER).exists():
            report.unchanged = True
            writer.abort()  # nothing to write: release the lock, leave the site as it is
            stage("analyse")
            return report

        redactor = Redactor(opts.redact_patterns)
        by_file: dict[str, list[BuildWarning]] = {}
        for w in report.warnings:
            by_file.setdefault(w.path, []).append(w)
        job_rows = {}
        job_pages = []
        for job in jobs:
            own = [w for path, ws in by_file.items() for w in ws if _belongs(path, job)]
            page = job_page(job, own, redactor, read_notes(archive, job.source.notes))
            job_pages.append((page, job.trials))
            job_rows[job.id] = job_row(page)
        run_pages = [(run_page(run, job_rows), run.trials) for run in runs]
        index = index_page(
            list(job_rows.values()),
            [run_summary(p) for p, _ in run_pages],
            disc,
            len(report.warnings),
            trials_total,
            opts.title,
        )
        stage("analyse")

        from .render import Renderer  # Altair is slow to import; a no-change rebuild never needs it

        renderer = Renderer(opts, writer, previous.get("pages", {}))
        renderer.site(index, run_pages, job_pages, report.warnings)
        stage("render")
        writer.commit()
        cache.save_manifest({"signature": signature, "pages": renderer.signatures})
        stage("write")
        report.pages, report.pages_reused = renderer.pages, renderer.reused
        report.files, report.bytes = writer.files, writer.bytes
        return report
    except BaseException:
        writer.abort()
        raise


def _signature(opts: BuildOptions, disc: Discovery, jobs: list, fps: dict, n_warnings: int) -> str:
    """Everything a page can show, hashed: if it matches the last build's, nothing needs writing."""
    h = hashlib.sha1()
    h.update(
        repr((__version__, opts.title, opts.base_url, opts.redact_patterns, n_warnings)).encode()
    )
    h.update(tree_signature(package_dir("templates"), package_dir("static")).encode())
    h.update(repr(disc.skipped).encode())
    for job in jobs:
        notes = fingerprint([opts.archive / job.source.notes]) if job.source.notes else None
        h.update(repr((job.id, job.source.log, job.status, job.run_id, notes)).encode())
    h.update(repr(sorted(fps.items(), key=lambda kv: kv[0])).encode())
    return h.hexdigest()


def _belongs(path: str, job) -> bool:
    """A warning concerns a job when it is about its log, infra logs or trials."""
    src = job.source
    if path == src.log or path in src.infra_logs:
        return True
    return bool(job.trials and (path == job.trials.path or path.startswith(job.trials.path + "/")))


def print_warnings(report: BuildReport, stream=None, limit: int = 200) -> None:
    """Each warning as ``warning: path:line: message`` (the first ``limit`` of them)."""
    stream = stream or sys.stderr
    for w in report.warnings[:limit]:
        print(f"warning: {w}", file=stream)
    if len(report.warnings) > limit:
        print(
            f"warning: … {len(report.warnings) - limit} more (see data/warnings.json)", file=stream
        )


__all__ = ["BuildOptions", "BuildReport", "build", "load_config", "__version__"]
