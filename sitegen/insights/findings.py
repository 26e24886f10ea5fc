"""Findings: rules that say what looks wrong in a job or run, each with its threshold.

Every rule is a small function over the model that returns a :class:`Finding`
or nothing; the thresholds are the constants below and are listed in
docs/design.md ("Findings"). Each finding names the page section that shows the
evidence, so the box at the top of a page links to it.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sitegen.insights.attribution import Attribution
from sitegen.model.parsed import BatchCounts, MetricBlock, ParsedLog, TrialResult
from sitegen.model.vocabulary import exception_kind

SEVERITIES = ("error", "warning", "info")

ENTROPY_WINDOW_FRACTION = 0.1  # first and last 10 % of steps (at least 3 each)
ENTROPY_COLLAPSE_RATIO = 0.2  # last-window mean below 20 % of the first-window mean
MIN_TREND_STEPS = 8
REWARD_WINDOW = 20  # the last 20 steps (or the last half of a shorter run)
REWARD_FALL = 0.05  # fitted drop over the window …
REWARD_FALL_T = 2.0  # … with a slope at least 2 standard errors below zero
REWARD_FLAT_STD = 0.01  # reward std over the window below this: flat
GEN_WAIT_SHARE = 0.8  # generation wait above 80 % of step time
STEP_OUTLIER_FACTOR = 3.0  # a step over 3x the median step time
MIN_OUTLIER_STEPS = 5
INFRA_BURST_MIN = 3  # a step with at least 3 infrastructure failures …
INFRA_BURST_FACTOR = 3.0  # … and 3x the median per step …
INFRA_BURST_SHARE = 0.2  # … hitting at least 20 % of that step's rollouts
ERROR_RISE = 0.15  # error rate of the last third at least 15 points above the first third …
ERROR_RISE_FACTOR = 2.0  # … and at least twice it
MIN_ERROR_STEPS = 6
MIN_FLAT_POLICY_STEPS = 3

THRESHOLDS = {
    "entropy_collapse_ratio": ENTROPY_COLLAPSE_RATIO,
    "entropy_window_fraction": ENTROPY_WINDOW_FRACTION,
    "reward_window_steps": REWARD_WINDOW,
    "reward_fall": REWARD_FALL,
    "reward_fall_t": REWARD_FALL_T,
    "reward_flat_std": REWARD_FLAT_STD,
    "gen_wait_share": GEN_WAIT_SHARE,
    "step_outlier_factor": STEP_OUTLIER_FACTOR,
    "infra_burst_min": INFRA_BURST_MIN,
    "infra_burst_factor": INFRA_BURST_FACTOR,
    "infra_burst_share": INFRA_BURST_SHARE,
    "error_rise": ERROR_RISE,
    "error_rise_factor": ERROR_RISE_FACTOR,
}

LR_KEYS = ("policy/policy_lr", "policy/lr", "trainer/lr", "optim/lr")
KL_RE = re.compile(r"^policy/(policy_)?kl")
CLIP_RE = re.compile(r"^policy/.*(clip_ratio|clipfrac)")
LOG_RATIO_RE = re.compile(r"^policy/log_ratio")
ENTROPY = "policy/policy_entropy"
REWARD = "reward/avg_raw_reward"
STEP_TIME = "timing/step"
WAIT_KEYS = ("timing/wait_for_generation_buffer", "timing/generate")
STALENESS_MAX = "async/staleness_max"


@dataclass(frozen=True)
class Finding:
    id: str
    severity: str  # error | warning | info
    title: str
    detail: str
    section: str  # the page section (anchor) that shows it


@dataclass(frozen=True)
class StepTrials:
    """Trial outcomes of one step: all trials, those with an exception, infrastructure ones."""

    step: int
    trials: int
    errors: int
    infra: int


def _num(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return float(v)


def _values(blocks: Sequence[MetricBlock], key: str) -> list[tuple[int, float]]:
    out = []
    for b in blocks:
        v = _num(b.metrics.get(key))
        if v is not None:
            out.append((b.step, v))
    return out


def _cfg(cfg: Mapping | None, *path: str) -> object:
    cur: object = cfg
    for p in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(p)
    return cur


def _steps_text(steps: Sequence[int], limit: int = 5) -> str:
    shown = ", ".join(str(s) for s in steps[:limit])
    return shown + (f" and {len(steps) - limit} more" if len(steps) > limit else "")


def step_trials(trials: Sequence[TrialResult], attr: Attribution) -> list[StepTrials]:
    """Per attributed step: trials, trials with an exception, infrastructure failures."""
    acc: dict[int, list[int]] = {}
    for t, s in zip(trials, attr.steps, strict=False):
        if s is None:
            continue
        c = acc.setdefault(s, [0, 0, 0])
        c[0] += 1
        if t.exception:
            c[1] += 1
            c[2] += exception_kind(t.exception) == "infrastructure"
    return [StepTrials(s, *c) for s, c in sorted(acc.items())]


def batch_step_trials(per_step: Mapping[int, BatchCounts]) -> list[StepTrials]:
    """The same counts from the log's batch lines, for jobs without trial files."""
    out = []
    for s, b in sorted(per_step.items()):
        infra = sum(n for e, n in b.exceptions.items() if exception_kind(e) == "infrastructure")
        out.append(StepTrials(s, b.instances, b.failed + b.masked, infra))
    return out


