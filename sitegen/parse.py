"""The parse stage: every log and trials directory, from the cache when unchanged, in parallel.

Logs go to a process pool (one task each) while the main process stats the
trial files; only new ``result.json`` files are read, in shards on the same
pool when there are many. The results are the same as a serial parse.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from sitegen.errors import BuildWarning
from sitegen.incremental import BuildCache, fingerprint
from sitegen.model.parsed import Discovery, JobSource, ParsedLog, TrialSet
from sitegen.options import BuildOptions
from sitegen.read.logfile import LogState, parse_log
from sitegen.read.trials import decode_files, parse_trials
from sitegen.redact import Redactor

TRIAL_SHARD_MIN = 2000  # more new result.json files than this are decoded in parallel shards


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
    log_tasks: list[tuple[JobSource, str, tuple, LogState | None]] = []
    entries: dict[str, _LogEntry] = {}
    for j in disc.jobs:
        if j.log is None:
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
        log_tasks.append((j, j.log, fp, state))
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
        entries[parsed.path] = _LogEntry(fp, parsed, state)
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
                        _parse_log_task, archive, rel, j.infra_logs, opts.redact_patterns, st
                    ),
                )
                for j, rel, fp, st in log_tasks
            ]
        else:
            for j, rel, fp, st in log_tasks:
                take_log(
                    j, fp, _parse_log_task(archive, rel, j.infra_logs, opts.redact_patterns, st)
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
