"""Finding rules over a job's or run's metric blocks (and its config): learning rate, frozen
policy, entropy, reward trend, generation wait, step outliers, staleness."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from sitegen.analyse.steps import gen_wait_share, metric_names
from sitegen.insights.rulebase import (
    CLIP_RE,
    ENTROPY,
    ENTROPY_COLLAPSE_RATIO,
    ENTROPY_WINDOW_FRACTION,
    GEN_WAIT_SHARE,
    KL_RE,
    LOG_RATIO_RE,
    LR_KEYS,
    MIN_FLAT_POLICY_STEPS,
    MIN_OUTLIER_STEPS,
    MIN_TREND_STEPS,
    REWARD,
    REWARD_FALL,
    REWARD_FLAT_STD,
    REWARD_WINDOW,
    STALENESS_MAX,
    STEP_OUTLIER_FACTOR,
    STEP_TIME,
    Finding,
    metric_values,
    steps_text,
)
from sitegen.model.numbers import fixed, pct, sig
from sitegen.model.parsed import MetricBlock
from sitegen.model.vocabulary import config_value as _cfg
from sitegen.model.vocabulary import finite_or_none as _num
from sitegen.model.vocabulary import gen_wait_key


def _config_lr(cfg: Mapping | None) -> float | None:
    return _num(_cfg(cfg, "trainer", "policy", "optimizer_config", "lr"))


def lr_zero(blocks: Sequence[MetricBlock], cfg: Mapping | None, metric_form: str) -> Finding | None:
    """The learning rate is 0 on every step.

    The console form prints 4 decimals (a 1e-6 rate reads ``0.0000``), so there
    it counts only when the config's rate is 0 too."""
    for key in LR_KEYS:
        vals = metric_values(blocks, key)
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
            vals = metric_values(blocks, k)
            if not vals or any(v != 0 for _, v in vals):
                return None
            steps = max(steps, len(vals))
    if steps < MIN_FLAT_POLICY_STEPS:
        return None
    fam_names = list(present)
    what = ", ".join(fam_names[:-1]) + " and " + fam_names[-1]  # two or three families
    stale = metric_values(blocks, STALENESS_MAX)
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
            "policy",
        )
    if all(v == 0 for _, v in stale) and one_update:
        return Finding(
            "policy_frozen",
            "info",
            "Fully on-policy: ratio metrics carry no signal",
            f"{what} are 0 on every step. No rollout is stale and each batch is one optimizer "
            "step, so the new policy equals the one that generated the data when the ratio is "
            "taken: expected, not a bug.",
            "policy",
        )
    return Finding(
        "policy_frozen",
        "warning",
        "Policy ratios never move although data is off-policy",
        f"{what} are 0 on every step while rollouts are stale or several optimizer steps run "
        "per batch: the policy may not be updating (check weight sync and the optimizer).",
        "policy",
    )


def entropy_collapse(blocks: Sequence[MetricBlock]) -> Finding | None:
    vals = [v for _, v in metric_values(blocks, ENTROPY)]
    if len(vals) < 10:
        return None
    w = max(3, math.ceil(len(vals) * ENTROPY_WINDOW_FRACTION))
    first, last = statistics.fmean(vals[:w]), statistics.fmean(vals[-w:])
    if first > 0 and last < ENTROPY_COLLAPSE_RATIO * first:
        return Finding(
            "entropy_collapse",
            "warning",
            "Entropy collapsed",
            f"Policy entropy fell from {sig(first, 3)} (mean of the first {w} steps) to {sig(last, 3)} "
            f"(last {w}): below {pct(ENTROPY_COLLAPSE_RATIO, 0)} of where it started; the policy "
            "stopped exploring.",
            "policy",
        )
    return None


