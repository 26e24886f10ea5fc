"""What every finding rule shares: :class:`Finding`, the thresholds (listed in docs/data.md,
"Findings"), per-step trial outcomes and small helpers over metric blocks."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import msgspec

from sitegen.insights.attribution import Attribution
from sitegen.model.parsed import BatchCounts, MetricBlock, TrialResult
from sitegen.model.vocabulary import CLIP_RATIO_RE, POLICY_ENTROPY, POLICY_KL_RE, exception_kind
from sitegen.model.vocabulary import finite_or_none as _num

SEVERITIES = ("error", "warning", "info")

ENTROPY_WINDOW_FRACTION = 0.1  # first and last 10 % of steps (at least 3 each)
ENTROPY_COLLAPSE_RATIO = 0.2  # last-window mean below 20 % of the first-window mean
MIN_TREND_STEPS = 8
REWARD_WINDOW = 20  # the last 20 steps (or the last half of a shorter run)
REWARD_FALL = 0.05  # fitted drop over the window (its 95 % interval below zero)
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

LR_KEYS = ("policy/policy_lr", "policy/lr", "trainer/lr", "optim/lr")
KL_RE = POLICY_KL_RE
CLIP_RE = CLIP_RATIO_RE
LOG_RATIO_RE = re.compile(r"^policy/log_ratio")
ENTROPY = POLICY_ENTROPY
REWARD = "reward/avg_raw_reward"
STEP_TIME = "timing/step"
STALENESS_MAX = "async/staleness_max"


class Finding(msgspec.Struct, frozen=True):
    """One finding of the insight rules: its severity, text and the page section that shows
    it; ``steps`` and ``tasks``: what it points at, the worst first (a sampled transcript of
    a trial there shows the finding, :func:`sitegen.insights.sampling.pick_trials`)."""

    id: str
    severity: str  # error | warning | info
    title: str
    detail: str
    section: str  # the page section (anchor) that shows it
    steps: tuple[int, ...] = ()
    tasks: tuple[str, ...] = ()


class StepTrials(msgspec.Struct, frozen=True):
    """Trial outcomes of one step: all trials, those with an exception, infrastructure ones."""

    step: int
    trials: int
    errors: int
    infra: int


def metric_values(blocks: Sequence[MetricBlock], key: str) -> list[tuple[int, float]]:
    return [(b.step, v) for b in blocks if (v := _num(b.metrics.get(key))) is not None]


def steps_text(steps: Sequence[int], limit: int = 5) -> str:
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
            c[2] += t.kind == "infrastructure"
    return [StepTrials(s, *c) for s, c in sorted(acc.items())]


def batch_step_trials(per_step: Mapping[int, BatchCounts]) -> list[StepTrials]:
    """The same counts from the log's batch lines, for jobs without trial files.

    The rollouts with an exception are those that did not succeed (instances − successful:
    the generator's failed trajectories); its "failed instances" counts prompts and its
    "masked" a part of the failed trajectories (docs/formats.md §4.6). An older generator
    subtracted exception counts, which can exceed the batch: no more than its rollouts."""
    out = []
    for s, b in sorted(per_step.items()):
        infra = sum(n for e, n in b.exceptions.items() if exception_kind(e) == "infrastructure")
        failed = min(b.instances, max(0, b.instances - b.successful))
        out.append(StepTrials(s, b.instances, failed, min(infra, b.instances)))
    return out
