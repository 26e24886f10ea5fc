"""Findings: rules that say what looks wrong in a job or run, each with its threshold.

Every rule is a small function over the model that returns a :class:`Finding` or nothing;
the thresholds are constants in :mod:`sitegen.insights.rulebase` (listed in docs/data.md,
"Findings"). The metric rules are in :mod:`sitegen.insights.metricrules`; the trial, log
and status rules and :func:`evaluate` are here. Each finding names the page section that
shows the evidence, so the box at the top of a page links to it."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from sitegen.insights.metricrules import (
    entropy_collapse,
    gen_wait,
    lr_zero,
    non_finite,
    policy_frozen,
    reward_trend,
    staleness,
    step_outlier,
)
from sitegen.insights.rulebase import (
    ERROR_RISE,
    ERROR_RISE_FACTOR,
    INFRA_BURST_FACTOR,
    INFRA_BURST_MIN,
    INFRA_BURST_SHARE,
    LR_KEYS,
    MIN_ERROR_STEPS,
    SEVERITIES,
    Finding,
    StepTrials,
    batch_step_trials,
    step_trials,
    steps_text,
)
from sitegen.model.numbers import fixed, pct
from sitegen.model.parsed import MetricBlock, ParsedLog

# Re-exported: callers import every rule and what they take from here.
__all__ = [
    "LR_KEYS",
    "SEVERITIES",
    "Finding",
    "StepTrials",
    "batch_step_trials",
    "entropy_collapse",
    "error_rising",
    "evaluate",
    "gen_wait",
    "infra_burst",
    "job_ended",
    "log_mid_run",
    "lr_zero",
    "no_terminal_line",
    "non_finite",
    "policy_frozen",
    "reward_trend",
    "staleness",
    "step_outlier",
    "step_trials",
]

# -- the rules --------------------------------------------------------------------------------


def infra_burst(per_step: Sequence[StepTrials], section: str) -> Finding | None:
    if len(per_step) < 3:
        return None
    med = statistics.median(p.infra for p in per_step)
    burst = [
        p
        for p in per_step
        if p.infra >= max(INFRA_BURST_MIN, INFRA_BURST_FACTOR * med)
        and p.trials
        and p.infra / p.trials >= INFRA_BURST_SHARE
    ]
    if not burst:
        return None
    worst = max(burst, key=lambda p: p.infra)
    return Finding(
        "infra_burst",
        "warning",
        f"Infrastructure failures burst at step {worst.step}",
        f"{worst.infra} of {worst.trials} rollouts of step {worst.step} failed in the "
        f"infrastructure (sandbox, setup timeouts; the median step has {med:g})"
        + (f"; bursts at steps {steps_text([p.step for p in burst])}." if len(burst) > 1 else "."),
        section,
        steps=tuple(p.step for p in sorted(burst, key=lambda p: (-p.infra, p.step))),
    )


def error_rising(per_step: Sequence[StepTrials], section: str) -> Finding | None:
    """The error rate of the last third of steps well above the first third's, and the
    change's 95 % interval (each third resampled by moving blocks of steps) above zero."""
    steps = [p for p in per_step if p.trials]
    if len(steps) < MIN_ERROR_STEPS:
        return None
    w = max(2, len(steps) // 3)
    first, last = steps[:w], steps[-w:]
    r0 = sum(p.errors for p in first) / sum(p.trials for p in first)
    r1 = sum(p.errors for p in last) / sum(p.trials for p in last)
    if r1 - r0 < ERROR_RISE or r1 < ERROR_RISE_FACTOR * r0:
        return None
    from sitegen.analyse import stats  # (numpy: imported where pages are analysed)

    lo, hi = stats.window_ratio_change(
        [(p.errors, p.trials) for p in first], [(p.errors, p.trials) for p in last]
    )
    if lo <= 0:
        return None
    return Finding(
        "error_rate_rising",
        "warning",
        "Error rate is rising",
        f"Rollouts ending in an exception went from {pct(r0, 0)} (steps {first[0].step}–"
        f"{first[-1].step}) to {pct(r1, 0)} (steps {last[0].step}–{last[-1].step}): "
        f"{fixed(100 * (r1 - r0), 1)} points (95 % interval {fixed(100 * lo, 1)} to {fixed(100 * hi, 1)}).",
        section,
        steps=tuple(p.step for p in reversed(last)),
    )


def log_mid_run(log: ParsedLog | None) -> Finding | None:
    if log is None or not log.blocks:
        return None
    first = log.blocks[0].step
    if first > 1 and log.resumed_from is None and not log.fresh_start:
        return Finding(
            "log_starts_mid_run",
            "warning",
            f"Log starts mid-run at step {first}",
            f"The log's first metrics are step {first}, with no start or resume line"
            + (" and no config dump" if log.config is None else "")
            + ": earlier steps are not in this archive.",
            "overview",
        )
    return None


def no_terminal_line(status: str, has_log: bool = True) -> Finding | None:
    """A log that stopped without an end line. A job known by its trials alone (no log) is
    ``incomplete`` too, for want of one: no log was cut, so nothing is said."""
    if status != "incomplete" or not has_log:
        return None
    return Finding(
        "no_terminal_line",
        "warning",
        "Log ends without a terminal line",
        "No 'Training done!', cancellation or failure line, and the log has not changed for "
        "15 minutes: the job died silently or its log was cut.",
        "overview",
    )


def job_ended(status: str, detail: str | None, *, of_run: bool = False) -> Finding | None:
    """A job (or a run's last job) that stopped before it was done.

    A failure is an error. SLURM's time limit is routine in a resume chain (the next job
    picks up from the last checkpoint), so it is only info; any other cancellation (a user's
    ``scancel``, a preemption, a node failure) is a warning."""
    job, who = ("Last job", "the run's last job") if of_run else ("Job", "the job")
    if status == "failed":
        return Finding(
            "job_failed",
            "error",
            f"{job} failed",
            f"{who.capitalize()} ended in a failure: {detail or 'no reason given'}.",
            "overview",
        )
    if status != "cancelled":
        return None
    reason = (detail or "CANCELLED").strip()
    if reason == "TIME LIMIT":
        return Finding(
            "job_time_limit",
            "info",
            f"{job} reached its SLURM time limit",
            f"SLURM cancelled {who} DUE TO TIME LIMIT; a job resumed "
            "from its last checkpoint carries the run on.",
            "overview",
        )
    return Finding(
        "job_cancelled",
        "warning",
        f"{job} was cancelled",
        f"SLURM cancelled {who}"
        + (f" DUE TO {reason}" if reason != "CANCELLED" else " (scancel or the scheduler)")
        + ".",
        "overview",
    )


def evaluate(
    blocks: Sequence[MetricBlock],
    *,
    config: Mapping | None,
    metric_form: str,
    first_log: ParsedLog | None,
    status: str,
    per_step: Sequence[StepTrials],
    per_step_source: str,
    status_detail: str | None = None,
    of_run: bool = False,
) -> tuple[Finding, ...]:
    """Every rule over one job or run, most severe first.

    ``per_step`` are the step outcomes from the trials (``per_step_source`` =
    ``"trials"``) or from the batch lines (``"batches"``); ``status_detail`` is the log's
    end detail (failure line, SLURM reason) and ``of_run`` words the end rule for a run."""
    has_trials = per_step_source == "trials"
    section = "tasks" if has_trials else "batches"
    lz = lr_zero(blocks, config, metric_form)
    found = [
        lz,
        policy_frozen(blocks, config, lz is not None),
        entropy_collapse(blocks),
        non_finite(blocks),
        reward_trend(blocks),
        gen_wait(blocks, has_trials),
        step_outlier(blocks),
        infra_burst(per_step, "rollouts" if has_trials else "batches"),
        error_rising(per_step, section),
        staleness(blocks, config),
        log_mid_run(first_log),
        no_terminal_line(status, first_log is not None or bool(blocks)),
        job_ended(status, status_detail, of_run=of_run),
    ]
    out = [f for f in found if f is not None]
    out.sort(key=lambda f: SEVERITIES.index(f.severity))
    return tuple(out)
