"""The charts that show how sure each step's figures are (docs/statistics.md): the success
rate per step with its Wilson band, and the reward chart with a band, at steps with trials,
from a bootstrap over each step's prompt groups, and pass@k from the trials beside the
logged one. Same conventions as :mod:`sitegen.present.charts`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sitegen.insights.verdicts import LearningSection
from sitegen.model.vocabulary import REWARD, pass_at_k, pass_at_key, pass_at_label
from sitegen.pages.sections import Series, Stats
from sitegen.present import charts

TRIALS_PASS = "pass@k (trials)"  # the series name of pass@k from the trials (never a metric)
REWARD_LO, REWARD_HI = "reward (trials) low", "reward (trials) high"


def success_chart(learning: LearningSection | None) -> dict | None:
    """Success rate per step from the trials: thin = raw, bold = smoothed, band = Wilson."""
    ps = learning.per_step if learning else None
    if ps is None:
        return None
    series = {"step": ps.step, "rate": ps.rate, "lo": ps.rate_lo, "hi": ps.rate_hi}
    return charts.progression(series, {"rate": "success rate"}, bands={"rate": ("lo", "hi")})


def reward_names(metrics: Mapping[str, Stats]) -> dict[str, str]:
    """Reward and, when logged, pass@k (``pass@8``, as the cards and tables name it): the
    progression chart's lines {metric: legend name}."""
    pk = pass_at_key(metrics)
    return {REWARD: "reward", **({pk: pass_at_label(pass_at_k(pk))} if pk else {})}


def _aligned(steps: Sequence[int], at: Sequence[int], values: Sequence) -> list:
    """``values`` (one per step of ``at``) on the steps of ``steps``, None where absent."""
    by_step = dict(zip(at, values, strict=True))
    return [by_step.get(s) for s in steps]


def reward_chart(
    series: Series,
    metrics: Mapping[str, Stats],
    learning: LearningSection | None,
    rules: Sequence[dict] = (),
    marks: Sequence[dict] = (),
) -> dict | None:
    """The reward chart (``chartsets.step_charts``'s) with what the trials add, or None when
    they add nothing: a band around the reward at each step with a reward interval, and
    pass@k estimated from the trials beside the logged pass@k."""
    ps = learning.per_step if learning else None
    if ps is None:
        return None
    steps = series.get("step", [])
    cols = dict(series)
    cols[REWARD_LO] = _aligned(steps, ps.step, ps.reward_lo)
    cols[REWARD_HI] = _aligned(steps, ps.step, ps.reward_hi)
    names = reward_names(metrics)
    if ps.k and any(v is not None for v in ps.pass_at_k):
        cols[TRIALS_PASS] = _aligned(steps, ps.step, ps.pass_at_k)
        names[TRIALS_PASS] = f"{pass_at_label(ps.k)} (trials)"
    return charts.progression(
        cols, names, rules=rules, marks=marks, bands={REWARD: (REWARD_LO, REWARD_HI)}
    )