# -- the rules --------------------------------------------------------------------------------


def _config_lr(cfg: Mapping | None) -> float | None:
    return _num(_cfg(cfg, "trainer", "policy", "optimizer_config", "lr"))


def lr_zero(blocks: Sequence[MetricBlock], cfg: Mapping | None, metric_form: str) -> Finding | None:
    """The learning rate is 0 on every step.

    The console form prints 4 decimals (a 1e-6 rate reads ``0.0000``), so there
    it counts only when the config's rate is 0 too.
    """
    for key in LR_KEYS:
        vals = _values(blocks, key)
        if len(vals) >= 2 and all(v == 0 for _, v in vals):
            if metric_form == "console" and _config_lr(cfg) != 0:
                return None
            return Finding(
                "lr_zero",
                "error",
                "Learning rate is zero on every step",
                f"{key} is 0 on all {len(vals)} steps: the optimizer never changes the weights.",
                "metrics",
            )
    if _config_lr(cfg) == 0 and blocks:
        return Finding(
            "lr_zero",
            "error",
            "Learning rate is zero",
            "trainer.policy.optimizer_config.lr is 0 in the config: the optimizer never changes the weights.",
            "config",
        )
    return None


def policy_frozen(
    blocks: Sequence[MetricBlock], cfg: Mapping | None, lr_is_zero: bool
) -> Finding | None:
    """Log-ratio, KL and clip ratio (two of them at least) identically zero; say why."""
    names = {k for b in blocks for k in b.metrics}
    fams = {
        "log-ratio": sorted(k for k in names if LOG_RATIO_RE.match(k)),
        "KL": sorted(k for k in names if KL_RE.match(k)),
        "clip ratio": sorted(k for k in names if CLIP_RE.match(k)),
    }
    present = {f: ks for f, ks in fams.items() if ks}
    if len(present) < 2:
        return None
    steps = 0
    for ks in present.values():
        for k in ks:
            vals = _values(blocks, k)
            if not vals or any(v != 0 for _, v in vals):
                return None
            steps = max(steps, len(vals))
    if steps < MIN_FLAT_POLICY_STEPS:
        return None
    fam_names = list(present)
    what = ", ".join(fam_names[:-1]) + " and " + fam_names[-1]  # two or three families
    stale = _values(blocks, STALENESS_MAX)
    epochs = _num(_cfg(cfg, "trainer", "update_epochs_per_batch"))
    mini = _num(_cfg(cfg, "trainer", "policy_mini_batch_size"))
    batch = _num(_cfg(cfg, "trainer", "train_batch_size"))
    one_update = (epochs in (None, 1.0)) and (mini is None or batch is None or mini >= batch)
    if lr_is_zero:
        return Finding(
            "policy_frozen",
            "error",
            "Updates have no effect",
            f"{what} are 0 on every step and the learning rate is 0: the policy never moves.",
            "metrics",
        )
    if all(v == 0 for _, v in stale) and one_update:
        return Finding(
            "policy_frozen",
            "info",
            "Fully on-policy: ratio metrics carry no signal",
            f"{what} are 0 on every step. No rollout is stale and each batch is one optimizer "
            "step, so the new policy equals the one that generated the data when the ratio is "
            "taken: expected, not a bug.",
            "metrics",
        )
    return Finding(
        "policy_frozen",
        "warning",
        "Policy ratios never move although data is off-policy",
        f"{what} are 0 on every step while rollouts are stale or several optimizer steps run "
        "per batch: the policy may not be updating (check weight sync and the optimizer).",
        "metrics",
    )


