"""Jobs and runs from parsed logs and trials (resume chains stitched).

* Experiment layout: the logs of one experiment are one run, in SLURM-id order
  (an array task's by array job, then task), by first log time when some log names
  carry no job id.
* Flat layout: a job that resumed from a checkpoint joins the run of the
  latest earlier job that saved that checkpoint; otherwise it starts a run.

Stitching: when a job resumes from step R, every step after R that earlier
jobs logged is discarded (it was recomputed or rolled back), and so is a step
up to R that the resumed job logs again: the resumed job's values win.
"""

from __future__ import annotations

import math
import re
from datetime import datetime

from sitegen.discover.archive import slug
from sitegen.errors import BuildWarning
from sitegen.model.parsed import (
    Checkpoint,
    Discovery,
    Job,
    JobSource,
    MetricBlock,
    ParsedLog,
    Restart,
    Run,
    TrialSet,
)
from sitegen.model.vocabulary import STEP_TIME, is_duration

RUNNING_WINDOW_S = 15 * 60  # a log without end marker changed this recently: running


def job_status(log: ParsedLog | None, now: float) -> str:
    """``complete``/``cancelled``/``failed`` from the end marker, else ``running`` or ``incomplete``."""
    if log is None:
        return "incomplete"
    if log.end_marker:
        return log.end_marker
    return "running" if now - log.mtime < RUNNING_WINDOW_S else "incomplete"


def resume_point(log: ParsedLog | None) -> int | None:
    """The step a job restarted after: explicit resume, 0 for a fresh start, else its first step − 1."""
    if log is None:
        return None
    if log.resumed_from is not None:
        return log.resumed_from
    if log.fresh_start:
        return 0
    if log.blocks:
        return log.blocks[0].step - 1
    return None


def stitch(
    jobs: list[Job],
) -> tuple[tuple[MetricBlock, ...], tuple[MetricBlock, ...], tuple[int, ...], tuple[Restart, ...]]:
    """Stitched blocks, discarded blocks, explicit resume steps and restarts of a chain."""
    chosen: dict[int, MetricBlock] = {}
    discarded: list[MetricBlock] = []
    resumed: list[int] = []
    restarts: list[Restart] = []
    for i, job in enumerate(jobs):
        log = job.log
        if log is None:
            continue
        if log.resumed_from is not None:
            resumed.append(log.resumed_from)
        r = resume_point(log) if i > 0 else None
        if r is not None:
            # the steps after the cut, and those up to it that this job logs again (a job
            # resumed from K whose log holds step K): the latest job's values win
            again = {b.step for b in log.blocks}
            lost = [chosen.pop(s) for s in sorted(s for s in chosen if s > r or s in again)]
            discarded.extend(lost)
            restarts.append(
                Restart(job.id, log.resumed_from, r, tuple(b.step for b in lost), _time(lost))
            )
        for b in log.blocks:
            chosen[b.step] = b  # (a log holds each step once: the reader merges repeats)
    return (
        tuple(chosen[s] for s in sorted(chosen)),
        tuple(sorted(discarded, key=lambda b: b.step)),
        tuple(resumed),
        tuple(restarts),
    )


def _time(blocks: list[MetricBlock]) -> float:
    return math.fsum(float(v) for b in blocks if is_duration(v := b.metrics.get(STEP_TIME)))


def _start(job: tuple[JobSource, ParsedLog | None]) -> tuple:
    src, log = job
    t = log.first_time if log and log.first_time else datetime.max
    return (t, src.order_key)


def group_runs(
    disc: Discovery, logs: dict[str, ParsedLog | None]
) -> list[tuple[str, list[JobSource]]]:
    """Runs as ``(run_id, job sources in chain order)``, in archive order."""
    runs: list[tuple[str, list[JobSource]]] = []
    experiments: dict[str, list[JobSource]] = {}
    flat: list[JobSource] = []
    for src in disc.jobs:
        if src.layout == "experiment":
            experiments.setdefault(src.group, []).append(src)
        else:
            flat.append(src)
    for group, srcs in experiments.items():
        ids = {s.id: _slurm_ids(s) for s in srcs}
        if all(ids.values()):  # every log name ends in its SLURM job id
            chain = sorted(srcs, key=lambda s: (ids[s.id], s.order_key))
        else:  # otherwise by when each job started logging
            chain = [s for s, _ in sorted(((s, logs.get(s.id)) for s in srcs), key=_start)]
        runs.append((slug(group), chain))
    # Flat layout: link each resumed job to the latest earlier job that saved its checkpoint.
    ordered = sorted(((s, logs.get(s.id)) for s in flat), key=_start)
    run_of: dict[str, int] = {}
    flat_runs: list[list[JobSource]] = []
    for i, (src, log) in enumerate(ordered):
        parent = None
        if log is not None and log.resumed_from is not None and not log.fresh_start:
            parent = next(
                (
                    prev
                    for prev, plog in reversed(ordered[:i])
                    if plog is not None and any(_resumed_from(log, ck) for ck in plog.checkpoints)
                ),
                None,
            )
        if parent is not None:
            k = run_of[parent.id]
            flat_runs[k].append(src)
        else:
            k = len(flat_runs)
            flat_runs.append([src])
        run_of[src.id] = k
    taken = {rid for rid, _ in runs}
    for srcs in flat_runs:
        rid = srcs[0].id
        while rid in taken:
            rid += "-run"
        taken.add(rid)
        runs.append((rid, srcs))
    return runs


