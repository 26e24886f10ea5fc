"""The parse stage: every log and trials folder, from the build state when unchanged, in parallel.

Three steps, each a function below: take what the build state still holds
(unchanged logs, known trial outcomes), parse the rest — logs one task each
on the worker pool while this process stats the trial files, new
``result.json`` files in shards on the same pool when there are many — and
keep the results for the next build. The results equal a serial parse.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.cache.files import Fingerprint, Known, Watch
from sitegen.cache.sources import Listing, fingerprint
from sitegen.cache.state import BuildState, log_entries
from sitegen.errors import BuildWarning
from sitegen.frozen import frozen
from sitegen.model.parsed import Discovery, JobSource, ParsedLog, TrialSet
from sitegen.read.logfile import LogState, parse_log
from sitegen.read.pool import Pending, RayPool, WorkerPool, open_pool
from sitegen.read.trials import decode_files, plan_trials
from sitegen.redact import Redactor

if TYPE_CHECKING:
    from sitegen.options import BuildOptions

TRIAL_SHARD_MIN = 2000  # more new result.json files than this are decoded in parallel shards

Progress = Callable[[str], None] | None


@dataclass
class ParseStats:
    """What the parse stage read and what it took from the build cache (the build's summary line).

    Trial files are ``result.json`` files, each member of a trial archive counted as one:
    training and eval trials, unreadable ones and job-level ones (not trials). Read and
    cached add up to the same total on every build of the same archive.
    """

    logs_parsed: int = 0
    logs_resumed: int = 0
    logs_cached: int = 0
    trial_files_read: int = 0
    trial_files_cached: int = 0


@dataclass
class Parsed:
    """What the parse stage hands on: logs by job id, trial sets by group, and their inputs."""

    logs: dict[str, ParsedLog | None]
    trials: dict[str, TrialSet] = field(default_factory=dict)
    warnings: list[BuildWarning] = field(default_factory=list)
    stats: ParseStats = field(default_factory=ParseStats)
    # per trials folder, what is known of each result.json (for sources.Sources.watch)
    outcomes: dict[str, Known] = field(default_factory=dict)
    # per trials folder taken whole from the last build: its watch, which still holds
    watch_kept: dict[str, Watch] = field(default_factory=dict)
    # per trials folder listed: its trials' result.json and its archives (sources.Listing)
    listings: dict[str, Listing] = field(default_factory=dict)


@frozen
class _LogTask:
    """One log to parse: its job, the fingerprint of its files, and where to read on from."""

    job: JobSource
    fingerprint: Fingerprint
    state: LogState | None  # where the last parse stopped, when the log may have grown


def parse_all(
    disc: Discovery, opts: BuildOptions, state: BuildState, progress: Progress = None
) -> Parsed:
    """Parse every log and trials folder (unchanged ones come from ``state``), across processes."""
    out = Parsed(logs={j.id: None for j in disc.jobs})
    tasks = _reuse_logs(disc, opts.archive, state, out)
    redactor = Redactor(opts.redact_patterns)
    if progress is not None and hasattr(progress, "total"):
        progress.total = len(tasks) + sum(len(d) for d in disc.trials_dirs.values())
    unreadable: dict[str, BuildWarning] = {}
    workers = opts.workers or os.cpu_count() or 1
    # Largest first (LPT), so the workers end together. The largest logs start at once; the
    # trial folders are listed here meanwhile and their (small) shards queue next,
    # so this process finishes the trial sets (and writes their cache) while the workers
    # parse the other logs, and keeps each log as it comes. (Waiting on each group's
    # shards behind every log left this process idle, then busy alone at the end.)
    tasks.sort(key=_log_work, reverse=True)
    with open_pool(workers, opts.executor, opts.ray_address) as pool:
        ahead = pool.workers if len(tasks) > pool.workers + 1 else len(tasks)
        running = _start_logs(pool, tasks[:ahead], opts, disc)
        started = {
            group: [
                _start_trials(d, opts.archive, state, pool, out, progress, disc, redactor)
                for d in dirs
            ]
            for group, dirs in disc.trials_dirs.items()
        }
        running += _start_logs(pool, tasks[ahead:], opts, disc)
        for group, parts in started.items():
            sets = [finish() for finish in parts]
            out.trials[group] = sets[0] if len(sets) == 1 else merge_trial_sets(sets)
        for task, future in zip(tasks, running, strict=True):
            _take_log(task, future, state, out, unreadable, progress)
    out.warnings = _warnings_in_archive_order(disc, out, unreadable)
    return out


def _log_work(task: _LogTask) -> int:
    """The bytes a log task reads: its files, less what the last build already read."""
    return sum(size for _, size, _ in task.fingerprint) - (task.state.offset if task.state else 0)


def _reuse_logs(disc: Discovery, archive: Path, state: BuildState, out: Parsed) -> list[_LogTask]:
    """Take each unchanged log's parse from the state; return the logs to parse."""
    tasks = []
    for j in disc.jobs:
        if j.log is None:
            continue
        # disc.real: the file on disk of a path shown with a secret hashed (discover.py)
        fp = fingerprint([archive / disc.real(x) for x in (j.log, *j.infra_logs)])
        parsed, resume = state.cached_log(j.log, fp)
        if parsed is not None:
            out.logs[j.id] = parsed
            out.stats.logs_cached += 1
            continue
        # Read on from where the last build stopped (the log grew); infra logs are re-read whole.
        if resume is not None:
            out.stats.logs_resumed += 1
        tasks.append(_LogTask(j, fp, resume))
    return tasks


def _parse_log_task(
    archive: str,
    rel: str,
    infra: tuple[str, ...],
    patterns: tuple[str, ...],
    state: LogState | None,
    fp: Fingerprint | None = None,
) -> tuple[ParsedLog, list[tuple[str, bytes]]] | BuildWarning:
    """One log, in a worker: plain arguments in, plain data out: the parse, and with the
    log's fingerprint ``fp`` its cache entries, encoded here
    (:func:`~sitegen.cache.state.log_entries`) for the build to write.

    ``rel`` and ``infra`` are on-disk paths; what the log returns shows them redacted.
    """
    root = Path(archive)
    redactor = Redactor(patterns)
    try:
        parsed, resume = parse_log(
            root / rel, rel, redactor, tuple((root / x, x) for x in infra), state
        )
    except OSError as exc:
        return BuildWarning(redactor.path(rel), None, f"cannot read log: {exc.strerror}")
    return parsed, log_entries(parsed.path, fp, parsed, resume) if fp is not None else []


def _start_logs(
    pool: WorkerPool | RayPool, tasks: list[_LogTask], opts: BuildOptions, disc: Discovery
) -> list[Pending]:
    argsets = [
        (
            str(opts.archive),
            disc.real(t.job.log or ""),
            tuple(disc.real(x) for x in t.job.infra_logs),
            opts.redact_patterns,
            t.state,
            t.fingerprint,
        )
        for t in tasks
    ]
    return pool.submit_all(_parse_log_task, argsets)


def _take_log(
    task: _LogTask,
    future: Pending,
    state: BuildState,
    out: Parsed,
    unreadable: dict[str, BuildWarning],
    progress: Progress,
) -> None:
    res = future.result()
    if isinstance(res, BuildWarning):
        unreadable[task.job.id] = res
        return
    parsed, entries = res
    out.logs[task.job.id] = parsed
    out.stats.logs_parsed += 1
    state.keep_encoded(parsed.path, entries)
    if progress:
        progress(f"log {parsed.path}: {len(parsed.blocks)} steps")


def _start_trials(
    d: str,
    archive: Path,
    state: BuildState,
    pool: WorkerPool | RayPool,
    out: Parsed,
    progress: Progress,
    disc: Discovery,
    redactor: Redactor,
) -> Callable[[], TrialSet]:
    """List one trials folder and start decoding its new files; call the result for its trial set."""
    unchanged = state.unchanged_trials(d, archive)
    if unchanged is not None:  # its watch holds: not listed, nothing stat'ed or decoded again
        kept, out.watch_kept[d] = unchanged
        out.stats.trial_files_cached += state.trial_files(d, kept)  # (a summary's too)
        if progress:
            progress(f"trials {d}: {len(kept.results)} (unchanged)")
        return lambda: kept

    old = state.trial_outcomes(d)
    plan = plan_trials(archive / disc.real(d), archive, old, redactor)
    decoded = pool.start_shards(decode_files, str(archive), plan.todo, TRIAL_SHARD_MIN)

    def finish() -> TrialSet:
        ts, known = plan.finish(decoded())
        kept = [v for rel, v in known.items() if rel in old and old[rel][:2] == v[:2]]
        # counted in result.json files (a trial archive's members one by one), as a folder
        # taken whole from the last build is (BuildState.trial_files)
        cached = sum(len(v[2]) if isinstance(v[2], list) else 1 for v in kept)
        out.stats.trial_files_cached += cached
        out.stats.trial_files_read += state.trial_files(d, ts) - cached
        if len(kept) != len(known) or len(known) != len(old):
            state.keep_trial_outcomes(d, known)
        out.outcomes[d] = known
        out.listings[d] = Listing(plan.files, plan.tars)
        state.keep_trial_set(d, ts)
        if progress:
            progress(f"trials {d}: {len(ts.results)}")
        return ts

    return finish


def _warnings_in_archive_order(
    disc: Discovery, out: Parsed, unreadable: dict[str, BuildWarning]
) -> list[BuildWarning]:
    """Warnings in archive order, whether parsed now or taken from the state."""
    warnings: list[BuildWarning] = []
    for j in disc.jobs:
        log = out.logs.get(j.id)
        if log is not None:
            warnings.extend(log.warnings)
        elif j.id in unreadable:
            warnings.append(unreadable[j.id])
    for t in out.trials.values():
        warnings.extend(t.warnings)
    return warnings


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
        sum(p.job_level for p in parts),
    )