def reward_trend(blocks: Sequence[MetricBlock]) -> Finding | None:
    """Reward falling (a fitted drop whose 95 % interval lies below zero) or flat (a small
    spread, and an interval of the fitted change inside ±REWARD_FALL) over the last steps.
    The interval: the fit's, widened by its residuals' lag-1 autocorrelation."""
    from sitegen.analyse import stats  # (numpy: imported where pages are analysed)

    vals = metric_values(blocks, REWARD)
    if len(vals) < MIN_TREND_STEPS:
        return None
    n = min(REWARD_WINDOW, max(MIN_TREND_STEPS, len(vals) // 2))
    win = vals[-n:]
    xs = [float(s) for s, _ in win]
    ys = [v for _, v in win]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = math.fsum((x - mx) ** 2 for x in xs)
    slope = math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    change = slope * (xs[-1] - xs[0])
    lo, hi = stats.fitted_change_interval(xs, ys)
    sd = statistics.pstdev(ys)
    span = f"steps {win[0][0]}–{win[-1][0]}"
    interval = f"95 % interval {fixed(lo, 3)} to {fixed(hi, 3)}"
    if change <= -REWARD_FALL and hi < 0:
        return Finding(
            "reward_falling",
            "warning",
            "Reward is falling",
            f"Over the last {n} steps ({span}) the fitted reward drops by {fixed(-change, 3)} "
            f"(from {fixed(my - slope * (mx - xs[0]), 3)} to {fixed(my + slope * (xs[-1] - mx), 3)}; "
            f"change {interval}).",
            "progression",
        )
    if sd < REWARD_FLAT_STD and lo > -REWARD_FALL and hi < REWARD_FALL:
        return Finding(
            "reward_flat",
            "warning",
            "Reward is flat",
            f"Over the last {n} steps ({span}) the reward stays at {fixed(my, 3)} "
            f"(std {fixed(sd, 4)} < {REWARD_FLAT_STD}; fitted change {fixed(change, 3)}, {interval}, "
            f"inside ±{REWARD_FALL}): nothing is being learned.",
            "progression",
        )
    return None


def gen_wait(blocks: Sequence[MetricBlock], has_trials: bool) -> Finding | None:
    key = gen_wait_key(metric_names(blocks))
    share = gen_wait_share(blocks, key)
    if share is None or share <= GEN_WAIT_SHARE:
        return None
    return Finding(
        "gen_wait_high",
        "warning",
        f"{pct(share, 0)} of step time waits for generation",
        f"{key} adds up to {pct(share, 1)} of timing/step (above {pct(GEN_WAIT_SHARE, 0)}): "
        "the trainer idles while rollouts run."
        + (" The Rollouts section shows where that time goes." if has_trials else ""),
        "rollouts" if has_trials else "timing",
    )


def step_outlier(blocks: Sequence[MetricBlock]) -> Finding | None:
    vals = metric_values(blocks, STEP_TIME)
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
        f"Step {worst[0]} took {fixed(worst[1] / med, 1)}x the median step time",
        f"Steps over {STEP_OUTLIER_FACTOR:g}x the median ({fixed(med, 0)} s): "
        f"{steps_text([s for s, _ in slow])}; the slowest, step {worst[0]}, took {fixed(worst[1], 0)} s.",
        "timing",
        steps=tuple(s for s, _ in sorted(slow, key=lambda sv: (-sv[1], sv[0]))),
    )


def staleness(blocks: Sequence[MetricBlock], cfg: Mapping | None) -> Finding | None:
    limit = _num(_cfg(cfg, "trainer", "fully_async", "max_staleness_steps"))
    if limit is None:
        return None
    over = [(s, v) for s, v in metric_values(blocks, STALENESS_MAX) if v > limit]
    if not over:
        return None
    worst = max(over, key=lambda sv: sv[1])
    return Finding(
        "staleness_over_limit",
        "warning",
        "Staleness above the async limit",
        f"async/staleness_max exceeds trainer.fully_async.max_staleness_steps = {limit:g} on "
        f"{len(over)} steps ({steps_text([s for s, _ in over])}; up to {worst[1]:g} at step {worst[0]}).",
        "metrics",
    )


# The families whose non-finite value means the update itself went wrong.
NON_FINITE_FAMILIES = ("policy/", "loss/", "reward/", "critic/")


def non_finite(blocks: Sequence[MetricBlock]) -> Finding | None:
    """A policy, loss, reward or critic metric logged as NaN or ±inf on some step."""
    hits: dict[str, list[int]] = {}
    for b in blocks:
        for k, v in b.metrics.items():
            if type(v) is float and not math.isfinite(v) and k.startswith(NON_FINITE_FAMILIES):
                hits.setdefault(k, []).append(b.step)
    if not hits:
        return None
    steps = sorted({s for ss in hits.values() for s in ss})
    names = sorted(hits, key=lambda k: (-len(hits[k]), k))
    # the evidence: the policy-health charts for policy metrics alone, else the
    # progression charts (reward) and the job page's per-step table
    section = "policy" if all(k.startswith("policy/") for k in names) else "progression"
    return Finding(
        "non_finite_metric",
        "warning",
        f"NaN or infinite {names[0]}" + (f" and {len(names) - 1} more" if len(names) > 1 else ""),
        f"{', '.join(names[:4])}{' …' if len(names) > 4 else ''} logged as NaN or ±inf at "
        f"step{'s' if len(steps) > 1 else ''} {steps_text(steps)}: a numerical problem in the "
        "update (a charted metric's line breaks there, the job page's per-step table shows "
        "nan; statistics count finite values only).",
        section,
    )
