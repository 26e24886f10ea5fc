"""The read stage: logs and trials folders read in parallel, each result handed on as it
is ready (:func:`read_all`, a generator: the caller works while the workers go on).

Logs go to the worker pool one task each, largest first; this process lists the trials
folders meanwhile and decodes many new ``result.json`` files in shards on the same pool.
The results equal a serial read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from sitegen.errors import BuildWarning
from sitegen.model.parsed import Discovery, JobSource, ParsedLog, TrialSet
from sitegen.read.logfile import LogState, copy_state, parse_log
from sitegen.read.pool import Pending, RayPool, WorkerPool, open_pool
from sitegen.read.trials import Known, decode_files, plan_trials
from sitegen.redact import Redactor

if TYPE_CHECKING:
    from sitegen.options import BuildOptions
    from sitegen.read.logstate import ParserState

TRIAL_SHARD_MIN = 2000  # more new result.json files than this are decoded in parallel shards

Progress = Callable[[str], None] | None
# A log's files as found before reading it: (path, size, mtime_ns) of the log and its infra logs
Stats = tuple[tuple[str, int, int], ...]
# What reads one log in a worker: (archive, the log's path on disk, its infra logs' paths,
# the redaction patterns, where to read on from, the log's files' stats) -> the parse and
# what else the function returns with it, or a warning when the log cannot be read.
LogReader = Callable[
    [str, str, tuple[str, ...], tuple[str, ...], "LogState[ParserState] | None", Stats],
    "tuple[ParsedLog, Any] | BuildWarning",
]


class LogTask(msgspec.Struct, frozen=True):
    """One log to read: its job, its files' stats, and where to read on from (a log that
    grew since it was last read)."""

    job: JobSource
    stats: Stats
    state: LogState[ParserState] | None = None


class LogRead(msgspec.Struct, frozen=True):
    """A log read: its parse (None when it could not be read: ``warning`` says why) and
    what the reader returned with it (:data:`LogReader`)."""

    task: LogTask
    log: ParsedLog | None
    extra: Any = None
    warning: BuildWarning | None = None


class FolderRead(msgspec.Struct, frozen=True):
    """A trials folder read: its trial set, each ``result.json``'s outcome kept for the next
    read, how many files were taken from ``known``, and what its listing found
    (:class:`~sitegen.read.trials.TrialPlan`'s ``files``, ``tars`` and ``dirs``)."""

    folder: str
    trials: TrialSet
    known: Known
    taken: int
    files: list[str]
    tars: list[str]
    dirs: list[tuple[str, int]]


def read_log(
    archive: str,
    rel: str,
    infra: tuple[str, ...],
    patterns: tuple[str, ...],
    state: LogState[ParserState] | None,
    stats: Stats = (),
    snapshot: Callable[[ParserState], Any] = copy_state,
) -> tuple[ParsedLog, LogState[Any]] | BuildWarning:
    """One log, in a worker (a :data:`LogReader`): the parse and where to read on from next
    time, or a warning when it cannot be read. ``rel`` and ``infra`` are on-disk paths; the
    result shows them redacted."""
    root = Path(archive)
    redactor = Redactor(patterns)
    extra = tuple((root / x, x) for x in infra)
    try:
        return parse_log(root / rel, rel, redactor, extra, state, snapshot)
    except OSError as exc:
        return BuildWarning(redactor.path(rel), None, f"cannot read log: {exc.strerror}")


def read_all(
    disc: Discovery,
    opts: BuildOptions,
    logs: list[LogTask],
    folders: Sequence[str],
    known: Callable[[str], Known] | None = None,
    progress: Progress = None,
    reader: LogReader = read_log,
) -> Iterator[LogRead | FolderRead]:
    """Read ``logs`` (each with ``reader``, in the workers) and the trials ``folders``;
    yield each :class:`FolderRead`, in the order of ``folders``, then each :class:`LogRead`,
    largest first (:func:`_log_work`; not the order given).
    ``known(folder)``: a folder's outcomes from an earlier read, so only the others are read.
    """
    redactor = Redactor(opts.redact_patterns)
    workers = opts.workers or os.cpu_count() or 1
    # Largest first (LPT), so the workers end together. The largest logs start at once, the
    # trial folders' shards queue next: the trial sets are done while the workers parse.
    tasks = sorted(logs, key=_log_work, reverse=True)
    with open_pool(workers, opts.executor, opts.ray_address) as pool:
        ahead = pool.workers if len(tasks) > pool.workers + 1 else len(tasks)
        running = _start_logs(pool, reader, tasks[:ahead], opts, disc)
        started = [
            _start_folder(d, known(d) if known else {}, opts.archive, pool, disc, redactor)
            for d in folders
        ]
        running += _start_logs(pool, reader, tasks[ahead:], opts, disc)
        for finish in started:
            done = finish()
            if progress:
                progress(f"trials {done.folder}: {len(done.trials.results)}")
            yield done
        for task, future in zip(tasks, running, strict=True):
            res = future.result()
            if isinstance(res, BuildWarning):
                yield LogRead(task, None, None, res)
                continue
            if progress:
                progress(f"log {res[0].path}: {len(res[0].blocks)} steps")
            yield LogRead(task, *res)


def _log_work(task: LogTask) -> int:
    """The bytes a log task reads: its files, less what an earlier read read already."""
    return sum(size for _, size, _ in task.stats) - (task.state.read if task.state else 0)


def _start_logs(
    pool: WorkerPool | RayPool,
    reader: LogReader,
    tasks: list[LogTask],
    opts: BuildOptions,
    disc: Discovery,
) -> list[Pending]:
    # disc.real: the file on disk of a path shown with a secret hashed (discover/archive.py)
    argsets = [
        (
            str(opts.archive),
            disc.real(t.job.log or ""),
            tuple(disc.real(x) for x in t.job.infra_logs),
            opts.redact_patterns,
            t.state,
            t.stats,
        )
        for t in tasks
    ]
    return pool.submit_all(reader, argsets)


def _start_folder(
    d: str,
    old: Known,
    archive: Path,
    pool: WorkerPool | RayPool,
    disc: Discovery,
    redactor: Redactor,
) -> Callable[[], FolderRead]:
    """List one trials folder and start decoding its new files; call the result for the
    folder read."""
    plan = plan_trials(archive / disc.real(d), archive, old, redactor)
    decoded = pool.start_shards(decode_files, str(archive), plan.todo, TRIAL_SHARD_MIN)

    def finish() -> FolderRead:
        ts, known = plan.finish(decoded())
        taken = [v for rel, v in known.items() if rel in old and old[rel][:2] == v[:2]]
        # counted in result.json files (a trial archive's members one by one)
        files = sum(len(v[2]) if isinstance(v[2], list) else 1 for v in taken)
        return FolderRead(d, ts, known, files, plan.files, plan.tars, plan.dirs)

    return finish


def result_files(ts: TrialSet, results: int | None = None) -> int:
    """The ``result.json`` files behind a trial set: training trials (``results`` when the set
    does not hold them), eval trials, unreadable and job-level ones."""
    trials = len(ts.results) if results is None else results
    return trials + ts.eval_count + ts.malformed + ts.job_level


def warnings_in_archive_order(
    disc: Discovery,
    logs: dict[str, ParsedLog | None],
    trials: dict[str, TrialSet],
    unreadable: dict[str, BuildWarning],
) -> list[BuildWarning]:
    """Each log's warnings (or why it could not be read), in archive order, then the trials'."""
    warnings: list[BuildWarning] = []
    for j in disc.jobs:
        log = logs.get(j.id)
        if log is not None:
            warnings.extend(log.warnings)
        elif j.id in unreadable:
            warnings.append(unreadable[j.id])
    for t in trials.values():
        warnings.extend(t.warnings)
    return warnings


def merge_trial_sets(parts: list[TrialSet]) -> TrialSet:
    """Join the trial sets of one run's several trials directories."""
    if len(parts) == 1:
        return parts[0]
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