def entropy_collapse(blocks: Sequence[MetricBlock]) -> Finding | None:
    vals = [v for _, v in _values(blocks, ENTROPY)]
    if len(vals) < 10:
        return None
    w = max(3, math.ceil(len(vals) * ENTROPY_WINDOW_FRACTION))
    first, last = statistics.fmean(vals[:w]), statistics.fmean(vals[-w:])
    if first > 0 and last < ENTROPY_COLLAPSE_RATIO * first:
        return Finding(
            "entropy_collapse",
            "warning",
            "Entropy collapsed",
            f"Policy entropy fell from {first:.3g} (mean of the first {w} steps) to {last:.3g} "
            f"(last {w}): below {ENTROPY_COLLAPSE_RATIO:.0%} of where it started; the policy "
            "stopped exploring.",
            "metrics",
        )
    return None


def reward_trend(blocks: Sequence[MetricBlock]) -> Finding | None:
    """Reward falling (significant fitted drop) or flat over the last steps."""
    vals = _values(blocks, REWARD)
    if len(vals) < MIN_TREND_STEPS:
        return None
    n = min(REWARD_WINDOW, max(MIN_TREND_STEPS, len(vals) // 2))
    win = vals[-n:]
    xs = [float(s) for s, _ in win]
    ys = [v for _, v in win]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    slope = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    resid = math.fsum((y - (my + slope * (x - mx))) ** 2 for x, y in zip(xs, ys, strict=True))
    se = math.sqrt(resid / (n - 2) / sxx) if n > 2 else math.inf
    change = slope * (xs[-1] - xs[0])
    sd = statistics.pstdev(ys)
    span = f"steps {win[0][0]}–{win[-1][0]}"
    if change <= -REWARD_FALL and (se == 0 or slope / se <= -REWARD_FALL_T):
        return Finding(
            "reward_falling",
            "warning",
            "Reward is falling",
            f"Over the last {n} steps ({span}) the fitted reward drops by {-change:.3f} "
            f"(from {my - slope * (mx - xs[0]):.3f} to {my + slope * (xs[-1] - mx):.3f}).",
            "progression",
        )
    if sd < REWARD_FLAT_STD:
        return Finding(
            "reward_flat",
            "warning",
            "Reward is flat",
            f"Over the last {n} steps ({span}) the reward stays at {my:.3f} "
            f"(std {sd:.4f} < {REWARD_FLAT_STD}): nothing is being learned.",
            "progression",
        )
    return None


def gen_wait(blocks: Sequence[MetricBlock], has_trials: bool) -> Finding | None:
    wait = step = 0.0
    key_used = None
    for b in blocks:
        st = _num(b.metrics.get(STEP_TIME))
        for key in WAIT_KEYS:
            w = _num(b.metrics.get(key))
            if w is not None and st is not None:
                wait += w
                step += st
                key_used = key
                break
    if step <= 0 or wait / step <= GEN_WAIT_SHARE:
        return None
    return Finding(
        "gen_wait_high",
        "warning",
        f"{wait / step:.0%} of step time waits for generation",
        f"{key_used} adds up to {wait / step:.1%} of timing/step (above {GEN_WAIT_SHARE:.0%}): "
        "the trainer idles while rollouts run."
        + (" The rollout anatomy shows where that time goes." if has_trials else ""),
        "rollouts" if has_trials else "timing",
    )


def step_outlier(blocks: Sequence[MetricBlock]) -> Finding | None:
    vals = _values(blocks, STEP_TIME)
    if len(vals) < MIN_OUTLIER_STEPS:
        return None
    med = statistics.median(v for _, v in vals)
    slow = [(s, v) for s, v in vals if med > 0 and v > STEP_OUTLIER_FACTOR * med]
    if not slow:
        return None
    worst = max(slow, key=lambda sv: sv[1])
    return Finding(
        "step_time_outlier",
        "warning",
        f"Step {worst[0]} took {worst[1] / med:.1f}x the median step time",
        f"Steps over {STEP_OUTLIER_FACTOR:g}x the median ({med:.0f} s): "
        f"{_steps_text([s for s, _ in slow])}; the slowest, step {worst[0]}, took {worst[1]:.0f} s.",
        "timing",
    )


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
        + (f"; bursts at steps {_steps_text([p.step for p in burst])}." if len(burst) > 1 else "."),
        section,
    )


def error_rising(per_step: Sequence[StepTrials], section: str) -> Finding | None:
    steps = [p for p in per_step if p.trials]
    if len(steps) < MIN_ERROR_STEPS:
        return None
    w = max(2, len(steps) // 3)
    first, last = steps[:w], steps[-w:]
    r0 = sum(p.errors for p in first) / sum(p.trials for p in first)
    r1 = sum(p.errors for p in last) / sum(p.trials for p in last)
    if r1 - r0 >= ERROR_RISE and r1 >= ERROR_RISE_FACTOR * r0:
        return Finding(
            "error_rate_rising",
            "warning",
            "Error rate is rising",
            f"Rollouts ending in an exception went from {r0:.0%} (steps {first[0].step}–"
            f"{first[-1].step}) to {r1:.0%} (steps {last[0].step}–{last[-1].step}).",
            section,
        )
    return None


def staleness(blocks: Sequence[MetricBlock], cfg: Mapping | None) -> Finding | None:
    limit = _num(_cfg(cfg, "trainer", "fully_async", "max_staleness_steps"))
    if limit is None:
        return None
    over = [(s, v) for s, v in _values(blocks, STALENESS_MAX) if v > limit]
    if not over:
        return None
    worst = max(over, key=lambda sv: sv[1])
    return Finding(
        "staleness_over_limit",
        "warning",
        "Staleness above the async limit",
        f"async/staleness_max exceeds trainer.fully_async.max_staleness_steps = {limit:g} on "
        f"{len(over)} steps ({_steps_text([s for s, _ in over])}; up to {worst[1]:g} at step {worst[0]}).",
        "metrics",
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


def no_terminal_line(status: str) -> Finding | None:
    if status != "incomplete":
        return None
    return Finding(
        "no_terminal_line",
        "warning",
        "Log ends without a terminal line",
        "No 'Training done!', cancellation or failure line, and the log has not changed for "
        "15 minutes: the job died silently or its log was cut.",
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
) -> tuple[Finding, ...]:
    """Every rule over one job or run, most severe first.

    ``per_step`` are the step outcomes from the trials (``per_step_source`` =
    ``"trials"``) or from the batch lines (``"batches"``).
    """
    has_trials = per_step_source == "trials"
    section = "tasks" if has_trials else "batches"
    lz = lr_zero(blocks, config, metric_form)
    found = [
        lz,
        policy_frozen(blocks, config, lz is not None),
        entropy_collapse(blocks),
        reward_trend(blocks),
        gen_wait(blocks, has_trials),
        step_outlier(blocks),
        infra_burst(per_step, "rollouts" if has_trials else "batches"),
        error_rising(per_step, section),
        staleness(blocks, config),
        log_mid_run(first_log),
        no_terminal_line(status),
    ]
    out = [f for f in found if f is not None]
    out.sort(key=lambda f: SEVERITIES.index(f.severity))
    return tuple(out)