ARRAY_RE = re.compile(r"(\d+)_(\d+)$")
# What SLURM writes for %a in the output name of a job that is no array (NO_VAL).
NO_TASK = 4294967294


def _slurm_ids(src: JobSource) -> tuple[int, ...]:
    """A log name's SLURM ids: ``(job,)``, or ``(array job, task)`` for an array task's
    ``%A_%a`` name (``slurm-561773_2``: the job id larger than the task's, so that a date or
    version before a job id, ``train_2026_561773``, is no array); ``()`` without one. A job
    that is no array, written with ``%A_%a``, ends in SLURM's no-value ``_4294967294``."""
    m = ARRAY_RE.search(src.order_key[2])
    if m and int(m[2]) == NO_TASK:
        return (int(m[1]),)
    if m and int(m[1]) > int(m[2]):
        return (int(m[1]), int(m[2]))
    return (src.order_key[1],) if src.order_key[1] else ()


def _resumed_from(log: ParsedLog, ck: Checkpoint) -> bool:
    """Whether ``log`` resumed from checkpoint ``ck``: its step, and its path when both name one."""
    if log.resume_path and ck.path and ck.path.rstrip("/") != log.resume_path.rstrip("/"):
        return False
    return ck.step == log.resumed_from


def assemble(
    disc: Discovery,
    logs: dict[str, ParsedLog | None],
    trials: dict[str, TrialSet],
    now: float,
) -> tuple[list[Job], list[Run]]:
    """Build :class:`Job` and :class:`Run` objects; ``trials`` is keyed by group."""
    run_list = group_runs(disc, logs)
    run_of = {src.id: rid for rid, srcs in run_list for src in srcs}
    by_group: dict[str, list[JobSource]] = {}
    for src in disc.jobs:
        by_group.setdefault(src.group, []).append(src)
    # Who owns a flat directory's trials: its only job, or with several jobs the latest.
    job_trials: dict[str, TrialSet] = {}
    for group, srcs in by_group.items():
        ts = trials.get(group)
        if ts is None or srcs[0].layout != "flat":
            continue
        owner = max(srcs, key=lambda s: _start((s, logs.get(s.id))))
        job_trials[owner.id] = ts
    jobs = {
        src.id: Job(
            src,
            logs.get(src.id),
            job_status(logs.get(src.id), now),
            run_of[src.id],
            job_trials.get(src.id),
        )
        for src in disc.jobs
    }
    runs = []
    for rid, srcs in run_list:
        chain = [jobs[s.id] for s in srcs]
        blocks, discarded, resumed, restarts = stitch(chain)
        groups = {s.group for s in srcs}
        run_trials = None
        # An experiment's trials are its run's; a flat folder's, the run of the job owning them
        # (a run of one job is that job's row on the index: the same success rate).
        if len(groups) == 1 and (
            srcs[0].layout == "experiment" or any(s.id in job_trials for s in srcs)
        ):
            run_trials = trials.get(next(iter(groups)))
        runs.append(Run(rid, tuple(chain), blocks, discarded, resumed, restarts, run_trials))
    return [jobs[s.id] for s in disc.jobs], runs


def trial_groups(run: Run) -> set[str]:
    """The groups whose trial sets a run's pages show (the run's, its jobs' own)."""
    groups = {j.source.group for j in run.jobs if j.trials is not None}
    if run.trials is not None:
        groups.add(run.jobs[0].source.group)
    return groups


def warnings_by_job(jobs: list[Job], warnings: list[BuildWarning]) -> dict[str, list[BuildWarning]]:
    """The warnings each job's page shows: those about its log, infra logs, notes or trials."""
    by_path: dict[str, list[BuildWarning]] = {}
    for w in warnings:
        by_path.setdefault(w.path, []).append(w)
    out: dict[str, list[BuildWarning]] = {}
    for job in jobs:
        src = job.source
        own = {src.log, src.notes, *src.infra_logs} - {None}
        prefix = job.trials.path + "/" if job.trials else None
        out[job.id] = [
            w
            for path, ws in by_path.items()
            if path in own or (prefix and (path == prefix[:-1] or path.startswith(prefix)))
            for w in ws
        ]
    return out
