"""Two sets of per-task counts compared, paired by task (docs/statistics.md).

The task is the unit: a task's repeated trials are averaged into its success rate, and
the difference between two sets (a run's late and early steps, or two runs on the
comparison page) is the mean over the tasks both ran of the difference of their rates,
with a bootstrap over those tasks. :func:`compare` is also the reference the comparison
page is tested against: ``static/stats.js`` computes the same numbers in the browser,
from the counts :func:`solved_counts` publishes, summing in the same order."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sitegen.analyse import stats
from sitegen.insights.verdicts import PairedVerdict

if TYPE_CHECKING:  # (the task analysis is imported where trials are analysed)
    from sitegen.insights.tasks import TaskAnalysis

MIN_TASKS = 10  # fewer shared tasks: "can't tell" (a bootstrap over a handful of units is no test)
FINAL_FRACTION = 1 / 5  # a run's final window: its last fifth of steps with trials …
MIN_FINAL_STEPS = 3  # … at least 3 of them (all of them when it has fewer)

# (task, graded trials, successes), in one order that both sides keep
Counts = Sequence[tuple[str, int, int]]


def window_counts(ta: TaskAnalysis, lo: int, hi: int) -> list[tuple[str, int, int]]:
    """Each task's graded trials and successes in steps ``lo``..``hi``, in table order."""
    out = []
    for row in ta.tasks:
        inside = [c for c in row.steps if lo <= c.step <= hi]
        out.append((row.name, sum(c.graded for c in inside), sum(c.successes for c in inside)))
    return out


def graded_steps(ta: TaskAnalysis) -> list[int]:
    """The steps with at least one graded trial, in order."""
    return sorted({c.step for row in ta.tasks for c in row.steps if c.graded})


def final_window(steps: Sequence[int]) -> tuple[int, int] | None:
    """The last fifth of ``steps`` (at least :data:`MIN_FINAL_STEPS`, all of a shorter list)
    as its first and last step."""
    if not steps:
        return None
    w = max(MIN_FINAL_STEPS, math.ceil(len(steps) * FINAL_FRACTION))
    return steps[-w:][0], steps[-1]


def solved_counts(ta: TaskAnalysis) -> dict:
    """What the comparison page compares a run by (``solved.js``): every task in table order
    with its trials, graded trials and successes over the whole run and over its final
    window (:func:`final_window`)."""
    final = final_window(graded_steps(ta))
    last = window_counts(ta, *final) if final else [(r.name, 0, 0) for r in ta.tasks]
    return {
        "tasks": [r.name for r in ta.tasks],
        "trials": [r.trials for r in ta.tasks],
        "successes": [r.successes for r in ta.tasks],
        "graded": [r.graded for r in ta.tasks],
        "final": {
            "steps": list(final) if final else None,
            "graded": [g for _, g, _ in last],
            "successes": [s for _, _, s in last],
        },
    }


def _mean(values: Sequence[float]) -> float:
    """Summed left to right, as the browser sums (not fsum, not Python 3.12's compensated
    ``sum``): the reference must give the page's bits."""
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def compare(
    ref: Counts, pick: Counts, resamples: int = stats.RESAMPLES, seed: int = stats.SEED
) -> PairedVerdict:
    """``pick`` against ``ref`` on the tasks both graded, in ``ref``'s order.

    "better" when the mean difference's 95 % interval lies above zero *and* so does the
    probability of improvement's above one half: the pick does better on average and on
    more tasks than not (a gain on one task never makes "better": the resamples without it
    tie at one half). "worse" the reverse; otherwise, or with fewer than
    :data:`MIN_TASKS` shared tasks, "can't tell"."""
    theirs = {name: (g, s) for name, g, s in pick}
    a: list[float] = []
    b: list[float] = []
    only_pick = only_ref = 0
    for name, rg, rs in ref:
        pg, ps = theirs.get(name, (0, 0))
        if rg <= 0 or pg <= 0:
            continue
        a.append(rs / rg)
        b.append(ps / pg)
        only_pick += ps > 0 and rs == 0
        only_ref += rs > 0 and ps == 0
    n = len(a)
    p = stats.sign_test(only_pick, only_ref)
    if not n:
        return PairedVerdict(
            verdict="can't tell",
            tasks=0,
            ref_rate=None,
            pick_rate=None,
            diff=None,
            diff_lo=None,
            diff_hi=None,
            improvement=None,
            improvement_lo=None,
            improvement_hi=None,
            only_pick=only_pick,
            only_ref=only_ref,
            sign_p=p,
        )
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    (lo, hi), pi, (pi_lo, pi_hi) = stats.paired_bootstrap(diffs, resamples, seed)
    verdict = "can't tell"
    if n >= MIN_TASKS and lo > 0 and pi_lo > 0.5:
        verdict = "better"
    elif n >= MIN_TASKS and hi < 0 and pi_hi < 0.5:
        verdict = "worse"
    return PairedVerdict(
        verdict=verdict,
        tasks=n,
        ref_rate=_mean(a),
        pick_rate=_mean(b),
        diff=_mean(diffs),
        diff_lo=lo,
        diff_hi=hi,
        improvement=pi,
        improvement_lo=pi_lo,
        improvement_hi=pi_hi,
        only_pick=only_pick,
        only_ref=only_ref,
        sign_p=p,
    )
